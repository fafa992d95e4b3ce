"""Run a league on a local Ray cluster of one or two nodes, removing a node or stopping in the middle.

    python tests/ray_cluster.py LEAGUE OUTPUT [--nodes 2] [--remove-after N] [--stop-after N]

For tests/test_ray_backend.py. Run it in a private network namespace with
only loopback up (``unshare --net``, then ``ip link set lo up``): the
cluster's nodes bind 127.0.0.1 there. Each node has one CPU, so one game
slot; the league plays one game at a time on each node. ``--remove-after
N``: once N games have finished, the last node (not the driver's) is removed
at once (its processes killed together, as when a machine dies): whatever game its
slot held or was about to start is lost, and must be played again on another
node. ``--stop-after N``: ``run_league``'s ``stop`` says true once N games
have finished. Prints one JSON line: the games played again, the games
played this run, and whether a node was removed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from referee.backends.ray import prepare_local_ray

prepare_local_ray()  # before Ray is imported

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from referee.apps.league import run_league  # noqa: E402
from referee.backends.ray import RayBackend  # noqa: E402
from referee.leaguefile.config import load_league  # noqa: E402


def kill_node(cluster: Cluster, node) -> None:
    """Kill a node as a machine dies: its raylet's processes (the Ray workers and what they started) at once,
    then the node's own processes (a worker left alone might serve its actor a while longer)."""
    raylet = node.all_processes["raylet"][0].process.pid
    for pid in descendants(raylet):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    cluster.remove_node(node, allow_graceful=False)


def descendants(pid: int) -> list[int]:
    """The processes started by ``pid``, and by them, and so on (from /proc)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in map(int, (task / "children").read_text().split()):
                found += [child, *descendants(child)]
    return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("league", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--remove-after", type=int, metavar="N")
    parser.add_argument("--stop-after", type=int, metavar="N")
    args = parser.parse_args()

    # A temporary folder of its own for the cluster's sessions and logs, and the bots' sockets: removed at the end.
    temp_dir = tempfile.mkdtemp(prefix="ray-")
    os.environ["TMPDIR"] = tempfile.tempdir = temp_dir
    node_args = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}
    cluster = Cluster(initialize_head=True, head_node_args={**node_args, "include_dashboard": False})
    nodes = [cluster.add_node(**node_args) for _ in range(args.nodes - 1)]
    backends: list[RayBackend] = []
    removed = False
    finished = 0

    def backend(league, output, concurrency):
        backends.append(RayBackend(league, output, concurrency, address=cluster.address))
        return backends[-1]

    def progress(done: int, total: int, standings) -> None:
        nonlocal removed, finished
        finished = done
        if args.remove_after is not None and done >= args.remove_after and not removed:
            removed = True
            kill_node(cluster, nodes[-1])

    def stop() -> bool:
        return args.stop_after is not None and finished >= args.stop_after

    try:
        logging.getLogger("ray").setLevel(logging.ERROR)
        summary = asyncio.run(
            run_league(
                load_league(args.league),
                output=args.output,
                concurrency=args.nodes,
                progress=progress,
                stop=stop,
                backend=backend,
            )
        )
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)
    print(json.dumps({"replayed": backends[0].replayed, "played": summary.played, "removed": removed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
