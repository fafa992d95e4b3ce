"""A league folder's standings kept current as games.jsonl grows: the same figures as a reading from nothing.

The reader (referee.records.standings.FolderStandings) reads only the lines added
since, counts a held game once it is shown, and reads again from nothing
when what it counted changed under it; its figures are sums kept as games
are counted (referee.records.standings.tally), the newest deals whole.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from referee.publish.files import write_leaderboards
from referee.publish.league_page import page_data_of
from referee.records import ranking
from referee.records.standings import FolderStandings, compute_standings, folder
from referee.records.visibility import VISIBILITY_FILE
from tests.simulated_bots import play_deal, strengths_from_elo

BOTS = [f"v{number}" for number in range(8)]


def season_records(deals: int, seed: int = 1, luck: float = 0.3) -> list[dict]:
    """A ladder's games: tables of 3 and 4 drawn from eight bots, each a deal of every rotation, a fault now and
    then, one game in fifty void."""
    rng = random.Random(seed)
    strengths = strengths_from_elo({name: rng.gauss(0, 150) for name in BOTS})
    records: list[dict] = []
    for deal in range(deals):
        table = rng.sample(BOTS, rng.choice((3, 4)))
        for rotation, (seats, order) in enumerate(play_deal(rng, strengths, table, luck)):
            record = {
                "index": len(records),
                "game_id": f"t{deal:04d}-s{rotation}",
                "table": deal,
                "rotation": rotation,
                "seed": str(1000 + deal),
                "seats": seats,
                "finish_order": order,
                "faults": [{"timeout": 1} if rng.random() < 0.05 else {} for _ in seats],
                "timing": {"latency_bins": [[rng.randint(400, 500), rng.randint(0, 9)] for _ in seats]},
            }
            if rng.random() < 0.02:
                record["void"] = "no bot got to make a decision"
            records.append(record)
    return records


def league_folder(path: Path, entries: dict | None = None) -> Path:
    path.mkdir(exist_ok=True)
    league = {"name": "season", "bots": BOTS, "settings": {"seed": "7"}, **({"entries": entries} if entries else {})}
    (path / "league.json").write_text(json.dumps(league))
    return path


def append(path: Path, records: list[dict]) -> None:
    with open(path / "games.jsonl", "a", encoding="utf-8") as results:
        results.write("".join(json.dumps(record) + "\n" for record in records))


def everything_but_strengths(standings):
    """The standings' figures that are sums (exact in any reading): each row's but its strength and its ranges."""
    rows = [
        (row.bot, row.games, row.wins, row.score, row.faults, row.decisions, row.median_ms, row.forfeits)
        for row in standings.rows
    ]
    return rows, standings.head_to_head, standings.games, standings.void_games, standings.deals


def test_a_folder_read_as_it_grows_gives_the_standings_of_one_reading(tmp_path: Path) -> None:
    records = season_records(120)
    folder_path = league_folder(tmp_path / "season")
    reader = FolderStandings(folder_path)
    for start in range(0, len(records), 37):  # batches that cut deals in two
        append(folder_path, records[start : start + 37])
        standings, _ = reader.update()
    assert reader.readings == 1, "each reading took only the lines added"
    expected = compute_standings(records, bots=BOTS, league_seed=7)
    assert standings == expected, "to the last digit: rows, ranges, every pair"
    assert standings.covariance == "bootstrap" and standings.deals == expected.deals == 120


def test_past_the_window_the_sums_stay_exact_and_the_ranges_near_one_readings(tmp_path: Path, monkeypatch) -> None:
    # Three deals kept whole: every other deal is folded, each deal's pairs' totals in whole numbers.
    monkeypatch.setattr(folder, "WINDOW_DEALS", 3)
    records = season_records(150)
    folder_path = league_folder(tmp_path / "season")
    reader = FolderStandings(folder_path)
    for start in range(0, len(records), 50):
        append(folder_path, records[start : start + 50])
        standings, _ = reader.update()
    fresh, _ = FolderStandings(folder_path).update()
    every = compute_standings(records, bots=BOTS, league_seed=7)
    assert everything_but_strengths(standings) == everything_but_strengths(every)
    assert standings.covariance == fresh.covariance == "sandwich" and every.covariance == "bootstrap"
    for read, one in zip(standings.rows, every.rows, strict=True):
        assert read.bot == one.bot and read.strength == pytest.approx(one.strength, abs=1e-6)
    # Deals folded at the fits of their time: the intervals of a reading in three parts and of one differ a little.
    for read, once in zip(standings.rows, fresh.rows, strict=True):
        assert read.strength_high - read.strength == pytest.approx(once.strength_high - once.strength, rel=0.05)


def test_a_game_coming_back_to_a_deal_long_gone_counts_in_that_deal(tmp_path: Path, monkeypatch) -> None:
    # A gauntlet that gained a candidate: its games on the field's deals come after every other game, long after
    # those deals left the window. Its deal's earlier games are found again, and the deal counts once.
    monkeypatch.setattr(folder, "WINDOW_DEALS", 2)
    rng = random.Random(3)
    field = ["f1", "f2", "f3"]
    records: list[dict] = []
    tables = [rng.sample(field, 2) for _ in range(12)]  # each deal's field table, the same for every candidate

    def play(candidate: str, deal: int) -> None:
        table = [candidate, *tables[deal]]
        for rotation in range(3):
            seats = table[rotation:] + table[:rotation]
            records.append(
                {
                    "index": 100 * deal + 10 * ("abc".index(candidate[0])) + rotation,
                    "game_id": f"d{deal}-{candidate}-s{rotation}",
                    "seed": str(500 + deal),
                    "seats": seats,
                    "candidate": candidate,
                    "finish_order": rng.sample(range(3), 3),
                }
            )

    for deal in range(12):
        play("alpha", deal)
        play("bravo", deal)
    for deal in range(12):
        play("charlie", deal)
    folder_path = tmp_path / "gauntlet"
    folder_path.mkdir()
    (folder_path / "league.json").write_text(json.dumps({"name": "g", "bots": ["alpha", "bravo", "charlie", *field]}))
    reader = FolderStandings(folder_path)
    append(folder_path, records[:30])
    reader.update()
    append(folder_path, records[30:])
    standings, _ = reader.update()
    every = compute_standings(records, bots=["alpha", "bravo", "charlie", *field])
    assert standings.head_to_head == every.head_to_head
    assert standings.comparison("charlie", "alpha").deals == 12, "paired on every deal, each deal once"
    assert standings.deals == every.deals == 12


def test_a_held_game_is_counted_once_shown_and_a_record_past_the_rule_not_yet(tmp_path: Path) -> None:
    records = season_records(20)
    folder_path = league_folder(tmp_path / "season")
    append(folder_path, records)
    lines = (folder_path / "games.jsonl").read_bytes().splitlines(keepends=True)
    accounted = sum(map(len, lines[:50]))
    held = {record["game_id"]: None for record in records[10:13]}
    (folder_path / VISIBILITY_FILE).write_text(json.dumps({"accounted": accounted, "held": held}))
    reader = FolderStandings(folder_path)
    standings, _ = reader.update()
    shown = [record for record in records[:50] if record["game_id"] not in held]
    assert standings == compute_standings(shown, bots=BOTS, league_seed=7)
    assert standings.shown is not None and standings.shown.count == len(shown)
    (folder_path / VISIBILITY_FILE).write_text(json.dumps({"accounted": len(b"".join(lines)), "held": {}}))
    standings, _ = reader.update()
    assert standings == compute_standings(records, bots=BOTS, league_seed=7) and reader.readings == 1


def test_what_was_counted_changing_under_the_reader_reads_the_folder_again(tmp_path: Path) -> None:
    records = season_records(30)
    folder_path = league_folder(tmp_path / "season")
    append(folder_path, records)
    reader = FolderStandings(folder_path)
    reader.update()
    # A bot disqualified: its games count for no one, as if never played.
    entries = {"v3": {"status": "disqualified", "reason": "collusion"}}
    league_folder(folder_path, entries)
    standings, _ = reader.update()
    assert reader.readings == 2
    assert standings == compute_standings(records, bots=BOTS, league_seed=7, entries=entries)
    assert standings.left_out > 0
    # The file replaced (a grown league's renumbered): read from nothing.
    renumbered = [{**record, "index": record["index"] + 1000} for record in records]
    (folder_path / "games.jsonl").unlink()
    append(folder_path, renumbered)
    standings, _ = reader.update()
    assert reader.readings == 3 and standings == compute_standings(
        renumbered, bots=BOTS, league_seed=7, entries=entries
    )


def test_the_fit_on_stage_counts_is_the_fit_of_every_game() -> None:
    rng = random.Random(8)
    for trial in range(6):
        bots = [f"b{number}" for number in range(rng.randint(2, 12))]
        games = []
        for _ in range(rng.randint(1, 300)):
            table = rng.sample(bots, rng.randint(2, min(6, len(bots))))
            games.append(sorted(table, key=lambda name: rng.random() - 0.1 * int(name[1:])))
        played = sorted({name for game in games for name in game})
        numbers = {name: number for number, name in enumerate(played)}
        every = ranking._point_fit(ranking._finish_array(games, numbers), len(played))[2]
        stages = ranking.StageCounts()
        for game in games:
            stages.add([stages.bot_id(name) for name in game])
        members, counts, wins = stages.arrays([stages.bot_ids[name] for name in played])
        fitted = ranking.fit_stages(members, counts, wins)
        assert np.max(np.abs(fitted - every)) * ranking.ELO_PER_NEPER < 1e-6, trial
        warm = ranking.fit_stages(members, counts, wins, start=fitted + 0.01)
        assert np.max(np.abs(warm - every)) * ranking.ELO_PER_NEPER < 1e-6, "from the last fit, the same"


def test_the_page_lists_the_newest_games_and_tells_faults_from_each_bots_newest_games_with_faults(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(folder, "NEWEST_GAMES", 10)
    monkeypatch.setattr(folder, "FAULTY_GAMES", 3)
    records = season_records(40)
    folder_path = league_folder(tmp_path / "season")
    append(folder_path, records)
    standings, league = FolderStandings(folder_path).update()
    write_leaderboards(standings, folder_path, league.name)
    data = page_data_of((folder_path / "leaderboard.html").read_text(encoding="utf-8"))
    assert data["league"]["games"] == len(records) and data["league"]["games_listed"] == 10
    assert [game[0] for game in data["games"]] == [record["index"] for record in records[-10:]][::-1]
    faulty: dict[str, int] = {}
    for record in records:
        for bot, faults in zip(record["seats"], record["faults"], strict=True):
            faulty[bot] = faulty.get(bot, 0) + bool(faults)
    assert data["fault_games"] == {bot: min(games, 3) for bot, games in faulty.items() if games}
    assert len(data["history"]["games"]) <= 60 and data["history"]["games"][-1] == standings.games
