"""Seasons: bots withdrawn, disqualified or replaced by a new version between runs of a league."""

from __future__ import annotations

import asyncio
import csv
import json
import re
from pathlib import Path

import pytest

from referee.config import load_league
from referee.league import RESULTS_FILE, read_games, read_league, run_league
from referee.publish import console_table
from referee.standings import compute_standings

from .conftest import SAMPLE_BOTS, Bots
from .test_config import TWO_BOTS, league_file, line_of, load_error
from .test_league import write_league

BOT_ENTRY = "    env: {{REFEREE_TEST_MARKER: {marker}}}\n"


def first_round(tmp_path: Path, bots: Bots) -> Path:
    """A league of alpha, bravo and charlie (six games a round) after its first round, in ``tmp_path / "out"``."""
    league_path = write_league(tmp_path / "league.yaml", bots, rounds=1)
    summary = run(league_path, tmp_path / "out")
    assert summary.played == 6
    return league_path


def second_round(league_path: Path, bots: Bots, edit: dict[str, str], added: str = ""):
    """Add a round and ``edit`` the bots' entries (bot name -> lines under it), then run the league again."""
    text = league_path.read_text().replace("rounds: 1", "rounds: 2")
    entry = BOT_ENTRY.format(marker=bots.marker)
    for name, lines in edit.items():
        start = text.index(f"  - name: {name}\n")
        end = text.index(entry, start) + len(entry)
        text = text[:end] + lines + text[end:]
    league_path.write_text(text + added)
    return run(league_path, league_path.parent / "out")


def run(league_path: Path, output: Path):
    return asyncio.run(run_league(load_league(league_path), output=output))


def board(output: Path) -> dict:
    return json.loads((output / "leaderboard.json").read_text())


def row_of(output: Path, bot: str) -> dict:
    return next(row for row in board(output)["rows"] if row["bot"] == bot)


def test_a_withdrawn_bot_plays_no_new_game_and_keeps_its_results(tmp_path: Path, bots: Bots) -> None:
    league_path = first_round(tmp_path, bots)
    output = tmp_path / "out"
    before = [game.game_id for game in read_games(output / RESULTS_FILE) if "charlie" in game.seats]
    summary = second_round(league_path, bots, {"charlie": "    status: withdrawn\n    reason: its author left\n"})

    # Round 2's four games with charlie are not played; the two without it are; its round 1 games stay.
    assert (summary.played, summary.total, summary.unplayed) == (2, 8, 4)
    games = list(read_games(output / RESULTS_FILE))
    assert [game.game_id for game in games if "charlie" in game.seats] == before
    assert all(game.round == 1 for game in games if "charlie" in game.seats)
    record = read_league(output)
    assert record is not None and record.scheduled == 8
    assert record.entries == {"charlie": {"status": "withdrawn", "reason": "its author left"}}
    assert [change["what"] for change in record.changes] == ["charlie withdrawn (its author left)"]
    charlie = row_of(output, "charlie")
    assert charlie["status"] == "withdrawn" and charlie["games"] == 4 and charlie["strength"] is not None
    assert "charlie (withdrawn: its author left)" in (output / "leaderboard.md").read_text()
    assert "charlie (withdrawn: its author left)" in console_table(summary.standings)
    rows = {row["bot"]: row for row in csv.DictReader((output / "leaderboard.csv").open())}
    assert rows["charlie"]["status"] == "withdrawn" and rows["alpha"]["status"] == "active"

    # Run again: nothing to play, and the change is not recorded twice.
    again = run(league_path, output)
    assert again.played == 0
    assert len(read_league(output).changes) == 1


def test_a_disqualified_bots_games_count_for_no_one(tmp_path: Path, bots: Bots) -> None:
    league_path = first_round(tmp_path, bots)
    output = tmp_path / "out"
    summary = second_round(league_path, bots, {"charlie": "    status: disqualified\n    reason: read the deck\n"})
    assert (summary.played, summary.unplayed) == (2, 4)

    games = list(read_games(output / RESULTS_FILE))
    without = [game for game in games if "charlie" not in game.seats]
    assert len(without) == 4 and len(games) == 8  # its games are kept in the records, counted for no one
    alone = compute_standings(without, bots=["alpha", "bravo"], league_seed=11)
    standings = summary.standings
    assert [row.bot for row in standings.rows] == [*(row.bot for row in alone.rows), "charlie"]
    for row, expected in zip(standings.rows, alone.rows, strict=False):
        assert (row.rank, row.rank_range, row.strength, row.games, row.score) == (
            expected.rank,
            expected.rank_range,
            expected.strength,
            expected.games,
            expected.score,
        )
    assert standings.games == 4 and standings.left_out == 4
    charlie = row_of(output, "charlie")
    assert (charlie["status"], charlie["status_reason"], charlie["games"]) == ("disqualified", "read the deck", 0)
    markdown = (output / "leaderboard.md").read_text()
    assert "charlie (disqualified: read the deck)" in markdown
    assert "The 4 games they sat in count for no one." in markdown
    assert [change["what"] for change in read_league(output).changes] == ["charlie disqualified (read the deck)"]


def test_a_new_version_plays_its_old_versions_unplayed_games(tmp_path: Path, bots: Bots) -> None:
    league_path = first_round(tmp_path, bots)
    output = tmp_path / "out"
    delta = bots.command(SAMPLE_BOTS / "random_bot.py", "--label", "delta")
    added = f"  - name: delta\n    replaces: charlie\n    command: {json.dumps(delta)}\n" + BOT_ENTRY.format(
        marker=bots.marker
    )
    summary = second_round(league_path, bots, {}, added=added)
    assert (summary.played, summary.total, summary.unplayed) == (6, 12, 0)

    league = load_league(league_path)
    assert league.bot("charlie").status == "withdrawn" and league.bot("delta").replaces == "charlie"
    scheduled = {game.game_id: game for game in league.schedule()}  # made as before: charlie in its seats
    for game in read_games(output / RESULTS_FILE):
        seats = tuple("charlie" if name == "delta" else name for name in game.seats)
        assert scheduled[game.game_id].seats == seats and scheduled[game.game_id].seed == game.seed
        assert ("delta" in game.seats) == (game.round == 2 and "charlie" in seats)
    data = board(output)
    assert data["versions"] == [{"author": "charlie", "bots": ["charlie", "delta"]}]
    assert row_of(output, "delta")["games"] == 4 and row_of(output, "charlie")["status"] == "withdrawn"
    assert "Versions of charlie: charlie (" in (output / "leaderboard.md").read_text()
    assert [change["what"] for change in read_league(output).changes] == [
        "charlie withdrawn (replaced by delta)",
        "delta replaces charlie",
    ]
    assert run(league_path, output).played == 0  # the records seating delta in charlie's seats are this league's


# ----- the league file ------------------------------------------------------------------------------


THREE_BOTS = TWO_BOTS + "  - name: carol\n    command: python carol.py\n"


def test_status_reason_and_replaces_are_read_and_a_replaced_bot_is_withdrawn(tmp_path: Path) -> None:
    league = load_league(
        league_file(
            tmp_path,
            "",
            THREE_BOTS + "    status: disqualified\n    reason: cheated\n"
            "  - name: alice-2\n    command: python alice.py\n    replaces: alice\n",
        )
    )
    assert [(bot.name, bot.status, bot.status_reason, bot.replaces) for bot in league.bots] == [
        ("alice", "withdrawn", "replaced by alice-2", None),
        ("bob", "active", "", None),
        ("carol", "disqualified", "cheated", None),
        ("alice-2", "active", "", "alice"),
    ]
    assert league.scheduled_names == ("alice", "bob", "carol")


@pytest.mark.parametrize(
    ("extra", "fragment", "message"),
    [
        (
            "    status: gone\n",
            "status: gone",
            r"bots\[2\]\.status: \"gone\" is not allowed; allowed: active, withdrawn, disqualified",
        ),
        ("    reason: why\n", "reason: why", r"bots\[2\]\.reason: says why a bot is withdrawn or disqualified"),
        ("    replaces: dave\n", "replaces: dave", r'bots\[2\]\.replaces: "dave" is not a bot of this file'),
        (
            "    replaces: alice\n  - name: dave\n    command: python d.py\n    replaces:  alice\n",
            "replaces:  alice",
            r"bots\[3\]\.replaces: alice is already replaced by carol \(bots\[2\]\)",
        ),
        (
            "    replaces: bob\n",
            "replaces: carol",
            r"bots\[1\]\.replaces: bob -> carol -> bob replace each other in a circle",
        ),
    ],
)
def test_a_bad_season_entry_is_refused_with_file_line_and_key(tmp_path: Path, extra: str, fragment: str, message: str):
    text = THREE_BOTS + extra
    if extra == "    replaces: bob\n":  # and bob replaces carol: a circle
        text = text.replace("python bob.py\n", "python bob.py\n    replaces: carol\n")
    path = league_file(tmp_path, "", text)
    error = load_error(path)
    assert re.search(message, error), error
    assert error.startswith(f"{path}:{line_of(path, fragment)}: ")
