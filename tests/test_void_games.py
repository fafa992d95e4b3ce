"""No result without a game: games where fewer than two bots got to decide are void, and the commands say so.

A void game is recorded with its reason but rates nobody; the leaderboard
shows it apart. `referee run` exits non-zero when a bot was left out or
disabled, and `referee play` when a bot failed, both after showing the
failing bot's last output lines and where its full log is.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from referee.apps.league import RESULTS_FILE
from referee.records.results import read_records
from tests.conftest import BAD_BOTS, PYTHON, SAMPLE_BOTS, Bots
from tests.test_league import write_league


def run_cli(bots: Bots, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "referee.cli", *args],
        cwd=cwd,
        env=bots.subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_league_whose_bots_all_fail_to_start_has_only_void_games_and_exits_non_zero(
    tmp_path: Path, bots: Bots
) -> None:
    entries = [(name, bots.command(BAD_BOTS / "exit_at_start.py")) for name in ("alpha", "bravo", "charlie")]
    league = write_league(tmp_path / "league.yaml", bots, entries=entries, extra="max_restarts: 1")
    done = run_cli(bots, "run", str(league), "--no-progress", cwd=tmp_path)

    assert done.returncode == 1, done.stdout + done.stderr
    records = list(read_records(tmp_path / "results" / RESULTS_FILE))
    assert len(records) == 6 and all(record["void"].startswith("no bot got to make a decision") for record in records)
    board = json.loads((tmp_path / "results" / "leaderboard.json").read_text())
    assert board["games"] == 0 and len(board["void_games"]) == 6
    assert all(row["games"] == 0 and row["wins"] == 0 for row in board["rows"])
    assert all(row["faults"]["startup"] > 0 for row in board["rows"])  # the failures still show
    assert "void" in (tmp_path / "results" / "leaderboard.md").read_text()
    # After the standings: each failing bot, its last words and where its whole log is.
    assert done.stdout.index("rank") < len(done.stdout)
    for name in ("alpha", "bravo", "charlie"):
        assert f"{name}: not started: the restart limit (1) was reached" in done.stderr
    assert "exit_at_start: cannot load my model, giving up" in done.stderr
    assert str(tmp_path / "results" / "logs") in done.stderr
    assert "3 bots did not play every game" in done.stderr


def test_games_with_one_failing_bot_count_only_where_two_bots_played(tmp_path: Path, bots: Bots) -> None:
    entries = [
        ("alpha", bots.command(SAMPLE_BOTS / "random_bot.py")),
        ("bravo", bots.command(SAMPLE_BOTS / "random_bot.py")),
        ("broken", bots.command(BAD_BOTS / "exit_at_start.py")),
    ]
    league = write_league(tmp_path / "league.yaml", bots, entries=entries)
    done = run_cli(bots, "run", str(league), "--no-progress", cwd=tmp_path)

    assert done.returncode == 1
    records = list(read_records(tmp_path / "results" / RESULTS_FILE))
    void = [record for record in records if "void" in record]
    assert {tuple(sorted(record["seats"])) for record in void} == {("alpha", "broken"), ("bravo", "broken")}
    # At two seats the other bot wins at once: nobody got to decide; the reason names the failure.
    assert all(record["void"].startswith("no bot got to make a decision; broken (startup:") for record in void)
    board = {row["bot"]: row for row in json.loads((tmp_path / "results" / "leaderboard.json").read_text())["rows"]}
    assert board["alpha"]["games"] == board["bravo"]["games"] == 2  # their two games together count
    assert board["broken"]["games"] == 0
    assert "broken: not started" in done.stderr and "alpha:" not in done.stderr


def test_play_exits_non_zero_when_a_bot_fails_and_shows_its_last_output(tmp_path: Path, bots: Bots) -> None:
    good = " ".join(bots.command(SAMPLE_BOTS / "random_bot.py"))
    dying = " ".join(bots.command(BAD_BOTS / "exit_at_start.py"))
    done = run_cli(
        bots,
        "play",
        "--game",
        "stop_the_bus",
        "--bot",
        good,
        "--bot",
        dying,
        "--name",
        "good",
        "--name",
        "dying",
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "(void: it does not count)" in done.stdout
    assert "seat 1 (dying) failed: 1 startup" in done.stderr
    assert "exit_at_start: cannot load my model, giving up" in done.stderr
    assert "Traceback" not in done.stderr
    # The bots' output is kept, since a bot failed: where is said, and the failing bot's log is there.
    kept = Path(done.stderr.split("bot output is kept in ", 1)[1].split()[0])
    assert (kept / "seat1-dying.log").read_text() == "exit_at_start: cannot load my model, giving up\n"
    shutil.rmtree(kept)

    same = run_cli(
        bots,
        "play",
        "--game",
        "stop_the_bus",
        "--bot",
        good,
        "--bot",
        good,
        "--name",
        "twin",
        "--name",
        "twin",
        "--quiet",
        cwd=tmp_path,
    )
    assert same.returncode == 2 and "same name" in same.stderr
    fine = run_cli(
        bots,
        "play",
        "--game",
        "stop_the_bus",
        "--bot",
        good,
        "--bot",
        good,
        "--name",
        "a",
        "--name",
        "b",
        "--quiet",
        cwd=tmp_path,
    )
    assert fine.returncode == 0, fine.stdout + fine.stderr
    assert "seat 0 a:" in fine.stdout and "bot output is kept" not in fine.stderr
    assert not any(path.name.startswith("referee-play-") for path in bots.socket_root.iterdir())  # none left
