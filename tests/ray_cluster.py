"""Run a league on a two-node local Ray cluster and remove one node in the middle (tests/test_ray_backend.py).

    python tests/ray_cluster.py LEAGUE OUTPUT --remove-after N

Run it in a private network namespace with only loopback up (``unshare --net``,
then ``ip link set lo up``): the cluster's nodes bind 127.0.0.1 there. Two
nodes of one CPU each; the league plays two games at once, one slot on each
node. After ``N`` games have finished, the node without the driver is removed
at once (its processes killed, as when a machine dies): whatever game its
slot held or was about to start is lost, and must be played again on the
other node. Prints one JSON line: the games played again, the games played
this run, and whether the node was removed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

from referee.backends.ray import prepare_local_ray

prepare_local_ray()  # before Ray is imported

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from referee.backends.ray import RayBackend  # noqa: E402
from referee.config import load_league  # noqa: E402
from referee.league import run_league  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("league", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--remove-after", type=int, required=True, metavar="N")
    args = parser.parse_args()

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "include_dashboard": False, "object_store_memory": 100 * 1024 * 1024,
    })  # fmt: skip
    doomed = cluster.add_node(num_cpus=1, object_store_memory=100 * 1024 * 1024)
    backends: list[RayBackend] = []
    removed = False

    def backend(league, output, concurrency):
        backends.append(RayBackend(league, output, concurrency, address=cluster.address))
        return backends[-1]

    def progress(done: int, total: int, standings) -> None:
        nonlocal removed
        if done >= args.remove_after and not removed:
            removed = True
            cluster.remove_node(doomed, allow_graceful=False)

    try:
        logging.getLogger("ray").setLevel(logging.ERROR)
        summary = asyncio.run(run_league(
            load_league(args.league), output=args.output, concurrency=2, progress=progress, backend=backend,
        ))  # fmt: skip
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
    print(json.dumps({"replayed": backends[0].replayed, "played": summary.played, "removed": removed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
