"""``referee ladder``: a folder of submissions judged as it changes, games played as it goes, resumed where it stopped.

Each author's folder is a copy of the Python sample bots with its own
``bot.yaml``; the ladder runs as a real ``referee ladder`` process, stopped
by SIGINT or by ``--games``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from referee.errors import LeagueError
from referee.ladder.entries import changed_submissions, judge
from referee.ladder.file import load_ladder
from referee.ladder.history import Register
from referee.schedule.base import rotate
from tests.conftest import PYTHON, ROOT, SAMPLE_BOTS, Bots
from tests.test_ray_backend import ray_here  # noqa: F401 - the fixture: skip where Ray cannot run

WAIT_S = 120.0


def author(submissions: Path, name: str, bots: Bots, kind: str = "random", manifest: str | None = None) -> Path:
    """An author's folder: the Python sample bots and a bot.yaml that runs the ``kind`` one with the test's marker."""
    folder = submissions / name
    shutil.copytree(SAMPLE_BOTS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    run = json.dumps(["python", f"{kind}_bot.py", "--marker", bots.marker])
    (folder / "bot.yaml").write_text(manifest or f"name: {name}\nversion: '1'\nrun: {run}\n")
    return folder


def ladder_file(folder: Path, bots: Bots, authors: dict[str, str]) -> Path:
    submissions = folder / "submissions"
    submissions.mkdir()
    for name, kind in authors.items():
        author(submissions, name, bots, kind)
    path = folder / "ladder.yaml"
    path.write_text(
        "name: season\ngame: stop_the_bus\nseed: 8157702950177155349\ntable_size: 3\nsubmissions: submissions\n"
        "output: out\nplacement_games: 6\npoll_s: 0.3\nconcurrency: 2\nmove_time_ms: 300\ntime_bank_ms: 300\n"
        "grace_ms: 300\n"
    )
    return path


def start(path: Path, bots: Bots, *options: str) -> subprocess.Popen:
    return subprocess.Popen([PYTHON, "-m", "referee", "ladder", str(path), *options], env=bots.subprocess_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def wait_for(what: str, ready, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + WAIT_S
    while not ready():
        if process.poll() is not None:
            raise AssertionError(f"the ladder ended before {what}: {process.communicate()}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"no {what} within {WAIT_S} s: {process.communicate()}")
        time.sleep(0.1)


def interrupted(process: subprocess.Popen, signal_number: int = signal.SIGINT) -> tuple[int, str]:
    process.send_signal(signal_number)
    out, err = process.communicate(timeout=60)
    return process.returncode, out + err


def check_records(output: Path) -> list[dict]:
    """Every game once; each one of a table drawn, seated as its rotation says, on the table's seed."""
    games = lines(output / "games.jsonl")
    repeated = [game_id for game_id, count in Counter(game["game_id"] for game in games).items() if count > 1]
    assert not repeated, f"games played twice: {repeated}"
    tables = {table["table"]: table for table in lines(output / "tables.jsonl")}
    for game in games:
        table = tables[game["table"]]
        assert game["seats"] == list(rotate(table["bots"], game["rotation"])) and str(game["seed"]) == table["seed"]
    return games


def test_a_ladder_judges_new_submissions_as_it_plays_and_resumes_after_sigint(tmp_path: Path, bots: Bots) -> None:
    path = ladder_file(tmp_path, bots, {"ann": "heuristic", "bob": "random", "cat": "random"})
    output = tmp_path / "out"
    ladder = start(path, bots)
    wait_for("three games", lambda: len(lines(output / "games.jsonl")) >= 3, ladder)
    submissions = tmp_path / "submissions"
    author(submissions, "dan", bots, "heuristic")
    author(submissions, "eve", bots, manifest="name: eve\nversion: '1'\nbuild: make\n")  # no run
    wait_for("a game of dan-v1", lambda: any("dan-v1" in game["seats"] for game in lines(output / "games.jsonl")),
             ladder)  # fmt: skip
    status, said = interrupted(ladder)
    assert status == 130, said
    assert "interrupted (Ctrl-C)" in said

    judged = [(record["bot"], record["verdict"]) for record in lines(output / "register.jsonl")]
    assert judged[:3] == [("ann-v1", "accepted"), ("bob-v1", "accepted"), ("cat-v1", "accepted")]
    assert sorted(judged[3:]) == [("dan-v1", "accepted"), ("eve-v1", "rejected")]
    report = json.loads((output / "reports" / "eve.json").read_text())
    (version,) = report["versions"]
    assert version["verdict"] == "rejected" and "bot.yaml:1: run: missing" in version["reason"]
    assert "eve-v1: rejected" in (output / "reports" / "eve.md").read_text()
    assert not (output / "builds" / "eve-v1").exists()
    # Placement first: from the first table that seats dan-v1, every table seats it until it has 6 games.
    tables = lines(output / "tables.jsonl")
    first = next(index for index, table in enumerate(tables) if "dan-v1" in table["bots"])
    assert all("dan-v1" in table["bots"] for table in tables[first : first + 2])
    assert "dan-v1" in json.loads((output / "league.json").read_text())["bots"]
    before = check_records(output)

    again = subprocess.run([PYTHON, "-m", "referee", "ladder", str(path), "--games", "4"], env=bots.subprocess_env(),
                           capture_output=True, text=True, timeout=WAIT_S)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "judging" not in again.stdout  # nothing changed: nothing judged again
    games = check_records(output)
    assert len(games) > len(before)
    finished = {game["game_id"] for game in games}
    for table in tables:  # a table half played when the ladder stopped was finished first
        assert {f"r1-t{table['table']:03d}-s{rotation}" for rotation in range(3)} <= finished
    board = json.loads((output / "leaderboard.json").read_text())
    assert {"ann-v1", "bob-v1", "cat-v1", "dan-v1"} <= {row["bot"] for row in board["rows"]}

    withdrawn = subprocess.run([PYTHON, "-m", "referee", "ladder", str(path), "--withdraw", "bob-v1", "--reason",
                                "asked by its author"], env=bots.subprocess_env(), capture_output=True, text=True)  # fmt: skip
    assert withdrawn.returncode == 0, withdrawn.stderr
    (change,) = [record for record in lines(output / "register.jsonl") if record["kind"] == "status"]
    assert (change["bot"], change["status"], change["reason"]) == ("bob-v1", "withdrawn", "asked by its author")
    assert json.loads((output / "reports" / "bob.json").read_text())["versions"][0]["status"] == "withdrawn"


def test_a_ladder_on_a_local_ray_stops_on_sigint_and_continues(tmp_path: Path, bots: Bots, ray_here: None) -> None:  # noqa: F811
    path = ladder_file(tmp_path, bots, {"ann": "heuristic", "bob": "random", "cat": "random"})
    output = tmp_path / "out"
    ladder = start(path, bots, "--backend", "ray")
    wait_for("two games", lambda: len(lines(output / "games.jsonl")) >= 2, ladder)
    status, said = interrupted(ladder)
    assert status == 130, said
    before = check_records(output)
    again = subprocess.run([PYTHON, "-m", "referee", "ladder", str(path), "--backend", "ray", "--games", "3"],
                           env=bots.subprocess_env(), capture_output=True, text=True, timeout=WAIT_S)  # fmt: skip
    assert again.returncode == 0, again.stderr
    games = check_records(output)
    assert len(games) > len(before)
    assert {game["game_id"] for game in before} < {game["game_id"] for game in games}


def test_a_ladder_file_is_checked_with_file_line_and_key(tmp_path: Path) -> None:
    (tmp_path / "submissions").mkdir()
    path = tmp_path / "ladder.yaml"
    body = "name: season\ngame: stop_the_bus\nseed: 1\ntable_size: 3\nsubmissions: submissions\n"
    path.write_text(body + "placement_games: -1\n")
    with pytest.raises(LeagueError, match=r"ladder.yaml:6: placement_games: -1 is too small"):
        load_ladder(path)
    path.write_text(body + "bots: []\n")
    with pytest.raises(LeagueError, match=r"ladder.yaml:6: bots: unknown key; allowed keys: name, game"):
        load_ladder(path)
    path.write_text(body.replace("submissions: submissions", "submissions: nowhere"))
    with pytest.raises(LeagueError, match=r"ladder.yaml:5: submissions: .*nowhere is not a folder"):
        load_ladder(path)
    path.write_text(body)
    ladder = load_ladder(path)
    assert ladder.placement_games == 6 and ladder.output == tmp_path / "results" / "season"
    example = load_ladder(ROOT / "tournaments" / "ladder.example.yaml")
    assert example.submissions == ROOT / "tournaments" / "ladder-submissions" and example.check_games == 1


def test_a_ladder_file_reads_the_builds_network_as_a_league_file_does(tmp_path: Path) -> None:
    (tmp_path / "submissions").mkdir()
    path = tmp_path / "ladder.yaml"
    body = "name: season\ngame: stop_the_bus\nseed: 1\ntable_size: 3\nsubmissions: submissions\n"
    path.write_text(body)
    assert load_ladder(path).league.build_network == "host"  # builds fetch packages
    path.write_text(body + "build_network: none\n")
    assert load_ladder(path).league.build_network == "none"
    path.write_text(body + "sandbox: none\nbuild_network: none\n")
    with pytest.raises(LeagueError, match=r"ladder.yaml:7: build_network: none needs the sandbox"):
        load_ladder(path)


def test_a_first_submission_without_run_is_rejected_with_its_report_and_never_built(tmp_path: Path, bots: Bots) -> None:
    path = ladder_file(tmp_path, bots, {})
    author(tmp_path / "submissions", "eve", bots, manifest="name: eve\nversion: '1'\n")
    ladder = load_ladder(path)
    ladder.output.mkdir()
    register = Register(ladder.output)
    try:
        ((name, folder, digest),) = changed_submissions(ladder, register)
        verdict = asyncio.run(judge(ladder, register, name, folder, digest, lambda line: None))
        assert (verdict.bot, verdict.verdict) == ("eve-v1", "rejected") and "run: missing" in verdict.reason
        assert changed_submissions(ladder, register) == []  # judged once: not again while the folder is unchanged
    finally:
        register.close()
    assert "run: missing" in (ladder.output / "reports" / "eve.md").read_text()
    assert not (ladder.output / "builds" / "eve-v1").exists()
