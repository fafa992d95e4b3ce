"""Seasons: bots withdrawn, disqualified or replaced by a new version between runs of a league."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from referee.apps.duel import duel_report
from referee.apps.league import RESULTS_FILE, read_league, run_league
from referee.cli import main as referee_main
from referee.leaguefile.config import load_league
from referee.leaguefile.lanes import LANES_DIR, with_lane_copies
from referee.leaguefile.submissions import BUILDS_DIR
from referee.publish.console_table import console_table
from referee.records.results import read_games, read_records
from referee.records.standings import compute_standings

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
    add_round(league_path, bots, edit, added)
    return run(league_path, league_path.parent / "out")


def add_round(league_path: Path, bots: Bots, edit: dict[str, str], added: str = "") -> None:
    """Add a round to the league file, ``edit`` the bots' entries (bot name -> lines under it), add ``added``."""
    text = league_path.read_text().replace("rounds: 1", "rounds: 2")
    entry = BOT_ENTRY.format(marker=bots.marker)
    for name, lines in edit.items():
        start = text.index(f"  - name: {name}\n")
        end = text.index(entry, start) + len(entry)
        text = text[:end] + lines + text[end:]
    league_path.write_text(text + added)


def run(league_path: Path, output: Path):
    return asyncio.run(run_league(load_league(league_path), output=output))


def run_cli(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    """Run the command line in this process: its exit status, and what it printed on stdout and on stderr."""
    status = referee_main(list(argv))
    printed = capsys.readouterr()
    return status, printed.out, printed.err


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


# ----- builds: a bot that plays no more is not built ------------------------------------------------


def submission(folder: Path, bots: Bots, build: str, extra: str = "") -> str:
    """A submission of the random sample bot, run with the test's marker, built by ``build``; its league entry."""
    name = folder.name
    folder.mkdir()
    shutil.copy(SAMPLE_BOTS / "random_bot.py", folder)
    command = json.dumps(["python", "random_bot.py", "--label", name, "--marker", bots.marker])
    (folder / "bot.yaml").write_text(f"name: {name}\nversion: '1'\nbuild: {json.dumps(build)}\nrun: {command}\n")
    return f"  - name: {name}\n    path: {name}\n" + BOT_ENTRY.format(marker=bots.marker) + extra


def league_of_submissions(tmp_path: Path, bots: Bots, entries: str, *, extra: str = "", commands=("alpha",)) -> Path:
    """A league of random command bots (``commands``), then the submissions' ``entries``, at tables of two.

    Unsandboxed: each build counts itself in a file of the test's, outside its copy, where a sandboxed build
    could not write.
    """
    random_bots = [(name, bots.command(SAMPLE_BOTS / "random_bot.py", "--label", name)) for name in commands]
    extra = "\n".join(line for line in (extra, "sandbox: none") if line)
    league_path = write_league(tmp_path / "league.yaml", bots, entries=random_bots, extra=extra)
    league_path.write_text(league_path.read_text() + entries)
    return league_path


def test_a_bot_withdrawn_between_runs_is_built_no_more_while_the_others_build_and_play(
    tmp_path: Path, bots: Bots, capsys: pytest.CaptureFixture
) -> None:
    built = tmp_path / "built.txt"
    entries = "".join(submission(tmp_path / name, bots, f"echo {name} >> {built}") for name in ("keep", "gone"))
    league_path = league_of_submissions(tmp_path, bots, entries)
    output = tmp_path / "out"
    assert run(league_path, output).played == 6
    assert built.read_text() == "keep\ngone\n"
    # Their copies and records removed: a bot that plays is built again, as a removed copy always is;
    # a withdrawn one is not looked at, and nothing of its build comes back.
    for name in ("keep", "gone"):
        shutil.rmtree(output / BUILDS_DIR / name)
        (output / BUILDS_DIR / f"{name}.json").unlink()
    (output / "logs" / "build-gone.log").unlink()

    add_round(league_path, bots, {"gone": "    status: withdrawn\n"})
    status, out, error = run_cli(capsys, "run", str(league_path), "--output", str(output), "--no-progress")
    assert status == 0, error
    assert "gone" not in error  # no build told of, and no bot left out
    assert "3 bots, 8 games, 6 already finished, 4 left unplayed" in out
    assert built.read_text() == "keep\ngone\nkeep\n"
    assert sorted(os.listdir(output / BUILDS_DIR)) == ["keep", "keep.json"]
    assert not (output / "logs" / "build-gone.log").exists()
    second = [game.seats for game in read_games(output / RESULTS_FILE) if game.round == 2]
    assert sorted(second) == [("alpha", "keep"), ("keep", "alpha")]
    gone = row_of(output, "gone")
    assert (gone["status"], gone["games"]) == ("withdrawn", 4) and gone["strength"] is not None
    assert read_league(output).bots == ("alpha", "keep", "gone")


def test_a_bot_withdrawn_from_the_start_is_never_built(tmp_path: Path, bots: Bots) -> None:
    built = tmp_path / "built.txt"
    entries = submission(tmp_path / "keep", bots, f"echo keep >> {built}") + submission(
        tmp_path / "gone", bots, f"echo gone >> {built}", "    status: withdrawn\n    reason: entered too late\n"
    )
    league_path = league_of_submissions(tmp_path, bots, entries)
    output = tmp_path / "out"
    summary = run(league_path, output)
    assert (summary.played, summary.total, summary.unplayed, summary.left_out) == (2, 2, 4, {})

    def never_built() -> None:
        assert built.read_text() == "keep\n"
        assert sorted(os.listdir(output / BUILDS_DIR)) == ["keep", "keep.json"]
        assert [name for name in os.listdir(output / "logs") if name.startswith("build-")] == ["build-keep.log"]
        assert read_league(output).bots == ("alpha", "keep", "gone")
        gone = row_of(output, "gone")
        assert (gone["status"], gone["status_reason"], gone["games"]) == ("withdrawn", "entered too late", 0)

    never_built()
    # A round more: its seats stay in the schedule, unplayed, and it is still not built.
    summary = second_round(league_path, bots, {})
    assert (summary.played, summary.total, summary.unplayed) == (2, 4, 8)
    never_built()


def test_a_bot_a_failed_build_left_out_and_then_withdrawn_stays_out_untold(
    tmp_path: Path, bots: Bots, capsys: pytest.CaptureFixture
) -> None:
    tried = tmp_path / "tried.txt"
    entries = submission(tmp_path / "broken", bots, f"echo tried >> {tried}; exit 1")
    league_path = league_of_submissions(
        tmp_path, bots, entries, extra="on_build_failure: skip", commands=("alpha", "bravo")
    )
    output = tmp_path / "out"
    command = ("run", str(league_path), "--output", str(output), "--no-progress")
    status, _, error = run_cli(capsys, *command)
    assert status == 1 and "broken: left out of the league" in error
    assert read_league(output).bots == ("alpha", "bravo")

    # Withdrawn: not built, not told of as a build failure, and still out of the schedule the games were played on.
    add_round(league_path, bots, {"broken": "    status: withdrawn\n"})
    status, out, error = run_cli(capsys, *command)
    assert status == 0 and "broken" not in error, error
    assert "2 bots, 4 games, 2 already finished" in out and "unplayed" not in out
    assert tried.read_text() == "tried\n"
    assert sorted(row["bot"] for row in board(output)["rows"]) == ["alpha", "bravo"]
    assert len(list(read_games(output / RESULTS_FILE))) == 4


# ----- gauntlets and duels ---------------------------------------------------------------------------


def test_a_new_version_of_a_gauntlet_candidate_is_a_candidate_in_its_seats(tmp_path: Path, bots: Bots) -> None:
    # Charlie is the candidate; alpha and bravo the field: two field tables of two games a round.
    league_path = write_league(
        tmp_path / "league.yaml", bots, extra="format: {type: gauntlet, candidates: [charlie]}", rounds=1
    )
    output = tmp_path / "out"
    assert run(league_path, output).played == 4
    delta = bots.command(SAMPLE_BOTS / "random_bot.py", "--label", "delta")
    league_path.write_text(
        league_path.read_text()
        + f"  - name: delta\n    replaces: charlie\n    command: {json.dumps(delta)}\n"
        + BOT_ENTRY.format(marker=bots.marker)
    )
    # Added once every game is played: nothing to play, and the new version is a candidate from the start.
    assert run(league_path, output).played == 0
    assert board(output)["candidates"] == ["charlie", "delta"]
    assert row_of(output, "delta")["candidate"] and row_of(output, "delta")["games"] == 0

    # A round more: delta plays the candidate's tables, in its seats, on the same seeds.
    summary = second_round(league_path, bots, {})
    assert (summary.played, summary.unplayed) == (4, 0)
    scheduled = {game.game_id: game for game in load_league(league_path).schedule()}
    for game in read_games(output / RESULTS_FILE):
        expected = scheduled[game.game_id]
        version = "delta" if game.round == 2 else "charlie"
        assert game.candidate == version and game.seed == expected.seed
        assert game.seats == tuple(version if name == "charlie" else name for name in expected.seats)
    standings = summary.standings
    assert standings.candidates == ("charlie", "delta")
    assert {row.bot for row in standings.rows[:2]} == {"charlie", "delta"}
    assert all(row.candidate == (row.bot in ("charlie", "delta")) for row in standings.rows)
    assert row_of(output, "delta")["games"] == 4
    markdown = (output / "leaderboard.md").read_text()
    assert "Versions of charlie: charlie (" in markdown


DUEL_FORMAT = "format: {type: sprt, candidates: [alpha, bravo], elo0: 0, elo1: 300, max_games: 6}"


def test_a_duels_bots_stay_as_they_are_to_its_verdict(tmp_path: Path, bots: Bots, capsys: pytest.CaptureFixture):
    league_path = write_league(tmp_path / "league.yaml", bots, extra=DUEL_FORMAT, rounds=None)
    output = tmp_path / "out"
    command = ("run", str(league_path), "--output", str(output), "--no-progress")
    status, _, error = run_cli(capsys, *command)
    assert status == 0, error
    played = (output / RESULTS_FILE).read_bytes()
    written = league_path.read_text()
    delta = bots.command(SAMPLE_BOTS / "random_bot.py", "--label", "delta")
    edits = [
        (
            f"  - name: delta\n    replaces: alpha\n    command: {json.dumps(delta)}\n",
            "replaces: alpha",
            "bots[3].replaces: delta cannot replace alpha in a duel (format sprt): its test counts alpha's games",
        ),
        (
            "    status: withdrawn\n",
            "status: withdrawn",
            "bots[2].status: withdrawn is not allowed in a duel (format sprt): the test takes the deals in order",
        ),
    ]
    for added, fragment, message in edits:
        league_path.write_text(written + added)
        status, _, error = run_cli(capsys, *command)
        assert status == 1
        assert f"{league_path}:{line_of(league_path, fragment)}: {message}" in error, error
        assert (output / RESULTS_FILE).read_bytes() == played


def test_a_duel_of_a_season_league_plays_the_bots_that_still_play(
    tmp_path: Path, bots: Bots, capsys: pytest.CaptureFixture
) -> None:
    entries = [
        (name, bots.command(SAMPLE_BOTS / "random_bot.py", "--label", name))
        for name in ("alpha", "bravo", "charlie", "gone", "alpha-2")
    ]
    league_path = write_league(tmp_path / "league.yaml", bots, entries=entries, table_size=3)
    text = league_path.read_text()
    text = text.replace("  - name: alpha-2\n", "  - name: alpha-2\n    replaces: alpha\n")
    gone = text.index("  - name: gone\n")
    text = text[:gone] + "  - name: gone\n    status: withdrawn\n" + text[gone + len("  - name: gone\n") :]
    league_path.write_text(text)
    # The new version against the version it replaced, the field being the bots that still play.
    duel = ("duel", str(league_path), "alpha-2", "alpha", "--elo0", "-300", "--elo1", "300", "--max-games", "6")
    status, out, error = run_cli(capsys, *duel, "--no-progress")
    assert status == 0, error
    output = tmp_path / "test-league-duel-alpha-2-alpha"  # beside the league's output, results/
    records = sorted(read_records(output / RESULTS_FILE), key=lambda record: record["index"])
    assert 3 <= len(records) <= 6
    assert all(
        {"alpha-2", "alpha"} < set(record["seats"]) <= {"alpha-2", "alpha", "bravo", "charlie"} for record in records
    )
    state = duel_report(read_league(output), records)
    assert state is not None and state.games_counted == len(records) and (state.decided or state.deals == 2)
    recorded = read_league(output)
    assert recorded.bots == ("alpha", "bravo", "charlie", "alpha-2") and recorded.entries == {}

    # A disqualified bot is no candidate.
    league_path.write_text(text.replace("status: withdrawn", "status: disqualified"))
    status, _, error = run_cli(capsys, "duel", str(league_path), "gone", "alpha", "--elo0", "0", "--elo1", "5")
    assert status == 1
    assert f"{league_path}:{line_of(league_path, '- name: gone')}: gone is disqualified in league test-league" in error


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


def test_a_gauntlet_names_a_candidate_by_its_first_version(tmp_path: Path) -> None:
    path = league_file(
        tmp_path,
        "format: {type: gauntlet, candidates: [alice-2]}\n",
        THREE_BOTS + "  - name: alice-2\n    command: python alice.py\n    replaces: alice\n",
    )
    assert load_error(path) == (
        f'{path}:{line_of(path, "format:")}: format.candidates[0]: "alice-2" is a new version of alice (replaces): '
        "it plays in alice's seats, so a candidate is named by the first version of its line, and its new versions "
        "are candidates with it; list alice"
    )


@pytest.mark.parametrize(
    ("edit", "fragment", "message"),
    [
        (
            (
                "python carol.py\n",
                "python carol.py\n  - name: alice-2\n    command: python alice.py\n    replaces: alice\n",
            ),
            "replaces: alice",
            "bots[3].replaces: alice-2 cannot replace alice in a duel (format sprt)",
        ),
        (
            ("python bob.py\n", "python bob.py\n    status: withdrawn\n"),
            "status: withdrawn",
            "bots[1].status: withdrawn is not allowed in a duel (format sprt): every deal seats alice and bob, so the "
            "test would stop where it is, without a verdict",
        ),
        (
            ("python carol.py\n", "python carol.py\n    status: disqualified\n    reason: cheated\n"),
            "status: disqualified",
            "bots[2].status: disqualified is not allowed in a duel (format sprt): the test takes the deals in order, "
            "and a field bot's deals left unplayed would stop it; a duel's bots stay as they are from its first game to "
            "its verdict: remove status, or play the duel afresh without carol, in another output",
        ),
    ],
)
def test_a_duels_bots_take_no_seasons_edit(tmp_path: Path, edit, fragment: str, message: str) -> None:
    path = league_file(
        tmp_path, "format: {type: sprt, candidates: [alice, bob], elo0: 0, elo1: 10}\n", THREE_BOTS.replace(*edit)
    )
    error = load_error(path)
    assert error.startswith(f"{path}:{line_of(path, fragment)}: {message}"), error


def test_lanes_copy_the_shared_folders_of_the_bots_that_play_and_a_new_version_plays_in_its_seats_lanes(
    tmp_path: Path,
) -> None:
    for name in ("alice", "bob", "carol", "carol-2"):
        (tmp_path / f"{name}-memory").mkdir()
        (tmp_path / f"{name}-memory" / "learnt.txt").write_text(name)
    entries = "".join(
        f"  - name: {name}\n    command: python {name}.py\n    shared: [{name}-memory]\n{extra}"
        for name, extra in (
            ("alice", "    status: withdrawn\n"),
            ("bob", ""),
            ("carol", ""),
            ("dave", ""),
            ("carol-2", "    replaces: carol\n"),
        )
    ).replace("    shared: [dave-memory]\n", "")
    league = load_league(
        league_file(tmp_path, "format: {type: gauntlet, candidates: [carol, dave]}\n", "bots:\n" + entries)
    )
    output = tmp_path / "out"
    copied = with_lane_copies(league, output, league.schedule())
    # A field bot plays each field table once per candidate and rotation: 4 lanes; a candidate 2, as its new version.
    assert {bot.name: len(bot.spec.lane_copies) for bot in copied.bots} == {
        "alice": 0,
        "bob": 3,
        "carol": 0,
        "dave": 0,
        "carol-2": 1,
    }
    assert sorted(path.name for path in (output / LANES_DIR).iterdir()) == ["bob", "carol-2"]
    assert (output / LANES_DIR / "carol-2" / "lane-1" / "0-carol-2-memory" / "learnt.txt").read_text() == "carol-2"
