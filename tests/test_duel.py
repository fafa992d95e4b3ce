"""The duel: ``format: {type: sprt}`` and ``referee duel``, a sequential test run until it decides.

In-process: the schedule's seating, the test fed deal by deal in deal order
whatever order games finish in, the error rates of duels played through the
schedule by simulated bots of known strength (tests/simulated_bots.py), and
every league-file mistake with its file, line and key. With real bot
processes: a duel of the sample bots that decides and stops early, the same
stopping point at concurrency 1 and 2, and a duel killed mid-run that
resumes to the same verdict.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from referee.apps.league import RESULTS_FILE, run_league
from referee.cli import main as referee_main
from referee.cli.run_console import run_duel_command
from referee.common.errors import OutputError
from referee.engine.seeding import derive_seed
from referee.leaguefile.config import LeagueError, load_league
from referee.leaguefile.duel_state import DuelState, duel_report
from referee.leaguefile.schedule import Sprt, SprtSchedule
from referee.records.gamelog import log_path
from referee.records.results import read_league, read_records
from referee.records.sequential import Measure, SequentialTest
from referee.records.stats import deal_outcome
from tests.simulated_bots import planted_difference, play_deal, strengths_from_elo
from tests.test_league import write_league as league_file

from .conftest import SAMPLE_BOTS, Bots

# ----- the schedule ------------------------------------------------------------------------------


def test_every_deal_seats_both_candidates_in_every_rotation_on_one_seed():
    games = SprtSchedule(["a", "f1", "b", "f2", "f3"], ("a", "b"), 4, deals=9, league_seed=9)
    assert games.count == 36 and games.field == ("f1", "f2", "f3")
    by_deal: dict[int, list] = {}
    for game in games:
        by_deal.setdefault(game.table, []).append(game)
    assert list(by_deal) == list(range(1, 10))
    field_seats = Counter()
    distances = Counter()
    for deal, group in by_deal.items():
        assert [game.rotation for game in group] == [0, 1, 2, 3]
        assert {game.seed for game in group} == {derive_seed(9, "sprt", "deal", deal)}
        first = group[0].seats
        assert first[0] == "a" and "b" in first and len(set(first)) == 4
        distances[first.index("b")] += 1
        field_seats.update(name for name in first if name.startswith("f"))
        for seat in range(4):  # each bot plays each seat's cards once
            assert sorted(game.seats[seat] for game in group) == sorted(first)
    assert distances == {1: 3, 2: 3, 3: 3}  # B at every distance from A, in turn
    assert field_seats == {"f1": 6, "f2": 6, "f3": 6}  # the field taken round and round
    assert [games.game(index) for index in range(games.count)] == list(games)


def test_deals_do_not_depend_on_the_bound_nor_on_the_candidates_names():
    short = SprtSchedule(["a", "b", "c"], ("a", "b"), 3, deals=4, league_seed=1)
    long = SprtSchedule(["a", "b", "c"], ("a", "b"), 3, deals=40, league_seed=1)
    assert list(short) == list(long)[: short.count]
    other = SprtSchedule(["a", "z", "c"], ("a", "z"), 3, deals=4, league_seed=1)
    assert [game.seed for game in other] == [game.seed for game in short]
    heads_up = SprtSchedule(["a", "b", "c"], ("b", "a"), 2, deals=2, league_seed=1)
    assert [game.seats for game in heads_up] == [("b", "a"), ("a", "b")] * 2


# ----- the test fed from records ------------------------------------------------------------------


def simulated_records(games: SprtSchedule, strengths, luck: float, rng: random.Random, deals: int) -> list[dict]:
    """The ``games.jsonl`` records of the first ``deals`` deals, played by simulated bots."""
    records = []
    for deal in range(1, deals + 1):
        for rotation, (seats, finish_order) in enumerate(play_deal(rng, strengths, games.deal_bots(deal), luck)):
            game = games.game((deal - 1) * games.table_size + rotation)
            assert list(game.seats) == seats
            records.append({**game.record(), "finish_order": finish_order})
    return records


def test_deals_enter_the_test_in_deal_order_whatever_order_games_finish_in():
    sprt = Sprt(("A", "B"), Measure.ELO, 0.0, 60.0, 0.05, 0.05, max_games=3000)
    games = sprt.schedule(["A", "B", "field-1", "field-2"], 3, 1, 5)
    strengths = strengths_from_elo({"A": 80.0, "B": 0.0, "field-1": -50.0, "field-2": 50.0})
    records = simulated_records(games, strengths, 0.3, random.Random(3), deals=400)
    in_order = DuelState.of(sprt, 3, records)
    assert in_order.decided and in_order.decided_at < 400

    # The same test, fed directly: the deals up to the deciding one, and not one more.
    test = SequentialTest.for_elo(0.0, 60.0)
    for deal in range(in_order.decided_at):
        group = records[deal * 3 : deal * 3 + 3]
        test.add(deal_outcome([(record["seats"], record["finish_order"]) for record in group], "A", "B"))
    assert test.decided_after == in_order.decided_at and test.llr == in_order.test.llr

    # Concurrent workers: games finish out of order, and some after the verdict.
    shuffled = records[:]
    for start in range(0, len(shuffled), 5):
        window = shuffled[start : start + 5]
        random.Random(start).shuffle(window)
        shuffled[start : start + 5] = window
    out_of_order = DuelState.of(sprt, 3, shuffled)
    assert out_of_order.decided_at == in_order.decided_at
    assert out_of_order.test.llr == in_order.test.llr
    assert out_of_order.games_counted == in_order.decided_at * 3
    assert out_of_order.games_not_counted == len(records) - in_order.decided_at * 3


def test_void_games_count_for_nobody_and_an_unfinished_duel_has_no_verdict():
    sprt = Sprt(("A", "B"), Measure.SCORE_DIFFERENCE, 0.0, 0.2, max_games=20)
    games = sprt.schedule(["A", "B"], 2, 1, 5)
    records = [{**game.record(), "finish_order": [0, 1]} for game in games]  # seat 0 always first: a draw a deal
    records[2]["void"] = records[3]["void"] = "nobody played"  # deal 2 void entirely: not in the test
    state = DuelState.of(sprt, 2, records[:6])
    assert state.deals == 3 and state.test.deals == 2 and state.outcome is None
    assert state.headline() == "no verdict yet after 3 deals (6 games) of at most 10 deals"
    state = DuelState.of(sprt, 2, records)
    assert state.outcome in ("H0", "inconclusive")
    assert state.decided or state.headline().startswith("inconclusive: no verdict after all 10 deals")


def simulated_duels(runs: int, elos: dict[str, float], table_size: int, luck: float, seed: int) -> list[DuelState]:
    """Duels of A and B played through the sprt schedule by simulated bots, each until it decides."""
    sprt = Sprt(("A", "B"), Measure.ELO, 0.0, 60.0, 0.05, 0.05, max_games=2000 * table_size)
    games = sprt.schedule(list(elos), table_size, 1, seed)
    strengths = strengths_from_elo(elos)
    states = []
    for run in range(runs):
        rng = random.Random(seed + run)
        state = DuelState(sprt, table_size)
        deal = 0
        while not state.decided:
            deal += 1
            for rotation, (seats, order) in enumerate(play_deal(rng, strengths, games.deal_bots(deal), luck)):
                state.add(
                    {
                        "index": state.records,
                        "game_id": f"d{deal}-s{rotation}",
                        "table": deal,
                        "rotation": rotation,
                        "seats": seats,
                        "finish_order": order,
                    }
                )
        states.append(state)
    return states


FIELD = {"field-1": -100.0, "field-2": 0.0, "field-3": 100.0}


def test_duels_through_the_schedule_keep_the_stated_error_rates():
    # Equal bots: a false H1 at most alpha (5%) of the time; A 60 Elo stronger after luck: H1 at least 1 - beta.
    luck = 0.3
    null = simulated_duels(300, {"A": 0.0, "B": 0.0, **FIELD}, 4, luck, seed=100)
    planted = simulated_duels(150, {"A": planted_difference(60, luck), "B": 0.0, **FIELD}, 4, luck, seed=5000)
    # Binomial tails at one in a thousand: 300 runs at 5% give 27 or more, 150 give 16 or more.
    assert sum(state.outcome == "H1" for state in null) < 27
    assert sum(state.outcome == "H0" for state in planted) < 16
    # The verdict names the stronger bot, from A's side or B's.
    accepted = next(state for state in planted if state.outcome == "H1")
    assert accepted.claim() == "A is stronger than B"
    assert accepted.test.comparison().los > 0.5


def test_the_claim_says_no_more_than_the_test_shows():
    def decided(h0: float, h1: float, above: bool) -> str:
        state = DuelState(Sprt(("new", "old"), Measure.ELO, h0, h1, max_games=400), 2)
        for deal in range(1, 201):
            for rotation in range(2):
                seats = ["new", "old"] if rotation == 0 else ["old", "new"]
                order = [0, 1] if (seats[0] == "new") == above else [1, 0]
                state.add(
                    {
                        "index": state.records,
                        "game_id": f"d{deal}-s{rotation}",
                        "table": deal,
                        "rotation": rotation,
                        "seats": seats,
                        "finish_order": order,
                    }
                )
        return state.claim()

    assert decided(0, 50, above=True) == "new is stronger than old"
    assert decided(0, 50, above=False) == "new is not stronger than old by 50 Elo or more"
    assert decided(-50, 0, above=False) == "old is stronger than new"
    assert decided(-50, 50, above=True) == "new is not weaker than old by 50 Elo or more"


# ----- the league file ----------------------------------------------------------------------------


def league_text(format_lines: str, table_size: int = 2, extra: str = "") -> str:
    bots = "".join(
        f"  - {{name: {name}, command: python {SAMPLE_BOTS / 'random_bot.py'}}}\n" for name in ("new", "old", "field")
    )
    return (
        f"name: duel\ngame: stop_the_bus\nseed: 3\ntable_size: {table_size}\n{extra}"
        f"format:\n{format_lines}bots:\n{bots}"
    )


def test_the_league_file_sets_the_duel(tmp_path: Path, capsys: pytest.CaptureFixture):
    path = tmp_path / "duel.yaml"
    path.write_text(
        league_text(
            "  type: sprt\n  candidates: [new, old]\n  difference0: 0\n  difference1: 0.1\n"
            "  beta: 0.1\n  max_games: 25\n",
            table_size=3,
        )
    )
    league = load_league(path)
    assert league.format == Sprt(("new", "old"), Measure.SCORE_DIFFERENCE, 0.0, 0.1, 0.05, 0.1, 25)
    assert len(league.schedule()) == 24  # rounded down to whole deals of 3 games
    assert referee_main(["validate", str(path)]) == 0
    summary = "sprt: at most 24 games: 8 deals of new and old with 1 of a field of 1 x 3 rotations"
    assert summary in capsys.readouterr().out
    assert referee_main(["schedule", str(path), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["seats"] for line in lines[:3]] == [
        ["new", "old", "field"],
        ["old", "field", "new"],
        ["field", "new", "old"],
    ]
    path.write_text(league_text("  type: sprt\n  candidates: [new, old]\n  elo0: -5\n  elo1: 5\n"))
    assert load_league(path).format == Sprt(("new", "old"), Measure.ELO, -5.0, 5.0, 0.05, 0.05, 10_000)


@pytest.mark.parametrize(
    ("format_lines", "at", "key", "message"),  # at: how the line the message points at starts
    [
        (
            "elo0: 10\n  elo1: 5\n",
            "elo1",
            "format.elo1",
            "5 is not above elo0 (10); H1 (elo1) is the larger advantage of new over old, H0 (elo0) the smaller, "
            "e.g. elo0: 0, elo1: 10",
        ),
        (
            "elo0: 0\n  elo1: 5\n  alpha: 1.5\n",
            "alpha",
            "format.alpha",
            "1.5 is not allowed; write a number between 0 and 1 (exclusive)",
        ),
        (
            "elo0: 0\n  elo1: 5\n  beta: 0\n",
            "beta",
            "format.beta",
            "0 is not allowed; write a number between 0 and 1 (exclusive)",
        ),
        (
            "elo0: 0\n  elo1: 5\n  alpha: 0.5\n  beta: 0.5\n",
            "beta",
            "format.beta",
            "alpha 0.5 plus beta 0.5 is 1 or more; the two error rates must add up to less than 1 (0.05 each is usual)",
        ),
        (
            "",
            "type",
            "format",
            "a duel needs its hypotheses: elo0 and elo1 (Elo), or difference0 and difference1 (mean score difference); "
            "write format: {type: sprt, candidates: [A, B], elo0: 0, elo1: 10}",
        ),
        ("elo1: 5\n", "elo1", "format.elo0", "missing; elo1 needs elo0 (H0 and H1)"),
        (
            "elo0: 0\n  difference1: 0.1\n",
            "difference1",
            "format.difference1",
            "give either elo0 and elo1 or difference0 and difference1, not both: a test measures one of them",
        ),
        (
            "difference0: 0\n  difference1: 1\n",
            "difference1",
            "format.difference1",
            "1 is not allowed; write a number between -1 and 1 (exclusive)",
        ),
        ("elo0: zero\n  elo1: 5\n", "elo0", "format.elo0", '"zero" is not allowed; write a number from -1000 to 1000'),
        (
            "elo0: 0\n  elo1: 5\n  max_games: 1\n",
            "max_games",
            "format.max_games",
            "1 is fewer than one deal's games: a deal at a table of 2 plays 2 games, one per seat rotation, so write 2 "
            "or more (it is rounded down to whole deals)",
        ),
        (
            "elo0: 0\n  elo1: 5\n  rounds: 2\n",
            "rounds",
            "format.rounds",
            "unknown key; allowed keys: type, candidates, elo0, elo1, difference0, difference1, alpha, beta, max_games, adjust_for_luck",
        ),
    ],
)
def test_duel_mistakes_are_refused_with_file_line_and_key(tmp_path: Path, format_lines, at, key, message):
    path = tmp_path / "duel.yaml"
    path.write_text(league_text("  type: sprt\n  candidates: [new, old]\n" + (format_lines and "  " + format_lines)))
    with pytest.raises(LeagueError) as refused:
        load_league(path)
    line = next(number for number, text in enumerate(path.read_text().splitlines(), 1) if text.strip().startswith(at))
    assert str(refused.value) == f"{path}:{line}: {key}: {message}"


@pytest.mark.parametrize(
    ("candidates", "message"),
    [
        (
            "[new, olt]",
            'format.candidates[1]: "olt" is not a bot of this league (did you mean "old"?); a candidate is '
            "one of the bots listed under bots",
        ),
        (
            "[new]",
            "format.candidates: 1 bot listed; a duel has exactly two candidates, A and B, e.g. [new, old] (A's "
            "advantage over B is what the test measures)",
        ),
        ("[new, new]", 'format.candidates[1]: "new" is listed twice; list each candidate once'),
    ],
)
def test_the_candidates_are_two_bots_of_the_league(tmp_path: Path, candidates, message):
    path = tmp_path / "duel.yaml"
    path.write_text(league_text(f"  type: sprt\n  candidates: {candidates}\n  elo0: 0\n  elo1: 5\n"))
    with pytest.raises(LeagueError) as refused:
        load_league(path)
    assert str(refused.value) == f"{path}:7: {message}"


def test_a_duel_has_one_round(tmp_path: Path):
    path = tmp_path / "duel.yaml"
    path.write_text(league_text("  type: sprt\n  candidates: [new, old]\n  elo0: 0\n  elo1: 5\n", extra="rounds: 2\n"))
    with pytest.raises(
        LeagueError,
        match="duel.yaml:5: rounds: 2 is not allowed with format sprt: it plays one "
        "round, as long as format.max_games says",
    ):
        load_league(path)


# ----- real bots ------------------------------------------------------------------------------------


def write_league(path: Path, bots: Bots, table_size: int = 2, format_lines: str = "", concurrency: int = 1) -> Path:
    """Stop the Bus on the sample bots: heuristic (strong), random (weak), and a random field bot."""
    entries = [
        (name, bots.command(SAMPLE_BOTS / script, "--label", name))
        for name, script in (("heuristic", "heuristic_bot.py"), ("random", "random_bot.py"), ("field", "random_bot.py"))
    ]
    return league_file(
        path,
        bots,
        extra=format_lines,
        entries=entries,
        rounds=None,
        table_size=table_size,
        concurrency=concurrency,
        seed=21,
        name="sample",
    )


DUEL = ["heuristic", "random", "--elo0", "0", "--elo1", "200", "--max-games", "60", "--no-progress"]


def counted_ids(output: Path) -> tuple[int, list[str]]:
    """The deal that decided a duel's output, and the game ids of the deals up to it, in schedule order."""
    records = sorted(read_records(output / RESULTS_FILE), key=lambda record: record["index"])
    state = duel_report(read_league(output), records)
    assert state is not None and state.decided
    return state.decided_at, [record["game_id"] for record in records if record["table"] <= state.decided_at]


def test_a_duel_of_the_sample_bots_decides_and_stops_before_max_games(
    tmp_path: Path, bots: Bots, capsys: pytest.CaptureFixture
) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    assert referee_main(["duel", str(league_path), *DUEL]) == 0
    printed = capsys.readouterr().out
    output = tmp_path / "sample-duel-heuristic-random"  # beside the league's output, named for the duel
    records = list(read_records(output / RESULTS_FILE))
    deals, ids = counted_ids(output)
    assert len(records) == len(ids) == 2 * deals < 60  # stopped at the verdict, long before max games
    assert f"H1 accepted after {deals} deals ({2 * deals} games): heuristic is stronger than random" in printed
    assert "log-likelihood ratio +" in printed and "bounds -2.94 (accept H0) and +2.94 (accept H1)" in printed
    assert "heuristic is the stronger bot with likelihood" in printed
    board = json.loads((output / "leaderboard.json").read_text())
    assert board["duel"]["verdict"] == "H1" and board["duel"]["deals"] == deals
    assert "## Sequential test" in (output / "leaderboard.md").read_text()

    # Run again: a decided duel plays nothing more; the leaderboard command says the verdict too.
    assert referee_main(["duel", str(league_path), *DUEL]) == 0
    assert "0 games played" in capsys.readouterr().out
    assert len(list(read_records(output / RESULTS_FILE))) == len(records)
    assert referee_main(["leaderboard", str(output)]) == 0
    assert "heuristic is stronger than random" in capsys.readouterr().out
    # Other hypotheses would change the verdict on the same games: refused, like any change of a league's rules.
    assert referee_main(["duel", str(league_path), *DUEL[:5], "100", *DUEL[6:]]) == 1
    assert "format.elo1: 200.0 -> 100.0" in capsys.readouterr().err
    # Mistakes in the options are usage errors.
    assert referee_main(["duel", str(league_path), "heuristic", "nobody", "--elo0", "0", "--elo1", "5"]) == 2
    assert "'nobody' is not a bot of" in capsys.readouterr().err
    assert referee_main(["duel", str(league_path), "heuristic", "random", "--elo0", "5", "--elo1", "0"]) == 2
    assert "elo0 5.0 must be below elo1 0.0" in capsys.readouterr().err


def test_the_stop_point_is_the_same_at_concurrency_1_and_2(tmp_path: Path, bots: Bots) -> None:
    # Tables of three: the two candidates and a field bot, every rotation.
    sprt = "format: {type: sprt, candidates: [heuristic, random], elo0: 0, elo1: 300, max_games: 90}"
    league = load_league(write_league(tmp_path / "league.yaml", bots, table_size=3, format_lines=sprt))
    for concurrency in (1, 2):
        assert run_duel_command(league, tmp_path / f"c{concurrency}", concurrency, show_progress=False) == 0
    one, two = counted_ids(tmp_path / "c1"), counted_ids(tmp_path / "c2")
    assert one == two and one[0] < 30
    alone = sorted(read_records(tmp_path / "c1" / RESULTS_FILE), key=lambda record: record["index"])
    assert [record["game_id"] for record in alone] == one[1]  # one at a time: not a game past the verdict
    # At concurrency 2 games of later deals, started before the verdict, are recorded but change nothing.
    board_one = json.loads((tmp_path / "c1" / "leaderboard.json").read_text())["duel"]
    board_two = json.loads((tmp_path / "c2" / "leaderboard.json").read_text())["duel"]
    extra = len(list(read_records(tmp_path / "c2" / RESULTS_FILE))) - len(alone)
    assert board_two["games_not_counted"] == extra
    assert {**board_two, "games_not_counted": 0} == board_one


def test_a_killed_duel_resumes_to_the_same_verdict(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)
    reference = tmp_path / "reference"
    assert referee_main(["duel", str(league_path), *DUEL, "--output", str(reference)]) == 0
    decided_at, ids = counted_ids(reference)
    bots.leaves_socket_dirs = True  # a SIGKILLed referee cannot clean up after itself

    output = tmp_path / "killed"
    command = [sys.executable, "-m", "referee.cli", "duel", str(league_path), *DUEL, "--output", str(output)]
    referee = subprocess.Popen(command, env=bots.subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(list(read_records(output / RESULTS_FILE))) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    referee.send_signal(signal.SIGKILL)
    referee.wait()
    assert not bots.leftovers(), "bots outlived a referee killed with SIGKILL"
    finished_before = len(list(read_records(output / RESULTS_FILE)))
    assert 3 <= finished_before < len(ids)

    resumed = subprocess.run(command, env=bots.subprocess_env(), capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{finished_before} already finished" in resumed.stdout
    assert f"{len(ids) - finished_before} games played" in resumed.stdout
    assert counted_ids(output) == (decided_at, ids)
    assert f"H1 accepted after {decided_at} deals" in resumed.stdout


def test_run_league_stops_when_asked_and_finishes_what_runs(tmp_path: Path, bots: Bots) -> None:
    # The runner's stop, on its own: asked before each game starts.
    league = load_league(write_league(tmp_path / "league.yaml", bots, format_lines="rounds: 3"))
    asked = []

    def stop() -> bool:
        asked.append(len(list(read_records(tmp_path / "out" / RESULTS_FILE))))
        return asked[-1] >= 4

    summary = asyncio.run(run_league(league, output=tmp_path / "out", concurrency=1, stop=stop))
    assert summary.played == 4 and asked == [0, 1, 2, 3, 4]
    with pytest.raises(OutputError, match="format.type"):
        asyncio.run(
            run_league(
                load_league(
                    write_league(
                        tmp_path / "league.yaml",
                        bots,
                        format_lines="format: {type: sprt, candidates: [heuristic, random], elo0: 0, elo1: 5}",
                    )
                ),
                output=tmp_path / "out",
            )
        )


def test_a_duel_that_adjusts_for_luck_tests_each_deal_less_its_luck(
    tmp_path: Path, bots: Bots, capsys: pytest.CaptureFixture
) -> None:
    """`--adjust-for-luck`: the test takes each deal's score difference less the luck its games' logs give (worked
    out here from the logs), reaches a verdict, and says so; league.json names the value function; the standings
    show each bot's mean score less its luck beside the raw one."""
    from referee.records.gamelog import read_log
    from referee.records.luck import MODEL, luck_of_log
    from referee.records.stats import DealOutcome, mean_per_game

    league_path = write_league(tmp_path / "league.yaml", bots, table_size=3)
    duel = ["heuristic", "random", "--difference0", "0", "--difference1", "0.4", "--max-games", "120"]
    assert referee_main(["duel", str(league_path), *duel, "--adjust-for-luck", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    output = tmp_path / "sample-duel-heuristic-random"
    league = read_league(output)
    assert league.format["adjust_for_luck"] is True
    assert league.format["luck_model"] == {"name": MODEL.name, "digest": MODEL.digest}
    state = duel_report(league, list(read_records(output / RESULTS_FILE)), output)
    assert state is not None and state.decided and state.outcome == "H1"
    assert duel_report(league, list(read_records(output / RESULTS_FILE))) is None  # no logs to read: no verdict

    # The same test fed by hand, each game's luck from its own log.
    test = SequentialTest(Measure.SCORE_DIFFERENCE, 0.0, 0.4, adjusted=True)
    deals: dict[int, list[dict]] = {}
    for record in read_records(output / RESULTS_FILE):
        deals.setdefault(record["table"], []).append(record)
    adjusted = []
    for table in range(1, state.decided_at + 1):
        games = [
            (
                record["seats"],
                record["finish_order"],
                luck_of_log(read_log(log_path(output / "games", record["game_id"]))),
            )
            for record in deals[table]
        ]
        outcome = deal_outcome(games, "heuristic", "random")
        assert isinstance(outcome, DealOutcome) and outcome.luck != 0.0
        test.add(outcome)
        adjusted.append((outcome.games, outcome.score_difference - outcome.luck))
    assert test.decided_after == state.decided_at and test.llr == pytest.approx(state.test.llr)
    interval = mean_per_game(adjusted)
    assert interval is not None and state.test.adjusted_difference() == interval
    assert "on scores with the luck taken out" in printed
    assert f"mean score difference with the luck taken out: {interval.estimate:+.3f}" in printed
    assert "less luck 95%" in printed  # the standings' column

    board = json.loads((output / "leaderboard.json").read_text())
    assert board["duel"]["adjust_for_luck"] is True and board["duel"]["luck_model"]["digest"] == MODEL.digest
    rows = {row["bot"]: row for row in board["rows"]}
    assert rows["heuristic"]["adjusted_mean_score"]["estimate"] > rows["random"]["adjusted_mean_score"]["estimate"]
    assert "less luck 95%" in (output / "leaderboard.md").read_text()
