"""Real games with real bot processes, played once per test session and kept as logs for the viewer's tests."""

from __future__ import annotations

import asyncio
import atexit
import json
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from referee.play.match import play_game
from referee.play.processes import BotSpec
from referee.protocol.faults import FaultPolicy, PolicyMode
from referee.records.gamelog import read_log

from .conftest import BAD_BOTS, FAST, PYTHON, SAMPLE_BOTS

_KEPT = Path(tempfile.mkdtemp(prefix="referee-viewer-logs-"))
atexit.register(shutil.rmtree, _KEPT, True)
_PLAYED: dict[str, Path] = {}


def sample(kind: str, name: str) -> BotSpec:
    return BotSpec(name=name, command=(PYTHON, str(SAMPLE_BOTS / f"{kind}_bot.py")))


GAMES = {
    # name: (game, bots, seed, fault policy)
    "stop_the_bus": ("stop_the_bus", [("heuristic", "ada"), ("random", "bob"), ("random", "cy")], 5, None),
    "bastard_brag": (
        "bastard_brag",
        [("random", "ada"), ("heuristic", "bob"), ("random", "cy"), ("heuristic", "dee")],
        3,
        None,
    ),
    # Random bots at a table of 4 (228 decisions with this seed): the replay page's speed is measured on it.
    "long": ("bastard_brag", [("random", "ada"), ("random", "bob"), ("random", "cy"), ("random", "dee")], 9, None),
    # A bot that plays an illegal move on its 2nd and 4th decisions: the policy plays a default action for it.
    "faults": (
        "stop_the_bus",
        [("random", "ada"), ("illegal", "bad"), ("heuristic", "cy")],
        8,
        FaultPolicy(PolicyMode.DEFAULT_ACTION, 3),
    ),
}


def logged_game(name: str) -> Path:
    """The log of one of ``GAMES``, played now the first time it is asked for."""
    if name not in _PLAYED:
        game, entries, seed, policy = GAMES[name]
        specs = []
        for kind, bot in entries:
            if kind == "illegal":
                command = (PYTHON, str(BAD_BOTS / "bad_reply.py"), "--mode", "illegal", "--at", "2,4")
                specs.append(BotSpec(name=bot, command=command))
            else:
                specs.append(sample(kind, bot))
        path = _KEPT / f"{name}.jsonl"
        bot_logs = _KEPT / f"{name}-bots"
        bot_logs.mkdir()
        play = play_game(
            game,
            specs,
            seed=seed,
            game_id=name,
            timing=FAST,
            log_path=path,
            policy=policy or FaultPolicy(),
            bot_log_dir=bot_logs,
        )
        # In a thread of its own: a caller may be running an event loop (Playwright's does).
        with ThreadPoolExecutor(1) as thread:
            thread.submit(asyncio.run, play).result()
        _PLAYED[name] = path
    return _PLAYED[name]


def records(name: str) -> list[dict]:
    return read_log(logged_game(name))


def write_league(
    path: Path, marker: str = "", *, thinker_ms: int | None = None, rounds: int = 1, seed: int = 21
) -> Path:
    """A league file in ``path``: three random bots and one that plays an illegal move in each game, tables of 3.

    With ``thinker_ms``, three bots that take that long over every decision instead, at tables of 2 (for a
    league that runs long enough to be watched).
    """
    if thinker_ms is None:
        entries = [(name, [PYTHON, str(SAMPLE_BOTS / "random_bot.py")]) for name in ("alpha", "bravo", "charlie")]
        entries.append(
            ("faulty", [PYTHON, str(BAD_BOTS / "bad_reply.py"), "--mode", "illegal", "--at", "3", "--every-game"])
        )
        table_size = 3
    else:
        entries = [
            (name, [PYTHON, str(BAD_BOTS / "thinker.py"), "--cpu-ms", "0", "--sleep-ms", str(thinker_ms)])
            for name in ("alpha", "bravo", "charlie")
        ]
        table_size = 2
    lines = [
        "name: viewer-league",
        "game: stop_the_bus",
        f"seed: {seed}",
        f"table_size: {table_size}",
        f"rounds: {rounds}",
        "move_time_ms: 1000",
        "time_bank_ms: 2000",
        "concurrency: 1",
        "fault_policy: {mode: default_action, max_faults: 3}",
        "output: results",
        "static_replays: true",  # its pages are opened from disk
        "bots:",
    ]
    for name, command in entries:
        lines += [
            f"  - name: {name}",
            f"    command: {json.dumps([*command, '--marker', marker] if marker else command)}",
        ]
        if marker:
            lines.append(f"    env: {{REFEREE_TEST_MARKER: {marker}}}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
