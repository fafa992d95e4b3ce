"""`referee check-bot DIR` and its options, with real bot processes: a submission folder built as a league
builds it, its bot.yaml's problems named by file, line and key, the JSON report, the fault policy and the
opponents. (A bad bot failing check-bot -- CMD is tests/test_faults.py's; the bot kits', tests/test_*_bot.py.)
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from referee.records.gamelog import read_log
from tests.conftest import BAD_BOTS, PYTHON, SAMPLE_BOTS, Bots

QUICK = ["--game", "stop_the_bus", "--seats", "3", "--games", "1"]


def check_bot(bots: Bots, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "referee.cli", "check-bot", *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        env=bots.subprocess_env(),
    )


def submission(folder: Path, manifest: str) -> Path:
    """A copy of the Python sample bots' folder with its own bot.yaml."""
    shutil.copytree(SAMPLE_BOTS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "bot.yaml").write_text(manifest)
    return folder


def report_of(checked: subprocess.CompletedProcess) -> dict:
    """The --json report; the logs it kept (they exist) are removed, as the test's folder must be left empty."""
    report = json.loads(checked.stdout)
    if report["logs"] is not None:
        assert Path(report["logs"]).is_dir()
        shutil.rmtree(report["logs"])
    return report


def test_a_folder_whose_bot_yaml_has_no_run_fails_in_one_line_naming_the_file_and_the_key(bots: Bots, tmp_path) -> None:
    folder = submission(tmp_path / "mine", "name: mine\nversion: '1'\nbuild: make\n")
    checked = check_bot(bots, "--build-cache", str(tmp_path / "cache"), str(folder))
    assert checked.returncode == 1
    (line,) = checked.stderr.strip().splitlines()
    assert line.startswith(f"{folder}/bot.yaml:1: run: missing; bot.yaml needs name, version, run (run: the command")
    report = report_of(check_bot(bots, "--json", "--build-cache", str(tmp_path / "cache"), str(folder)))
    assert report["passed"] is False
    assert report["checks"] == [{"check": "manifest", "verdict": "fail", "detail": line}]
    assert not (tmp_path / "cache").exists()  # nothing was built


def test_a_submission_is_built_in_a_copy_reused_while_unchanged_and_built_again_once_changed(bots, tmp_path) -> None:
    folder = submission(
        tmp_path / "mine", "name: mine\nversion: '1'\nbuild: echo built >> built.txt\nrun: [python, heuristic_bot.py]\n"
    )
    cache = ["--build-cache", str(tmp_path / "cache")]
    first = check_bot(bots, *QUICK, *cache, "--json", str(folder))
    assert first.returncode == 0, first.stderr
    report = report_of(first)
    assert report["passed"] is True
    assert [(check["check"], check["verdict"]) for check in report["checks"]] == [
        ("manifest", "pass"),
        ("build", "pass"),
        ("handshake", "pass"),
        ("game", "pass"),
    ]
    (build,) = [check for check in report["checks"] if check["check"] == "build"]
    copy = Path(build["copy"])
    assert build["reused"] is False and (copy / "built.txt").read_text() == "built\n"
    assert not (folder / "built.txt").exists(), "the build ran in the submission's own folder"
    assert "handshake ok: heuristic 1.0" in first.stderr
    again = check_bot(bots, *QUICK, *cache, str(folder))
    assert again.returncode == 0 and "reused" in again.stdout and (copy / "built.txt").read_text() == "built\n"
    (folder / "notes.txt").write_text("a change")
    changed = check_bot(bots, *QUICK, *cache, str(folder))
    assert changed.returncode == 0 and "build ok: mine: built in" in changed.stdout
    assert (copy / "notes.txt").exists() and (copy / "built.txt").read_text() == "built\n"  # a fresh copy


def test_the_json_report_names_each_fault_with_its_game_and_decision_under_the_policy_asked(bots, tmp_path) -> None:
    illegal = [PYTHON, str(BAD_BOTS / "bad_reply.py"), "--mode", "illegal", "--at", "2,4", "--marker", bots.marker]
    logs = tmp_path / "logs"
    checked = check_bot(bots, *QUICK, "--fault-policy", "default_action", "--json", "--logs", str(logs), "--", *illegal)
    assert checked.returncode == 1
    report = json.loads(checked.stdout)
    assert report["passed"] is False and report["logs"] == str(logs)
    (game,) = [check for check in report["checks"] if check["check"] == "game"]
    assert game["verdict"] == "fail" and game["game"] == "stop_the_bus" and game["seats"] == 3
    faults = [check for check in report["checks"] if check["check"] == "fault"]
    recorded = [record for record in read_log(Path(game["log"])) if record["type"] == "fault"]
    assert [(check["decision"], check["kind"], check["detail"]) for check in faults] == [
        (record["n"], "illegal", record["detail"]) for record in recorded
    ]
    assert len(faults) == 2 and all(check["game_id"] == game["game_id"] for check in faults)
    assert not [check for check in report["checks"] if check["check"] == "forfeit"]  # the default action was played
    assert "2 illegal faults" in checked.stderr


def test_the_opponents_given_take_the_other_seats_and_a_copy_of_the_bot_faults_as_the_bot(bots, tmp_path) -> None:
    random_bot = [PYTHON, str(SAMPLE_BOTS / "random_bot.py"), "--marker", bots.marker]
    logs = tmp_path / "logs"
    checked = check_bot(
        bots, *QUICK, "--logs", str(logs), "--opponent", "self", "--opponent", " ".join(random_bot), "--", *random_bot
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (log,) = logs.glob("check-*.jsonl")
    # Each opponent is named by its command's last word (here the test's marker) and its seat among the opponents.
    assert sorted(read_log(log)[0]["players"]) == ["candidate", f"{bots.marker}-2", "self-1"]
    crashing = [PYTHON, str(BAD_BOTS / "crash.py"), "--at", "3", "--marker", bots.marker]
    checked = check_bot(bots, *QUICK, "--json", "--opponent", "self", "--", *crashing)
    assert checked.returncode == 1
    report = report_of(checked)
    crashes = [check for check in report["checks"] if check["check"] == "fault"]
    crashed = {check["bot"] for check in crashes}
    # Every process crashes on its third decision; two crashes end a game of three.
    assert (
        all(check["kind"] == "crash" for check in crashes) and "candidate" in crashed and crashed & {"self-1", "self-2"}
    )
    assert "as opponent self-" in checked.stderr


def test_a_fault_found_in_every_game_is_one_problem_told_once_with_its_first_games_output(bots, tmp_path) -> None:
    crashing = [PYTHON, str(BAD_BOTS / "crash.py"), "--at", "1", "--marker", bots.marker]
    checked = check_bot(bots, "--game", "stop_the_bus", "--seats", "2", "--seats", "3", "--", *crashing)
    assert checked.returncode == 1
    out = checked.stdout
    # Four games, four crashes, each costing its game: one problem, not eight (a fault and a forfeit each).
    assert "\n1 problem:\n" in out, out
    assert (
        "  - 1 crash fault: process exit code 3; the bot forfeited the game (in 4 of 4 games; the first: "
        "stop_the_bus at 2 seats, game 1 (seat 1, seed 2001)) (its output is in " in out
    ), out
    assert "forfeited the game: crash" not in out
    assert "1 decision, none answered" in out and "1 decisions" not in out and "slowest 0.0 ms" not in out
    (kept,) = re.findall(r"its output is in (\S+)\)", out)
    assert kept.endswith("stop_the_bus-2-process-1.log") and Path(kept).exists()  # named for the process
    shutil.rmtree(Path(kept).parent)


def test_each_games_line_marks_the_game_that_failed_and_what_failed_in_it(bots, tmp_path) -> None:
    # The bot crashes at its fourth decision of its second game (of three, in one process): that game's line says so,
    # as it is said, and the other two read as games that went well.
    crashing = [PYTHON, str(BAD_BOTS / "crash.py"), "--at", "4", "--in-game", "2", "--marker", bots.marker]
    checked = check_bot(bots, "--game", "stop_the_bus", "--seats", "3", "--games", "3", "--", *crashing)
    assert checked.returncode == 1
    games = [line for line in checked.stdout.splitlines() if line.startswith("- stop_the_bus at 3 seats, game ")]
    assert len(games) == 3, checked.stdout
    first, second, third = games
    assert "FAILED" not in first and "FAILED" not in third, checked.stdout
    kept = Path(checked.stdout.split("are kept in ")[1].split()[0])
    crash = next(record for record in read_log(kept / "check-stop_the_bus-3-2.jsonl") if record["type"] == "fault")
    assert second.startswith(
        f"- stop_the_bus at 3 seats, game 2 (seat 2, seed 3002): FAILED (a crash fault at decision {crash['n']}, "
        "which forfeited the game): placed 3 of 3, "
    ), second
    shutil.rmtree(kept)


def test_the_opponents_are_named_and_a_submission_folder_is_an_opponent(bots, tmp_path) -> None:
    random_bot = [PYTHON, str(SAMPLE_BOTS / "random_bot.py"), "--marker", bots.marker]
    checked = check_bot(bots, *QUICK, "--", *random_bot)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "opponents: the sample bots heuristic and random, in turn, inside the referee" in checked.stdout
    rival = submission(tmp_path / "rival", "name: rival\nversion: '1'\nrun: python random_bot.py\n")
    cache = tmp_path / "cache"
    checked = check_bot(
        bots, *QUICK, "--json", "--build-cache", str(cache), "--opponent", str(rival), "--", *random_bot
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = report_of(checked)
    assert report["opponents"] == [f"{rival} (a submission folder, built)"]
    assert f"opponents, the seats taking them in turn: {rival} (a submission folder, built)" in checked.stderr
    # Passed, so its temporary folder is gone: the report names no log there.
    assert report["logs"] is None and not any("log" in check for check in report["checks"])
    broken = submission(tmp_path / "broken", "name: broken\nversion: '1'\nrun: python random_bot.py\nbuild: exit 3\n")
    checked = check_bot(bots, *QUICK, "--build-cache", str(cache), "--opponent", str(broken), "--", *random_bot)
    assert checked.returncode == 1
    assert f"opponent {broken} could not be built (referee check-bot {broken} says why)" in checked.stdout
    assert "handshake" not in checked.stdout  # the bot checked is not started against no opponent
