"""A well-behaved bot for inspection: plays legal random actions and records what it is given (``--record FILE``)."""

from __future__ import annotations

import _common

if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.set_defaults(at="")
    _common.run(_common.LegalServicer(_common.parse(options), "recorder"))
