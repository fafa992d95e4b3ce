"""Says why on stderr and exits at once, before listening: a bot that cannot start."""

from __future__ import annotations

import sys

import _common

if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--code", type=int, default=2, help="exit status")
    args = options.parse_args()
    print("exit_at_start: cannot load my model, giving up", file=sys.stderr)
    sys.exit(args.code)
