"""A real league's folder for the tests of what is published from it (the head-to-head pages, the archive of its
games, the league's page's list of games), and the means to hold some of its games back, serve it and fetch.

The league is played once per test module by ``referee run`` (three random bots and one that plays an illegal
move in every game, at tables of three, every table's rotations dealt alike: tests/game_logs.py), and each test
gets a copy of its folder to change.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from referee.records.results import read_records

from .conftest import PYTHON
from .game_logs import write_league
from .test_serve import free_port, wait_until_serving


def play_league(folder: Path, rounds: int = 1) -> Path:
    """Play the league in ``folder`` (12 games a round: 4 tables of 3, each in its 3 rotations); its output folder."""
    league = write_league(folder / "league.yaml", rounds=rounds)
    run = subprocess.run(
        [PYTHON, "-m", "referee", "run", str(league), "--output", str(folder / "out"), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    return folder / "out"


def copy_of(output: Path, where: Path) -> Path:
    """A copy of a league's folder, for a test to change."""
    return Path(shutil.copytree(output, where / "out"))


def records(output: Path) -> list[dict]:
    return list(read_records(output / "games.jsonl"))


def table_games(output: Path, table: int) -> list[str]:
    """The games of table ``table`` of round 1: its rotations, dealt alike."""
    return [record["game_id"] for record in records(output) if record["game_id"].startswith(f"r1-t{table:03d}-")]


def hold(output: Path, game_ids: Iterable[str]) -> None:
    """Hold ``game_ids`` back as a run does while a game dealt alike with them is still being played
    (``visibility.json``: referee.records.visibility)."""
    accounted = (output / "games.jsonl").stat().st_size
    held = dict.fromkeys(game_ids)
    (output / "visibility.json").write_text(json.dumps({"accounted": accounted, "held": held}), encoding="utf-8")


def rewrite_pages(output: Path) -> None:
    """``referee leaderboard DIR --write``: the league's page and the head-to-head pages, as the rule says now."""
    run = subprocess.run(
        [PYTHON, "-m", "referee", "leaderboard", str(output), "--write"], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr


@contextmanager
def served(output: Path) -> Iterator[str]:
    """``referee serve OUTPUT`` on loopback; its address."""
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "referee", "serve", str(output), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, "/leaderboard.html")
        yield base
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=20)
