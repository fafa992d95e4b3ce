"""Tests of the league standings computed from games.jsonl records."""

from __future__ import annotations

import copy
import math
import random
import statistics

import pytest

from referee.records.results import LATENCY_BINS
from referee.records.standings import (
    FAULT_KINDS,
    LATENCY_RELATIVE_ERROR,
    LatencyHistogram,
    RecordError,
    UnknownBotError,
    compute_standings,
)
from referee.records.stats import PairTally, StatisticsError, deal_outcomes
from tests.simulated_bots import league_records, strengths_from_elo

ALL_KINDS = ["timeout", "crash", "malformed", "illegal", "stale", "startup", "handshake"]


def record(index, seats, placements, faults=None, forfeits=None, latency_ms=None):
    """A games.jsonl record in the runner's format."""
    return {
        "index": index,
        "game_id": f"r0-t{index:03d}-s0",
        "round": 0,
        "table": index,
        "rotation": 0,
        "game": "stop_the_bus",
        "seed": 1000 + index,
        "seats": list(seats),
        "finish_order": list(placements),
        "hands_played": 5,
        "decisions": 20,
        "faults": faults if faults is not None else [{} for _ in seats],
        "forfeits": forfeits or {},
        "timing": {
            "wall_s": 0.5,
            "started": "2026-11-30T10:00:00Z",
            "latency_ms": latency_ms if latency_ms is not None else [[] for _ in seats],
        },
    }


# Four games with known outcomes; the expected figures below are worked out from these by hand.
KNOWN_GAMES = [
    # carol 1st, alice 2nd, bob 3rd
    record(0, ["alice", "bob", "carol"], [2, 0, 1], faults=[{"timeout": 1}, {}, {"illegal": 2}]),
    # bob 1st, alice 2nd (alice crashed out)
    record(1, ["bob", "alice"], [0, 1], faults=[{}, {"crash": 1}], forfeits={"1": "crash: process exit code 1"}),
    # dave 1st, carol 2nd, alice 3rd, bob 4th
    record(2, ["carol", "bob", "alice", "dave"], [3, 0, 2, 1], faults=[{}, {"malformed": 1, "timeout": 2}, {}, {}]),
    # alice 1st, bob 2nd, carol 3rd
    record(3, ["alice", "carol", "bob"], [0, 2, 1]),
]


def rows_by_bot(standings):
    return {row.bot: row for row in standings.rows}


def test_known_games_give_hand_counted_results():
    rows = rows_by_bot(compute_standings(KNOWN_GAMES))
    # (games, wins, places, scores): a score is (n - place) / (n - 1) for a table of n.
    expected = {
        "alice": (4, 1, [2, 2, 3, 1], [1 / 2, 0, 1 / 3, 1]),
        "bob": (4, 1, [3, 1, 4, 2], [0, 1, 0, 1 / 2]),
        "carol": (3, 1, [1, 2, 3], [1, 2 / 3, 0]),
        "dave": (1, 1, [1], [1]),
    }
    assert set(rows) == set(expected)
    for bot, (games, wins, places, scores) in expected.items():
        row = rows[bot]
        assert (row.games, row.wins) == (games, wins), bot
        assert row.win_rate == pytest.approx(wins / games), bot
        assert row.average_placement == pytest.approx(sum(places) / games), bot
        assert row.score == pytest.approx(sum(scores)), bot
        assert row.mean_score == pytest.approx(sum(scores) / games), bot


def test_a_void_game_counts_for_nobody_but_its_faults_still_show():
    void = record(4, ["alice", "dave"], [1, 0], faults=[{"startup": 1}, {}])
    void["void"] = "only one bot got to make a decision"
    with_void, without = compute_standings([*KNOWN_GAMES, void]), compute_standings(KNOWN_GAMES)
    assert with_void.games == without.games == 4
    assert with_void.void_games == [("r0-t004-s0", "only one bot got to make a decision")]
    counted, alone = rows_by_bot(with_void), rows_by_bot(without)
    for bot, row in alone.items():  # dave's only win and alice's last place are not there
        assert (counted[bot].games, counted[bot].wins, counted[bot].score) == (row.games, row.wins, row.score), bot
        assert counted[bot].average_placement == pytest.approx(row.average_placement), bot
        assert counted[bot].rank == row.rank, bot
    assert with_void.head_to_head["alice"]["dave"].games == without.head_to_head["alice"]["dave"].games == 1
    assert counted["alice"].faults["startup"] == 1 and alone["alice"].faults["startup"] == 0


def test_fault_counts_cover_every_kind_with_zeros():
    rows = rows_by_bot(compute_standings(KNOWN_GAMES))
    assert list(FAULT_KINDS) == ALL_KINDS
    expected_nonzero = {
        "alice": {"timeout": 1, "crash": 1},
        "bob": {"malformed": 1, "timeout": 2},
        "carol": {"illegal": 2},
        "dave": {},
    }
    for bot, nonzero in expected_nonzero.items():
        assert rows[bot].faults == {kind: nonzero.get(kind, 0) for kind in ALL_KINDS}, bot
    assert {bot: row.forfeits for bot, row in rows.items()} == {"alice": 1, "bob": 0, "carol": 0, "dave": 0}


def test_head_to_head_counts_shared_games_and_finishes_above():
    standings = compute_standings(KNOWN_GAMES)
    pairs = standings.head_to_head
    # alice and bob met in all four games; alice was above bob in games 0, 2 and 3.
    assert (pairs["alice"]["bob"].games, pairs["alice"]["bob"].above) == (4, 3)
    assert (pairs["bob"]["alice"].games, pairs["bob"]["alice"].above) == (4, 1)
    # alice and carol met in games 0, 2 and 3; alice was above only in game 3.
    assert (pairs["alice"]["carol"].games, pairs["alice"]["carol"].above) == (3, 1)
    # dave played once, winning, against alice, bob and carol.
    for other in ("alice", "bob", "carol"):
        assert (pairs["dave"][other].games, pairs["dave"][other].above) == (1, 1)
        assert (pairs[other]["dave"].games, pairs[other]["dave"].above) == (1, 0)
    for bot, opponents in pairs.items():
        assert bot not in opponents
        for other, pair in opponents.items():
            assert pair.games == pairs[other][bot].games
            assert pair.above + pairs[other][bot].above == pair.games, (bot, other)


def test_arrival_order_changes_nothing():
    expected = compute_standings(KNOWN_GAMES)
    shuffler = random.Random(5)
    for _ in range(10):
        shuffled = copy.deepcopy(KNOWN_GAMES)
        shuffler.shuffle(shuffled)
        # Keys in another order too, as another JSON writer might produce them.
        shuffled = [dict(reversed(list(game.items()))) for game in shuffled]
        assert compute_standings(shuffled) == expected
        assert compute_standings(iter(shuffled)) == expected


def test_larger_league_is_identical_in_any_order():
    games = random_league(seed=11, game_count=120)
    expected = compute_standings(games)
    for seed in range(3):
        shuffled = list(games)
        random.Random(seed).shuffle(shuffled)
        assert compute_standings(shuffled) == expected


def random_league(seed, game_count, bots=("ann", "ben", "cat", "dan", "eve")):
    chooser = random.Random(seed)
    games = []
    for index in range(game_count):
        seats = chooser.sample(bots, chooser.randint(2, len(bots)))
        placements = list(range(len(seats)))
        chooser.shuffle(placements)
        latencies = [[chooser.lognormvariate(0, 1.5) for _ in range(chooser.randint(0, 12))] for _ in seats]
        faults = [{chooser.choice(ALL_KINDS): 1} if chooser.random() < 0.2 else {} for _ in seats]
        games.append(record(index, seats, placements, faults=faults, latency_ms=latencies))
    return games


def test_a_bot_that_always_wins_ranks_first_and_the_order_is_established():
    games = []
    rotations = [["winner", "middle", "loser"], ["loser", "winner", "middle"], ["middle", "loser", "winner"]]
    for index in range(30):
        seats = rotations[index % 3]
        order = ["winner", "middle", "loser"]  # first to last
        games.append(dict(record(index, seats, [seats.index(bot) for bot in order]), seed=index // 3))
    standings = compute_standings(games)
    assert [row.bot for row in standings.rows] == ["winner", "middle", "loser"]
    assert [row.rank for row in standings.rows] == [1, 2, 3]
    assert [row.rank_range for row in standings.rows] == [(1, 1), (2, 2), (3, 3)]
    rows = rows_by_bot(standings)
    assert rows["winner"].strength > rows["middle"].strength > rows["loser"].strength
    assert sum(row.strength for row in standings.rows) == pytest.approx(0.0, abs=1e-6), "Elo from the field's mean"
    for row in standings.rows:
        assert row.strength_low <= row.strength <= row.strength_high


def test_the_bot_above_every_other_in_their_shared_games_is_first_whatever_else_it_did():
    # The league: "ace" finishes above every bot it meets, but meets the weakest bots least and
    # wins fewer games than "bulk", who beats up on the weak; a rating updated game by game ranked it low.
    games = []
    chooser = random.Random(2)
    strong = ["ace", "bulk", "carl", "dora"]
    for index in range(240):
        table = chooser.sample(strong, 2) + chooser.sample(["weak1", "weak2"], 1)
        if index % 3 == 0 and "ace" not in table:
            table[0] = "ace" if table[1] != "ace" else table[0]
        order = sorted(table, key=lambda bot: (bot != "ace", bot.startswith("weak"), chooser.random()))
        games.append(dict(record(index, table, [table.index(bot) for bot in order]), seed=index))
    standings = compute_standings(games)
    assert standings.rows[0].bot == "ace" and standings.rows[0].rank == 1
    for other in standings.head_to_head["ace"].values():
        assert other.below == 0


def test_the_same_games_in_any_order_give_the_same_standings_to_the_last_digit():
    first = record(0, ["x", "y", "z"], [0, 1, 2])
    second = record(1, ["x", "y", "z"], [2, 1, 0])
    third = record(2, ["y", "z", "x"], [1, 0, 2])
    # A rating updated game by game depends on their order; the fit does not: renumbering them changes nothing.
    renumbered = [dict(first, index=2), dict(second, index=0), dict(third, index=1)]
    assert compute_standings([first, second, third]).rows == compute_standings(renumbered).rows


def test_forty_copies_of_one_deterministic_bot_are_shown_tied():
    # Every table's result depends on the seats alone (the same program in every seat), so every bot
    # plays each place once per table: the games cannot order them.
    bots = [f"copy-{number:02d}" for number in range(40)]
    chooser = random.Random(7)
    games = []
    for table in range(60):
        members = chooser.sample(bots, 4)
        by_seat = chooser.sample(range(4), 4)  # the deal decides which seat finishes where
        for rotation in range(4):
            seats = members[rotation:] + members[:rotation]
            games.append(dict(record(len(games), seats, by_seat), seed=table))
    standings = compute_standings(games, bots=bots)
    assert {row.mean_score for row in standings.rows if row.games} == {0.5}
    assert {row.rank for row in standings.rows} == {1}
    played = [row for row in standings.rows if row.games]
    assert all(row.rank_range == (1, 40) for row in played)


def test_bots_without_games_get_rows_and_ties_break_by_name():
    standings = compute_standings([], bots=["zoe", "amy", "kit"])
    assert [row.bot for row in standings.rows] == ["amy", "kit", "zoe"]
    assert standings.games == 0
    for row in standings.rows:
        assert row.games == 0 and row.wins == 0 and row.decisions == 0
        assert row.win_rate is None and row.average_placement is None and row.mean_score is None
        assert row.median_ms is None and row.p99_ms is None
        assert row.faults == dict.fromkeys(ALL_KINDS, 0)
        assert row.strength is None and row.rank_range == (1, 3)
    assert standings.head_to_head["amy"]["kit"].games == 0
    some = compute_standings([record(0, ["amy", "kit"], [0, 1])], bots=["zoe", "amy", "kit"])
    assert [(row.bot, row.rank) for row in some.rows] == [("amy", 1), ("kit", 2), ("zoe", 3)]
    assert rows_by_bot(some)["zoe"].rank_range == (1, 3)


def test_a_gauntlets_candidates_are_ranked_apart_and_compared_on_the_same_deals():
    # Candidates never meet; each plays the same field tables on the same seeds. "sharp" places better
    # than "blunt" in the same seat of every deal but deal 0, where both come last once.
    field = ["f1", "f2"]
    games = []
    for deal in range(8):
        by_seat = random.Random(deal).sample(range(3), 3)
        for candidate in ("blunt", "sharp"):
            for rotation in range(3):
                table = [candidate, *field]
                seats = table[rotation:] + table[:rotation]
                order = list(by_seat)
                seat = seats.index(candidate)
                if candidate == "sharp" and deal:
                    order.remove(seat)
                    order.insert(0, seat)  # sharp wins outright
                elif candidate == "blunt":
                    order.remove(seat)
                    order.append(seat)  # blunt comes last
                games.append(dict(record(len(games), seats, order), seed=deal, candidate=candidate))
    standings = compute_standings(games, bots=["blunt", "sharp", *field])
    assert standings.candidates == ("blunt", "sharp")
    assert [(row.bot, row.candidate, row.rank) for row in standings.rows[:2]] == [
        ("sharp", True, 1),
        ("blunt", True, 2),
    ]
    assert {row.bot for row in standings.rows[2:]} == set(field)
    assert all(row.rank_range[1] <= 2 for row in standings.rows)
    comparison = standings.comparison("sharp", "blunt")
    assert (comparison.games, comparison.deals) == (24, 8)
    assert comparison.above == 23 and comparison.below == 0 and comparison.ties == 1  # deal 0: one tie at the bottom
    assert comparison.los > 0.975 and comparison.score_difference.low > 0


def test_decision_times_match_exact_statistics_within_resolution():
    games = random_league(seed=3, game_count=80)
    exact: dict[str, list[float]] = {}
    for game in games:
        for bot, times in zip(game["seats"], game["timing"]["latency_ms"], strict=True):
            exact.setdefault(bot, []).extend(times)
    rows = rows_by_bot(compute_standings(games))
    for bot, times in exact.items():
        assert rows[bot].decisions == len(times)
        assert rows[bot].median_ms == pytest.approx(statistics.median(times), rel=LATENCY_RELATIVE_ERROR)
        p99 = statistics.quantiles(times, n=100, method="inclusive")[98]
        assert rows[bot].p99_ms == pytest.approx(p99, rel=LATENCY_RELATIVE_ERROR)


@pytest.mark.parametrize("count", [1, 2, 3, 10, 101, 2000])
def test_histogram_quantiles_are_within_stated_resolution(count):
    generator = random.Random(count)
    # Spread over most of the range the histogram covers: 0.01 ms to 100 s.
    times = [math.exp(generator.uniform(math.log(0.011), math.log(90_000))) for _ in range(count)]
    histogram = LatencyHistogram()
    for time in times:
        histogram.add(time)
    assert histogram.count == count
    assert histogram.quantile(0.5) == pytest.approx(statistics.median(times), rel=LATENCY_RELATIVE_ERROR)
    assert histogram.quantile(0.0) == pytest.approx(min(times), rel=LATENCY_RELATIVE_ERROR)
    assert histogram.quantile(1.0) == pytest.approx(max(times), rel=LATENCY_RELATIVE_ERROR)
    if count >= 2:
        p99 = statistics.quantiles(times, n=100, method="inclusive")[98]
        assert histogram.quantile(0.99) == pytest.approx(p99, rel=LATENCY_RELATIVE_ERROR)


def test_histogram_memory_is_bounded_and_out_of_range_times_are_clamped():
    histogram = LatencyHistogram()
    spread = [0.01 * 1.0001**step for step in range(200_000)]  # 0.01 ms to 5 s, every bin on the way
    for time in [0.0, 0.001, 5e6, *spread]:
        histogram.add(time)
    assert len(histogram.counts) <= LATENCY_BINS, "a bin per 1% of time, never more, however many times"
    assert histogram.count == 200_003
    assert histogram.quantile(0.0) == pytest.approx(0.01, rel=LATENCY_RELATIVE_ERROR)
    assert histogram.quantile(1.0) == pytest.approx(100_000, rel=LATENCY_RELATIVE_ERROR)
    assert histogram.quantile(0.5) == pytest.approx(statistics.median(spread), rel=LATENCY_RELATIVE_ERROR)
    assert LatencyHistogram().quantile(0.5) is None


def test_record_naming_a_bot_outside_the_league_is_rejected():
    with pytest.raises(RecordError, match=r"index 2 .*seats\[3\] is 'dave'.*league's bots"):
        compute_standings(KNOWN_GAMES, bots=["alice", "bob", "carol"])


def test_duplicate_index_is_rejected():
    duplicate = dict(KNOWN_GAMES[1], game_id="again")
    with pytest.raises(RecordError, match=r"two game records have index 1 .*'again'"):
        compute_standings([*KNOWN_GAMES, duplicate])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"finish_order": [0, 0, 1]}, r"finish_order is \[0, 0, 1\]; expected every seat 0..2 once"),
        ({"seats": ["alice", "alice", "bob"]}, r"name a bot twice"),
        ({"faults": [{"slow": 1}, {}, {}]}, r"kind 'slow'; the kinds are timeout, crash"),
        ({"faults": [{}, {}]}, r"faults is .*one object per seat \(3\)"),
        ({"forfeits": {"7": "crash"}}, r"forfeits has seat '7'"),
        ({"index": -1}, r"index must be a whole number"),
        ({"seed": "seven"}, r"seed is 'seven'; expected a whole number"),
        ({"timing": {"latency_ms": [[1.0], [2.0]]}}, r"timing.latency_ms is .*one list of times per seat \(3\)"),
    ],
)
def test_malformed_records_are_rejected_with_the_bad_value(change, message):
    bad = {**KNOWN_GAMES[0], **change}
    with pytest.raises(RecordError, match=message):
        compute_standings([bad])


def test_games_on_one_seed_are_one_deal_and_games_without_a_seed_their_own():
    # Two rotation groups of three games (seeds 5 and 6), then two games with no seed.
    seats = [["ann", "bob", "cat"], ["cat", "ann", "bob"], ["bob", "cat", "ann"]]
    games = []
    for seed in (5, 6):
        for rotation in seats:
            games.append(dict(record(len(games), rotation, [0, 1, 2]), seed=seed))
    for _ in range(2):
        unseeded = record(len(games), ["ann", "bob"], [0, 1])
        del unseeded["seed"]
        games.append(unseeded)
    comparison = compute_standings(games).comparison("ann", "bob")
    assert (comparison.games, comparison.deals) == (8, 4)
    # Seat 0 always wins: ann is above bob in rotations 0 and 2 of each group, and in both unseeded games.
    assert comparison.above == 2 + 2 + 2
    assert compute_standings(games).comparison("bob", "ann").above == 2


def test_head_to_head_is_the_comparison_of_deal_outcomes_in_schedule_order():
    rng = random.Random(4)
    records = league_records(rng, strengths_from_elo({"ann": 0, "ben": 50, "cat": -50, "dan": 120}), 3, 4, 0.3)
    standings = compute_standings(list(reversed(records)))
    tallies: dict[tuple[str, str], PairTally] = {}
    for start in range(0, len(records), 3):  # each table's three rotations share a seed
        group = records[start : start + 3]
        assert len({game["seed"] for game in group}) == 1
        for pair, outcome in sorted(deal_outcomes((game["seats"], game["finish_order"]) for game in group).items()):
            tallies.setdefault(pair, PairTally()).add(outcome)
    for (bot, other), tally in tallies.items():
        assert standings.comparison(bot, other) == tally.comparison()
        assert standings.comparison(other, bot) == tally.comparison().swapped()
        assert standings.comparison(bot, other).deals == 8  # two of the four tables per round hold both


def test_comparing_an_unknown_bot_or_a_bot_with_itself_is_refused():
    standings = compute_standings(KNOWN_GAMES)
    with pytest.raises(UnknownBotError, match=r"no bot named 'eve' in these results; the bots are alice, bob"):
        standings.comparison("alice", "eve")
    with pytest.raises(StatisticsError, match="cannot compare bot 'bob' with itself"):
        standings.comparison("bob", "bob")
    assert compute_standings([], bots=["amy", "kit"]).comparison("amy", "kit").los is None
