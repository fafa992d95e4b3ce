"""Learning environments of both games: PettingZoo AEC environments, a Gymnasium single-seat environment, and
the numeric observation and action index they share.

    from referee.env import stop_the_bus_v0, bastard_brag_v0, single_seat

    env = stop_the_bus_v0.env(players=3, seed=7)

The modules, one idea each:

- ``action_index``: the fixed action index of each game and legal masks over it (``action_index(game)``: the
  package's name ``action_index`` is this module, as Python makes a submodule's name);
- ``encoding``: a seat's observation as a fixed-size vector, one function per game;
- ``aec``: the PettingZoo environment (``stop_the_bus_v0``, ``bastard_brag_v0`` make it);
- ``single_seat_env``: the Gymnasium environment of one seat against decide functions or the sample bots;
- ``trajectories``: every decision of a league's games as training data (``referee export``).

PettingZoo and Gymnasium are an optional extra (``pip install 'brag-referee[env]'``): ``action_index``,
``encoding`` and ``trajectories`` need only numpy, and importing this package loads neither library; the
environments raise :class:`referee.common.errors.EnvUnavailableError`, saying how to install them, without them.
``docs/environments.md`` is the guide.
"""

from __future__ import annotations

import importlib
from typing import Any

# What the package names, and the module of each (loaded when first asked for, so that neither PettingZoo
# nor Gymnasium is loaded before an environment is wanted).
_LAZY = {
    "BragEnv": "referee.env.aec",
    "SingleSeatEnv": "referee.env.single_seat_env",
    "single_seat": "referee.env.single_seat_env",
    "ActionIndex": "referee.env.action_index",
    "ObservationEncoder": "referee.env.encoding",
    "encode_stop_the_bus": "referee.env.encoding",
    "encode_bastard_brag": "referee.env.encoding",
}

__all__ = [  # noqa: RUF022 - in the order of _LAZY
    "BragEnv",
    "SingleSeatEnv",
    "single_seat",
    "ActionIndex",
    "ObservationEncoder",
    "encode_stop_the_bus",
    "encode_bastard_brag",
    "bastard_brag_v0",
    "stop_the_bus_v0",
]


def __getattr__(name: str) -> Any:
    if name in ("stop_the_bus_v0", "bastard_brag_v0"):
        return importlib.import_module(f"referee.env.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'referee.env' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
