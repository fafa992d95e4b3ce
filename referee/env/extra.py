"""The optional extra the environments need: PettingZoo and Gymnasium, and the error that says how to get them."""

from __future__ import annotations

from referee.common.errors import EnvUnavailableError

INSTALL = "pip install 'brag-referee[env]'"


def unavailable(error: ImportError) -> EnvUnavailableError:
    """The error to raise when importing PettingZoo or Gymnasium failed with ``error``."""
    name = getattr(error, "name", None) or "pettingzoo"
    return EnvUnavailableError(
        f"the learning environments (referee.env) need PettingZoo and Gymnasium, and {name} cannot be imported "
        f"({error}): {INSTALL}"
    )
