"""The Ray backend: a league on a local Ray equals the local backend's, a lost node loses no game, no process stays.

Every Ray here runs in a private network namespace with only loopback up
(``unshare --net``), where it binds 127.0.0.1: ``referee run --backend ray``
makes one itself; the two-node cluster runs in tests/ray_cluster.py, started
in one.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.apps.league import GAME_LOG_DIR, RESULTS_FILE, run_league
from referee.backends.netns import NamespaceError, in_private_network
from referee.leaguefile.config import load_league
from referee.records.gamelog import log_files, log_text
from referee.records.results import read_records
from tests.processes import marked_processes

from .conftest import PYTHON, ROOT, SAMPLE_BOTS, Bots
from .test_league import without_timing, write_league

DEMO_LEAGUE = ROOT / "tournaments" / "demo_python.yaml"
CLUSTER_SCRIPT = ROOT / "tests" / "ray_cluster.py"


@pytest.fixture
def ray_here() -> None:
    """Skip, saying why, where Ray is not installed or a private network namespace cannot be made."""
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'brag-referee[ray]' (make test installs it)")
    try:
        in_private_network(["true"])
    except NamespaceError as error:
        pytest.skip(f"no private network namespace for a local Ray here: {error}")


def game_logs_without_timing(output: Path) -> dict[str, list[dict]]:
    """Every game log of a run, by file name, without the wall-clock figures of its decisions, hands and end, nor
    where the bots' output went (which process of a bot played a game, and so its output file, is the run's, not the
    game's)."""
    logs = {}
    for path in log_files(output / GAME_LOG_DIR):
        records = [json.loads(line) for line in log_text(path).splitlines()]
        for record in records:
            record.pop("ms", None)
            record.pop("wall_ms", None)
            record.pop("at", None)
            record.pop("output", None)
        logs[path.name] = records
    return logs


def processes_under(socket_root: Path, wait: float = 5.0) -> list[str]:
    """Processes still alive that were started under ``socket_root`` (TMPDIR of the run: Ray's and the bots')."""
    deadline = time.monotonic() + wait
    while True:
        found = marked_processes(str(socket_root), socket_root)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def local_run(league_path: Path, output: Path) -> None:
    summary = asyncio.run(run_league(load_league(league_path), output=output, concurrency=2))
    assert summary.played == summary.total


def test_the_demo_league_on_a_local_ray_equals_the_local_run_and_leaves_no_process(
    tmp_path: Path, bots: Bots, ray_here: None
) -> None:
    local_run(DEMO_LEAGUE, tmp_path / "local")
    ray = subprocess.run(
        [
            PYTHON,
            "-m",
            "referee",
            "run",
            str(DEMO_LEAGUE),
            "--output",
            str(tmp_path / "ray"),
            "--backend",
            "ray",
            "--no-progress",
        ],
        env=bots.subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ray.returncode == 0, ray.stderr
    assert "12 games played" in ray.stdout and "2 at once" in ray.stdout
    assert without_timing(tmp_path / "ray") == without_timing(tmp_path / "local")
    assert game_logs_without_timing(tmp_path / "ray") == game_logs_without_timing(tmp_path / "local")
    assert len(game_logs_without_timing(tmp_path / "ray")) == 12
    # Each slot kept its bots between games: a process per bot, lane (one of the table's 3 rotations: referee.leaguefile.lanes)
    # and slot, named for the slot (tests/test_deals.py checks what each process played).
    logs = sorted(path.name for path in (tmp_path / "ray" / "logs").glob("random-w*.log"))
    assert {name.rsplit("-", 1)[0] for name in logs} == {"random-w1", "random-w2"}
    assert set(logs) <= {f"random-w{slot}-{number}.log" for slot in (1, 2) for number in (1, 2, 3)}
    assert processes_under(bots.socket_root) == []  # no raylet, Ray worker or bot


def test_a_node_removed_in_the_middle_of_a_league_loses_no_game(tmp_path: Path, bots: Bots, ray_here: None) -> None:
    entries = [
        (name, bots.command(SAMPLE_BOTS / f"{kind}_bot.py"))
        for name, kind in (("alpha", "random"), ("bravo", "heuristic"), ("charlie", "random"), ("delta", "heuristic"))
    ]
    league_path = write_league(tmp_path / "league.yaml", bots, entries=entries, table_size=3, concurrency=2)
    total = len(load_league(league_path).schedule())  # 4 tables x 3 rotations
    local_run(league_path, tmp_path / "local")

    command = in_private_network(
        [PYTHON, str(CLUSTER_SCRIPT), str(league_path), str(tmp_path / "ray"), "--remove-after", "4"]
    )
    cluster = subprocess.run(command, env=bots.subprocess_env(), capture_output=True, text=True, timeout=300)
    assert cluster.returncode == 0, cluster.stderr[-3000:]
    report = json.loads(cluster.stdout.strip().splitlines()[-1])
    assert report["removed"] and report["played"] == total == 12
    # The game the removed node held (or was about to start) was played again on the other node, and said so.
    assert len(report["replayed"]) == 1
    assert f"ray: game {report['replayed'][0]} was lost with its node" in cluster.stderr
    game_ids = [record["game_id"] for record in read_records(tmp_path / "ray" / RESULTS_FILE)]
    assert len(game_ids) == len(set(game_ids)) == total  # every game exactly once
    assert without_timing(tmp_path / "ray") == without_timing(tmp_path / "local")
    assert game_logs_without_timing(tmp_path / "ray") == game_logs_without_timing(tmp_path / "local")
    assert processes_under(bots.socket_root) == []
    assert bots.leftovers() == []


def test_a_ray_run_ended_by_stop_resumes_with_the_local_backend_to_the_same_results(
    tmp_path: Path, bots: Bots, ray_here: None
) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)  # 6 games
    local_run(league_path, tmp_path / "local")
    command = in_private_network(
        [PYTHON, str(CLUSTER_SCRIPT), str(league_path), str(tmp_path / "mixed"), "--nodes", "1", "--stop-after", "2"]
    )
    stopped = subprocess.run(command, env=bots.subprocess_env(), capture_output=True, text=True, timeout=300)
    assert stopped.returncode == 0, stopped.stderr[-3000:]
    assert json.loads(stopped.stdout.strip().splitlines()[-1])["played"] == 2  # stop is asked before each game
    resumed = asyncio.run(run_league(load_league(league_path), output=tmp_path / "mixed"))
    assert (resumed.played, resumed.already_finished) == (4, 2)
    assert without_timing(tmp_path / "mixed") == without_timing(tmp_path / "local")
    assert game_logs_without_timing(tmp_path / "mixed") == game_logs_without_timing(tmp_path / "local")
    assert processes_under(bots.socket_root) == []


def test_backend_ray_without_ray_says_how_to_install_it(tmp_path: Path) -> None:
    hide_ray = "import sys; sys.modules['ray'] = None; from referee.cli import main; sys.exit(main(sys.argv[1:]))"
    output = tmp_path / "out"
    result = subprocess.run(
        [PYTHON, "-c", hide_ray, "run", str(DEMO_LEAGUE), "--output", str(output), "--backend", "ray"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "referee run: --backend ray needs Ray, which is not installed here: pip install 'brag-referee[ray]'"
    ]
    assert not output.exists()  # refused before anything ran

    address_alone = subprocess.run(
        [sys.executable, "-m", "referee", "run", str(DEMO_LEAGUE), "--address", "x:1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert address_alone.returncode == 2
    assert "--address is the Ray cluster of --backend ray" in address_alone.stderr
