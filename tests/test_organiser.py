"""The organiser's paths: resume from any finished games, growth, interruption, and every failure as one line.

Real leagues of real bot processes, real files, real signals; a full disk is
a real (small) filesystem, mounted for the test where the machine allows it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import fcntl
import io
import json
import os
import pty
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.apps.league import LEAGUE_FILE, RESULTS_FILE, LeagueChanges, ResultsFile, league_changes, output_folder
from referee.cli import build_parser
from referee.cli import main as referee_main
from referee.common.errors import OutputError
from referee.leaguefile.config import league_fingerprint, league_identity, load_league
from referee.leaguefile.schedule import schedule_games
from referee.leaguefile.submissions import build_submissions
from referee.publish.console_table import console_table
from referee.records.gamelog import log_path
from referee.records.results import read_records
from referee.records.standings import FAULT_KINDS, compute_standings
from referee.records.visibility import Shown

from .conftest import SAMPLE_BOTS, Bots
from .test_league import leaderboard_without_times, run, without_timing, write_league

REFEREE = [sys.executable, "-m", "referee"]
# The referee as an interactive shell starts it: Ctrl-C (SIGINT) not ignored, even when these tests run in the
# background of a shell (which starts them with SIGINT ignored, and a child keeps that).
INTERRUPTIBLE_REFEREE = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, '-m', 'referee', *sys.argv[1:]])",
]


def random_bots(bots: Bots, *names: str) -> list[tuple[str, list[str]]]:
    return [(name, bots.command(SAMPLE_BOTS / "random_bot.py", "--label", name)) for name in names]


def referee(*args: str, env: dict | None = None, **options) -> subprocess.CompletedProcess:
    """Run ``python -m referee ARGS`` to the end; its output as text."""
    return subprocess.run([*REFEREE, *args], capture_output=True, text=True, timeout=120, env=env, **options)


def one_line_failure(result: subprocess.CompletedProcess | tuple[int, str], status: int = 1) -> str:
    """Check a command failed with ``status`` and exactly one line on standard error; return that line."""
    code, error = (result.returncode, result.stderr) if isinstance(result, subprocess.CompletedProcess) else result
    assert "Traceback" not in error, error
    lines = error.splitlines()
    assert code == status and len(lines) == 1, (code, error)
    return lines[0]


# ----- resume ---------------------------------------------------------------------------


def test_a_resume_plays_the_games_missing_between_finished_ones(tmp_path: Path, bots: Bots) -> None:
    # At concurrency above 1, games finish out of order: a killed run can leave 0, 2, 3 and 7 done, 1 not.
    league_path = write_league(tmp_path / "league.yaml", bots, rounds=2)
    reference = tmp_path / "reference"
    run(league_path, reference)
    lines = {json.loads(line)["index"]: line for line in (reference / RESULTS_FILE).read_text().splitlines()}
    output = tmp_path / "gaps"
    (output / "games").mkdir(parents=True)
    shutil.copy(reference / LEAGUE_FILE, output / LEAGUE_FILE)
    finished = [3, 0, 7, 2]  # in the order they finished
    (output / RESULTS_FILE).write_text("".join(lines[index] + "\n" for index in finished))
    for index in finished:
        game_id = json.loads(lines[index])["game_id"]
        shutil.copy(log_path(reference / "games", game_id), output / "games")

    resumed = run(league_path, output, concurrency=2)
    assert (resumed.already_finished, resumed.played, resumed.total) == (4, 8, 12)
    assert without_timing(output) == without_timing(reference)
    assert leaderboard_without_times(output) == leaderboard_without_times(reference)
    assert sorted(os.listdir(output / "games")) == sorted(os.listdir(reference / "games"))


def test_a_damaged_line_before_finished_games_is_refused_and_left_alone(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    output = tmp_path / "out"
    run(league_path, output)
    lines = (output / RESULTS_FILE).read_bytes().splitlines(keepends=True)
    damaged = b"".join(lines[:2]) + b'{"index": 2, "game_id": "r1-t\n' + b"".join(lines[3:])
    (output / RESULTS_FILE).write_bytes(damaged)
    error = one_line_failure(run_cli(["run", str(league_path), "--output", str(output), "--no-progress"]))
    assert error.startswith(
        f'referee run: {output / RESULTS_FILE}:3: not a JSON game record: "{{"index": 2, "game_id": "r1-t"; '
    )  # the line as text, not a bytes repr
    assert "repair or remove line 3" in error
    assert (output / RESULTS_FILE).read_bytes() == damaged
    with pytest.raises(OutputError, match=":3: not a JSON game record"):
        list(read_records(output / RESULTS_FILE))


def test_a_damaged_last_line_is_dropped_with_a_tail_of_zeros(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    output = tmp_path / "out"
    run(league_path, output)
    lines = (output / RESULTS_FILE).read_bytes().splitlines(keepends=True)
    (output / RESULTS_FILE).write_bytes(b"".join(lines[:4]) + b"\0" * 300 + b"\n" + b"\0" * 20)  # as a power cut leaves
    results = ResultsFile(output / RESULTS_FILE, load_league(league_path).schedule())
    results.close()
    assert len(results.finished) == 4 and (output / RESULTS_FILE).read_bytes() == b"".join(lines[:4])


def test_a_second_run_on_the_same_folder_at_the_same_time_is_refused(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    output = tmp_path / "out"
    with output_folder(output):
        error = one_line_failure(run_cli(["run", str(league_path), "--output", str(output), "--no-progress"]))
    assert error == (
        f"referee run: {output}: another referee is running a league in this folder; wait for it to end, "
        "or give this run another --output"
    )
    assert os.listdir(output) == []


# ----- growth ----------------------------------------------------------------------------


def test_a_league_grown_by_a_round_and_by_a_bot_equals_one_run_whole(tmp_path: Path, bots: Bots) -> None:
    everyone = random_bots(bots, "alpha", "bravo", "charlie", "delta")
    whole = tmp_path / "whole"
    run(write_league(tmp_path / "whole.yaml", bots, entries=everyone, rounds=2), whole)

    grown = tmp_path / "grown"
    league_path = tmp_path / "grown.yaml"
    first = run(write_league(league_path, bots, entries=everyone[:3], rounds=1), grown)
    by_a_round = run(write_league(league_path, bots, entries=everyone[:3], rounds=2), grown)
    by_a_bot = run(write_league(league_path, bots, entries=everyone, rounds=2), grown)

    assert (first.played, first.total) == (6, 6)
    assert (by_a_round.already_finished, by_a_round.played, by_a_round.total) == (6, 6, 12)
    assert (by_a_bot.already_finished, by_a_bot.played, by_a_bot.total) == (12, 12, 24)
    assert without_timing(grown) == without_timing(whole)
    assert leaderboard_without_times(grown) == leaderboard_without_times(whole)
    recorded = [json.loads((folder / LEAGUE_FILE).read_text())["league"] for folder in (grown, whole)]
    assert recorded[0] == recorded[1]


def test_appending_a_bot_keeps_every_earlier_game_of_the_schedule() -> None:
    names = ["a", "b", "c", "d", "e"]
    for table_size in (2, 3, 4):
        for rounds in (1, 2):
            before = {game.game_id: game for game in schedule_games(names[:4], table_size, rounds, 7)}
            after = {game.game_id: game for game in schedule_games(names, table_size, rounds, 7)}
            for game_id, game in before.items():
                assert (after[game_id].seats, after[game_id].seed) == (game.seats, game.seed)


def identity(tmp_path: Path, bots: Bots, name: str, **options) -> dict:
    return league_identity(load_league(write_league(tmp_path / f"{name}.yaml", bots, **options)))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"extra": "turn_limit: 50"}, "turn_limit: 200 -> 50"),
        ({"extra": "fault_policy: {mode: default_action}"}, 'fault_policy.mode: "forfeit" -> "default_action"'),
        ({"rounds": 1}, "rounds: 2 -> 1 (a league can gain rounds, not lose them)"),
        ({"names": ["alpha", "charlie"]}, "bots: bravo is no longer in the league file"),
        (
            {"names": ["alpha", "delta", "bravo", "charlie"]},
            "bots: delta is added before bravo; add new bots at the end of the list",
        ),
        ({"names": ["bravo", "alpha", "charlie"]}, "bots: their order changed"),
        ({"label": {"bravo": "other"}}, "bot bravo: command: "),
    ],
)
def test_a_change_that_would_alter_finished_games_is_refused_naming_it(tmp_path, bots, change, message) -> None:
    names = change.get("names", ["alpha", "bravo", "charlie"])
    labels = change.get("label", {})
    entries = [(name, bots.command(SAMPLE_BOTS / "random_bot.py", "--label", labels.get(name, name))) for name in names]
    before = identity(tmp_path, bots, "before", rounds=2)
    after = identity(
        tmp_path, bots, "after", rounds=change.get("rounds", 2), extra=change.get("extra", ""), entries=entries
    )
    changes = league_changes(before, after)
    # Refused for this change alone, and nothing of it taken as growth: a league refused grows by nothing.
    assert len(changes.refused) == 1 and changes.refused[0].startswith(message), changes.refused
    assert changes.growth == [], changes.growth


def test_what_does_not_decide_results_may_change_and_growth_is_named(tmp_path, bots) -> None:
    before = identity(tmp_path, bots, "before", extra="network: host")
    settings = "network: host\ntransport: tcp\nsandbox: none\nbuild_timeout_s: 5\non_build_failure: stop"
    after = identity(tmp_path, bots, "after", extra=settings, concurrency=3)
    assert league_changes(before, after).refused == league_changes(before, after).growth == []
    grown = identity(
        tmp_path,
        bots,
        "grown",
        rounds=3,
        extra="network: host",
        entries=random_bots(bots, "alpha", "bravo", "charlie", "echo"),
    )
    assert league_changes(before, grown).growth == ["rounds: 1 -> 3", "bots added: echo"]


def test_the_fingerprint_covers_the_rules_not_what_grows_nor_where_the_league_lives(tmp_path, bots) -> None:
    (tmp_path / "a").mkdir()
    league_path = write_league(tmp_path / "a" / "league.yaml", bots)
    fingerprint = league_fingerprint(load_league(league_path))
    assert len(fingerprint) == 64
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    assert league_fingerprint(load_league(tmp_path / "b" / "league.yaml")) == fingerprint
    grown = write_league(tmp_path / "grown.yaml", bots, rounds=3, entries=random_bots(bots, "a", "b", "c", "d"))
    assert league_fingerprint(load_league(grown)) == fingerprint
    other_rules = write_league(tmp_path / "other.yaml", bots, extra="turn_limit: 20")
    assert league_fingerprint(load_league(other_rules)) != fingerprint


def test_a_failed_build_changes_nothing_the_results_are_compared_with(tmp_path, bots) -> None:
    submission_with_failing_build(tmp_path)
    league_path = write_league(tmp_path / "league.yaml", bots)
    league_path.write_text(league_path.read_text() + "  - path: broken\n")
    league = load_league(league_path)
    (tmp_path / "out").mkdir()
    playing, [result] = asyncio.run(build_submissions(league, tmp_path / "out", tmp_path / "out" / "logs"))
    assert not result.ok and playing.bot_names == ("alpha", "bravo", "charlie")
    assert league_identity(playing) != league_identity(league)  # the league as built ...
    # ... is not what a resume compares: the league file is, and it has not changed.
    assert league_changes(league_identity(league), league_identity(load_league(league_path))) == LeagueChanges()


def test_a_refused_change_is_one_line_that_names_it(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    output = tmp_path / "out"
    run(league_path, output)
    league_path.write_text(league_path.read_text().replace("seed: 11", "seed: 12").replace("rounds: 1", "rounds: 3"))
    error = one_line_failure(run_cli(["run", str(league_path), "--output", str(output), "--no-progress"]))
    assert f"{league_path} differs from it in what decides them: seed: 11 -> 12." in error
    assert "A league may only gain rounds, or bots added at the end of its list" in error


def submission_with_failing_build(tmp_path: Path) -> Path:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "bot.yaml").write_text("name: broken\nversion: '1'\nbuild: 'echo built; exit 1'\nrun: python bot.py\n")
    return folder


def test_a_league_with_a_skipped_build_resumes_without_building_again(tmp_path: Path, bots: Bots) -> None:
    submission_with_failing_build(tmp_path)
    league_path = write_league(tmp_path / "league.yaml", bots, extra="on_build_failure: skip")
    league_path.write_text(league_path.read_text() + "  - path: broken\n")
    output = tmp_path / "out"
    status, error = run_cli(["run", str(league_path), "--output", str(output), "--no-progress"])
    assert status == 1 and "broken: left out of the league" in error and "Traceback" not in error
    assert error.count("left out of the league") == 1, "the build's failure is told once"
    build_log = output / "logs" / "build-broken.log"
    built = build_log.stat().st_mtime_ns  # a build writes its log afresh
    # Killed after two games, say: the resume plays the rest, with the failure as recorded.
    lines = (output / RESULTS_FILE).read_text().splitlines(keepends=True)
    (output / RESULTS_FILE).write_text("".join(lines[:2]))
    status, error = run_cli(["run", str(league_path), "--output", str(output), "--no-progress"])
    assert status == 1 and "a build that failed stands once the league has finished games" in error
    assert "differs" not in error
    assert len(list(read_records(output / RESULTS_FILE))) == 6
    assert build_log.stat().st_mtime_ns == built, "the failed build ran again"


def run_cli(argv: list[str]) -> tuple[int, str]:
    """Run the command line in this process; its exit status and what it wrote to standard error."""
    error = io.StringIO()
    with contextlib.redirect_stderr(error), contextlib.redirect_stdout(io.StringIO()):
        status = referee_main(argv)
    return status, error.getvalue()


# ----- interruption -----------------------------------------------------------------------


def slow_league(tmp_path: Path, bots: Bots, rounds: int = 4) -> Path:
    entries = [
        ("slow-1", bots.command("slow.py", "--at", "all", "--sleep-ms", "25")),
        ("slow-2", bots.command("slow.py", "--at", "all", "--sleep-ms", "25")),
        ("random", bots.command(SAMPLE_BOTS / "random_bot.py")),
    ]
    return write_league(tmp_path / "league.yaml", bots, entries=entries, rounds=rounds, concurrency=2)


@pytest.mark.parametrize(
    ("signal_number", "status", "name"), [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "SIGINT (Ctrl-C)")]
)
def test_an_interrupted_league_has_its_standings(tmp_path, bots, signal_number, status, name) -> None:
    league_path = slow_league(tmp_path, bots)
    output = tmp_path / "out"
    command = [*INTERRUPTIBLE_REFEREE, "run", str(league_path), "--output", str(output), "--no-progress"]
    process = subprocess.Popen(
        command, env=bots.subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while len(list(read_records(output / RESULTS_FILE))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal_number)
    out, error = process.communicate(timeout=30)
    assert process.returncode == status, (out, error)
    finished = list(read_records(output / RESULTS_FILE))
    assert 2 <= len(finished) < 24
    # The standings hold the games that may be shown: those whose deals (a table's rotations) are all played.
    shown = len(list(Shown.read(output).records(output)))
    held = f" ({len(finished) - shown} of the games held back until every game on their deals is played)"
    assert error.strip() == (
        f"referee run: stopped by {name}: {len(finished)} of 24 games finished and kept; the standings so far "
        f"are in {output}/leaderboard.*{held if shown < len(finished) else ''}; run the same command again to resume"
    )
    leaderboard = json.loads((output / "leaderboard.json").read_text())
    assert leaderboard["games"] == shown
    assert sum(row["games"] for row in leaderboard["rows"]) == 2 * shown
    assert "slow-1" in out.split("-----", 1)[-1], "the standings so far are printed too"
    assert not bots.leftovers()


def test_sigterm_stops_a_game_being_played_and_its_bots(tmp_path: Path, bots: Bots) -> None:
    never = " ".join(bots.command("slow.py", "--at", "1", "--forever"))
    prompt = " ".join(bots.command(SAMPLE_BOTS / "random_bot.py"))
    process = subprocess.Popen(
        [*REFEREE, "play", "--game", "stop_the_bus", "--bot", never, "--bot", prompt, "--move-time-ms", "60000"],
        env=bots.subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert len(bots.wait_for_processes(2)) >= 2
    time.sleep(0.5)  # the game under way, waiting for the silent bot
    process.send_signal(signal.SIGTERM)
    _, error = process.communicate(timeout=30)
    assert one_line_failure((process.returncode, error), 143) == "referee play: stopped (SIGTERM)"
    assert not bots.leftovers()


def test_ctrl_c_during_a_build_stops_it_and_the_next_run_builds_afresh(tmp_path: Path, bots: Bots) -> None:
    folder = tmp_path / "sub"
    folder.mkdir()
    slow_flag = folder / "slow-build"  # in the folder, so in its copy, the only place its build sees
    slow_flag.touch()
    child = f"sleep 30; : {bots.marker}"  # a process of the build that the test finds by its marker
    build = f"if [ -e slow-build ]; then sh -c {json.dumps(child)} & echo started > child.started; wait; fi"
    (folder / "bot.yaml").write_text(
        f"name: sub\nversion: '1'\nbuild: {json.dumps(build)}\nrun: python {SAMPLE_BOTS / 'random_bot.py'}\n"
    )
    league_path = write_league(tmp_path / "league.yaml", bots)
    league_path.write_text(league_path.read_text() + "  - path: sub\n")
    output = tmp_path / "out"
    process = subprocess.Popen(
        [*INTERRUPTIBLE_REFEREE, "run", str(league_path), "--output", str(output), "--no-progress"],
        env=bots.subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started = output / "builds" / "sub" / "child.started"
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert started.exists() and bots.wait_for_processes(1), "the build should be running"
    interrupted = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, error = process.communicate(timeout=30)
    assert time.monotonic() - interrupted < 10, "the build should stop at once"
    assert one_line_failure((process.returncode, error), 130).startswith("referee run: stopped by SIGINT (Ctrl-C): 0")
    assert not bots.leftovers(), "the build's processes outlived it"
    assert not (output / "builds" / "sub").exists() and not (output / "builds" / "sub.json").exists()

    slow_flag.unlink()
    summary = run(league_path, output)
    assert summary.played == 12 and not summary.left_out
    assert json.loads((output / "builds" / "sub.json").read_text())["ok"] is True


# ----- folders that cannot be written ------------------------------------------------------


@contextlib.contextmanager
def mounted_tmpfs(folder: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted at ``folder`` for the test (skipped where the machine does not let the test mount one)."""
    folder.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None:
        pytest.skip("no mount command here, so no small filesystem to fill")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here (needs root or CAP_SYS_ADMIN): {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def leftovers_of_writing(output: Path) -> list[str]:
    """Temporary files a failed write could leave behind."""
    return [str(path) for path in output.rglob(".*") if path.suffix in (".tmp", ".part")]


def test_a_full_disk_stops_the_run_in_one_line_and_it_resumes_once_space_is_freed(tmp_path, bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots, rounds=4)
    reference = tmp_path / "reference"
    run(league_path, reference)
    needed = sum(path.stat().st_size for path in reference.rglob("*") if path.is_file())
    with mounted_tmpfs(tmp_path / "disk", f"size={needed // 3}") as disk:
        output = disk / "out"
        result = referee("run", str(league_path), "--output", str(output), "--no-progress", env=bots.subprocess_env())
        error = one_line_failure(result)
        assert "No space left on device" in error and "free some space, then run the same command again" in error
        lines = (output / RESULTS_FILE).read_bytes().splitlines(keepends=True)
        assert 0 < len(lines) < 24
        assert all(line.endswith(b"\n") and json.loads(line) for line in lines), "a line was left half written"
        assert f"the {len(lines)} games finished so far are kept" in error
        assert leftovers_of_writing(output) == []

        subprocess.run(["mount", "-o", f"remount,size={needed * 4}", str(disk)], check=True)
        result = referee("run", str(league_path), "--output", str(output), "--no-progress", env=bots.subprocess_env())
        assert result.returncode == 0, result.stderr
        assert without_timing(output) == without_timing(reference)


def test_a_file_size_limit_stops_the_run_in_one_line(tmp_path: Path, bots: Bots) -> None:
    if shutil.which("prlimit") is None:
        pytest.skip("prlimit (util-linux) is not installed")
    league_path = write_league(tmp_path / "league.yaml", bots)
    output = tmp_path / "out"
    command = ["prlimit", "--fsize=6000", *REFEREE, "run", str(league_path), "--output", str(output), "--no-progress"]
    result = subprocess.run(command, capture_output=True, text=True, env=bots.subprocess_env(), timeout=60)
    error = one_line_failure(result)
    assert "File too large" in error and "raise the file size limit (ulimit -f)" in error
    assert all(line.endswith(b"\n") for line in (output / RESULTS_FILE).read_bytes().splitlines(keepends=True))
    assert leftovers_of_writing(output) == []


def test_a_read_only_output_folder_is_one_line(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    with mounted_tmpfs(tmp_path / "ro", "ro,size=64k") as read_only:
        error = one_line_failure(
            run_cli(["run", str(league_path), "--output", str(read_only / "out"), "--no-progress"])
        )
    assert error.startswith(f"referee run: {read_only / 'out'}: Read-only file system")
    assert "make the folder writable, then run the same command again" in error


# ----- every other failure: one line ---------------------------------------------------------


def test_failures_of_the_files_a_command_is_given_are_one_line(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    (tmp_path / "folder.yaml").mkdir()
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "binary.jsonl").write_bytes(bytes(range(256)))
    (tmp_path / "text.jsonl").write_text("hello\n")
    nowhere = tmp_path / "nowhere"
    cases = [
        (["verify", str(nowhere / "game.jsonl")], f"{nowhere / 'game.jsonl'}: does not exist; give a game's log"),
        (["verify", str(tmp_path)], f"{tmp_path}: is a folder; give a game's log"),
        (["verify", str(tmp_path / "binary.jsonl")], f"{tmp_path / 'binary.jsonl'}: not a game log: not UTF-8 text"),
        (
            ["validate", str(tmp_path / "folder.yaml")],
            f"{tmp_path / 'folder.yaml'}: cannot read the league file: Is a directory",
        ),
        (["schedule", str(nowhere / "x.yaml")], f"{nowhere / 'x.yaml'}: cannot read the league file: No such file"),
        (
            ["run", str(league_path), "--output", str(tmp_path / "a-file"), "--no-progress"],
            f"{tmp_path / 'a-file'}: is a file, not a folder",
        ),
        (["leaderboard", str(nowhere)], f"{nowhere}: no league.json here (no such folder)"),
        (["leaderboard", str(tmp_path / "a-file")], f"{tmp_path / 'a-file'}: no league.json here (it is a file)"),
        (["compare", str(nowhere), "a", "b"], f"{nowhere}: no league.json here"),
        (
            [
                "play",
                "--game",
                "stop_the_bus",
                "--bot",
                "python x.py",
                "--bot",
                "python y.py",
                "--log",
                str(nowhere / "log.jsonl"),
                "--quiet",
            ],
            f"{nowhere / 'log.jsonl'}: no folder {nowhere} to write the game's log in; make it first",
        ),
    ]
    for argv, expected in cases:
        error = one_line_failure(run_cli(argv))
        assert error.startswith(f"referee {argv[0]}: {expected}"), (argv, error)
    # A file that is text but no game log: verify's verdict, on standard output, names the line and what it holds.
    verdict, error = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(verdict), contextlib.redirect_stderr(error):
        status = referee_main(["verify", str(tmp_path / "text.jsonl")])
    assert (status, error.getvalue()) == (1, "")
    expected = f"{tmp_path / 'text.jsonl'}:1: not a log record (a JSON object with a type): 'hello'\n"
    assert verdict.getvalue() == expected


def test_a_results_folder_of_another_league_or_a_damaged_record_is_one_line(tmp_path: Path, bots: Bots) -> None:
    other = write_league(tmp_path / "other.yaml", bots, entries=random_bots(bots, "xray", "yankee"))
    output = tmp_path / "out"
    run(other, output)
    league_path = write_league(tmp_path / "league.yaml", bots)
    error = one_line_failure(run_cli(["run", str(league_path), "--output", str(output), "--no-progress"]))
    assert f"{output}: holds results of league 'test-league' (from {other})" in error
    assert "bots: xray, yankee are no longer in the league file" in error
    (output / LEAGUE_FILE).write_text("{not json")
    for argv in (["run", str(league_path), "--output", str(output), "--no-progress"], ["leaderboard", str(output)]):
        assert f"{output / LEAGUE_FILE}: is not valid JSON" in one_line_failure(run_cli(argv))


def test_a_closed_pipe_ends_a_command_quietly_with_the_conventional_status(tmp_path: Path, bots: Bots) -> None:
    many = random_bots(bots, *(f"bot{number}" for number in range(40)))
    league_path = write_league(tmp_path / "league.yaml", bots, entries=many)
    output = tmp_path / "out"
    run(write_league(tmp_path / "small.yaml", bots), output)
    commands = [
        ["schedule", str(league_path)],
        ["leaderboard", str(output)],
        [
            "play",
            "--game",
            "stop_the_bus",
            "--bot",
            f"python {SAMPLE_BOTS / 'random_bot.py'}",
            "--bot",
            f"python {SAMPLE_BOTS / 'random_bot.py'}",
        ],
    ]
    for argv in commands:
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader is gone before the first line: `| head -0`
        try:
            result = subprocess.run([*REFEREE, *argv], stdout=write_end, stderr=subprocess.PIPE, timeout=60)
        finally:
            os.close(write_end)
        assert (result.returncode, result.stderr) == (141, b""), (argv, result.stderr.decode())


def test_an_unexpected_error_is_one_line_unless_the_traceback_is_asked_for(tmp_path, monkeypatch) -> None:
    import referee.cli.log_commands

    def broken(args):
        raise KeyError("nowhere")

    monkeypatch.setattr(referee.cli.log_commands, "_verify", broken)
    error = one_line_failure(run_cli(["verify", "x.jsonl"]))
    assert error.startswith("referee verify: internal error: KeyError: 'nowhere' (set REFEREE_TRACEBACK=1")
    monkeypatch.setenv("REFEREE_TRACEBACK", "1")
    with pytest.raises(KeyError):
        referee_main(["verify", "x.jsonl"])


# ----- the command line ----------------------------------------------------------------------


def parsers(parser: argparse.ArgumentParser, path: str = "referee") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                yield from parsers(subparser, f"{path} {name}")


def test_every_option_and_argument_has_help() -> None:
    missing = []
    commands = dict(parsers(build_parser()))
    for path, parser in commands.items():
        for action in parser._actions:
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{path}: {'/'.join(action.option_strings) or action.dest}")
    assert "referee run" in commands and "referee check-bot" in commands
    assert not missing, "without help: " + ", ".join(missing)


def test_every_command_names_the_function_that_runs_it() -> None:
    # Dispatch is by set_defaults(func=...): a command without one would fail as an internal error.
    commands = {path: parser for path, parser in parsers(build_parser()) if path.count(" ") == 1}
    assert len(commands) == 16
    assert not [path for path, parser in commands.items() if not callable(parser.get_default("func"))]


def test_version_and_python_dash_m() -> None:
    from referee import __version__

    for command in (REFEREE, [str(Path(sys.executable).parent / "referee")]):
        result = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=30)
        assert (result.returncode, result.stdout) == (0, f"referee {__version__}\n")
    usage = subprocess.run([*REFEREE, "run"], capture_output=True, text=True, timeout=30)
    assert usage.returncode == 2 and "the following arguments are required: league" in usage.stderr
    error = one_line_failure(
        run_cli(["play", "--game", "stop_the_bus", "--bot", "a", "--bot", "b", "--move-time-ms", "0"]), 2
    )
    assert error == "referee play: --move-time-ms must be from 1 to 4294967295, got 0"


def test_the_progress_bar_and_the_header_are_on_separate_lines(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots, rounds=2)
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))  # 40 rows of 100 columns
    process = subprocess.Popen(
        [*REFEREE, "run", str(league_path), "--output", str(tmp_path / "out")],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=bots.subprocess_env(),
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError as error:  # the terminal closes when the referee exits
            assert error.errno == errno.EIO  # noqa: PT017 - the loop of reads ends on it; no raises() can wrap a loop
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert process.wait(timeout=60) == 0
    lines = shown.decode(errors="replace").replace("\r\n", "\n").split("\n")
    header = next(line for line in lines if "league test-league:" in line)
    assert header.startswith("league test-league: stop_the_bus, 3 bots, 12 games"), header
    assert any("game" in line and "12/12" in line for line in lines), "the progress bar should be shown"


# ----- the console table and the games.jsonl fields --------------------------------------------


def record(index: int, seats: list[str], order: list[int], key: str = "finish_order", **extra) -> dict:
    return {"index": index, "game_id": f"r1-t{index:03d}-s0", "seats": seats, key: order, **extra}


def test_the_console_table_fits_100_columns_with_fault_kinds_folded_into_one_column() -> None:
    names = [f"a-rather-long-bot-name-{number:02d}" for number in range(10)]
    every_kind = {kind: 1000 + number for number, kind in enumerate(FAULT_KINDS)}
    records = []
    for index in range(30):
        seats = [names[index % 10], names[(index + 3) % 10], names[(index + 7) % 10]]
        faults = [{}, {}, {}]
        if seats[0] == names[0]:  # 3 games, each with every kind, forfeited
            faults[0] = every_kind
        if names[1] in seats:  # 9 games, one timeout in each
            faults[seats.index(names[1])] = {"timeout": 1}
        forfeits = {"0": "crash"} if seats[0] == names[0] else {}
        records.append(
            record(
                index,
                seats,
                [index % 3, (index + 1) % 3, (index + 2) % 3],
                faults=faults,
                forfeits=forfeits,
                timing={"latency_ms": [[12345.678], [1.5], [2.5]]},
            )
        )
    standings = compute_standings(records)
    table = console_table(standings)
    lines = table.splitlines()
    assert max(len(line) for line in lines) <= 100, table
    assert lines[0].split()[-1] == "faults" and not set(FAULT_KINDS) & set(lines[0].split())
    rows = {line.split()[1]: line for line in lines[2:]}
    assert set(rows) == set(names), "the names should stay whole, and told apart"
    assert rows[names[1]].endswith("  timeout 9") and "timeout" not in rows[names[2]]  # only where not zero
    assert rows[names[0]].endswith("…"), "too many kinds for 100 columns: cut"
    wide = console_table(standings, width=400)
    folded = ", ".join(f"{kind} {3 * count}" for kind, count in every_kind.items()) + "; 3 forfeits"
    assert next(line for line in wide.splitlines() if names[0] in line).endswith(folded), wide

    quiet = console_table(compute_standings([record(0, ["a", "b"], [1, 0])]))
    assert "faults" not in quiet and "forfeit" not in quiet


def test_finish_order_names_what_games_jsonl_holds_and_old_files_still_read() -> None:
    games = [(["a", "b", "c"], [2, 0, 1]), (["b", "c", "a"], [0, 1, 2]), (["c", "a", "b"], [1, 2, 0])]
    new = compute_standings([record(index, seats, order) for index, (seats, order) in enumerate(games)])
    old = compute_standings([record(index, seats, order, "placements") for index, (seats, order) in enumerate(games)])
    assert new == old and new.rows[0].games == 3


def test_a_league_writes_finish_order(tmp_path: Path, bots: Bots) -> None:
    output = tmp_path / "out"
    run(write_league(tmp_path / "league.yaml", bots, entries=random_bots(bots, "a", "b"), table_size=2), output)
    for line in read_records(output / RESULTS_FILE):
        assert "placements" not in line and sorted(line["finish_order"]) == [0, 1]
