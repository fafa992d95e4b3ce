"""The ladder's pure parts: drawing its tables, its register and tables files, and what a check holds against a
version."""

from __future__ import annotations

import itertools
import json

import pytest

from referee.apps.check_report import FAIL, PASS, Check
from referee.apps.ladder.entries import held_against
from referee.apps.ladder.file import Rest
from referee.apps.ladder.guard import TAIL_BYTES, forfeit_streaks
from referee.apps.ladder.history import (
    DrawnTable,
    Judged,
    Register,
    StatusChange,
    Tables,
)
from referee.apps.ladder.redraw import redraw
from referee.apps.ladder.rest import settled
from referee.apps.ladder.run import published_places
from referee.apps.ladder.table_draw import Place, Played, draw_table, meeting_interval
from referee.common.errors import OutputError
from referee.protocol.standing import ACTIVE, DISQUALIFIED, WITHDRAWN
from referee.records.results import ACCEPTED, REJECTED

SEED = 6069488482021880639


def play_tables(active: list[str], tables: int, size: int, placement: int = 0, played: Played | None = None):
    played = played or Played()
    drawn = []
    for number in range(1, tables + 1):
        bots = draw_table(active, played, size, placement, SEED, number)
        played = played.with_table(bots, size)
        drawn.append(bots)
    return played, drawn


def test_every_bot_plays_at_the_same_rate_and_every_pair_keeps_meeting() -> None:
    bots = [f"bot-{n}" for n in range(7)]
    played, drawn = play_tables(bots, 140, 3)
    assert all(len(set(table)) == 3 and set(table) <= set(bots) for table in drawn)
    games = [played.games[bot] for bot in bots]
    assert max(games) - min(games) <= 3  # within one table's games of each other
    meetings = [played.meetings.get(frozenset(pair), 0) for pair in itertools.combinations(bots, 2)]
    assert min(meetings) > 0 and max(meetings) <= 2 * min(meetings)


def test_a_new_version_sits_at_every_table_until_it_has_its_placement_games() -> None:
    bots = [f"bot-{n}" for n in range(6)]
    played, _ = play_tables(bots, 40, 3)
    newcomer = "bot-6"
    played, drawn = play_tables(bots + [newcomer], 8, 3, placement=12, played=played)
    assert all(newcomer in table for table in drawn[:4])  # 4 tables of 3 rotations: its 12 placement games
    assert played.games[newcomer] >= 12
    # then it waits while the others catch up (it has fewer games than they, so not for long)
    assert newcomer not in drawn[4] or played.games[newcomer] <= min(played.games[bot] for bot in bots) + 3


def test_the_same_history_draws_the_same_table_and_the_seats_are_shuffled() -> None:
    bots = [f"bot-{n}" for n in range(5)]
    _, first = play_tables(bots, 30, 3)
    _, again = play_tables(bots, 30, 3)
    assert first == again
    assert len({table[0] for table in first}) > 1  # not always the first bot in seat 0
    with pytest.raises(ValueError, match="a table of 3 needs as many bots; the ladder has 2"):
        draw_table(["a", "b"], Played(), 3, 0, SEED, 1)


def test_the_unsure_draw_seats_the_widest_range_for_its_games_beside_the_bots_ranked_nearest_it() -> None:
    bots = [f"bot-{n}" for n in range(10)]
    played, _ = play_tables(bots, 40, 4)  # everyone has met everyone: no pair is overdue
    # bot-n is ranked n + 1; bot-6's range is the widest by far, the others' span a neighbour or two.
    places = {bot: Place(n + 1, max(1, n), min(10, n + 2)) for n, bot in enumerate(bots)}
    places["bot-6"] = Place(7, 2, 10)
    for number in range(41, 51):
        table = draw_table(bots, played, 4, 0, SEED, number, places)
        ranks = sorted(places[bot].rank for bot in table)
        assert "bot-6" in table and ranks[-1] - ranks[0] == 3, f"table {number}: {table}"  # four neighbours
    # Where the ranges are alike, the bot with the fewest games for its width comes first, with its neighbours.
    even = {bot: Place(n + 1, max(1, n - 1), min(10, n + 3)) for n, bot in enumerate(bots)}
    fewer = Played({**played.games, "bot-2": played.games["bot-2"] - 40}, played.meetings, played.tables,
                   played.last_met, played.first_table)  # fmt: skip
    table = draw_table(bots, fewer, 4, 0, SEED, 41, even)
    assert "bot-2" in table and max(even[bot].rank for bot in table) - min(even[bot].rank for bot in table) == 3


def test_under_the_unsure_draw_every_pair_keeps_meeting_however_sure_the_ranking() -> None:
    bots = [f"bot-{n}" for n in range(12)]
    # The same places at every table: left alone, the draw would seat the same neighbours for ever.
    places = {bot: Place(n + 1, max(1, n), min(12, n + 2)) for n, bot in enumerate(bots)}
    interval, pairs = meeting_interval(12, 3), 66
    played, longest = Played(), 0
    for number in range(1, 3 * interval + 1):
        table = draw_table(bots, played, 3, 0, SEED, number, places)
        for pair in itertools.combinations(sorted(table), 2):
            longest = max(longest, played.waiting(frozenset(pair), number))
        played = played.with_table(table, 3)
    waits = [played.waiting(frozenset(pair), 3 * interval + 1) - 1 for pair in itertools.combinations(bots, 2)]
    assert max([longest, *waits]) <= interval + pairs
    meetings = [played.meetings.get(frozenset(pair), 0) for pair in itertools.combinations(bots, 2)]
    assert min(meetings) >= 2 * 3  # every pair met in each interval at least, a table's three games each time
    # and most tables still went to neighbours: the ranking's unsure places had most games
    neighbours = sum(played.meetings.get(frozenset((a, b)), 0) for a, b in itertools.pairwise(bots))
    assert neighbours > 3 * sum(meetings) / len(meetings) * len(bots) / 2


def test_every_table_is_drawn_again_from_the_records_alone_and_a_changed_record_shows(tmp_path) -> None:
    register, tables = Register(tmp_path), Tables(tmp_path)
    for author in ("ann", "bob", "cat", "dan", "eve"):
        register.add(Judged(author, 1, f"{author}-v1", "d", ACCEPTED))
    played = Played()
    for number in range(1, 31):
        if number == 12:  # a new version mid-season, placed at the tables after
            register.add(Judged("fay", 1, "fay-v1", "d", ACCEPTED, tables_drawn=11))
        if number == 20:
            register.add(StatusChange("bob-v1", WITHDRAWN, tables_drawn=19))
        active = [bot for bot, status in register.statuses().items() if status == ACTIVE]
        # places that move from table to table, as the standings do: only the records keep them
        places = None if number < 4 else {bot: Place(1 + (n + number) % len(active), 1, len(active))
                                           for n, bot in enumerate(active)}  # fmt: skip
        bots = draw_table(active, played, 3, 6, SEED, number, places)
        tables.add(DrawnTable(number, bots, number, places))
        played = played.with_table(bots, 3)
    tables.close()
    again = Tables(tmp_path)
    assert [table.draw for table in again.drawn[:4]] == ["even", "even", "even", "unsure"]
    assert all(redrawn.same for redrawn in redraw(again.drawn, register, 3, 6, SEED))
    changed = list(again.drawn)
    places = dict(changed[24].places or {})
    places["cat-v1"], places["eve-v1"] = places["eve-v1"], places["cat-v1"]
    changed[24] = DrawnTable(25, changed[24].bots, 25, places)
    assert not all(redrawn.same for redrawn in redraw(changed, register, 3, 6, SEED))
    register.close()


def test_the_draw_reads_the_active_versions_places_from_the_standings_last_published(tmp_path) -> None:
    assert published_places(tmp_path, ["ann-v1"]) == {}  # no standings yet: the table is drawn evenly
    rows = [
        {"bot": "ann-v1", "rank": 1, "rank_range": [1, 2]},
        {"bot": "bob-v1", "rank": 2, "rank_range": [1, 3]},  # withdrawn since: not drawn
        {"bot": "cat-v1", "rank": 3, "rank_range": [2, 3]},
    ]
    (tmp_path / "leaderboard.json").write_text(json.dumps({"rows": rows}))
    assert published_places(tmp_path, ["ann-v1", "cat-v1", "dan-v1"]) == {
        "ann-v1": Place(1, 1, 2),
        "cat-v1": Place(3, 2, 3),
    }
    (tmp_path / "leaderboard.json").write_text('{"rows": [{"bot": "ann-v1", "rank": 1}]}')
    assert published_places(tmp_path, ["ann-v1"]) == {}


def test_the_register_keeps_versions_and_statuses_in_order_and_drops_a_line_cut_short(tmp_path) -> None:
    register = Register(tmp_path)
    register.add(Judged("alice", 1, "alice-v1", "d1", ACCEPTED, at="t1"))
    register.add(Judged("bob", 1, "bob-v1", "d2", ACCEPTED))
    register.add(Judged("alice", 2, "alice-v2", "d3", REJECTED, reason="bot.yaml: no run"))
    register.add(Judged("alice", 3, "alice-v3", "d4", ACCEPTED))
    register.add(StatusChange("bob-v1", DISQUALIFIED, reason="read the output folder"))
    register.close()
    with open(tmp_path / "register.jsonl", "ab") as file:
        file.write(b'{"kind": "judged", "auth')  # a crash in the middle of a line
    again = Register(tmp_path)
    assert [judged.bot for judged in again.judged()] == ["alice-v1", "bob-v1", "alice-v2", "alice-v3"]
    assert again.statuses() == {"alice-v1": WITHDRAWN, "alice-v3": ACTIVE, "bob-v1": DISQUALIFIED}
    again.add(StatusChange("alice-v3", WITHDRAWN))
    again.close()
    assert Register(tmp_path).statuses()["alice-v3"] == WITHDRAWN


def test_tables_come_back_with_their_games_numbered_and_a_damaged_line_is_named(tmp_path) -> None:
    tables = Tables(tmp_path)
    tables.add(DrawnTable(1, ("a", "b", "c"), SEED))
    tables.add(DrawnTable(2, ("c", "d", "a"), 17))
    with pytest.raises(ValueError, match="table 4 drawn where 3 is due"):
        tables.add(DrawnTable(4, ("a", "b", "c"), 1))
    tables.close()
    again = Tables(tmp_path)
    games = again.games()
    assert [game.game_id for game in games] == [f"r1-t00{t}-s{s}" for t in (1, 2) for s in range(3)]
    assert [game.index for game in games] == list(range(6))
    assert games[4].seats == ("d", "a", "c") and games[4].seed == 17 and games[4].lane("a") == 1
    assert games[0].seed == SEED  # a 64-bit seed read back exactly (it is written as a string)
    again.close()
    lines = (tmp_path / "tables.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "tables.jsonl").write_bytes(b"garbage\n" + lines[1])
    with pytest.raises(OutputError, match=r"tables.jsonl:1: the line is not a whole JSON object"):
        Tables(tmp_path)


def test_a_slow_decision_is_noted_but_neither_it_nor_the_game_it_failed_rejects_a_version() -> None:
    where = {"game": "stop_the_bus", "seats": 3, "game_id": "check-stop_the_bus-3-1", "seat": 1}
    slow_game = [
        Check("handshake", PASS),
        Check("game", FAIL, "", **where),  # check-bot fails a game with any problem found in it
        Check("slow decision", FAIL, "612 ms", **where, decision=4),
    ]
    assert held_against(slow_game) == []
    crashed = [*slow_game, Check("crash", FAIL, "process exit code 3", **where)]
    assert [check.check for check in held_against(crashed)] == ["crash"]


def test_a_ladder_rests_once_every_active_versions_rank_range_or_games_after_placement_is_reached() -> None:
    played = Played({"a": 9, "b": 9, "c": 8}, {}, 3)
    places = {"a": Place(1, 1, 2), "b": Place(2, 1, 2), "c": Place(3, 3, 3)}
    assert settled(Rest(games=3), ["a", "b", "c"], played, 6, places) is None  # c has 2 games after placement
    assert settled(Rest(games=3), ["a", "b"], played, 6, places) == (
        "every active version has played 3 games after its placement (rest: games)"
    )
    assert settled(Rest(rank_range=1), ["a", "b", "c"], played, 6, places) is None  # a and b: 1-2
    assert settled(Rest(rank_range=2), ["a", "b", "c"], played, 6, places) == (
        "every active version has its rank range at most 2 places wide (rest: rank_range)"
    )
    assert settled(Rest(rank_range=2), ["a", "b", "c", "d"], played, 6, places) is None  # d is not placed yet
    assert settled(Rest(rank_range=1, games=30), ["c"], played, 6, places) == (
        "every active version has its rank known (rest: rank_range)"
    )


def test_forfeits_in_a_row_are_counted_from_the_end_of_the_results_however_far_back_they_began(tmp_path) -> None:
    padding = {"timing": {"latency_ms": [[1.234] * 120] * 3}}  # lines of games.jsonl as long as real ones

    def game(index: int, forfeits: dict[str, str]) -> str:
        record = {"index": index, "game_id": f"r1-t{index + 1:03d}-s0", "seats": ["ann-v1", "bob-v1", "cat-v1"],
                  "finish_order": [0, 1, 2], "table": index + 1, "rotation": 0, "seed": "1", "forfeits": forfeits,
                  **padding}  # fmt: skip
        return json.dumps(record) + "\n"

    # cat forfeits from game 100 on, for much more than the first part of the file read; bob once, long ago.
    lines = [game(index, {"2": "startup"} if index >= 100 else {"1": "crash"} if index == 5 else {})
             for index in range(3_000)]  # fmt: skip
    (tmp_path / "games.jsonl").write_text("".join(lines))
    assert (tmp_path / "games.jsonl").stat().st_size > 4 * TAIL_BYTES
    entered = {"ann-v1": 0, "bob-v1": 0, "cat-v1": 0}
    streaks = forfeit_streaks(tmp_path / "games.jsonl", entered, 10_000)
    assert streaks == {"cat-v1": (2_900, {"startup": 2_900})}
    assert forfeit_streaks(tmp_path / "games.jsonl", entered, 5) == {"cat-v1": (5, {"startup": 5})}
    # Only the games of tables drawn after it entered play (reinstated at table 2,990) count.
    assert forfeit_streaks(tmp_path / "games.jsonl", {"cat-v1": 2_990}, 10_000) == {"cat-v1": (10, {"startup": 10})}
    assert forfeit_streaks(tmp_path / "none.jsonl", entered, 5) == {}
