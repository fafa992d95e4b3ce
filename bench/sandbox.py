"""Benchmark what the sandbox costs: a bot's start-up, a decision, and reading a bot's usage for the clock.

Three measurements, each with the sandbox (bubblewrap, cgroups) and without
it (``sandbox: none``: the same bot in a process group, still in its
cgroups), interleaved so that other load on the machine falls on both alike:

- start-up: from launching a bot to its handshake answered (it listens, the
  channel connects, one handshake), for the benchmark bot
  (bench/echo_bot.py, Python) and, where Node.js is set up, the Node.js
  sample bot; the median and 90th percentile over every start;
- per decision: whole games between three benchmark bots (Stop the Bus),
  their wall time over their decisions, as bench/overhead.py's (b); the
  median over blocks of each block's mean;
- usage: ``BotProcess.usage()`` (two ``pread`` calls on the bot's cgroup
  files and their parsing), called on a running bot, as the clock does
  twice per decision; the mean of many calls.

Run from the repository root with the project installed (the virtual environment of ``make test``):

    .venv/bin/python bench/sandbox.py            # 30 starts of each bot, 7 blocks of 1,000 decisions
    .venv/bin/python bench/sandbox.py --quick    # 8 starts, 3 blocks of 400 decisions
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import cpu_name  # noqa: E402  (bench/machine.py, beside this script)

from referee.play import sandbox  # noqa: E402
from referee.play.match import Match, start_bots, stop_bots  # noqa: E402
from referee.play.processes import BotSpec  # noqa: E402
from referee.play.session import BotSession  # noqa: E402
from referee.protocol.clock import Timing  # noqa: E402
from referee.protocol.faults import BotFault  # noqa: E402
from referee.protocol.setup import GameSetup  # noqa: E402

ECHO_BOT = ROOT / "bench" / "echo_bot.py"
NODE_BOT = ROOT / "sample_bots" / "node"
TIMING = Timing()
GAME, PLAYERS = "stop_the_bus", 3
USAGE_CALLS = 100_000
MODES = {"sandbox": True, "no sandbox": False}


def echo_spec(name: str, sandboxed: bool) -> BotSpec:
    return BotSpec(name=name, command=(sys.executable, str(ECHO_BOT)), sandbox=sandboxed)


def node_spec(sandboxed: bool) -> BotSpec | None:
    if shutil.which("node") is None or not (NODE_BOT / "bot.proto").is_file():
        return None
    return BotSpec(
        name="node", command=("node", "bot.js"), cwd=str(NODE_BOT), folders=(str(NODE_BOT),), sandbox=sandboxed
    )


def summary(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"median {statistics.median(ordered) * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms"


async def start_up(starts: int) -> dict[tuple[str, str], list[float]]:
    """Launch-to-handshake times, by (bot, mode)."""
    times: dict[tuple[str, str], list[float]] = {}
    setup = GameSetup(GAME, PLAYERS, TIMING)
    for number in range(starts):
        order = list(MODES.items()) if number % 2 == 0 else list(reversed(MODES.items()))
        for mode, sandboxed in order:
            for bot, spec in (("python", echo_spec("echo", sandboxed)), ("node", node_spec(sandboxed))):
                if spec is None:
                    continue
                session = BotSession(spec)
                started = perf_counter()
                await session.start(setup)
                times.setdefault((bot, mode), []).append(perf_counter() - started)
                await session.stop()
    return times


async def per_decision(blocks: int, decisions: int) -> dict[str, list[float]]:
    """Each block's mean wall time per decision of whole games, by mode."""
    tables = {}
    for mode, sandboxed in MODES.items():
        specs = [echo_spec(f"echo-{seat}", sandboxed) for seat in range(PLAYERS)]
        bots = await start_bots(specs, GameSetup(GAME, PLAYERS, TIMING))
        if any(isinstance(bot, BotFault) for bot in bots):
            await stop_bots(bots)
            raise SystemExit(f"the benchmark bot did not start: {bots}")
        tables[mode] = bots
    means: dict[str, list[float]] = {mode: [] for mode in MODES}
    seed = 1
    try:
        with tempfile.TemporaryDirectory(prefix="referee-sandbox-bench-") as log_dir:
            for block in range(blocks + 1):  # the first block warms up and is not counted
                order = list(MODES) if block % 2 == 0 else list(reversed(MODES))
                for mode in order:
                    bots = tables[mode]
                    played, elapsed = 0, 0.0
                    while played < decisions:
                        seed += 1
                        match = Match(
                            GAME,
                            bots,
                            seed=seed,
                            game_id=f"bench-{seed}",
                            timing=TIMING,
                            log_path=Path(log_dir) / f"{seed}.jsonl",
                            players=[bot.spec.name for bot in bots],
                        )
                        started = perf_counter()
                        result = await match.play()
                        elapsed += perf_counter() - started
                        if any(result.faults):
                            raise SystemExit(f"the benchmark bot faulted: {result.faults}")
                        played += result.decisions
                    if block:
                        means[mode].append(elapsed / played)
    finally:
        for bots in tables.values():
            await stop_bots(bots)
    return means


async def usage_cost() -> float | None:
    """Seconds per ``BotProcess.usage()`` call on a running sandboxed bot; None where it has no cgroup."""
    session = BotSession(echo_spec("echo", True))
    await session.start(GameSetup(GAME, PLAYERS, TIMING))
    try:
        usage = session.process.usage
        if usage() is None:
            return None
        started = perf_counter()
        for _ in range(USAGE_CALLS):
            usage()
        return (perf_counter() - started) / USAGE_CALLS
    finally:
        await session.stop()


async def main(quick: bool) -> None:
    starts, blocks, decisions = (8, 3, 400) if quick else (30, 7, 1000)
    print(
        f"machine: {cpu_name()}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )
    print(sandbox.machine_summary())
    bwrap = sandbox.bubblewrap()
    if bwrap.problem:
        raise SystemExit(f"no sandbox here: {bwrap.problem}")

    times = await start_up(starts)
    print(f"\nstart-up, launch to handshake answered ({starts} starts each):")
    for bot in ("python", "node"):
        if (bot, "sandbox") not in times:
            print(f"  {bot}: not set up here (Node.js and `make node-deps`)")
            continue
        with_sandbox, without = times[(bot, "sandbox")], times[(bot, "no sandbox")]
        extra = statistics.median(with_sandbox) - statistics.median(without)
        print(
            f"  {bot}: sandbox {summary(with_sandbox)}; no sandbox {summary(without)}; "
            f"the sandbox adds {extra * 1000:.1f} ms (medians)"
        )

    means = await per_decision(blocks, decisions)
    with_sandbox, without = statistics.median(means["sandbox"]), statistics.median(means["no sandbox"])
    print(f"\nper decision, whole games of {PLAYERS} benchmark bots ({blocks} blocks of {decisions}+ decisions):")
    print(
        f"  sandbox {with_sandbox * 1e6:.0f} us, no sandbox {without * 1e6:.0f} us (medians of block means): "
        f"the sandbox adds {(with_sandbox - without) * 1e6:+.0f} us ({(with_sandbox / without - 1) * 100:+.1f}%)"
    )

    cost = await usage_cost()
    print(
        f"\nusage() for the clock ({USAGE_CALLS} calls on a running bot): "
        + (f"{cost * 1e6:.2f} us a call" if cost is not None else "not available (no cgroup)")
    )
    print(f"clock: {sandbox.clock_description()}")


if __name__ == "__main__":
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--quick", action="store_true", help="fewer starts and shorter blocks")
    asyncio.run(main(options.parse_args().quick))
