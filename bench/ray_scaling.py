"""Benchmark the Ray backend: the same league on a local Ray cluster of one node, then of two.

Each node of the cluster (``ray.cluster_utils.Cluster``, all on this machine)
has one CPU for Ray, so one game slot: the league plays one game at a time
on one node, two at a time on two. The league is the random sample bot
(sample_bots/python/random_bot.py), four of them, three at a table, Stop the
Bus, run by ``referee.apps.league.run_league`` with the Ray backend. Games per
minute are counted from the first game's end to the last's (the cluster's
start and each slot's first start are left out), and the ratio of the two
rates is printed as ``ray scaling 1->2 nodes: X``; then the same league with
the local backend, two games at once, counted the same way, for comparison.
On a machine of two cores the ratio is bounded by them: the two nodes, their
bots and the driver share the same two cores.

Every Ray runs in a private network namespace with only loopback up: the
script runs itself again in one (``unshare --net``, then ``ip link set lo
up``) when it is not in one.

Run from the repository root with the project installed (the virtual environment of `make test`):

    .venv/bin/python bench/ray_scaling.py            # about 40 s on 2 cores
    .venv/bin/python bench/ray_scaling.py --quick    # about 30 s: fewer games
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import cpu_name  # noqa: E402  (bench/machine.py, beside this script)

from referee.backends.netns import in_private_network, loopback_only  # noqa: E402
from referee.backends.ray import prepare_local_ray  # noqa: E402

RANDOM_BOT = ROOT / "sample_bots" / "python" / "random_bot.py"
BOTS = 4
TABLE_SIZE = 3
GAMES_PER_ROUND = 12  # 4 tables of 3 bots, 3 seat rotations each


def write_league(directory: Path, name: str, games: int, concurrency: int) -> Path:
    """A Stop the Bus league of about ``games`` games between four random bots; return its path."""
    lines = [
        f"name: {name}",
        "game: stop_the_bus",
        "seed: 20261201",
        f"table_size: {TABLE_SIZE}",
        f"rounds: {max(1, round(games / GAMES_PER_ROUND))}",
        f"concurrency: {concurrency}",
        f"output: {directory / name}",
        "bots:",
    ]
    for index in range(BOTS):
        lines += [f"  - name: random-{index}", f"    command: python {RANDOM_BOT}"]
    path = directory / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_child(league_file: str, nodes: int) -> None:
    """Start a cluster of ``nodes`` one-CPU nodes, run the league on it, print its figures as a JSON line.

    ``nodes`` 0: the local backend instead, two games at once (the same counting, for comparison).
    """
    if nodes == 0:
        run_local(league_file)
        return
    prepare_local_ray()
    import ray
    from ray.cluster_utils import Cluster

    from referee.apps.league import run_league
    from referee.backends.ray import RayBackend
    from referee.leaguefile.config import load_league

    # A temporary folder of its own for the cluster's sessions and logs, and the bots' sockets: removed at the end.
    temp_dir = tempfile.mkdtemp(prefix="ray-")
    os.environ["TMPDIR"] = tempfile.tempdir = temp_dir
    started = time.perf_counter()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            "include_dashboard": False,
            "object_store_memory": 100 * 1024 * 1024,
        },
    )
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1, object_store_memory=100 * 1024 * 1024)
    cluster_s = time.perf_counter() - started
    ends: list[float] = []

    def progress(done: int, total: int, standings) -> None:
        ends.append(time.perf_counter())

    try:
        logging.getLogger("ray").setLevel(logging.ERROR)
        summary = asyncio.run(
            run_league(
                load_league(league_file),
                concurrency=nodes,
                progress=progress,
                backend=lambda league, output, concurrency: RayBackend(
                    league, output, concurrency, address=cluster.address
                ),
            )
        )
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)
    ends = ends[1:]  # the first report comes before any game
    print(
        json.dumps(
            {
                "played": summary.played,
                "cluster_s": cluster_s,
                "wall_s": summary.wall_s,
                "steady_s": ends[-1] - ends[0],
                "disabled": summary.disabled,
            }
        )
    )


def run_local(league_file: str) -> None:
    from referee.apps.league import run_league
    from referee.leaguefile.config import load_league

    ends: list[float] = []
    summary = asyncio.run(run_league(load_league(league_file), progress=lambda *_: ends.append(time.perf_counter())))
    ends = ends[1:]
    print(
        json.dumps(
            {
                "played": summary.played,
                "cluster_s": 0.0,
                "wall_s": summary.wall_s,
                "steady_s": ends[-1] - ends[0],
                "disabled": summary.disabled,
            }
        )
    )


def run_nodes(directory: Path, nodes: int, games: int) -> dict:
    league = write_league(directory, f"ray-{nodes}-nodes", games, nodes or 2)
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(league), "--nodes", str(nodes)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the league on {nodes} node(s) failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["disabled"]:
        raise SystemExit(f"bots were disabled on {nodes} node(s): {figures['disabled']}")
    figures["rate"] = (figures["played"] - 1) / figures["steady_s"] * 60
    if nodes == 0:
        print(
            f"local backend (2 games at once, for comparison): {figures['rate']:.1f} games/min "
            f"({figures['played']} games; the whole run {figures['wall_s']:.1f} s)",
            flush=True,
        )
        return figures
    print(
        f"{nodes} node{'s' if nodes > 1 else ''} (1 CPU each, {nodes} game{'s' if nodes > 1 else ''} at once): "
        f"{figures['rate']:.1f} games/min ({figures['played']} games; cluster started in {figures['cluster_s']:.1f} s, "
        f"the whole run {figures['wall_s']:.1f} s)",
        flush=True,
    )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer games: under a minute")
    parser.add_argument("--child", metavar="LEAGUE_FILE", help=argparse.SUPPRESS)
    parser.add_argument("--nodes", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run_child(args.child, args.nodes)
        return 0
    if not loopback_only():  # run again in a private network namespace: every local Ray runs in one
        command = in_private_network([sys.executable, __file__, *(argv if argv is not None else sys.argv[1:])])
        return subprocess.run(command, check=False).returncode
    print(f"python {platform.python_version()} ({platform.python_implementation()}) {sys.executable}")
    print(f"machine: {platform.platform()}, {cpu_name()}, {os.cpu_count()} logical cpus", flush=True)
    games = 24 if args.quick else 96
    print(
        f"\n{BOTS} random sample bots, {TABLE_SIZE} at a table, Stop the Bus, about {games} games a league, "
        "on a local Ray cluster in a private network namespace",
        flush=True,
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="referee-ray-bench-") as temporary:
        one = run_nodes(Path(temporary), 1, games)
        two = run_nodes(Path(temporary), 2, games)
        run_nodes(Path(temporary), 0, games)
    print(f"ray scaling 1->2 nodes: {two['rate'] / one['rate']:.2f}")
    print(f"\ndone in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
