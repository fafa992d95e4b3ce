"""Tests of the league schedule: coverage of tables and rotations, shared deals, stable seeds and ids."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from referee.config import load_league
from referee.games import StopTheBus
from referee.schedule import ScheduledGame, format_schedule, schedule, schedule_games, table_seed
from referee.seeding import derive_seed

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank"]
SIZES = [(2, 2, 1), (3, 3, 2), (4, 3, 1), (5, 4, 2), (6, 2, 3), (6, 3, 1)]  # (bots, table size, rounds)


def groups(games: list[ScheduledGame]) -> dict[tuple[int, int], list[ScheduledGame]]:
    """The games by rotation group: (round, table) -> its games."""
    by_group: dict[tuple[int, int], list[ScheduledGame]] = defaultdict(list)
    for game in games:
        by_group[game.round, game.table].append(game)
    return by_group


@pytest.mark.parametrize(("bots", "table_size", "rounds"), SIZES)
def test_game_count_is_combinations_times_rotations_times_rounds(bots, table_size, rounds):
    games = schedule_games(NAMES[:bots], table_size, rounds, league_seed=1)
    assert len(games) == math.comb(bots, table_size) * table_size * rounds


@pytest.mark.parametrize(("bots", "table_size", "rounds"), SIZES)
def test_every_combination_meets_in_every_rotation_once_a_round(bots, table_size, rounds):
    names = NAMES[:bots]
    games = schedule_games(names, table_size, rounds, league_seed=1)
    every_table = Counter(frozenset(table) for table in itertools.combinations(names, table_size))
    for round_number in range(1, rounds + 1):
        this_round = [game for game in games if game.round == round_number]
        met = Counter((frozenset(game.seats), game.rotation) for game in this_round)
        assert set(met.values()) == {1}
        assert Counter(table for table, _ in met) == Counter({table: table_size for table in every_table})


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
    games = schedule_games(NAMES, 3, 2, league_seed=1)
    assert len({game.game_id for game in games}) == len(games)
    for game in games:
        assert re.fullmatch(r"r\d+-t\d{3,}-s\d+", game.game_id)
        assert game.game_id == f"r{game.round}-t{game.table:03d}-s{game.rotation}"
    assert games[0].game_id == "r1-t001-s0"
    assert games[-1].game_id == "r2-t020-s2"


def test_games_are_ordered_by_round_table_rotation_and_indexed_from_zero():
    games = schedule_games(NAMES[:4], 3, 2, league_seed=1)
    assert [game.index for game in games] == list(range(len(games)))
    keys = [(game.round, game.table, game.rotation) for game in games]
    assert keys == sorted(keys)


def test_tables_follow_the_order_of_combinations_of_the_file_order():
    games = schedule_games(["a", "b", "c", "d"], 3, 1, league_seed=1)
    rotation_zero = [game.seats for game in games if game.rotation == 0]
    assert rotation_zero == list(itertools.combinations(["a", "b", "c", "d"], 3))


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


def write_league(folder: Path, bots: list[str]) -> Path:
    lines = ["name: l", "game: stop_the_bus", "seed: 99", "table_size: 3", "rounds: 2", "bots:"]
    for name in bots:
        lines += [f"  - name: {name}", f"    command: python {name}.py"]
    path = folder / "league.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_same_league_file_gives_the_same_schedule(tmp_path):
    path = write_league(tmp_path, NAMES[:4])
    first = schedule(load_league(path))
    assert first == schedule(load_league(path))
    assert first == schedule_games(NAMES[:4], 3, 2, league_seed=99)


def test_format_schedule_lists_every_game_under_a_summary(tmp_path):
    games = schedule(load_league(write_league(tmp_path, NAMES[:4])))
    text = format_schedule(games)
    lines = text.splitlines()
    assert lines[0] == "24 games: 4 tables x 3 rotations x 2 rounds"
    assert lines[2].split() == "# game round table rotation seat 0 seat 1 seat 2 seed".split()
    rows = lines[4:]
    assert len(rows) == len(games)
    for row, game in zip(rows, games, strict=True):
        assert row.split() == [
            str(game.index), game.game_id, str(game.round), str(game.table), str(game.rotation),
            *game.seats, str(game.seed),
        ]  # fmt: skip


def test_format_schedule_of_nothing():
    assert format_schedule([]) == "no games"
