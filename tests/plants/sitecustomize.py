"""Planted leaks: each a deliberate bug in what the server shows, or when, for tests/test_nothing_early.py to catch.

Python imports ``sitecustomize`` at start-up from its path, so a process started with this folder first on
``PYTHONPATH`` and ``REFEREE_PLANT`` naming a plant (or several, joined by commas) (``referee run``, ``referee ladder``, ``referee serve``) has
that one bug put in as it imports the module it lives in; without ``REFEREE_PLANT`` it changes nothing. The
code on disk is never touched, and no plant lives in the referee's own code.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

PLANT = os.environ.get("REFEREE_PLANT", "")


def seed_variant(app_module: ModuleType) -> None:
    """The folder's files served whole at every path no route names: ``/games.jsonl/`` gives the raw records."""
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    create_app = app_module.create_app

    def leaky(target: Any, **options: Any) -> Any:
        app = create_app(target, **options)
        app.router.routes.append(Mount("/", app=StaticFiles(directory=app.state.site.output)))
        return app

    app_module.create_app = leaky


def sibling_showdown_early(visibility: ModuleType) -> None:
    """A hand's frames shown once seen (and the delay), whatever the other games on its deals have played."""
    visibility.GameProgress.hand_due = lambda self, hand, seen_at: seen_at + self.deal.delay_s


def record_before_its_delay(visibility: ModuleType) -> None:
    """A finished game shown as soon as every game on its deals has ended: the spectator delay left out."""

    def game(self: Any, game_id: str) -> bool:
        return not self.everything_held and (game_id not in self.held or self.held[game_id] is not None)

    visibility.Shown.game = game


def author_output_early(records: ModuleType) -> None:
    """A game's record, log, replay and its bots' output on their authors' pages once it is recorded, whatever its
    deals."""
    records.GamesIndex.recorded = lambda self, game_id, shown: game_id in self._ids


def notes_of_every_seat(notes: ModuleType) -> None:
    """An author's private replay with the notes of every bot of the game, not their own bots' alone."""
    notes.ReadNotes.of_seats = lambda self, seats: self


PLANTS: dict[str, tuple[str, Callable[[ModuleType], None]]] = {
    "seed-variant": ("referee.apps.site.app", seed_variant),
    "sibling-showdown-early": ("referee.records.visibility", sibling_showdown_early),
    "record-before-its-delay": ("referee.records.visibility", record_before_its_delay),
    "author-output-early": ("referee.apps.site.season_folder", author_output_early),
    "notes-of-every-seat": ("referee.records.notes", notes_of_every_seat),
}


class _Planting(importlib.abc.MetaPathFinder):
    """Finds the planted module as Python would, and puts the plant in once the module has run."""

    def __init__(self, module: str, plant: Callable[[ModuleType], None]) -> None:
        self.module, self.plant = module, plant

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if fullname != self.module:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        loader, plant = spec.loader, self.plant

        class Planted(importlib.abc.Loader):
            def create_module(self, spec: Any) -> Any:
                return loader.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                loader.exec_module(module)
                plant(module)

        spec.loader = Planted()
        return spec


for _plant in filter(None, PLANT.split(",")):
    if _plant not in PLANTS:
        raise SystemExit(f"REFEREE_PLANT={PLANT!r}: no plant {_plant!r}; the plants are {', '.join(PLANTS)}")
    sys.meta_path.insert(0, _Planting(*PLANTS[_plant]))
