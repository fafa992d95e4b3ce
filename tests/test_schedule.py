"""Tests of the league schedule: the round-robin, the sampled draw and the gauntlet, lazily made and seeded."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from referee.common.errors import LeagueError
from referee.engine.games import StopTheBus
from referee.engine.seeding import derive_seed
from referee.leaguefile.config import load_league
from referee.leaguefile.schedule import (
    Gauntlet,
    GauntletSchedule,
    RoundRobin,
    Sampled,
    SampledSchedule,
    ScheduledGame,
    combination_at,
    schedule_games,
    table_lines,
    table_seed,
    tables_for_games,
)
from referee.leaguefile.schedule import sampled_draw as draw_module
from referee.leaguefile.schedule.sampled_draw import draw_tables
from referee.leaguefile.schedule.scheduled_games import schedule_json_lines, spaced_shifts

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank"]
SIZES = [(2, 2, 1), (3, 3, 2), (4, 3, 1), (5, 4, 2), (6, 2, 3), (6, 3, 1)]  # (bots, table size, rounds)


def groups(games) -> dict[tuple[int, int], list[ScheduledGame]]:
    """The games by rotation group: (round, table) -> its games."""
    by_group: dict[tuple[int, int], list[ScheduledGame]] = defaultdict(list)
    for game in games:
        by_group[game.round, game.table].append(game)
    return by_group


def eager_round_robin(names: list[str], table_size: int, rounds: int, league_seed: int) -> list[ScheduledGame]:
    """The round-robin as the referee made it before schedules were lazy: a list, built the plain way."""
    games = []
    for round_number in range(1, rounds + 1):
        for table_number, table in enumerate(colex_combinations(names, table_size), 1):
            seed = derive_seed(league_seed, "round", round_number, "table", ",".join(sorted(table)))
            for rotation in range(table_size):
                seats = tuple(table[(seat + rotation) % table_size] for seat in range(table_size))
                games.append(
                    ScheduledGame(
                        len(games),
                        f"r{round_number}-t{table_number:03d}-s{rotation}",
                        round_number,
                        table_number,
                        rotation,
                        seats,
                        seed,
                    )
                )
    return games


def write_league(folder: Path, bots: list[str], body: str = "table_size: 3\nrounds: 2\n", seed: int = 99) -> Path:
    """A league file of ``bots`` (each running an empty script of its own) with ``body`` for its settings."""
    lines = ["name: l", "game: stop_the_bus", f"seed: {seed}", *body.strip().splitlines(), "bots:"]
    for name in bots:
        (folder / f"{name}.py").write_text("")
        lines += [f"  - name: {name}", f"    command: python {name}.py"]
    path = folder / "league.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def bot_names(count: int) -> list[str]:
    return [f"bot{number:02d}" for number in range(1, count + 1)]


# ----- the round-robin ----------------------------------------------------------------


@pytest.mark.parametrize(("bots", "table_size", "rounds"), SIZES)
def test_round_robin_is_the_same_games_as_before_schedules_were_lazy(bots, table_size, rounds):
    games = schedule_games(NAMES[:bots], table_size, rounds, league_seed=7)
    assert list(games) == eager_round_robin(NAMES[:bots], table_size, rounds, 7)
    assert len(games) == games.count == math.comb(bots, table_size) * table_size * rounds


@pytest.mark.parametrize(("bots", "table_size", "rounds"), SIZES)
def test_every_combination_meets_in_every_rotation_once_a_round(bots, table_size, rounds):
    names = NAMES[:bots]
    games = list(schedule_games(names, table_size, rounds, league_seed=1))
    every_table = Counter(frozenset(table) for table in itertools.combinations(names, table_size))
    for round_number in range(1, rounds + 1):
        this_round = [game for game in games if game.round == round_number]
        met = Counter((frozenset(game.seats), game.rotation) for game in this_round)
        assert set(met.values()) == {1}
        assert Counter(table for table, _ in met) == Counter(dict.fromkeys(every_table, table_size))


@pytest.mark.parametrize(("bots", "table_size", "rounds"), SIZES)
def test_each_bot_sits_in_each_seat_once_per_rotation_group(bots, table_size, rounds):
    for group in groups(schedule_games(NAMES[:bots], table_size, rounds, league_seed=1)).values():
        assert [game.rotation for game in group] == list(range(table_size))
        table_bots = set(group[0].seats)
        for seat in range(table_size):
            assert sorted(game.seats[seat] for game in group) == sorted(table_bots)


def test_rotation_shifts_the_tables_bots_in_file_order():
    games = schedule_games(["alice", "bob", "carol"], 3, 1, league_seed=1)
    assert [game.seats for game in games] == [
        ("alice", "bob", "carol"),
        ("bob", "carol", "alice"),
        ("carol", "alice", "bob"),
    ]


@pytest.mark.parametrize(("bots", "table_size", "rounds"), SIZES)
def test_seeds_are_shared_within_a_rotation_group_and_differ_across_tables_and_rounds(bots, table_size, rounds):
    by_group = groups(schedule_games(NAMES[:bots], table_size, rounds, league_seed=1))
    group_seeds = []
    for group in by_group.values():
        assert len({game.seed for game in group}) == 1
        group_seeds.append(group[0].seed)
    assert len(set(group_seeds)) == len(group_seeds)


def test_a_rotation_group_plays_the_same_deals():
    group = schedule_games(["alice", "bob", "carol"], 3, 1, league_seed=9)[:3]
    games = [StopTheBus(3, seed=game.seed) for game in group]
    assert len({game.dealer for game in games}) == 1
    assert len({tuple(map(tuple, game.hands)) for game in games}) == 1


def test_the_seed_is_the_documented_derivation():
    games = schedule_games(["carol", "alice", "bob", "dave"], 3, 2, league_seed=77)
    game = next(game for game in games if game.round == 2 and set(game.seats) == {"carol", "bob", "dave"})
    assert game.seed == derive_seed(77, "round", 2, "table", "bob,carol,dave")
    assert game.seed == table_seed(77, 2, ["dave", "carol", "bob"])


def test_seeds_depend_on_the_set_of_bots_at_a_table_not_on_the_file_order():
    forward = schedule_games(NAMES[:5], 3, 2, league_seed=5)
    backward = schedule_games(list(reversed(NAMES[:5])), 3, 2, league_seed=5)

    def seeds(games):
        return {(game.round, frozenset(game.seats)): game.seed for game in games}

    assert seeds(forward) == seeds(backward)
    assert [game.seats for game in forward] != [game.seats for game in backward]


def test_the_league_seed_changes_every_seed():
    first = schedule_games(NAMES[:4], 3, 1, league_seed=1)
    second = schedule_games(NAMES[:4], 3, 1, league_seed=2)
    assert all(a.seed != b.seed for a, b in zip(first, second, strict=True))


def test_game_ids_are_unique_and_name_round_table_and_rotation():
    games = list(schedule_games(NAMES, 3, 2, league_seed=1))
    assert len({game.game_id for game in games}) == len(games)
    for game in games:
        assert re.fullmatch(r"r\d+-t\d{3,}-s\d+", game.game_id)
        assert game.game_id == f"r{game.round}-t{game.table:03d}-s{game.rotation}"
    assert games[0].game_id == "r1-t001-s0"
    assert games[-1].game_id == "r2-t020-s2"


def test_games_are_ordered_by_round_table_rotation_and_indexed_from_zero():
    games = list(schedule_games(NAMES[:4], 3, 2, league_seed=1))
    assert [game.index for game in games] == list(range(len(games)))
    keys = [(game.round, game.table, game.rotation) for game in games]
    assert keys == sorted(keys)


def test_tables_come_by_their_last_bot_in_file_order():
    games = schedule_games(["a", "b", "c", "d"], 2, 1, league_seed=1)
    rotation_zero = ["".join(game.seats) for game in games if game.rotation == 0]
    assert rotation_zero == ["ab", "ac", "bc", "ad", "bd", "cd"]


def test_the_record_holds_the_schedule_fields_of_a_games_jsonl_line():
    game = schedule_games(["alice", "bob"], 2, 1, league_seed=3)[1]
    assert game.record() == {
        "index": 1,
        "game_id": "r1-t001-s1",
        "round": 1,
        "table": 1,
        "rotation": 1,
        "seed": game.seed,
        "seats": ["bob", "alice"],
    }


@pytest.mark.parametrize(
    ("names", "table_size", "rounds", "message"),
    [
        (["a", "b"], 3, 1, "a table of 3 cannot be filled from 2 bots"),
        (["a", "b", "a"], 2, 1, "bot names must be unique; repeated: a"),
        (["a", "b"], 2, 0, "rounds must be at least 1, got 0"),
    ],
)
def test_impossible_schedules_are_refused(names, table_size, rounds, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        schedule_games(names, table_size, rounds, league_seed=1)


@pytest.mark.parametrize(("items", "size"), [(NAMES, 3), (NAMES, 1), (NAMES, 6), (NAMES[:5], 2)])
def test_a_combination_is_found_by_its_rank(items, size):
    assert [combination_at(items, size, rank) for rank in range(math.comb(len(items), size))] == list(
        colex_combinations(items, size)
    )


def colex_combinations(items, size):
    """Every combination in co-lexicographic order: sorted by their last item, then the one before, and so on."""
    position = {item: index for index, item in enumerate(items)}
    return sorted(
        itertools.combinations(items, size), key=lambda combination: [position[item] for item in reversed(combination)]
    )


def test_appending_a_bot_only_appends_tables_so_every_game_keeps_its_id():
    before = list(schedule_games(NAMES[:5], 3, 2, league_seed=9))
    after = {game.game_id: game for game in schedule_games(NAMES[:6], 3, 2, league_seed=9)}
    assert all(after[game.game_id].seats == game.seats and after[game.game_id].seed == game.seed for game in before)


@pytest.mark.parametrize(("bots", "table_size", "rounds"), SIZES)
def test_any_game_is_found_by_its_index_as_iteration_reaches_it(bots, table_size, rounds):
    games = schedule_games(NAMES[:bots], table_size, rounds, league_seed=4)
    listed = list(games)
    assert [games.game(index) for index in range(len(listed))] == listed
    assert games[-1] == listed[-1] and games[2:7] == listed[2:7] and games[::-3] == listed[::-3]
    with pytest.raises(IndexError):
        games.game(len(listed))


def test_a_round_robin_of_billions_of_games_is_counted_and_reached_without_listing_it():
    names = bot_names(100)
    games = schedule_games(names, 6, 3, league_seed=1)
    assert games.count == math.comb(100, 6) * 6 * 3 == 21_456_943_200
    assert games.summary() == "21,456,943,200 games: 1,192,052,400 tables x 6 rotations x 3 rounds"
    last = games.game(games.count - 1)
    assert last.game_id == "r3-t1192052400-s5"
    assert set(last.seats) == set(names[-6:])
    assert last.seed == table_seed(1, 3, names[-6:])
    assert list(itertools.islice(games, 7)) == eager_round_robin(names[:6], 6, 1, 1) + [games.game(6)]


# ----- the sampled format -------------------------------------------------------------


def meetings(games) -> Counter:
    """How many tables each pair of bots shared (a pair meets once per rotation group, not once per game)."""
    met: Counter = Counter()
    for group in groups(games).values():
        for pair in itertools.combinations(sorted(group[0].seats), 2):
            met[pair] += 1
    return met


def auto_rotations(bots: int, table_size: int, games_per_bot: int) -> int:
    """``rotations: auto`` as docs/leagues.md says: every rotation if that makes every pair meet, else the most that
    do (a table holds every bot, or pairs meet 1.5 times on average), else every rotation."""
    for rotations in range(table_size, 0, -1):
        tables = tables_for_games(games_per_bot, rotations)
        if table_size == bots or tables * (table_size - 1) / (bots - 1) >= 1.5:
            return rotations
    return table_size


def check_sampled(
    names: list[str], table_size: int, games_per_bot: int, league_seed: int = 1, rotations: int | None = None
) -> list[ScheduledGame]:
    """Draw a sampled schedule and check every guarantee docs/leagues.md gives; return its games."""
    schedule_ = Sampled(games_per_bot, rotations).schedule(names, table_size, 1, league_seed)
    games = list(schedule_)
    played = rotations or auto_rotations(len(names), table_size, games_per_bot)
    shifts = [k * table_size // played for k in range(played)]
    tables_per_bot = tables_for_games(games_per_bot, played)
    tables = math.ceil(len(names) * tables_per_bot / table_size)
    assert len(games) == schedule_.count == tables * played
    # Rotation groups: a table plays its evenly spaced rotations on its documented seed.
    by_group = groups(games)
    assert sorted(by_group) == [(1, table) for table in range(1, tables + 1)]
    for (_, table), group in by_group.items():
        assert [game.rotation for game in group] == shifts
        assert {game.seed for game in group} == {derive_seed(league_seed, "sampled", "table", table)}
        assert len(set(group[0].seats)) == table_size
        for game in group:
            first = group[0].seats
            assert game.seats == tuple(first[(seat + game.rotation) % table_size] for seat in range(table_size))
        if played == table_size:  # each bot sits in each seat once
            for seat in range(table_size):
                assert sorted(game.seats[seat] for game in group) == sorted(group[0].seats)
    # Games per bot: T tables each, and the seats left over go to as many bots, one table more each.
    per_bot = Counter(name for game in games for name in game.seats)
    extra = tables * table_size - len(names) * tables_per_bot
    assert sorted(per_bot.values()) == sorted(
        [tables_per_bot * played] * (len(names) - extra) + [(tables_per_bot + 1) * played] * extra
    )
    # Seats: as even as can be when the rotations divide the seats, else within 2.
    seat_counts = Counter((name, seat) for game in games for seat, name in enumerate(game.seats))
    for name in names:
        counts = [seat_counts[name, seat] for seat in range(table_size)]
        if table_size % played == 0:
            assert set(counts) <= {per_bot[name] // table_size, -(-per_bot[name] // table_size)}, (name, counts)
        else:
            assert max(counts) - min(counts) <= 2, (name, counts)
    # Meetings: within 2 of each other; every pair meets when the average is 1.5 or more.
    met = meetings(games)
    counts = [met[pair] for pair in itertools.combinations(sorted(names), 2)]
    assert max(counts) - min(counts) <= 2, Counter(counts)
    average = tables_per_bot * (table_size - 1) / (len(names) - 1)
    if average >= 1.5:
        assert min(counts) >= 1, Counter(counts)
    assert [game.index for game in games] == list(range(len(games)))
    return games


def test_the_issues_league_30_bots_at_tables_of_6_with_30_games_each():
    names = bot_names(30)
    games = check_sampled(names, 6, 30, league_seed=2026)
    # Every rotation would be 5 tables of 6 games: 25 opponents' seats for 29 opponents. So tables play 3 of the 6
    # rotations (shifts 0, 2, 4): 10 tables of 3 games, 50 opponents' seats, and every pair meets.
    assert len(games) == 150 and {game.rotation for game in games} == {0, 2, 4}
    assert set(Counter(name for game in games for name in game.seats).values()) == {30}
    counts = [meetings(games)[pair] for pair in itertools.combinations(names, 2)]
    assert min(counts) >= 1 and max(counts) - min(counts) <= 2
    seats = Counter((name, seat) for game in games for seat, name in enumerate(game.seats))
    assert set(seats.values()) == {5} and len(seats) == 30 * 6  # every bot 5 times in every seat


def test_rotations_as_many_as_seats_keep_every_rotation():
    names = bot_names(30)
    games = check_sampled(names, 6, 30, league_seed=2026, rotations=6)
    assert len(games) == 150 and [game.rotation for game in games[:6]] == [0, 1, 2, 3, 4, 5]
    # 30 games are 5 tables of 6 games: 25 opponents' seats for 29 opponents, so some pairs cannot meet.
    counts = [meetings(games)[pair] for pair in itertools.combinations(names, 2)]
    assert 0 in counts and max(counts) <= 2
    # 54 games (9 tables, an average of 1.55 meetings a pair) are enough for every pair to meet at every rotation.
    assert {game.rotation for game in check_sampled(names, 6, 54, league_seed=2026)} == set(range(6))


@pytest.mark.parametrize(
    ("bots", "table_size", "games_per_bot", "rotations"),
    [(12, 4, 12, 2), (9, 3, 12, 1), (14, 6, 24, 4), (11, 5, 12, 3), (16, 4, 12, None), (7, 7, 14, None)],
)
def test_tables_play_the_rotations_asked_for_and_bots_sit_in_every_seat_evenly(
    bots, table_size, games_per_bot, rotations
):
    check_sampled(bot_names(bots), table_size, games_per_bot, league_seed=bots, rotations=rotations)


@pytest.mark.parametrize(
    ("table_size", "rotations", "shifts"),
    [(6, 3, (0, 2, 4)), (6, 2, (0, 3)), (6, 4, (0, 1, 3, 4)), (6, 6, (0, 1, 2, 3, 4, 5)), (5, 2, (0, 2)), (3, 1, (0,))],
)
def test_rotations_are_spaced_evenly(table_size, rotations, shifts):
    assert spaced_shifts(table_size, rotations) == shifts


@pytest.mark.parametrize(
    ("bots", "table_size", "games_per_bot", "rotations"),
    [
        (30, 6, 30, 3),  # the issue's league: 6 rotations are 0.86 meetings a pair, 5 are 1.03, 4 are 1.38
        (30, 6, 54, 6),  # 9 tables of every rotation: 1.55
        (6, 3, 10, 2),  # 3 rotations: 3 tables, 1.2; 2: 5 tables, 2.0
        (7, 3, 3, 3),  # even 1 rotation (3 tables, 1.0) is too few: every rotation
        (6, 6, 6, 6),  # one table holds every bot
        (14, 4, 12, 1),  # 12 tables of 1 game: 2.77
    ],
)
def test_auto_plays_every_rotation_unless_fewer_make_every_pair_meet(bots, table_size, games_per_bot, rotations):
    games = Sampled(games_per_bot).schedule(bot_names(bots), table_size, 1, 1)
    assert games.rotations == rotations == auto_rotations(bots, table_size, games_per_bot)
    if rotations < table_size:
        assert games.note == (
            f"tables play {rotations} of {table_size} seat rotations so that every pair of bots meets "
            f"(rotations: {table_size} keeps full duplicate deals)"
        )
    else:
        assert games.note is None
    assert Sampled(games_per_bot, rotations).schedule(bot_names(bots), table_size, 1, 1).note is None


SAMPLED_CASES = [
    # (bots, table size, tables per bot): exact, leftover seats, tight ones, and averages either side of 1.5
    (2, 2, 3),
    (5, 2, 4),
    (9, 2, 8),
    (5, 3, 2),
    (6, 3, 6),
    (7, 3, 1),
    (12, 3, 8),
    (20, 3, 15),
    (6, 4, 5),
    (9, 4, 4),
    (16, 4, 8),
    (7, 5, 6),
    (8, 5, 2),
    (13, 5, 7),
    (8, 6, 4),
    (10, 6, 8),
    (13, 6, 8),
    (19, 6, 6),
    (25, 6, 7),
    (28, 6, 8),
    (30, 6, 9),
    (11, 7, 7),
    (12, 10, 3),
]


@pytest.mark.parametrize(("bots", "table_size", "tables_per_bot"), SAMPLED_CASES)
def test_the_draw_keeps_its_guarantees(bots, table_size, tables_per_bot):
    names, games = bot_names(bots), tables_per_bot * table_size
    check_sampled(names, table_size, games, league_seed=bots * 100 + table_size, rotations=table_size)


@pytest.mark.parametrize(("bots", "table_size", "tables_per_bot"), [(30, 4, 40), (25, 3, 41)])
def test_a_draw_of_several_blocks_keeps_its_guarantees(monkeypatch, bots, table_size, tables_per_bot):
    monkeypatch.setattr(draw_module, "BLOCK_SEATS", 400)  # blocks of 12 and 15 tables a bot: four and three
    plan = list(draw_module.block_plan(bots, table_size, tables_per_bot, -(bots * tables_per_bot) % table_size))
    assert len(plan) >= 3 and sum(tables for tables, _ in plan) == tables_per_bot
    check_sampled(bot_names(bots), table_size, tables_per_bot * table_size, league_seed=3, rotations=table_size)


@pytest.mark.parametrize(
    ("bots", "table_size", "tables_per_bot", "rotations"), [(20, 4, 24, 2), (18, 6, 30, 3), (15, 3, 30, 1)]
)
def test_seats_stay_even_over_several_blocks(monkeypatch, bots, table_size, tables_per_bot, rotations):
    monkeypatch.setattr(draw_module, "BLOCK_SEATS", 120)  # blocks of 6, 6 and 8 tables a bot
    plan = list(draw_module.block_plan(bots, table_size, tables_per_bot, -(bots * tables_per_bot) % table_size))
    assert len(plan) >= 4 and sum(tables for tables, _ in plan) == tables_per_bot
    check_sampled(bot_names(bots), table_size, tables_per_bot * rotations, league_seed=7, rotations=rotations)


def test_a_full_size_block_keeps_its_guarantees():
    check_sampled(bot_names(100), 3, 40 * 3, league_seed=11, rotations=3)  # 4,000 seats: one block of the real size


@pytest.mark.parametrize(("games_per_bot", "tables"), [(30, 5), (31, 5), (32, 5), (33, 6), (35, 6), (1, 1), (6, 1)])
def test_games_per_bot_is_rounded_to_whole_tables(games_per_bot, tables):
    assert tables_for_games(games_per_bot, 6) == tables
    assert Sampled(games_per_bot).schedule(bot_names(12), 6, 1, 1).count == 12 * tables


def test_the_summary_says_how_many_tables_each_bot_plays():
    assert Sampled(3).schedule(bot_names(7), 3, 1, 1).summary() == (
        "9 games: 3 tables x 3 rotations; each bot at 1 table (3 games), 2 bots at one more (6 games)"
    )
    assert Sampled(30, 6).schedule(bot_names(30), 6, 1, 1).summary() == (
        "150 games: 25 tables x 6 rotations; each bot at 5 tables (30 games)"
    )
    assert Sampled(30).schedule(bot_names(30), 6, 1, 1).summary() == (
        "150 games: 50 tables x 3 of 6 rotations; each bot at 10 tables (30 games)"
    )
    assert Sampled(4, 2).schedule(bot_names(7), 3, 1, 1).summary() == (
        "10 games: 5 tables x 2 of 3 rotations; each bot at 2 tables (4 games), 1 bot at one more (6 games)"
    )


def test_the_draw_is_seeded_and_ignores_the_order_of_the_bots():
    names = bot_names(14)
    for rotations in (None, 2, 4):  # auto plays 1 rotation here
        first = list(Sampled(12, rotations).schedule(names, 4, 1, 5))
        assert first == list(Sampled(12, rotations).schedule(list(reversed(names)), 4, 1, 5))
        assert first != list(Sampled(12, rotations).schedule(names, 4, 1, 6))
    for game in first:  # with every rotation, rotation 0 seats a table's bots in name order
        if game.rotation == 0:
            assert list(game.seats) == sorted(game.seats)


def test_any_sampled_game_is_found_by_its_index():
    games = Sampled(9).schedule(bot_names(8), 3, 1, 2)
    listed = list(games)
    assert [games.game(index) for index in (0, 5, len(listed) - 1)] == [listed[0], listed[5], listed[-1]]
    assert games[3:9] == listed[3:9]


def test_a_longer_draw_starts_with_the_shorter_ones_blocks(monkeypatch):
    monkeypatch.setattr(draw_module, "BLOCK_SEATS", 40)  # 10 bots: a block gives each bot 4 tables of 2
    shorter = list(draw_tables(10, 2, 10 * 10 // 2, league_seed=8))  # blocks of 4, 4 and 2 tables a bot
    longer = list(draw_tables(10, 2, 10 * 13 // 2, league_seed=8))  # blocks of 4, 4, 4 and 1
    assert longer[:40] == shorter[:40]
    assert longer[40:] != shorter[40:]


def test_sampled_schedules_refuse_what_they_cannot_draw():
    with pytest.raises(ValueError, match="at most 2000 bots, got 2001"):
        SampledSchedule(bot_names(2001), 2, 1, 1)
    with pytest.raises(ValueError, match="one round"):
        Sampled(6).schedule(bot_names(6), 3, 2, 1)


# ----- the gauntlet -------------------------------------------------------------------

FIELD = ["f1", "f2", "f3", "f4"]


def test_each_candidate_plays_every_field_table_in_every_rotation_on_the_same_deals():
    games = Gauntlet(("alice", "bob")).schedule(["alice", *FIELD, "bob"], 3, 2, league_seed=4)
    listed = list(games)
    assert len(listed) == games.count == math.comb(4, 2) * 2 * 3 * 2
    field_tables = list(colex_combinations(FIELD, 2))
    for round_number in (1, 2):
        for candidate in ("alice", "bob"):
            mine = [game for game in listed if game.round == round_number and game.candidate == candidate]
            assert Counter(frozenset(game.seats) - {candidate} for game in mine) == Counter(
                {frozenset(table): 3 for table in field_tables}
            )
    for group in groups(listed).values():
        candidate = group[0].candidate
        assert group[0].seats[0] == candidate and "alice" not in group[0].seats[1:] and "bob" not in group[0].seats[1:]
        assert [game.rotation for game in group] == [0, 1, 2]
        for seat in range(3):
            assert sorted(game.seats[seat] for game in group) == sorted(group[0].seats)
    # The two candidates meet the same field bots on the same seed, the documented one.
    by_field: dict = defaultdict(set)
    for game in listed:
        field = tuple(sorted(set(game.seats) - {game.candidate}))
        by_field[game.round, field].add((game.candidate, game.seed))
    for (round_number, field), seen in by_field.items():
        expected = derive_seed(4, "gauntlet", "round", round_number, "field", ",".join(field))
        assert seen == {("alice", expected), ("bob", expected)}


def test_gauntlet_games_are_ordered_by_field_table_then_candidate_and_found_by_index():
    games = Gauntlet(("alice", "bob")).schedule(["alice", "bob", *FIELD], 3, 1, league_seed=4)
    listed = list(games)
    assert [game.candidate for game in listed[:12]] == ["alice"] * 3 + ["bob"] * 3 + ["alice"] * 3 + ["bob"] * 3
    assert [game.table for game in listed[::3]] == list(range(1, 13))
    assert [games.game(index) for index in range(len(listed))] == listed
    assert listed[4].record()["candidate"] == "bob"


def test_a_drawn_gauntlet_gives_every_candidate_the_same_drawn_field_tables():
    field = bot_names(20)
    games = Gauntlet(("alice", "bob"), games_per_candidate=40).schedule(["alice", "bob", *field], 4, 1, league_seed=6)
    listed = list(games)
    assert len(listed) == games.count == 10 * 2 * 4  # 40 games are 10 tables of 4
    tables = {candidate: [] for candidate in ("alice", "bob")}
    for game in listed:
        if game.rotation == 0:
            tables[game.candidate].append((game.seats[1:], game.seed))
    assert tables["alice"] == tables["bob"]
    assert [seed for _, seed in tables["alice"]] == [derive_seed(6, "gauntlet", "table", t) for t in range(1, 11)]
    appearances = Counter(name for seats, _ in tables["alice"] for name in seats)
    assert set(appearances) <= set(field) and sum(appearances.values()) == 30
    assert set(appearances.values()) | {1, 2} == {1, 2} and len(appearances) == 20  # 30 seats: 10 bots twice


@pytest.mark.parametrize(
    ("bots", "candidates", "table_size", "message"),
    [
        (["a", "b", "c"], ("a", "x"), 2, "not a bot: x"),
        (["a", "b", "c"], ("a", "b"), 3, "the field (the bots that are not candidates) has 1"),
        (["a", "b", "c"], (), 2, "one or more candidates"),
    ],
)
def test_impossible_gauntlets_are_refused(bots, candidates, table_size, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        GauntletSchedule(bots, candidates, table_size, 1, 1)


# ----- the league file's format and the command line ----------------------------------


def test_the_same_league_file_gives_the_same_schedule(tmp_path):
    path = write_league(tmp_path, NAMES[:4])
    first = list(load_league(path).schedule())
    assert first == list(load_league(path).schedule())
    assert first == list(schedule_games(NAMES[:4], 3, 2, league_seed=99))


def test_the_league_file_chooses_the_format(tmp_path):
    sampled = load_league(write_league(tmp_path, NAMES, "table_size: 3\nformat: {type: sampled, games_per_bot: 6}"))
    assert sampled.format == Sampled(6) and isinstance(sampled.schedule(), SampledSchedule)
    gauntlet = load_league(write_league(tmp_path, NAMES, "table_size: 3\nformat: {type: gauntlet, candidates: [bob]}"))
    assert gauntlet.candidates == ("bob",)
    assert {game.candidate for game in gauntlet.schedule()} == {"bob"}
    default = load_league(write_league(tmp_path, NAMES, "table_size: 3"))
    assert default.format == RoundRobin() and default.candidates == ()


def test_a_gauntlet_whose_candidate_was_left_out_plays_on_with_the_others(tmp_path):
    import dataclasses

    body = "table_size: 2\nformat: {type: gauntlet, candidates: [bob, dave]}"
    league = load_league(write_league(tmp_path, NAMES, body))
    without_bob = dataclasses.replace(league, bots=tuple(bot for bot in league.bots if bot.name != "bob"))
    assert without_bob.candidates == ("dave",)
    assert {game.candidate for game in without_bob.schedule()} == {"dave"}
    alone = dataclasses.replace(league, bots=tuple(bot for bot in league.bots if bot.name not in ("bob", "dave")))
    with pytest.raises(LeagueError, match="no candidate of the gauntlet is left"):
        alone.schedule()


@pytest.mark.parametrize("seeds", [False, True])
def test_table_lines_list_every_game_under_a_summary_and_the_seeds_only_when_asked(tmp_path, seeds):
    games = load_league(write_league(tmp_path, NAMES[:4])).schedule()
    lines = list(table_lines(games, seeds=seeds))
    assert lines[0] == "24 games: 4 tables x 3 rotations x 2 rounds"
    assert lines[2].split() == ("# game round table rotation seat 0 seat 1 seat 2" + " seed" * seeds).split()
    rows = lines[4:]
    assert len(rows) == len(games)
    for row, game in zip(rows, games, strict=True):
        assert row.split() == [
            str(game.index),
            game.game_id,
            str(game.round),
            str(game.table),
            str(game.rotation),
            *game.seats,
            *([str(game.seed)] if seeds else []),
        ]
    starts = {line.index(game.game_id) for line, game in zip(rows, games, strict=True)}
    assert starts == {lines[2].index("game")}, "fixed columns"


def test_table_lines_of_a_gauntlet_name_the_candidate(tmp_path):
    league = load_league(write_league(tmp_path, NAMES, "table_size: 2\nformat: {type: gauntlet, candidates: [erin]}"))
    lines = list(table_lines(league.schedule()))
    assert lines[2].split()[-1] == "candidate"
    assert all(row.split()[-1] == "erin" for row in lines[4:])


def test_json_lines_are_the_records_of_the_games_seeds_as_strings_only_when_asked(tmp_path):
    games = load_league(write_league(tmp_path, NAMES[:4])).schedule()
    with_seeds = [{**game.record(), "seed": str(game.seed)} for game in games]
    assert [json.loads(line) for line in schedule_json_lines(games, seeds=True)] == with_seeds
    without = [json.loads(line) for line in schedule_json_lines(games)]
    assert without == [{key: value for key, value in record.items() if key != "seed"} for record in with_seeds]
    printed = referee("schedule", str(write_league(tmp_path, NAMES[:4])), "--json", check=True).stdout
    assert printed.count("\n") == len(games) and str(games[0].seed) not in printed


def referee(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True, **kwargs)


def test_schedule_json_streams_a_large_league_into_a_reader_that_leaves_early(tmp_path):
    """3,562,650 games: the reader takes three lines and closes the pipe; the referee stops quietly."""
    path = write_league(tmp_path, bot_names(30), "table_size: 6")
    for options in (["--json"], []):
        process = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "schedule", str(path), *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        first = [process.stdout.readline() for _ in range(3)]
        process.stdout.close()
        error = process.stderr.read()
        assert process.wait(timeout=60) == 141, error  # 128 + SIGPIPE, as a shell reports a writer whose reader left
        assert error == ""
        if options:
            assert json.loads(first[0])["game_id"] == "r1-t001-s0" and json.loads(first[2])["index"] == 2
        else:
            assert first[0] == "3,562,650 games: 593,775 tables x 6 rotations x 1 round\n"


def test_schedule_json_of_the_issues_sampled_league(tmp_path):
    """Issue 12's league: 30 bots at tables of 6, 30 games each. Its time is bench/schedule.py's to measure."""
    path = write_league(tmp_path, bot_names(30), "table_size: 6\nformat: {type: sampled, games_per_bot: 30}")
    with open(tmp_path / "out.jsonl", "w") as out, open(tmp_path / "err.txt", "w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "schedule", str(path), "--json"], stdout=out, stderr=err
        )
        _, status, usage = os.wait4(process.pid, 0)  # this one process's peak memory, in KiB
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0 and (tmp_path / "err.txt").read_text() == ""
    assert usage.ru_maxrss < 1024 * 1024
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {"index", "game_id", "round", "table", "rotation", "seats"} <= set(records[0])
    assert "seed" not in records[0], "published pairings give away no deal"
    games = Counter(name for record in records for name in record["seats"])
    assert sorted(games) == bot_names(30) and set(games.values()) == {30}  # 30 +- 1: exactly 30
    met = Counter()
    for record in records:
        if record["rotation"] == 0:  # one game of each table: who meets whom
            met.update(itertools.combinations(sorted(record["seats"]), 2))
    counts = [met[pair] for pair in itertools.combinations(bot_names(30), 2)]
    assert min(counts) >= 1 and max(counts) - min(counts) <= 2  # every pair meets, counts at most 2 apart
    assert records == [
        {key: value for key, value in game.record().items() if key != "seed"} for game in load_league(path).schedule()
    ]
