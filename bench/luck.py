"""Measure what taking the luck of the cards out of the score (referee.records.luck) buys on real duels of the sample bots.

A duel of two bots at tables of three (A, B and a field bot, every seat rotation of each deal, as
``referee duel`` plays it) is run to a fixed number of deals with real bot processes. Then, on the same
deals, raw and luck-adjusted:

1. **Agreement**: each deal's share of games A finished above B, and its mean score difference, raw and
   less the luck, with their means and 95% intervals (deals as the samples): the adjusted mean must lie
   within the raw one's interval (the adjustment is unbiased), and the *variance ratio* (raw over
   adjusted, per deal) is how many times fewer deals the adjusted figure needs for the same certainty.
2. **The duel as played**: the sequential test (``elo0``, ``elo1``) fed the deals in schedule order, raw
   and adjusted: the deal each reaches its verdict at, on the same seeds.
3. **Many duels**: the deals resampled with replacement (the same draws for both tests), ``--duels`` times:
   the mean deals to a verdict, raw and adjusted, and their ratio.
4. **Error rates of the adjusted test**: the same resampled duels with the adjusted values moved so that
   their mean is exactly H0's (then exactly H1's): how often it accepts H1 (stated: at most alpha) and H0
   (stated: at most beta). The raw test's are in bench/calibration.py.

Run from the repository root with the project installed (the virtual environment of ``make test``):

    .venv/bin/python bench/luck.py                                  # heuristic against the Node.js sample
    .venv/bin/python bench/luck.py --game bastard_brag --deals 150
    .venv/bin/python bench/luck.py --pair heuristic,search --deals 40 --move-time-ms 250
    .venv/bin/python bench/luck.py --pair heuristic,noisy8 --deals 2000 --in-process

``noisyN`` is the heuristic bot playing a random legal move one decision in N (bench/noisy_bot.py). With
``--in-process`` the deals are played in this process's workers, straight on the engine, with no clock
and no bot process (heuristic, random and noisyN only; A and B may be the same bot): thousands of deals in
minutes, for the variance ratio at a scale a real duel would take hours to reach. The games are the
same as a duel's in every way the luck sees (each deal in every seat rotation, a field bot in the third seat:
the random bot, or ``--field`` another).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from noisy_bot import noisy_decide  # noqa: E402  (bench/noisy_bot.py, beside this script)

from referee.apps.league import run_league  # noqa: E402
from referee.engine.games import GAMES  # noqa: E402
from referee.engine.seeding import derive_seed  # noqa: E402
from referee.leaguefile.config import load_league  # noqa: E402
from referee.play.inprocess import sample_decide  # noqa: E402
from referee.play.kit import DecideFunction  # noqa: E402
from referee.records.luck import MODEL, LuckMeter  # noqa: E402
from referee.records.results import RESULTS_FILE, read_games  # noqa: E402
from referee.records.sequential import SequentialTest, Verdict  # noqa: E402
from referee.records.standings import folder_luck  # noqa: E402
from referee.records.stats import (  # noqa: E402
    DealGame,
    DealOutcome,
    deal_outcome,
    elo_from_score,
    mean_per_game,
    score_from_elo,
)

SAMPLE_BOTS = ROOT / "sample_bots"
BOTS = {  # a league entry for each bot the bench can pit
    "heuristic": "  - path: {root}/python\n",
    "node": "  - path: {root}/node\n",
    "search": "  - path: {search}\n",
    "random": "  - name: {label}\n    command: python {root}/python/random_bot.py\n",
}
NOISY = re.compile(r"noisy([1-9][0-9]*)")  # noisyN: the heuristic with one random move in N (bench/noisy_bot.py)


def league_entry(name: str, where: Path, label: str | None = None) -> str:
    """The league file's entry for the bench's bot ``name``, called ``label`` in the league where it can be (a
    field bot: random or noisyN; the others go by their manifests' names)."""
    noisy = NOISY.fullmatch(name)
    if noisy:
        program = ROOT / "bench" / "noisy_bot.py"
        return f"  - path: {submission(where, label or name, program, f'--every {noisy[1]}')}\n"
    return BOTS[name].format(
        root=SAMPLE_BOTS,
        label=label or name,
        search=submission(where, "search", SAMPLE_BOTS / "python" / "search_bot.py") if name == "search" else "",
    )


def submission(where: Path, name: str, program: Path, arguments: str = "") -> Path:
    """The bot ``name`` as a submission folder of its own: ``program`` with brag_heuristic.py beside it, which
    it loads from there (a sandboxed bot sees its folder alone)."""
    folder = where / name
    folder.mkdir()
    for source in (SAMPLE_BOTS / "python" / "brag_heuristic.py", program):
        shutil.copy(source, folder)
    (folder / "bot.yaml").write_text(f'name: {name}\nversion: "1.0"\nrun: python {program.name} {arguments}\n')
    return folder


def play_duel(args: argparse.Namespace, where: Path) -> Path:
    """Every deal of the duel's schedule played (no early stop); the output folder."""
    first, second = args.pair
    entries = "".join(league_entry(name, where) for name in (first, second))
    league_file = where / "league.yaml"
    league_file.write_text(
        f"name: luck-bench\ngame: {args.game}\nseed: {args.seed}\ntable_size: 3\n"
        f"move_time_ms: {args.move_time_ms}\ntime_bank_ms: {4 * args.move_time_ms}\nconcurrency: {args.jobs}\n"
        f"format: {{type: sprt, candidates: [{first}, {second}], elo0: {args.elo0}, elo1: {args.elo1}, "
        f"max_games: {3 * args.deals}}}\noutput: out\nbots:\n{entries}{league_entry(args.field, where, 'field')}"
    )
    league = load_league(league_file)
    asyncio.run(run_league(league, output=where / "out"))
    return where / "out"


def deal_outcomes(output: Path, first: str, second: str) -> list[DealOutcome]:
    """Each deal's outcome for A against B, with its games' luck, in deal order."""
    luck_of = folder_luck(output)
    by_deal: dict[int, list] = {}
    for record in read_games(output / RESULTS_FILE, latencies=False):
        if record.void or record.table is None:
            continue
        by_deal.setdefault(record.table, []).append((record.seats, record.finish_order, luck_of(record)))
    outcomes = []
    for deal in sorted(by_deal):
        outcome = deal_outcome(by_deal[deal], first, second)
        if outcome is not None:
            outcomes.append(outcome)
    return outcomes


def in_process_decide(name: str) -> DecideFunction:
    """The in-process player for the bench's bot ``name``: a sample bot, or a noisy heuristic."""
    noisy = NOISY.fullmatch(name)
    if noisy:
        return noisy_decide(int(noisy[1]))
    if name not in ("heuristic", "random"):
        raise SystemExit(f"--in-process plays heuristic, random and noisyN, not {name!r}")
    return sample_decide(name)


def play_deal_in_process(job: tuple[str, int, tuple[str, str], str]) -> DealOutcome:
    """One deal in every rotation of A, B and the field bot at a table of 3, each game's luck measured as it is
    played (A and B named so, which may be the same bot); the deal's outcome for A against B."""
    game_name, seed, pair, field = job
    players = {"A": in_process_decide(pair[0]), "B": in_process_decide(pair[1]), "field": in_process_decide(field)}
    lineup = ["A", "B", "field"]
    games: list[DealGame] = []
    for rotation in range(len(lineup)):
        seats = lineup[rotation:] + lineup[:rotation]
        game = GAMES[game_name](len(seats), seed=seed)
        meter = LuckMeter(game)
        while not game.is_over:
            seat = game.current_seat
            assert seat is not None
            meter.apply(players[seats[seat]](game.observation(seat)))
        games.append((seats, game.result().placements, meter.luck))
    outcome = deal_outcome(games, "A", "B")
    assert outcome is not None
    return outcome


def play_in_process(args: argparse.Namespace) -> list[DealOutcome]:
    """``--deals`` deals played in process, on seeds derived from ``--seed``, in deal order."""
    for name in (*args.pair, args.field):
        in_process_decide(name)  # refused here, before any worker starts, if it cannot play in process
    jobs = [(args.game, derive_seed(args.seed, "deal", deal), args.pair, args.field) for deal in range(args.deals)]
    with ProcessPoolExecutor(args.jobs) as pool:
        return list(pool.map(play_deal_in_process, jobs, chunksize=8))


def values(outcomes: list[DealOutcome], adjusted: bool, measure: str) -> list[float]:
    """Each deal's value: the share above (``above``) or the mean score difference (``score``), less the luck."""
    if measure == "above":
        return [(o.points - (o.above_luck if adjusted else 0.0)) / o.games for o in outcomes]
    return [(o.score_difference - (o.luck if adjusted else 0.0)) / o.games for o in outcomes]


def agreement(outcomes: list[DealOutcome]) -> None:
    print("1. Agreement, per deal (95% intervals, deals as the samples)")
    for measure, label in (("above", "share of games A above B"), ("score", "mean score difference A - B")):
        raw, adjusted = values(outcomes, False, measure), values(outcomes, True, measure)
        raw_interval = mean_per_game([(1, value) for value in raw])
        adjusted_interval = mean_per_game([(1, value) for value in adjusted])
        assert raw_interval is not None and adjusted_interval is not None
        inside = raw_interval.low <= adjusted_interval.estimate <= raw_interval.high
        ratio = statistics.variance(raw) / statistics.variance(adjusted)
        print(
            f"   {label}: raw {raw_interval.estimate:+.4f} [{raw_interval.low:+.4f}, {raw_interval.high:+.4f}], "
            f"less luck {adjusted_interval.estimate:+.4f} [{adjusted_interval.low:+.4f}, {adjusted_interval.high:+.4f}]"
            f" ({'within' if inside else 'OUTSIDE'} the raw interval); sd per deal {statistics.stdev(raw):.4f} raw, "
            f"{statistics.stdev(adjusted):.4f} less luck: variance ratio {ratio:.2f}"
        )


def first_verdict(outcomes: list[DealOutcome], args: argparse.Namespace, adjusted: bool) -> tuple[str, int | None]:
    test = SequentialTest.for_elo(args.elo0, args.elo1) if not adjusted else _adjusted_test(args)
    for outcome in outcomes:
        if test.add(outcome) is not Verdict.CONTINUE:
            break
    return test.verdict.value, test.decided_after


def _adjusted_test(args: argparse.Namespace) -> SequentialTest:
    return SequentialTest(SequentialTest.for_elo(0, 1).measure, args.elo0, args.elo1, adjusted=True)


def shifted(outcome: DealOutcome, shift: float, *, luckless: bool = False) -> DealOutcome:
    """``outcome`` with its adjusted share above moved by ``shift`` (through its luck: the raw figures stay); with
    ``luckless``, its luck taken away first."""
    luck, above_luck = (0.0, 0.0) if luckless else (outcome.luck, outcome.above_luck)
    return DealOutcome(
        outcome.games, outcome.above, outcome.score_difference, outcome.ties, luck, above_luck - shift * outcome.games
    )


def resampled_duels(outcomes: list[DealOutcome], args: argparse.Namespace, shift: float | None) -> dict[str, list]:
    """``--duels`` duels of deals drawn with replacement (at most ``--max-deals`` each): each test's verdicts and
    deals to them. With ``shift``, only the adjusted test, its values moved by ``shift``."""
    rng = random.Random(args.seed)
    found: dict[str, list] = {"raw": [], "raw, normal ratio": [], "adjusted": []}
    for _ in range(args.duels):
        tests = {"adjusted": _adjusted_test(args)}
        if shift is None:
            tests["raw"] = SequentialTest.for_elo(args.elo0, args.elo1)
            tests["raw, normal ratio"] = _adjusted_test(args)  # fed the raw values: the ratio's own part
        for _ in range(args.max_deals):
            outcome = rng.choice(outcomes)
            for name, test in tests.items():
                if test.verdict is not Verdict.CONTINUE:
                    continue
                if name == "raw, normal ratio":
                    test.add(shifted(outcome, 0.0, luckless=True))
                else:
                    test.add(shifted(outcome, shift) if shift is not None and name == "adjusted" else outcome)
            if all(test.verdict is not Verdict.CONTINUE for test in tests.values()):
                break
        for name, test in tests.items():
            found[name].append((test.verdict, test.decided_after or args.max_deals))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="stop_the_bus", choices=("stop_the_bus", "bastard_brag"))
    parser.add_argument("--pair", default="heuristic,node", type=lambda text: tuple(text.split(",")), help="A,B")
    parser.add_argument("--deals", type=int, default=200, help="deals played (three games each)")
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=30.0)
    parser.add_argument("--move-time-ms", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2, help="games at once")
    parser.add_argument("--duels", type=int, default=400, help="resampled duels")
    parser.add_argument("--max-deals", type=int, default=2000, help="a resampled duel's bound")
    parser.add_argument("--keep", type=Path, help="keep the duel's output here (and reuse it when there)")
    parser.add_argument("--in-process", action="store_true", help="play the deals in process, on the engine")
    parser.add_argument("--field", default="random", help="the third seat's bot: random, heuristic or noisyN")
    args = parser.parse_args()
    first, second = args.pair
    print(
        f"{args.game}, {first} against {second} with a {args.field} field bot, tables of 3; {args.deals} deals; "
        f"elo0 {args.elo0:g}, elo1 {args.elo1:g}; luck model {MODEL.name} ({MODEL.digest})"
    )
    started = time.perf_counter()
    if args.in_process:
        outcomes = play_in_process(args)
    else:
        where = args.keep or Path(tempfile.mkdtemp(prefix="luck-bench-"))
        where.mkdir(parents=True, exist_ok=True)
        output = where / "out" if (where / "out" / RESULTS_FILE).exists() else play_duel(args, where)
        outcomes = deal_outcomes(output, first, second)
    print(f"   {len(outcomes)} deals in {time.perf_counter() - started:.0f} s (played, and the luck measured)")
    agreement(outcomes)

    print("2. The duel as played, deals in schedule order")
    for adjusted in (False, True):
        verdict, deals = first_verdict(outcomes, args, adjusted)
        where_text = f"after {deals} deals ({3 * deals} games)" if deals else f"none in {len(outcomes)} deals"
        print(f"   {'less luck' if adjusted else 'raw'}: {verdict}, {where_text}")

    print(f"3. {args.duels} duels of these deals resampled (the same draws for both tests)")
    duels = resampled_duels(outcomes, args, None)
    means = {}
    for name in ("raw", "raw, normal ratio", "adjusted"):
        verdicts = duels[name]
        deals = [count for _, count in verdicts]
        means[name] = statistics.mean(deals)
        h1 = sum(verdict is Verdict.ACCEPT_H1 for verdict, _ in verdicts) / len(verdicts)
        print(
            f"   {'less luck' if name == 'adjusted' else name}: mean {means[name]:.1f} deals to a verdict "
            f"(median {statistics.median(deals):.0f}), H1 in {h1:.1%}"
        )
    print(
        f"   the raw test needs {means['raw'] / means['adjusted']:.2f} times the deals of the adjusted one; "
        f"the same test on the raw values {means['raw, normal ratio'] / means['adjusted']:.2f} times"
    )

    print("4. Error rates of the adjusted test, its values moved to each hypothesis's mean")
    observed = statistics.mean(values(outcomes, True, "above"))
    for label, elo, wrong in (("H0", args.elo0, Verdict.ACCEPT_H1), ("H1", args.elo1, Verdict.ACCEPT_H0)):
        verdicts = resampled_duels(outcomes, args, score_from_elo(elo) - observed)["adjusted"]
        rate = sum(verdict is wrong for verdict, _ in verdicts) / len(verdicts)
        print(
            f"   true {label} ({elo:+g} Elo): the wrong verdict in {rate:.1%} of {len(verdicts)} duels "
            f"(stated: at most 5%); mean {statistics.mean(count for _, count in verdicts):.1f} deals"
        )
    print(f"   (observed: {elo_from_score(observed):+.0f} Elo from the adjusted share above)")


if __name__ == "__main__":
    main()
