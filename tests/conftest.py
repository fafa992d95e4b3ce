"""Shared fixtures for tests that run real bot processes: bot specs that tests can find again, and leak checks."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.play import sandbox
from referee.play.match import MatchResult, play_game
from referee.play.processes import BotSpec
from referee.protocol.clock import Timing
from referee.v2 import bot_pb2 as pb
from tests.processes import marked_processes

ROOT = Path(__file__).resolve().parent.parent
# A bot's sandbox shows the referee package it runs from, but a sandboxed bot's environment is clean, and an
# editable install points at the main checkout: from a worktree (PYTHONPATH=the worktree), the bots are told too.
PYTHONPATH_OF_BOTS = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
BAD_BOTS = ROOT / "tests" / "bad_bots"
SAMPLE_BOTS = ROOT / "sample_bots" / "python"
PYTHON = sys.executable  # the virtual environment's python: it has the referee package installed

# Short limits: prompt bots reply in milliseconds, and a silent bot is caught within 800 ms (move + bank + grace).
# A roomy start-up: four bots starting at once on a loaded machine took over 3 s; the tests of a bot that never
# listens give their own, short, start-up timeout.
FAST = Timing(move_time_ms=300, time_bank_ms=300, grace_ms=200, startup_timeout_ms=20_000)
LEFTOVER_WAIT_SECONDS = 3.0


# The test files that take longest (18 seconds or more of a worker's time each, by the per-test times of one
# run of the suite, 7 December 2026, on a loaded machine), longest first. The suite runs on a few workers, each
# taking the next file when it is free (pytest-xdist's loadfile, pyproject.toml): these go first, so that no
# long file starts last and runs alone while the other workers idle (test_nothing_early.py, 90 s, once came
# after them in name order, among the last). A kit's sample is built by the first file to ask for it
# (tests/bot_kits.built_kit): the kit's own file, before test_kit_samples.py waits on its build. A file not
# named here keeps its place after them.
LONGEST_FILES = (
    "test_ladder.py",
    "test_organiser.py",
    "test_ray_backend.py",
    "test_nothing_early.py",
    "test_cpp_bot.py",
    "test_faults.py",
    "test_browser.py",
    "test_spectating.py",
    "test_league.py",
    "test_play_in_browser.py",
    "test_ladder_suspension.py",
    "test_node_bot.py",
    "test_go_bot.py",
    "test_author_tests.py",
    "test_kit_samples.py",
    "test_containment.py",
    "test_seasons.py",
    "test_guide.py",
    "test_search_bot.py",
    "test_duel.py",
    "test_site_ladder.py",
    "test_sandbox.py",
    "test_deals.py",
    "test_serve_limits.py",
    "test_soak.py",
    "test_brag_sampling.py",
    "test_information_hiding.py",
    "test_simulation.py",
    "test_author_pages_in_browser.py",
    "test_games_archive.py",
    "test_luck_pools.py",
    "test_log_storage.py",
    "test_replay.py",
    "test_held_back_replay.py",
    "test_env.py",
    "test_check_bot.py",
    "test_head_to_head.py",
    "test_schedule.py",
    "test_heuristic_bot.py",
    "test_stats.py",
    "test_request_encoding.py",
    "test_match.py",
)


@pytest.hookimpl(optionalhook=True)  # so that `pytest -p no:xdist` still runs
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """The workers of ``-n auto`` (pyproject.toml): one more than the CPUs this process may run on.

    Many tests wait (a bot's deadline, a page's poll, Ray starting) while the
    CPUs could work: with one worker per CPU, a sixth of the two CPUs' time
    went idle here; with three workers the suite took 436 s where two took
    466 s (one run after the other, 6 December 2026); four took 477 s.
    """
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (LONGEST_FILES), every file's tests in their own order."""
    first = {name: place for place, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: first.get(item.path.name, len(first)))


class Bots:
    """Builds bot specs for one test, each carrying the test's marker, and finds their processes afterwards.

    The marker is both a command-line argument and an environment variable, so
    a bot's forked children carry it too. Private socket directories are made
    under ``socket_root`` (``tempfile.tempdir`` points there during the test).
    Bots run in their sandbox; a bot given ``--record FILE`` or ``--record-dir
    DIR`` gets that folder shared read-write, so that the test can read what
    it recorded.
    """

    def __init__(self, socket_root: Path) -> None:
        self.marker = f"referee-test-{uuid.uuid4().hex[:12]}"
        self.socket_root = socket_root
        self.leaves_socket_dirs = False  # set by a test whose referee dies without cleaning up

    def command(self, script: str | Path, *args: str) -> list[str]:
        """The command line of a bot script, run by the venv python, with the marker."""
        path = Path(script)
        if not path.is_absolute():
            path = BAD_BOTS / path
        return [PYTHON, str(path), *args, "--marker", self.marker]

    def bad(self, script: str, *args: str, name: str | None = None, transport: str = "unix") -> BotSpec:
        """A spec for one of tests/bad_bots/ (``script`` without a directory)."""
        return self.spec(self.command(script, *args), name or Path(script).stem, transport)

    def sample(self, bot: str = "random", *, name: str | None = None, transport: str = "unix") -> BotSpec:
        """A spec for a sample bot (``random`` or ``heuristic``)."""
        return self.spec(self.command(SAMPLE_BOTS / f"{bot}_bot.py"), name or bot, transport)

    def spec(self, command: list[str], name: str, transport: str = "unix") -> BotSpec:
        return BotSpec(
            name=name,
            command=tuple(command),
            env={"REFEREE_TEST_MARKER": self.marker, **PYTHONPATH_OF_BOTS},
            transport=transport,
            network="host" if transport == "tcp" else "none",
            shared=recording_folders(command),
        )

    def subprocess_env(self) -> dict[str, str]:
        """Environment for a referee run as a subprocess: its socket directories go under ``socket_root``."""
        return {**os.environ, "TMPDIR": str(self.socket_root)}

    def processes(self) -> list[str]:
        """Live processes (not zombies) of this test's bots: by marker, or by an address under ``socket_root``."""
        return marked_processes(self.marker, self.socket_root)

    def wait_for_processes(self, count: int, timeout: float = 10.0) -> list[str]:
        """Wait until at least ``count`` of this test's processes run; return them."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.processes()
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def leftovers(self, wait: float = LEFTOVER_WAIT_SECONDS) -> list[str]:
        """This test's processes still alive after up to ``wait`` seconds (reaping takes a moment)."""
        deadline = time.monotonic() + wait
        while True:
            found = self.processes()
            if not found or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def kill_leftovers(self) -> None:
        for line in self.processes():
            pid = int(line.split()[1].rstrip(":"))
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def recording_folders(command: list[str]) -> tuple[str, ...]:
    """The folders a test bot records into (``--record FILE``, ``--record-dir DIR``): its sandbox shares them."""
    folders = []
    for option, value in itertools.pairwise(command):
        if option == "--record":
            folders.append(str(Path(value).parent))
        elif option == "--record-dir":
            folders.append(value)
    return tuple(folders)


@pytest.fixture
def bots(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bots]:
    """A :class:`Bots` for this test; afterwards no bot process may remain, nor any private socket directory."""
    tmp_path_factory.getbasetemp()  # fix pytest's own temporary root before tempfile is redirected
    # Short, under /tmp: a Unix socket path must stay under 108 bytes.
    socket_root = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(socket_root))
    helper = Bots(socket_root)
    yield helper
    leftovers = helper.leftovers()
    helper.kill_leftovers()
    # What a referee killed by SIGKILL left here is for the next referee to remove: do it now, as it would.
    sandbox.remove_leftovers(socket_root)
    remaining_dirs = sorted(path.name for path in socket_root.iterdir())
    shutil.rmtree(socket_root, ignore_errors=True)
    assert not leftovers, "bot processes outlived the test:\n" + "\n".join(leftovers)
    if not helper.leaves_socket_dirs:
        assert not remaining_dirs, f"private socket directories were not removed: {remaining_dirs}"


def play(game: str, specs: list[BotSpec], *, seed: int = 1, timing: Timing = FAST, **options) -> MatchResult:
    """Play one game to the end with real bot processes."""
    return asyncio.run(play_game(game, specs, seed=seed, timing=timing, **options))


def read_log(path: Path) -> list[dict]:
    """The records of a JSON-lines game log, as the referee reads them (the seed, a string in the file, a number)."""
    from referee.records.gamelog import read_log as read_game_log

    return read_game_log(path)


def read_recording(path: Path) -> tuple[dict, list[tuple[float, pb.DecisionRequest]]]:
    """What a bot run with ``--record`` wrote: its start record, then (time received, request) per decision."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    start, asked = lines[0], lines[1:]
    requests = [
        (entry["received"], pb.DecisionRequest.FromString(base64.b64decode(entry["request"]))) for entry in asked
    ]
    return start, requests


# ----- Chromium through Playwright, for the tests of pages (Debian's Chromium: `make browser-deps`) ------------

CHROMIUM = Path(os.environ.get("REFEREE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None
NO_BROWSER = (
    f"Playwright or Chromium ({CHROMIUM}) is missing: pip install -e '.[test]' and `make browser-deps` (as root: "
    "apt-get install -y chromium), or set REFEREE_CHROMIUM to a Chromium binary"
)


@pytest.fixture(scope="module")
def chromium():
    """A headless Chromium for a module's page tests; the test is skipped, saying why, where there is none.

    One per module, not per session: Playwright's sync API holds an event loop while it runs, and tests of other
    modules call ``asyncio.run``."""
    if sync_playwright is None or not CHROMIUM.exists():
        pytest.skip(NO_BROWSER)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()
