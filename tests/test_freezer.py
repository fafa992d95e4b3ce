"""A bot gets CPU only while it is on move: frozen off move, thawed for its decisions, never left frozen.

Every way of freezing (cgroup v2, the cgroup v1 freezer, SIGSTOP) on real
spinning processes; a ponderer (tests/bad_bots/ponderer.py, three workers that
never stop) beside steady thinkers, measured by its cgroup's CPU time between
its decisions; a referee killed by SIGKILL while its bot is frozen by the v1
freezer; and the policy's timing on a fake freezer and the fake clock.
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from referee.play import freezer, sandbox
from referee.play.fakes import FakeClock
from referee.play.freezer import OffMove, _SignalFreezer, freezer_for
from referee.play.match import Match
from referee.play.session import BotSession
from referee.protocol.clock import Timing
from referee.protocol.setup import GameSetup

from .conftest import PYTHON, Bots

SUPPORT = sandbox.cgroup_support()
V1_ONLY = dataclasses.replace(SUPPORT, v2=None, v2_controllers=frozenset())  # as a machine with cgroup v1 alone
needs_v2 = pytest.mark.skipif(SUPPORT.freezer() != "v2", reason="no cgroup v2 freezer here")
needs_v1 = pytest.mark.skipif(
    "freezer" not in SUPPORT.v1 or "cpuacct" not in SUPPORT.v1, reason="no cgroup v1 freezer and cpuacct here"
)
SPINNERS = "import os\nos.fork()\nwhile True: pass\n"  # two processes that spin


def spinning_bot(support: sandbox.CgroupSupport) -> tuple[subprocess.Popen, sandbox.BotCgroup]:
    """Two spinning processes in a bot's cgroups, started as the referee starts a bot."""
    cgroup = sandbox.BotCgroup(support, sandbox.DEFAULT_LIMITS)
    process = subprocess.Popen(sandbox.launch_argv(cgroup.procs_files, [], [PYTHON, "-c", SPINNERS, "frozen-spinner"]))
    deadline = time.monotonic() + 5
    while len(cgroup_pids(cgroup)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    return process, cgroup


def cgroup_pids(cgroup: sandbox.BotCgroup) -> list[int]:
    return [int(pid) for pid in Path(cgroup.procs_files[0]).read_text().split()]


def cpu_over(cgroup: sandbox.BotCgroup, seconds: float) -> float:
    """CPU seconds the cgroup's processes use over the next ``seconds``."""
    before = cgroup.cpu_us()
    time.sleep(seconds)
    return (cgroup.cpu_us() - before) / 1e6


def spins(cgroup: sandbox.BotCgroup, cpu_seconds: float = 0.02, within_seconds: float = 5.0) -> bool:
    """Whether the cgroup's processes use ``cpu_seconds`` of CPU within the next ``within_seconds``: a loaded
    machine may give a running bot a small share (12 ms in 300 ms once, the suite on three workers)."""
    before = cgroup.cpu_us()
    deadline = time.monotonic() + within_seconds
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if cgroup.cpu_us() - before > cpu_seconds * 1e6:
            return True
    return False


@pytest.mark.parametrize(
    "way",
    [
        pytest.param("v2", marks=needs_v2),
        pytest.param("v1", marks=needs_v1),
        "signals to its cgroup",
        "signals to its process tree",
    ],
)
def test_each_way_of_freezing_stops_every_process_of_a_bot_and_a_frozen_bot_can_be_killed(way: str) -> None:
    process, cgroup = spinning_bot(V1_ONLY if way == "v1" else SUPPORT)
    try:
        if way.startswith("signals"):
            procs = Path(cgroup.procs_files[0]) if way == "signals to its cgroup" else None
            frozen = _SignalFreezer(process.pid, procs)
        else:
            frozen = freezer_for(process.pid, cgroup)
            assert frozen.how == (freezer.V2 if way == "v2" else freezer.V1)
        assert spins(cgroup)
        frozen.freeze()
        time.sleep(0.05)  # a v1 freeze takes effect as each process next enters the kernel
        assert cpu_over(cgroup, 0.3) < 0.005
        frozen.thaw()
        assert spins(cgroup)
        frozen.freeze()
        time.sleep(0.05)
        cgroup.kill()  # what stopping a bot does: on v1 it thaws first, or nothing would die
        deadline = time.monotonic() + 3
        while not cgroup.is_empty() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert cgroup.is_empty()
        frozen.close()
    finally:
        process.kill()
        process.wait()
        cgroup.kill()
        deadline = time.monotonic() + 3
        while not cgroup.remove() and time.monotonic() < deadline:
            time.sleep(0.01)


@needs_v1
def test_a_bot_frozen_by_the_v1_freezer_dies_with_a_referee_killed_by_sigkill(tmp_path: Path) -> None:
    referee = textwrap.dedent("""
        import dataclasses, subprocess, sys, time
        from referee.play import sandbox
        from referee.play.freezer import freezer_for
        support = dataclasses.replace(sandbox.cgroup_support(), v2=None, v2_controllers=frozenset())
        cgroup = sandbox.BotCgroup(support, sandbox.DEFAULT_LIMITS)
        sandbox.start_watcher(support)  # as make_cgroup does for every bot
        argv = sandbox.launch_argv(cgroup.procs_files, [], ["sleep", "600"])
        bot = subprocess.Popen(argv)
        while not open(cgroup.procs_files[0]).read().split():
            time.sleep(0.01)
        freezer_for(bot.pid, cgroup).freeze()
        print(bot.pid, flush=True)
        time.sleep(600)
    """)
    child = subprocess.Popen([PYTHON, "-c", referee], stdout=subprocess.PIPE, text=True)
    try:
        bot = int(child.stdout.readline())
        time.sleep(0.1)
        assert Path(f"/proc/{bot}/status").read_text().count("State:\tD") == 1  # frozen
        child.send_signal(signal.SIGKILL)
        child.wait()
        deadline = time.monotonic() + 5
        while Path(f"/proc/{bot}").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not Path(f"/proc/{bot}").exists(), "a frozen bot outlived its referee"
    finally:
        child.kill()
        child.wait()
        for hierarchy in SUPPORT.v1.values():  # the killed referee's cgroup folders, as the next referee removes them
            sandbox.remove_leftovers(hierarchy.folder.parent)


class RecordingFreezer(freezer.Freezer):
    how = "recorded"

    def __init__(self) -> None:
        self.steps: list[str] = []

    def freeze(self) -> None:
        self.steps.append("freeze")

    def thaw(self) -> None:
        self.steps.append("thaw")


def test_off_move_a_bot_is_frozen_just_after_its_reply_at_once_if_it_ponders_and_thawed_for_good_to_stop() -> None:
    # On the fake clock, whose time moves only when the test says: the freezer's own delays (5 ms, 20 ms, 5 s) are
    # tested as they are, and no late event loop can run a breath early or a freeze late.
    clock = FakeClock()
    advance = clock.advance
    recorded = RecordingFreezer()
    cpu = [0]  # the bot's CPU time, in microseconds
    policy = OffMove(recorded, clock, lambda: cpu[0])
    policy.off_move()
    policy.on_move()  # asked again at once (a draw, then its discard): never frozen in between
    policy.off_move()
    advance(freezer.FREEZE_DELAY_S / 2)
    assert recorded.steps == []  # frozen a moment after its reply, off the decision's path
    advance(freezer.FREEZE_DELAY_S)
    assert recorded.steps == ["freeze"]
    policy.on_move()
    policy.on_move()  # already thawed: nothing to write
    assert recorded.steps == ["freeze", "thaw"]
    advance(3 * freezer.BREATH_INTERVAL_S)  # on move: no breath, no freeze
    assert len(recorded.steps) == 2
    for _ in range(freezer.RESTLESS_TIMES):
        policy.on_move()
        policy.off_move()
        advance(0)  # its CPU time is marked (call_soon), and its freeze is FREEZE_DELAY_S away
        assert not policy.restless
        cpu[0] += 5000  # it ponders in that moment (once is a garbage collection, maybe) ...
        advance(2 * freezer.FREEZE_DELAY_S)
    assert recorded.steps[2:] == ["freeze"] + ["thaw", "freeze"] * (freezer.RESTLESS_TIMES - 1)
    assert policy.restless
    recorded.steps.clear()
    policy.on_move()
    policy.off_move()  # ... so from then on it is frozen the moment its reply is read
    assert recorded.steps == ["thaw", "freeze"]
    # Frozen a while: thawed for a breath every BREATH_INTERVAL_S, frozen again BREATH_S later: two breaths.
    advance(2 * (freezer.BREATH_INTERVAL_S + freezer.BREATH_S) + freezer.BREATH_S / 2)
    assert recorded.steps[2:] == ["thaw", "freeze", "thaw", "freeze"]
    policy.release()
    assert recorded.steps[-1] == "thaw"  # thawed for good ...
    steps = len(recorded.steps)
    advance(3 * freezer.BREATH_INTERVAL_S)
    policy.off_move()
    assert len(recorded.steps) == steps  # ... and never frozen again
    unmeasured = OffMove(RecordingFreezer(), clock, None)
    unmeasured.off_move()  # nothing tells how it behaves: frozen at once
    assert unmeasured.freezer.steps == ["freeze"]  # type: ignore[attr-defined]
    unmeasured.release()


class Measured(BotSession):
    """A session that adds up its bot's CPU time (its cgroup's) and the wall time between its decisions."""

    off_move_cpu_s = 0.0
    off_move_wall_s = 0.0
    _after: tuple[float, int] | None = None

    async def decide(self, *args, **kwargs):
        if self._after is not None:
            self.off_move_wall_s += time.perf_counter() - self._after[0]
            self.off_move_cpu_s += (self.process.cgroup.cpu_us() - self._after[1]) / 1e6
        try:
            return await super().decide(*args, **kwargs)
        finally:
            self._after = (time.perf_counter(), self.process.cgroup.cpu_us())


async def ponder_beside_thinkers(bots: Bots, freeze: bool) -> tuple[Measured, list]:
    """A ponderer and two steady thinkers, the ponderer frozen off move or not: two games."""
    timing = Timing(move_time_ms=2000, time_bank_ms=5000)
    setup = GameSetup("stop_the_bus", 3, timing)
    ponderer = Measured(dataclasses.replace(bots.bad("ponderer.py", "--cpu-ms", "5"), freeze=freeze))
    sessions = [ponderer] + [BotSession(bots.bad("thinker.py", "--cpu-ms", "5", name=f"thinker-{n}")) for n in (1, 2)]
    results = []
    try:
        await asyncio.gather(*(session.start(setup) for session in sessions))
        for number in (1, 2):
            seats = sessions[number - 1 :] + sessions[: number - 1]
            results.append(await Match("stop_the_bus", seats, seed=number, game_id=f"g{number}", timing=timing).play())
    finally:
        await asyncio.gather(*(session.stop() for session in sessions))
    return ponderer, results


@pytest.mark.skipif(SUPPORT.cpu() is None, reason="no cgroup to measure a bot's CPU time here")
def test_a_ponderers_workers_take_next_to_no_cpu_while_the_steady_thinkers_are_on_move(bots: Bots) -> None:
    frozen, games = asyncio.run(ponder_beside_thinkers(bots, freeze=True))
    assert all(not any(game.faults) and not game.forfeits for game in games)
    # Of one CPU. What is left is the 5 ms after each reply before the freeze and the breaths: a few
    # percent on an idle machine, more when a loaded one is slow to run the freeze; unfrozen it is tens.
    share = frozen.off_move_cpu_s / frozen.off_move_wall_s
    assert frozen.off_move_wall_s > 0.3 and share < 0.10, (frozen.off_move_cpu_s, frozen.off_move_wall_s)
    # The same bot not frozen: its three workers take whatever CPU the machine has while the others think.
    free, _ = asyncio.run(ponder_beside_thinkers(bots, freeze=False))
    free_share = free.off_move_cpu_s / free.off_move_wall_s
    assert free_share > 0.3 and free_share > 5 * share, (free_share, share)
