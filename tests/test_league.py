"""The league runner with real bot processes: determinism, concurrency, resume after SIGKILL, restarts, CLI."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.apps.league import RESULTS_FILE, ResultsFile, run_league
from referee.cli import main as referee_main
from referee.common.errors import OutputError
from referee.leaguefile.config import load_league
from referee.records.gamelog import log_path
from referee.records.results import read_records
from referee.records.visibility import Shown

from .conftest import SAMPLE_BOTS, Bots


def write_league(
    path: Path,
    bots: Bots,
    *,
    extra: str = "",
    entries: list[tuple[str, list[str]]] | None = None,
    rounds: int | None = 1,
    table_size: int = 2,
    concurrency: int = 1,
    seed: int = 11,
    name: str = "test-league",
    startup_timeout_ms: int = 30_000,
) -> Path:
    """A small Stop the Bus league of random bots (or the given bots) in ``path``; ``rounds=None`` writes no rounds."""
    entries = entries or [
        (name, bots.command(SAMPLE_BOTS / "random_bot.py", "--label", name)) for name in ("alpha", "bravo", "charlie")
    ]
    lines = [
        f"name: {name}",
        "game: stop_the_bus",
        f"seed: {seed}",
        f"table_size: {table_size}",
        f"rounds: {rounds}" if rounds is not None else "",
        "move_time_ms: 1000",
        "time_bank_ms: 2000",
        # Roomy: a bot starting on a loaded machine (two test workers, other work) must not fault at start-up.
        f"startup_timeout_ms: {startup_timeout_ms}",
        f"concurrency: {concurrency}",
        "output: results",
        extra,
        "bots:",
    ]
    for name, command in entries:
        lines.append(f"  - name: {name}")
        lines.append(f"    command: {json.dumps(command)}")
        lines.append(f"    env: {{REFEREE_TEST_MARKER: {bots.marker}}}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(league_path: Path, output: Path, concurrency: int | None = None):
    return asyncio.run(run_league(load_league(league_path), output=output, concurrency=concurrency))


def without_timing(directory: Path) -> list[dict]:
    """The results of a run, sorted by schedule index, with every wall-clock figure removed."""
    records = sorted(read_records(directory / RESULTS_FILE), key=lambda record: record["index"])
    for record in records:
        del record["timing"]
    return records


def leaderboard_without_times(directory: Path) -> dict:
    data = json.loads((directory / "leaderboard.json").read_text())
    text = json.dumps(data, sort_keys=True)
    assert "median_ms" in text, "the leaderboard should report decision times"
    for row in data["rows"]:
        for key in [key for key in row if key.endswith("_ms")]:
            del row[key]
    return data


def test_the_same_league_twice_and_at_any_concurrency_gives_the_same_results(tmp_path: Path, bots: Bots) -> None:
    # Two runs of one league file, one game at a time and two at a time: the same records and leaderboards (a run
    # that depended on anything but the file, its timing or another process's, would differ in the other).
    league_path = write_league(tmp_path / "league.yaml", bots, rounds=2)
    first = run(league_path, tmp_path / "first", concurrency=1)
    parallel = run(league_path, tmp_path / "parallel", concurrency=2)

    expected_games = len(load_league(league_path).schedule())
    assert first.played == parallel.played == expected_games == 12
    assert without_timing(tmp_path / "first") == without_timing(tmp_path / "parallel")
    assert leaderboard_without_times(tmp_path / "first") == leaderboard_without_times(tmp_path / "parallel")
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.html"):
        assert (tmp_path / "first" / name).stat().st_size > 0
    records = without_timing(tmp_path / "first")
    assert [record["index"] for record in records] == list(range(expected_games))
    for record in records:
        assert sorted(record["finish_order"]) == list(range(2))
        assert log_path(tmp_path / "first" / "games", record["game_id"]).exists()


def test_a_second_run_on_finished_results_plays_nothing(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    run(league_path, tmp_path / "out")
    again = run(league_path, tmp_path / "out")
    assert again.played == 0 and again.already_finished == again.total == 6
    assert len(list(read_records(tmp_path / "out" / RESULTS_FILE))) == 6


def test_a_changed_league_file_is_refused_on_resume(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    run(league_path, tmp_path / "out")
    league_path.write_text(league_path.read_text().replace("seed: 11", "seed: 12"))
    with pytest.raises(OutputError, match="differs from it in what decides them: seed: 11 -> 12"):
        run(league_path, tmp_path / "out")


def test_a_line_cut_short_by_a_crash_is_dropped_and_its_game_replayed(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    run(league_path, tmp_path / "whole")
    results = tmp_path / "whole" / RESULTS_FILE
    lines = results.read_bytes().splitlines(keepends=True)
    # Keep two whole lines and half of the third, as a power cut might.
    results.write_bytes(b"".join(lines[:2]) + lines[2][: len(lines[2]) // 2])
    recovered = ResultsFile(results, load_league(league_path).schedule())
    recovered.close()
    assert len(recovered.finished) == 2
    assert results.read_bytes() == b"".join(lines[:2])
    resumed = run(league_path, tmp_path / "whole")
    assert resumed.played == 4
    assert len(without_timing(tmp_path / "whole")) == 6


def test_a_run_killed_with_sigkill_resumes_to_the_same_results_and_leaves_no_bot(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots, rounds=3, table_size=3, extra="static_replays: true")
    total = len(load_league(league_path).schedule())  # 1 table x 3 rotations x 3 rounds
    reference = tmp_path / "reference"
    run(league_path, reference)
    bots.leaves_socket_dirs = True  # a SIGKILLed referee cannot clean up after itself

    output = tmp_path / "killed"
    command = [sys.executable, "-m", "referee.cli", "run", str(league_path), "--output", str(output), "--no-progress"]
    referee = subprocess.Popen(command, env=bots.subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    # The first round's three rotations (one deal) over: its games may be shown, and their replays written.
    while not any(Shown.read(output).records(output)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert bots.processes(), "the bots should be running while the league is"
    referee.send_signal(signal.SIGKILL)
    referee.wait()
    assert not bots.leftovers(), "bots outlived a referee killed with SIGKILL"
    # The page helper outlives it briefly and ends quietly when it finds its runner gone.
    assert b"Traceback" not in referee.stderr.read()

    finished_before = len(list(read_records(output / RESULTS_FILE)))
    assert 3 <= finished_before < total
    first = next(iter(Shown.read(output).records(output)))["game_id"]  # its deal done before the kill
    lost = output / "replays" / f"{first}.html"  # a page the kill (maybe before it was written), or a full disk, lost
    lost.unlink(missing_ok=True)
    resumed = run(league_path, output)
    assert resumed.already_finished == finished_before
    assert resumed.played == total - finished_before
    assert lost.is_file(), "the resume writes the lost replay page again"
    assert without_timing(output) == without_timing(reference)
    assert leaderboard_without_times(output) == leaderboard_without_times(reference)


def test_a_bot_that_keeps_crashing_is_restarted_up_to_the_limit_then_forfeits(tmp_path: Path, bots: Bots) -> None:
    entries = [
        ("steady", bots.command(SAMPLE_BOTS / "random_bot.py")),
        ("crasher", bots.command("crash.py", "--at", "1")),
        ("steady-2", bots.command(SAMPLE_BOTS / "random_bot.py")),
    ]
    league_path = write_league(tmp_path / "league.yaml", bots, entries=entries, rounds=2, extra="max_restarts: 1")
    summary = run(league_path, tmp_path / "out")
    records = without_timing(tmp_path / "out")
    crasher_games = [record for record in records if "crasher" in record["seats"]]
    reasons = [record["forfeits"][str(record["seats"].index("crasher"))] for record in crasher_games]
    # The first process and one restart crash; after that the bot is not started again.
    assert reasons[:2] == ["crash", "crash"]
    assert set(reasons[2:]) == {"startup"} and len(reasons) == 8
    assert "restart limit (1)" in summary.disabled["crasher"]
    row = next(row for row in summary.standings.rows if row.bot == "crasher")
    assert row.faults["crash"] == 2 and row.faults["startup"] == 6 and row.wins == 0


def test_cli_validate_schedule_run_and_leaderboard(tmp_path: Path, bots: Bots, capsys: pytest.CaptureFixture) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    assert referee_main(["validate", str(league_path)]) == 0
    assert "valid" in capsys.readouterr().out
    assert referee_main(["schedule", str(league_path)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("r1-t") == 6 and "alpha" in printed
    output = tmp_path / "cli-out"
    assert referee_main(["run", str(league_path), "--output", str(output), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "6 games played" in printed and "strength" in printed
    assert referee_main(["leaderboard", str(output)]) == 0
    printed = capsys.readouterr().out
    assert "6 games" in printed and all(name in printed for name in ("alpha", "bravo", "charlie"))


def test_a_sampled_league_whose_tables_play_one_rotation_says_so_and_seats_bots_evenly(
    tmp_path: Path, bots: Bots, capsys: pytest.CaptureFixture
) -> None:
    # Three bots at tables of 2, 4 games each: 2 tables of both rotations would be 1 meeting a pair on average,
    # too few for the draw to promise every pair meets; 4 tables of one rotation are 2.
    league_path = write_league(tmp_path / "league.yaml", bots, extra="format: {type: sampled, games_per_bot: 4}")
    output = tmp_path / "sampled-out"
    assert referee_main(["run", str(league_path), "--output", str(output), "--no-progress"]) == 0
    printed = capsys.readouterr().out.splitlines()
    note = (
        "tables play 1 of 2 seat rotations so that every pair of bots meets (rotations: 2 keeps full duplicate deals)"
    )
    assert note in printed and printed.index(note) == 1 + next(
        number for number, line in enumerate(printed) if line.startswith("league test-league:")
    )
    records = list(read_records(output / RESULTS_FILE))
    assert len(records) == 6 and {record["rotation"] for record in records} == {0}
    assert len({record["seed"] for record in records}) == 6
    seats = [(name, seat) for record in records for seat, name in enumerate(record["seats"])]
    assert sorted(seats) == sorted([(name, seat) for name in ("alpha", "bravo", "charlie") for seat in (0, 1)] * 2)
    assert {frozenset(record["seats"]) for record in records} == {
        frozenset(pair) for pair in (("alpha", "bravo"), ("alpha", "charlie"), ("bravo", "charlie"))
    }


def test_cli_reports_a_bad_league_file_with_file_line_and_key(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ngame: stop_the_bus\nseed: 1\ntable_size: 2\nbots:\n  - name: a\n    comand: x\n")
    assert referee_main(["validate", str(bad)]) == 1
    error = capsys.readouterr().err
    assert f"{bad}:7" in error and "comand" in error


def test_output_from_another_league_is_refused(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / RESULTS_FILE).write_text('{"index": 0, "game_id": "r1-t001-s0", "seats": ["x", "y"]}\n')
    with pytest.raises(OutputError, match="not this league's output"):
        run(league_path, stray)
    assert os.listdir(stray) == [RESULTS_FILE]


def test_a_league_whose_bot_can_never_run_exits_non_zero_naming_why(tmp_path: Path, bots: Bots) -> None:
    # One try, and 5 s for it: a bot that cannot run costs the whole start-up timeout.
    league_path = write_league(tmp_path / "league.yaml", bots, extra="max_restarts: 0", startup_timeout_ms=5000)
    with socket.socket() as probe:  # a port on which nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    league_path.write_text(league_path.read_text() + f"  - name: ghost\n    address: 127.0.0.1:{port}\n")
    output = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "referee.cli", "run", str(league_path), "--output", str(output), "--no-progress"],
        env=bots.subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr
    # Why, in its own line: nothing answered at the address (the restart limit, 0, was reached at once).
    assert (
        f"ghost: not started: the restart limit (0) was reached; last failure: did not listen on 127.0.0.1:{port}"
        in result.stderr
    )
    assert result.stderr.rstrip().splitlines()[-1] == "referee run: 1 bot did not play every game: ghost"
    # Pages show the games' faults, but no path of this machine.
    page = (output / "leaderboard.html").read_text()
    assert str(tmp_path) not in page and str(output) not in page
    # Its replay pages, made by referee serve when asked (the league writes none), are written as files from the
    # game logs by `referee leaderboard --write`.
    assert not (output / "replays").exists()
    (output / "leaderboard.md").unlink()
    rewritten = subprocess.run(
        [sys.executable, "-m", "referee.cli", "leaderboard", str(output), "--write"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    games = len(list(read_records(output / RESULTS_FILE)))
    assert f"{games} missing or damaged replay pages written again" in rewritten
    assert len(list((output / "replays").iterdir())) == games and (output / "leaderboard.md").is_file()
