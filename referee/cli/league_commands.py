"""The commands that run a league: run (or resume) it, duel two of its bots, validate it, print its schedule."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from referee.backends import BACKENDS
from referee.cli.options import UsageError, add_sandbox_options, concurrency, sandbox_refusal
from referee.leaguefile.schedule.sprt import DEFAULT_ERROR_RATE, DEFAULT_MAX_GAMES, Sprt
from referee.play import freezer, sandbox

if TYPE_CHECKING:
    from referee.backends.backend import BackendFactory
    from referee.cli.options import Commands
    from referee.leaguefile.config import League


def add_run(commands: Commands) -> None:
    """Add ``referee run``: a league played, resumed or grown."""
    run = commands.add_parser(
        "run",
        help="run a league (again: resume it, or play what it gained)",
        description="Plays every game of the league not yet finished in its output folder: a second run resumes "
        "an interrupted league, and plays only the new games of a league that gained rounds or bots. "
        "Exit status: 0 when every bot played every game, 1 on a failure or when a bot was left out "
        "or disabled, 130 after Ctrl-C and 143 after SIGTERM (the finished games and the standings "
        "so far are kept).",
    )
    run.add_argument("league", type=Path, help="the league file (YAML; see tournaments/league.example.yaml)")
    run.add_argument(
        "--output", type=Path, metavar="DIR", help="the results folder (overrides the league file's output)"
    )
    run.add_argument(
        "--concurrency",
        type=concurrency,
        metavar="N|auto",
        help="games at once, or auto: one per CPU (overrides the league file)",
    )
    run.add_argument("--no-progress", action="store_true", help="print no progress or standings while running")
    run.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="where games are played: on this machine (local, the default) or on a Ray cluster "
        "(ray; needs pip install 'brag-referee[ray]'; see docs/scaling.md)",
    )
    run.add_argument(
        "--address",
        metavar="ADDR",
        help="with --backend ray: the Ray cluster to run on (its head's host:port, or auto on a node "
        "of it); default: a Ray started for the run on this machine, in a private network "
        "namespace",
    )
    add_sandbox_options(run, share=False)
    run.set_defaults(func=_run)


def add_duel(commands: Commands) -> None:
    """Add ``referee duel``: a sequential test of two bots of a league."""
    duel = commands.add_parser(
        "duel",
        help="test whether bot A is stronger than bot B (SPRT), on a league's settings, until it is clear",
        description="Runs the league file's game, tables, clock, sandbox and bots as a duel: A and B on the same "
        "deals (every seat rotation), the other seats filled from the league's other bots, stopping as "
        "soon as a sequential probability ratio test decides between H0 (A's advantage is elo0) and H1 "
        "(it is elo1), as fastchess's -sprt does. Results go beside the league's output, in "
        "NAME-duel-A-B (or --output); running the same command again resumes. Exit status: 0 when the "
        "test decided or max games were played without a verdict (inconclusive), 1 on a failure or "
        "when a bot was left out or disabled, 2 for a bad option, 130 after Ctrl-C, 143 after SIGTERM.",
    )
    duel.add_argument("league", type=Path, help="the league file whose settings and bots the duel uses")
    duel.add_argument("bot", metavar="A", help="the bot whose advantage is tested (a bot of the league)")
    duel.add_argument("other", metavar="B", help="the bot it is tested against (a bot of the league)")
    duel.add_argument("--elo0", type=float, metavar="ELO", help="H0: A's advantage in Elo (e.g. 0)")
    duel.add_argument("--elo1", type=float, metavar="ELO", help="H1: A's advantage in Elo, above elo0 (e.g. 10)")
    duel.add_argument(
        "--difference0",
        type=float,
        metavar="D",
        help="H0 as a mean score difference instead, -1 to 1 (per game (n - place) / (n - 1))",
    )
    duel.add_argument("--difference1", type=float, metavar="D", help="H1 as a mean score difference, above H0")
    duel.add_argument(
        "--alpha",
        type=float,
        default=DEFAULT_ERROR_RATE,
        help=f"the chance of accepting H1 when H0 holds (default {DEFAULT_ERROR_RATE})",
    )
    duel.add_argument(
        "--beta",
        type=float,
        default=DEFAULT_ERROR_RATE,
        help=f"the chance of accepting H0 when H1 holds (default {DEFAULT_ERROR_RATE})",
    )
    duel.add_argument(
        "--max-games",
        type=int,
        default=DEFAULT_MAX_GAMES,
        metavar="N",
        help=f"stop without a verdict after this many games (default {DEFAULT_MAX_GAMES:,})",
    )
    duel.add_argument(
        "--adjust-for-luck",
        action="store_true",
        help="test on scores with the luck of the cards taken out (docs/statistics.md, 'Luck')",
    )
    duel.add_argument(
        "--output",
        type=Path,
        metavar="DIR",
        help="the results folder (default: NAME-duel-A-B beside the league's output)",
    )
    duel.add_argument(
        "--concurrency",
        type=concurrency,
        metavar="N|auto",
        help="games at once, or auto: one per CPU (overrides the league file)",
    )
    duel.add_argument("--no-progress", action="store_true", help="print no progress while running")
    add_sandbox_options(duel, share=False)
    duel.set_defaults(func=_duel)


def add_validate(commands: Commands) -> None:
    """Add ``referee validate``: a league file checked and its games counted, or a ladder file checked."""
    validate = commands.add_parser(
        "validate",
        help="check a league file without running it: every key, every bot, and how many games it plays; "
        "or a ladder file (one with a submissions key): every key, and the author folders it holds",
    )
    validate.add_argument("league", type=Path, help="the league file, or a ladder file")
    validate.set_defaults(func=_validate)


def add_schedule(commands: Commands) -> None:
    """Add ``referee schedule``: a league's games listed without playing them."""
    schedule = commands.add_parser("schedule", help="print a league's games, in order, without playing them")
    schedule.add_argument("league", type=Path, help="the league file")
    schedule.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per game, a line each: index, game_id, round, table, rotation, seats "
        "(and candidate, in a gauntlet), and with --seeds the seed (a string of digits)",
    )
    schedule.add_argument(
        "--seeds",
        action="store_true",
        help="also print every game's seed: each one gives away that game's every deal, so keep it to yourself "
        "until the league is over (published pairings leave them out)",
    )
    schedule.set_defaults(func=_schedule)


def _run(args: argparse.Namespace) -> int:
    from referee.leaguefile.config import load_league

    backend = _backend(args)  # first: with Ray, this process may be replaced by one in a private network
    return _run_at_terminal(args, load_league(args.league), args.output, backend)


def _duel(args: argparse.Namespace) -> int:
    from referee.apps.duel import duel_league, duel_output
    from referee.leaguefile.config import load_league

    league = load_league(args.league)
    league = duel_league(league, _duel_format(args, league))
    return _run_at_terminal(args, league, args.output or duel_output(league), None)


def _run_at_terminal(
    args: argparse.Namespace, league: League, output: Path | None, backend: BackendFactory | None
) -> int:
    """Play ``league`` at the terminal, after its warnings, the sandbox's check and the machine's summary."""
    from referee.cli.run_console import run_duel_command, run_league_command
    from referee.leaguefile.config import league_without_sandbox

    for warning in league.warnings:  # on stdout, with the run's other preamble: stderr is for what went wrong
        print(warning)
    turned_off_by = "--no-sandbox" if args.no_sandbox else None if league.sandbox else "sandbox: none"
    if args.no_sandbox:
        league = league_without_sandbox(league)
    if any(bot.spec.command for bot in league.bots):
        refusal = sandbox_refusal(args.command, turned_off_by, "sandbox: none in the league file (or --no-sandbox)")
        if refusal:
            print(refusal, file=sys.stderr)
            return 1
        frozen = any(bot.spec.command and bot.spec.freeze for bot in league.bots)
        off_move = f"frozen ({freezer.description()})" if frozen else "not frozen (freeze: false)"
        print(f"{sandbox.machine_summary(sandboxed=league.sandbox)}; off move: {off_move}")
    if isinstance(league.format, Sprt):
        return run_duel_command(league, output, args.concurrency, not args.no_progress, backend)
    return run_league_command(league, output, args.concurrency, not args.no_progress, backend)


def _duel_format(args: argparse.Namespace, league: League) -> Sprt:
    """The sprt format the options of ``referee duel`` ask for; a :class:`UsageError` names a bad one."""
    from referee.leaguefile.config import MAX_GAMES
    from referee.leaguefile.schedule.sprt import MAX_ELO
    from referee.records.sequential import Measure, SequentialTest
    from referee.records.stats import StatisticsError

    for name in (args.bot, args.other):
        if name not in league.bot_names:
            raise UsageError(f"{name!r} is not a bot of {args.league}; the bots are: {', '.join(league.bot_names)}")
    if args.bot == args.other:
        raise UsageError(f"A and B are both {args.bot!r}; name two different bots of the league")
    elo = (args.elo0, args.elo1)
    difference = (args.difference0, args.difference1)
    given = [pair for pair in (elo, difference) if pair != (None, None)]
    if len(given) != 1 or None in given[0]:
        raise UsageError(
            "give --elo0 and --elo1 (the hypotheses in Elo, e.g. --elo0 0 --elo1 10), or --difference0 "
            "and --difference1 (in mean score difference), one pair"
        )
    measure = Measure.ELO if given[0] is elo else Measure.SCORE_DIFFERENCE
    h0, h1 = given[0]
    if measure is Measure.ELO and not (abs(h0) <= MAX_ELO and abs(h1) <= MAX_ELO):
        raise UsageError(f"--elo0 {h0:g} and --elo1 {h1:g} must be from -{MAX_ELO:g} to {MAX_ELO:g}")
    try:
        SequentialTest(measure, h0, h1, args.alpha, args.beta)
    except StatisticsError as error:
        raise UsageError(f"{error} (--elo0, --elo1, --difference0, --difference1, --alpha, --beta)") from None
    if not league.table_size <= args.max_games <= MAX_GAMES:
        raise UsageError(
            f"--max-games {args.max_games} must be from {league.table_size} (one deal at tables of "
            f"{league.table_size}) to {MAX_GAMES}"
        )
    return Sprt((args.bot, args.other), measure, h0, h1, args.alpha, args.beta, args.max_games, args.adjust_for_luck)


def _backend(args: argparse.Namespace) -> BackendFactory | None:
    """Where ``referee run`` plays its games (referee.backends). Ray without ``--address`` is started on
    this machine in a private network namespace: the command runs again in one (this process is replaced)."""
    from referee.backends import backend_factory

    if args.backend != "ray":
        if args.address is not None:
            raise UsageError("--address is the Ray cluster of --backend ray; add --backend ray, or leave it out")
        return None
    from referee.backends.netns import loopback_only, reexec_in_private_network
    from referee.backends.ray import RayUnavailable, import_ray, prepare_local_ray

    if args.address is None:
        prepare_local_ray()  # before Ray is imported
    try:
        import_ray()
    except RayUnavailable as error:
        raise UsageError(str(error)) from None
    if args.address is None and not loopback_only():
        reexec_in_private_network([sys.executable, "-m", "referee", *args.argv])
    return backend_factory("ray", args.address)


def _validate(args: argparse.Namespace) -> int:
    """Say what the league is and how many games it plays (counted, not listed); warn on stderr where it is big.

    A ladder file (a ``submissions`` key at its top) is checked as ``referee ladder`` reads it, and said what it is.
    """
    from referee.leaguefile.config import MANY_GAMES, load_league, unchecked_runs, unstartable_limits

    if _is_ladder_file(args.league):
        return _validate_ladder(args)
    league = load_league(args.league)
    games = league.schedule()
    print(
        f"{args.league}: valid: league {league.name!r}, {league.game}, {len(league.bots)} bots, "
        f"tables of {league.table_size}, {games.format}: {games.summary()}"
    )
    if games.note:
        print(f"{args.league}: {games.note}")
    if games.count > MANY_GAMES:
        print(
            f"{args.league}: warning: the league plays {games.count:,} games, more than {MANY_GAMES:,}; "
            "at a few hundred games a minute on one machine that is days or more (lower rounds, or use "
            "format: {type: sampled, games_per_bot: N})",
            file=sys.stderr,
        )
    for note in (*league.warnings, *unchecked_runs(league), *unstartable_limits(league)):
        print(note, file=sys.stderr)
    return 0


def _is_ladder_file(path: Path) -> bool:
    """Whether ``path`` is a ladder file: a mapping with a ``submissions`` key, which no league file takes.

    A file that cannot be read or parsed is left to the league file's reader, which says what is wrong with it.
    """
    from referee.common.errors import LeagueError
    from referee.leaguefile.config.reader import compose, read_text

    try:
        root = compose(read_text(path, str(path), "the file"), str(path))
    except LeagueError:
        return False
    return isinstance(root, yaml.MappingNode) and any(
        isinstance(key, yaml.ScalarNode) and key.value == "submissions" for key, _ in root.value
    )


def _validate_ladder(args: argparse.Namespace) -> int:
    """Say what the ladder is: its settings, its submissions folder and the author folders in it; warn on stderr."""
    from referee.apps.ladder.entries import author_folders
    from referee.apps.ladder.file import load_ladder
    from referee.leaguefile.config import unstartable_limits

    ladder = load_ladder(args.league)
    league = ladder.league
    games = f"{ladder.check_games} game{'s' if ladder.check_games != 1 else ''}"
    print(
        f"{args.league}: valid: ladder {league.name!r}, {league.game}, tables of {league.table_size}: each new "
        f"version is checked in {games}, then plays {ladder.placement_games} placement games; the submissions "
        f"folder is looked at every {ladder.poll_s:g} s"
    )
    authors = author_folders(ladder)
    if authors:
        print(
            f"{args.league}: submissions {ladder.submissions}: {len(authors)} author folder"
            f"{'s' if len(authors) != 1 else ''}: "
            + ", ".join(
                name + ("" if (folder / "bot.yaml").is_file() else " (no bot.yaml yet)")
                for name, folder in authors.items()
            )
        )
    else:
        print(
            f"{args.league}: submissions {ladder.submissions}: no author folder yet (each author submits a folder "
            "named for them, holding bot.yaml)"
        )
    for note in (*league.warnings, *unstartable_limits(league, ladder=True)):
        print(note, file=sys.stderr)
    return 0


def _schedule(args: argparse.Namespace) -> int:
    """Stream the schedule, a line at a time: as JSON objects, or as a table for people."""
    from referee.leaguefile.config import load_league
    from referee.leaguefile.schedule import table_lines
    from referee.leaguefile.schedule.scheduled_games import schedule_json_lines

    games = load_league(args.league).schedule()
    write = sys.stdout.write
    for line in schedule_json_lines(games, seeds=args.seeds) if args.json else table_lines(games, seeds=args.seeds):
        write(line + "\n")
    sys.stdout.flush()
    return 0
