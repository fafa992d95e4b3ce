"""The ``referee`` command line: parse, call, print, and exit with the conventional status.

Exit statuses: 0 success; 1 a failure (a bad league file, a bot that
failed, a folder that cannot be written); 2 a usage error (a bad option);
130 stopped by Ctrl-C (SIGINT), 143 by SIGTERM, 141 when the reader of the
output went away (a broken pipe, as in ``referee schedule x.yaml | head``).
Every failure is one line on standard error, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from referee import __version__, freezer, sandbox
from referee.bots import BotSpec, log_tail
from referee.clock import Timing
from referee.errors import RefereeError
from referee.faults import FaultPolicy, PolicyMode
from referee.games import GAMES
from referee.match import MatchResult, play_game
from referee.schedule.sprt import DEFAULT_ERROR_RATE, DEFAULT_MAX_GAMES, Sprt


class UsageError(RefereeError):
    """An option's value the command cannot use (exit status 2, as for argparse's own refusals)."""


def _add_timing_options(parser: argparse.ArgumentParser) -> None:
    defaults = Timing()
    parser.add_argument("--move-time-ms", type=int, default=defaults.move_time_ms, metavar="MS",
                        help=f"time for each move (default {defaults.move_time_ms})")
    parser.add_argument("--time-bank-ms", type=int, default=defaults.time_bank_ms, metavar="MS",
                        help=f"reserve for a game, spent by moves over their time (default {defaults.time_bank_ms})")
    parser.add_argument("--grace-ms", type=int, default=defaults.grace_ms, metavar="MS",
                        help="allowance for transport: a reply is a timeout once move time + bank left + grace "
                             f"have been charged (default {defaults.grace_ms})")
    parser.add_argument("--startup-timeout-ms", type=int, default=defaults.startup_timeout_ms, metavar="MS",
                        help=f"time to start listening and answer the handshake (default {defaults.startup_timeout_ms})")
    parser.add_argument("--turn-limit", type=int, default=200, metavar="N",
                        help="normal turns in a hand before a forced showdown (default 200)")
    parser.add_argument("--tcp", action="store_true",
                        help="bots listen on TCP 127.0.0.1 instead of a Unix socket (and so get the host's network)")


def _add_sandbox_options(parser: argparse.ArgumentParser, share: bool = True) -> None:
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run bots without their sandbox (only bots you trust; see docs/security.md)")
    if share:
        parser.add_argument("--share", action="append", type=Path, default=[], metavar="DIR",
                            help="a folder the bots may write (repeat), e.g. for what a bot records while you debug it")


def _sandbox_refusal(command: str, turned_off_by: str | None, how_to_turn_off: str = "--no-sandbox") -> str | None:
    """Why bots cannot start in their sandbox here (bubblewrap missing or refused), or None.

    With the sandbox turned off (``turned_off_by`` names how), warn instead, on every run.
    """
    if turned_off_by:
        print(f"warning: the sandbox is off ({turned_off_by}): every bot runs as you, with your files, your network "
              "and the other bots within its reach; run only bots you trust (see docs/security.md)",
              file=sys.stderr)  # fmt: skip
        return None
    bwrap = sandbox.bubblewrap()
    return f"referee {command}: {bwrap.refusal(how_to_turn_off)}" if bwrap.problem else None


def _timing(args: argparse.Namespace) -> Timing:
    for option in ("move_time_ms", "time_bank_ms", "grace_ms", "startup_timeout_ms", "turn_limit"):
        value = getattr(args, option)
        low = 0 if option in ("time_bank_ms", "grace_ms") else 1
        if not low <= value <= 4_294_967_295:
            raise UsageError(f"--{option.replace('_', '-')} must be from {low} to 4294967295, got {value}")
    return Timing(
        move_time_ms=args.move_time_ms, time_bank_ms=args.time_bank_ms, grace_ms=args.grace_ms,
        startup_timeout_ms=args.startup_timeout_ms,
    )  # fmt: skip


def _spec(command: str | list[str], index: int, args: argparse.Namespace, name: str | None = None) -> BotSpec:
    spec = BotSpec.from_command(command, name=name)
    return BotSpec(
        name=name or f"{spec.name}#{index}", command=_with_referee_python(spec.command),
        **_sandbox_settings(args, shared=True),
    )  # fmt: skip


def _with_referee_python(command: tuple[str, ...]) -> tuple[str, ...]:
    """``python`` or ``python3`` means the Python running the referee, as in a league file.

    (A ``python`` found on PATH may be a launcher that needs the user's home folder, which a sandbox does not show.)
    """
    return (sys.executable, *command[1:]) if command[0] in ("python", "python3") else command


def _sandbox_settings(args: argparse.Namespace, shared: bool) -> dict:
    """The BotSpec fields the options set: transport, sandbox, network (tcp needs the host's) and shared folders."""
    return {
        "transport": "tcp" if args.tcp else "unix",
        "sandbox": not args.no_sandbox,
        "network": "host" if args.tcp else "none",
        "shared": tuple(str(folder.resolve()) for folder in args.share) if shared else (),
    }


def _concurrency(text: str) -> int | None:
    """``--concurrency``: a whole number of games, at least 1, or ``auto`` (None)."""
    if text == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of games or auto") from None
    from referee.config import MAX_CONCURRENCY

    if not 1 <= value <= MAX_CONCURRENCY:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_CONCURRENCY} games at once (as in a league file), "
                                         f"or auto; got {value}")  # fmt: skip
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee", description="Referee for Stop the Bus and Bastard Brag bots.",
        epilog="Exit status: 0 success, 1 failure, 2 usage error, 130 Ctrl-C, 141 broken pipe, 143 SIGTERM.",
    )  # fmt: skip
    parser.add_argument("--version", action="version", version=f"referee {__version__}",
                        help="print the referee's version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     help="what to do (referee COMMAND --help for its options)")

    play = commands.add_parser("play", help="play one game between bots and print every hand")
    play.add_argument("--game", choices=sorted(GAMES), required=True, help="the game to play")
    play.add_argument("--seed", type=int, default=1, help="the game's seed: it names every deal (default 1)")
    play.add_argument("--bot", action="append", required=True, metavar="CMD",
                      help="a bot's command line, one per seat in seat order (repeat); `python` is the referee's own")
    play.add_argument("--name", action="append", metavar="NAME",
                      help="the bots' names, in the order of --bot (default: each command's last word)")
    play.add_argument("--policy", choices=[mode.value for mode in PolicyMode], default="forfeit",
                      help="what a fault costs: forfeit the game, or a default action (default forfeit)")
    play.add_argument("--max-faults", type=int, default=3, metavar="N",
                      help="faults in a game before a forfeit, under --policy default_action (default 3)")
    play.add_argument("--log", type=Path, metavar="FILE", help="write the game's log here (JSON lines)")
    play.add_argument("--bot-logs", type=Path, metavar="DIR",
                      help="keep each bot's output in this folder (default: kept only when a bot fails)")
    play.add_argument("--quiet", action="store_true", help="print only the result")
    play.add_argument("--verbose", action="store_true",
                      help="print every move as it is played, with the cards (as `referee show` does)")
    play.add_argument("--human", type=int, metavar="SEAT",
                      help="play this seat yourself, at the terminal (the --bot commands take the other seats, in "
                           "order): each turn shows your seat's view and its legal actions, by number")
    _add_timing_options(play)
    _add_sandbox_options(play)

    check = commands.add_parser(
        "check-bot", help="test a bot before submitting it: a submission folder (DIR) or a command (-- CMD)",
        description="Plays the bot the way a league does: a submission folder built from its bot.yaml in a copy "
                    "(the build kept for the next check while the folder is unchanged), or a command; one process "
                    "for several games in a row, every game it says it plays at every table size, against the "
                    "sample bots (or --opponent), with a default league's clock and fault policy. Exits 1 on any "
                    "problem, 0 when there is none.",
    )  # fmt: skip
    check.add_argument("--games", type=int, default=2, metavar="N",
                       help="games in a row in one process, at each table size (default 2)")
    check.add_argument("--game", action="append", choices=sorted(GAMES), dest="only_games",
                       help="check only this game (repeat; default: every game the bot plays)")
    check.add_argument("--seats", action="append", type=int, metavar="N",
                       help="check only this table size (repeat; default: every size of each game)")
    check.add_argument("--seed", type=int, default=1, help="the first game's seed (default 1)")
    check.add_argument("--opponent", action="append", metavar="CMD",
                       help="an opponent's command line, started in its sandbox (repeat: the seats take them in "
                            "turn); self: another process of the bot checked (default: the sample bots)")
    check.add_argument("--fault-policy", choices=[mode.value for mode in PolicyMode], default="forfeit",
                       help="what a fault costs: forfeit the game, or a default action (default forfeit)")
    check.add_argument("--max-faults", type=int, default=3, metavar="N",
                       help="faults in a game before a forfeit, under --fault-policy default_action (default 3)")
    check.add_argument("--json", action="store_true",
                       help="print the report as JSON (every check, its verdict, the game and decision it concerns); "
                            "the progress goes to stderr")
    check.add_argument("--logs", type=Path, metavar="DIR",
                       help="keep every game's log and the bot's output here (default: a temporary folder, kept "
                            "only when a problem is found)")
    check.add_argument("--build-cache", type=Path, metavar="DIR",
                       help="where the builds of submission folders are kept (default $XDG_CACHE_HOME/referee/"
                            "check-bot, or ~/.cache/referee/check-bot)")
    check.add_argument("bot_command", nargs="*", metavar="DIR | -- CMD",
                       help="a submission folder (holding bot.yaml), or the bot's command line after --; `python` "
                            "is the referee's own")
    _add_timing_options(check)
    _add_sandbox_options(check)

    verify = commands.add_parser("verify", help="replay a game log through the rules engine")
    verify.add_argument("log", type=Path, help="a game's log (games/GAME_ID.jsonl in a league's output)")

    seed = commands.add_parser(
        "seed", help="print a fresh secret league seed (64 random bits) and its commitment, to publish before the league"
    )
    seed.add_argument("--check", type=int, metavar="SEED", help="print the commitment of SEED instead")

    show = commands.add_parser(
        "show", help="tell a game move by move from its log",
        description="One line per step: the deal, every move with the player's cards and the table, each "
                    "showdown with its ranks and lives lost, the result.",
    )  # fmt: skip
    show.add_argument("game", metavar="GAME", help="a game log file, or a game id with --output DIR")
    show.add_argument("--output", type=Path, metavar="DIR", help="a league's output directory, to find GAME by its id")
    show.add_argument("--seat", type=int, metavar="N",
                      help="only what seat N saw: its own cards, the face-up cards and moves, the showdowns")
    show.add_argument("--json", action="store_true", help="print JSON: every step with the table (or the seat's view)")
    show.add_argument("--html", type=Path, metavar="FILE", help="write the game's replay page to FILE instead")

    replay = commands.add_parser("replay", help="write a game's replay page: one HTML file that opens anywhere")
    replay.add_argument("game", metavar="GAME", help="a game log file, or a game id with --output DIR")
    replay.add_argument("--output", type=Path, metavar="DIR", help="a league's output directory, to find GAME by its id")
    replay.add_argument("-o", "--out", type=Path, metavar="FILE", help="the page to write (default: GAME_ID.html here)")

    replay_to = commands.add_parser(
        "replay-to", help="replay a recorded game to a bot from one seat, and say where its answers differ",
        description="Sends the bot, started in its sandbox, exactly what the seat received in the recorded game "
                    "(handshake, game start, each decision request with its events, fault notices, game end) and "
                    "compares each answer with the recorded one, with the fault it would be charged; the game goes "
                    "on as recorded. Exit status 0 when every answer is as recorded, 1 otherwise.",
    )  # fmt: skip
    replay_to.add_argument("game", metavar="GAME", help="a game log file, or a game id with --output DIR")
    replay_to.add_argument("--output", type=Path, metavar="DIR", help="a league's output directory, to find GAME by its id")
    replay_to.add_argument("--seat", type=int, required=True, metavar="N", help="the seat replayed to the bot")
    replay_to.add_argument("--all", action="store_true", help="print every decision, not only those that differ")
    replay_to.add_argument("--json", action="store_true", help="print the report as JSON (the progress goes to stderr)")
    replay_to.add_argument("--logs", type=Path, metavar="DIR",
                           help="keep the bot's output here (default: kept only when an answer differs)")
    replay_to.add_argument("--build-cache", type=Path, metavar="DIR", help="as for check-bot")
    replay_to.add_argument("--startup-timeout-ms", type=int, default=Timing.startup_timeout_ms, metavar="MS",
                           help=f"time to start and answer the handshake (default {Timing.startup_timeout_ms})")
    replay_to.add_argument("--tcp", action="store_true", help="the bot listens on TCP 127.0.0.1 (with the host's network)")
    replay_to.add_argument("bot_command", nargs="*", metavar="DIR | -- CMD",
                           help="a submission folder (holding bot.yaml), or the bot's command line after --")
    _add_sandbox_options(replay_to)

    serve = commands.add_parser(
        "serve", help="serve a league's output directory on this machine; open pages update as games finish",
    )
    serve.add_argument("directory", type=Path, metavar="DIR", help="a league's output directory")
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="the port (default 8000)")

    run = commands.add_parser(
        "run", help="run a league (again: resume it, or play what it gained)",
        description="Plays every game of the league not yet finished in its output folder: a second run resumes "
                    "an interrupted league, and plays only the new games of a league that gained rounds or bots. "
                    "Exit status: 0 when every bot played every game, 1 on a failure or when a bot was left out "
                    "or disabled, 130 after Ctrl-C and 143 after SIGTERM (the finished games and the standings "
                    "so far are kept).",
    )  # fmt: skip
    run.add_argument("league", type=Path, help="the league file (YAML; see tournaments/league.example.yaml)")
    run.add_argument("--output", type=Path, metavar="DIR",
                     help="the results folder (overrides the league file's output)")
    run.add_argument("--concurrency", type=_concurrency, metavar="N|auto",
                     help="games at once, or auto: one per CPU (overrides the league file)")
    run.add_argument("--no-progress", action="store_true", help="print no progress or standings while running")
    run.add_argument("--backend", choices=["local", "ray"], default="local",
                     help="where games are played: on this machine (local, the default) or on a Ray cluster "
                          "(ray; needs pip install 'brag-referee[ray]'; see docs/scaling.md)")
    run.add_argument("--address", metavar="ADDR",
                     help="with --backend ray: the Ray cluster to run on (its head's host:port, or auto on a node "
                          "of it); default: a Ray started for the run on this machine, in a private network "
                          "namespace")  # fmt: skip
    _add_sandbox_options(run, share=False)

    duel = commands.add_parser(
        "duel", help="test whether bot A is stronger than bot B (SPRT), on a league's settings, until it is clear",
        description="Runs the league file's game, tables, clock, sandbox and bots as a duel: A and B on the same "
                    "deals (every seat rotation), the other seats filled from the league's other bots, stopping as "
                    "soon as a sequential probability ratio test decides between H0 (A's advantage is elo0) and H1 "
                    "(it is elo1), as fastchess's -sprt does. Results go beside the league's output, in "
                    "NAME-duel-A-B (or --output); running the same command again resumes. Exit status: 0 when the "
                    "test decided or max games were played without a verdict (inconclusive), 1 on a failure or "
                    "when a bot was left out or disabled, 2 for a bad option, 130 after Ctrl-C, 143 after SIGTERM.",
    )  # fmt: skip
    duel.add_argument("league", type=Path, help="the league file whose settings and bots the duel uses")
    duel.add_argument("bot", metavar="A", help="the bot whose advantage is tested (a bot of the league)")
    duel.add_argument("other", metavar="B", help="the bot it is tested against (a bot of the league)")
    duel.add_argument("--elo0", type=float, metavar="ELO", help="H0: A's advantage in Elo (e.g. 0)")
    duel.add_argument("--elo1", type=float, metavar="ELO", help="H1: A's advantage in Elo, above elo0 (e.g. 10)")
    duel.add_argument("--difference0", type=float, metavar="D",
                      help="H0 as a mean score difference instead, -1 to 1 (per game (n - place) / (n - 1))")
    duel.add_argument("--difference1", type=float, metavar="D", help="H1 as a mean score difference, above H0")
    duel.add_argument("--alpha", type=float, default=DEFAULT_ERROR_RATE,
                      help=f"the chance of accepting H1 when H0 holds (default {DEFAULT_ERROR_RATE})")
    duel.add_argument("--beta", type=float, default=DEFAULT_ERROR_RATE,
                      help=f"the chance of accepting H0 when H1 holds (default {DEFAULT_ERROR_RATE})")
    duel.add_argument("--max-games", type=int, default=DEFAULT_MAX_GAMES, metavar="N",
                      help=f"stop without a verdict after this many games (default {DEFAULT_MAX_GAMES:,})")
    duel.add_argument("--output", type=Path, metavar="DIR", help="the results folder (default: NAME-duel-A-B "
                      "beside the league's output)")  # fmt: skip
    duel.add_argument("--concurrency", type=_concurrency, metavar="N|auto",
                      help="games at once, or auto: one per CPU (overrides the league file)")
    duel.add_argument("--no-progress", action="store_true", help="print no progress while running")
    _add_sandbox_options(duel, share=False)

    validate = commands.add_parser(
        "validate", help="check a league file without running it: every key, every bot, and how many games it plays"
    )
    validate.add_argument("league", type=Path, help="the league file")

    schedule = commands.add_parser("schedule", help="print a league's games, in order, without playing them")
    schedule.add_argument("league", type=Path, help="the league file")
    schedule.add_argument(
        "--json", action="store_true",
        help="one JSON object per game, a line each: index, game_id, round, table, rotation, seats "
        "(and candidate, in a gauntlet), and with --seeds the seed (a string of digits)",
    )  # fmt: skip
    schedule.add_argument(
        "--seeds", action="store_true",
        help="also print every game's seed: each one gives away that game's every deal, so keep it to yourself "
             "until the league is over (published pairings leave them out)",
    )  # fmt: skip

    leaderboard = commands.add_parser("leaderboard", help="print the leaderboard of a results directory")
    leaderboard.add_argument("directory", type=Path, help="a league's output folder (it holds league.json)")
    leaderboard.add_argument("--write", action="store_true", help="also rewrite the leaderboard files there")

    compare = commands.add_parser("compare", help="compare two bots on the deals they shared in a results directory")
    compare.add_argument("directory", type=Path, help="a league's output folder (it holds league.json)")
    compare.add_argument("bot", help="the bot whose advantage is measured")
    compare.add_argument("other", help="the bot it is measured against")
    return parser


EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 128 + 13  # as a program killed by SIGPIPE
EXIT_SIGINT = 128 + 2
EXIT_SIGTERM = 128 + 15
TRACEBACK_VARIABLE = "REFEREE_TRACEBACK"  # set to 1: show the traceback of an unexpected error


def main(argv: list[str] | None = None) -> int:
    args = _parse(list(sys.argv[1:] if argv is None else argv))  # a usage error exits here with status 2
    args.argv = list(sys.argv[1:] if argv is None else argv)  # to run again in a private network (--backend ray)
    name = f"referee {args.command}"
    try:
        status = _command(args)
        sys.stdout.flush()  # a reader that went away shows here
        return status
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except UsageError as error:
        return _fail(f"{name}: {error}", EXIT_USAGE)
    except RefereeError as error:
        return _fail(f"{name}: {error}")
    except OSError as error:
        from referee.league import describe_os_error

        return _fail(f"{name}: {describe_os_error(error)}")
    except KeyboardInterrupt:
        return _fail(f"{name}: interrupted (Ctrl-C)", EXIT_SIGINT)
    except asyncio.CancelledError:
        return _fail(f"{name}: stopped (SIGTERM)", EXIT_SIGTERM)
    except Exception as error:  # a bug: still one line, with the way to see more
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        return _fail(f"{name}: internal error: {type(error).__name__}: {error} (set {TRACEBACK_VARIABLE}=1 to see "
                     "where; please report it)")  # fmt: skip


def _parse(argv: list[str]) -> argparse.Namespace:
    """The command line, read; a bot's command line after ``--`` (check-bot, replay-to) is taken as written,
    and a submission folder may come before or after the options."""
    parser = build_parser()
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = parser.parse_known_args(argv[:cut])
    if not hasattr(args, "bot_command"):
        return parser.parse_args(argv) if extra or cut < len(argv) else args
    unknown = [word for word in extra if word.startswith("-")]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    folder = [*args.bot_command, *extra]
    if cut < len(argv) and folder:
        parser.error(f"give a submission folder or a command after --, not both ({' '.join(folder)})")
    args.bot_command = ["--", *argv[cut + 1 :]] if cut < len(argv) else folder
    return args


def _command(args: argparse.Namespace) -> int:
    from referee.league import run_interruptibly

    if args.command == "play":
        return run_interruptibly(_play(args))
    if args.command == "check-bot":
        return run_interruptibly(_check_bot(args))
    if args.command == "replay-to":
        return run_interruptibly(_replay_to(args))
    if args.command == "verify":
        return _verify(args)
    if args.command == "seed":
        return _seed(args)
    if args.command in ("show", "replay"):
        return _show(args)
    if args.command == "serve":
        from referee.serve import serve

        return serve(args.directory, args.host, args.port)
    if args.command == "compare":
        return _compare(args)
    return _league_command(args)


def _fail(message: str, status: int = EXIT_FAILURE) -> int:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    try:
        print(message, file=sys.stderr)
    except BrokenPipeError:
        pass
    return status


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so that Python's flush at exit does not complain about the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


# ----- play ----------------------------------------------------------------------


async def _play(args: argparse.Namespace) -> int:
    game = GAMES[args.game]
    human = args.human is not None
    seats = len(args.bot) + human
    if not game.min_players <= seats <= game.max_players:
        print(f"referee play: {args.game} needs {game.min_players} to {game.max_players} "
              f"{'players' if human else 'bots'}, got {seats}", file=sys.stderr)  # fmt: skip
        return 2
    if human and args.verbose:
        raise UsageError("--verbose shows every seat's cards, which --human keeps from you; leave one out")
    if human and not 0 <= args.human < seats:
        raise UsageError(f"--human {args.human}: the game has seats 0 to {seats - 1} (one --bot for each other seat)")
    names = args.name or []
    if names and len(names) != len(args.bot):
        print(f"referee play: {len(names)} --name for {len(args.bot)} --bot; give one name per bot, in order",
              file=sys.stderr)  # fmt: skip
        return 2
    specs = [_spec(command, index, args, names[index] if names else None) for index, command in enumerate(args.bot)]
    if len({spec.name for spec in specs}) != len(specs):
        print("referee play: two bots have the same name; give each its own with --name", file=sys.stderr)
        return 2
    refusal = _sandbox_refusal("play", "--no-sandbox" if args.no_sandbox else None)
    if refusal:
        print(refusal, file=sys.stderr)
        return 1
    timing = _timing(args)
    kept = args.bot_logs is not None
    bot_logs = args.bot_logs or Path(tempfile.mkdtemp(prefix="referee-play-"))
    bot_logs.mkdir(parents=True, exist_ok=True)
    observer = None
    if args.verbose:
        from referee.transcript import LivePrinter

        observer = LivePrinter(lambda line: print(line, flush=True))
    policy = FaultPolicy(PolicyMode(args.policy), args.max_faults)
    try:
        if human:
            from referee.human import play_as_human

            result = await play_as_human(args.game, args.human, specs, seed=args.seed, timing=timing,
                                         turn_limit=args.turn_limit, policy=policy, log_path=args.log,
                                         bot_log_dir=bot_logs)  # fmt: skip
        else:
            result = await play_game(
                args.game, specs, seed=args.seed, game_id=f"play-{args.seed}", timing=timing,
                turn_limit=args.turn_limit, policy=policy, log_path=args.log, bot_log_dir=bot_logs, observer=observer,
            )  # fmt: skip
        if not args.quiet and not args.verbose and not human:
            for hand in result.hand_results:
                print(_with_names(hand.describe(), result.players))
        print(_result_text(result))
        failed = [seat for seat in range(seats) if result.faults[seat]]
        for seat in failed:
            log_path = bot_logs / f"seat{seat}-{result.players[seat]}.log"
            print(f"seat {seat} ({result.players[seat]}) failed: "
                  + "; ".join(f"{count} {kind}" for kind, count in sorted(result.faults[seat].items()))
                  + log_tail(log_path), file=sys.stderr)  # fmt: skip
        if failed and not kept:
            kept = True
            print(f"bot output is kept in {bot_logs}", file=sys.stderr)
        if result.void:
            print(f"the game is void: {result.void_reason}", file=sys.stderr)
        return 1 if failed else 0
    finally:
        if not kept:
            shutil.rmtree(bot_logs, ignore_errors=True)


def _with_names(text: str, players: list[str]) -> str:
    for seat in sorted(range(len(players)), reverse=True):
        text = text.replace(f"seat {seat}", f"seat {seat} ({players[seat]})")
    return text


def _result_text(result: MatchResult) -> str:
    void = " (void: it does not count)" if result.void else ""
    lines = [f"{result.game} seed {result.seed}: {result.hands_played} hands, {result.decisions} decisions{void}"]
    for place, seat in enumerate(result.placements, start=1):
        faults = ", ".join(f"{kind} {count}" for kind, count in sorted(result.faults[seat].items()))
        latency = result.latencies_ms[seat]
        median = f"median decision {statistics.median(latency):.2f} ms" if latency else "no decisions"
        extra = f"; forfeited ({result.forfeits[seat]})" if seat in result.forfeits else ""
        lines.append(
            f"  {place}. seat {seat} {result.players[seat]}: {median}"
            + (f"; faults: {faults}" if faults else "")
            + extra
        )
    return "\n".join(lines)


# ----- check-bot -----------------------------------------------------------------


async def _check_bot(args: argparse.Namespace) -> int:
    from referee.checkbot import SELF, CheckSettings, check_bot

    if args.games < 1:
        raise UsageError(f"--games must be at least 1, got {args.games}")
    if args.max_faults < 1:
        raise UsageError(f"--max-faults must be at least 1, got {args.max_faults}")
    for seats in args.seats or ():
        if not any(game.min_players <= seats <= game.max_players for game in GAMES.values()):
            raise UsageError(f"--seats {seats} fits no game (2 to 10 seats)")
    bot = _candidate(args, "check-bot")
    opponents = tuple(SELF if text == SELF else _spec(text, index, args, BotSpec.from_command(text).name)
                      for index, text in enumerate(args.opponent or ()))  # fmt: skip
    settings = CheckSettings(
        games_per_size=args.games, seed=args.seed, timing=_timing(args), turn_limit=args.turn_limit,
        policy=FaultPolicy(PolicyMode(args.fault_policy), args.max_faults), games=tuple(args.only_games or ()),
        seats=tuple(args.seats or ()), opponents=opponents,
    )  # fmt: skip
    return await check_bot(bot, settings, args.logs, args.json)


async def _replay_to(args: argparse.Namespace) -> int:
    from referee.replay_to import replay_command

    return await replay_command(_game_log_path(args.game, args.output), args.seat, _candidate(args, "replay-to"),
                                as_json=args.json, every=args.all, startup_timeout_ms=args.startup_timeout_ms,
                                log_dir=args.logs)  # fmt: skip


def _candidate(args: argparse.Namespace, command_name: str):
    """The bot a command checks: a submission folder (to build: a checkbot.Submission) or a command's BotSpec."""
    from referee.checkbot import Submission, default_cache

    given = args.bot_command
    command = given[1:] if given[:1] == ["--"] else given
    if not command:
        raise UsageError(f"give a submission folder (referee {command_name} ... my-bot/) or the bot's command after -- "
                         f"(referee {command_name} ... -- python my_bot.py)")  # fmt: skip
    refusal = _sandbox_refusal(command_name, "--no-sandbox" if args.no_sandbox else None)
    if refusal:
        raise RefereeError(refusal.removeprefix(f"referee {command_name}: "))
    if given[:1] != ["--"] and len(command) == 1 and os.path.isdir(command[0]):
        return Submission(command[0], _sandbox_settings(args, shared=True), args.build_cache or default_cache())
    return _spec(command, 0, args, "candidate")


# ----- leagues ---------------------------------------------------------------------


def _league_command(args: argparse.Namespace) -> int:
    from referee.config import league_without_sandbox, load_league
    from referee.league import run_command
    from referee.publish import console_table, write_leaderboards

    if args.command == "leaderboard":
        from referee.duel import duel_report
        from referee.publish.live import rebuild_replays
        from referee.results import RESULTS_FILE, read_games
        from referee.standings import folder_standings

        standings, recorded = folder_standings(args.directory)
        print(f"{recorded.name}: {standings.games} game{'s' if standings.games != 1 else ''}")
        print(console_table(standings))
        games = list(read_games(args.directory / RESULTS_FILE, latencies=False))
        duel = duel_report(recorded, games)
        if duel is not None:
            print("\n".join(duel.lines()))
        if args.write:
            rebuilt = rebuild_replays(args.directory, [game.game_id for game in games])
            write_leaderboards(standings, args.directory, recorded.name)
            print(f"leaderboards written to {args.directory}"
                  + (f"; {len(rebuilt)} missing or damaged replay page{'s' if len(rebuilt) != 1 else ''} "
                     "written again from the game logs" if rebuilt else ""))  # fmt: skip
        return 0
    backend = _backend(args) if args.command == "run" else None
    league = load_league(args.league)
    output = args.output if args.command in ("run", "duel") else None
    if args.command == "duel":
        from referee.duel import duel_league, duel_output

        league = duel_league(league, _duel_format(args, league))
        output = output or duel_output(league)
    if args.command == "validate":
        return _validate(args, league)
    if args.command == "schedule":
        return _schedule(args, league)
    for warning in league.warnings:  # on stdout, with the run's other preamble: stderr is for what went wrong
        print(warning)
    turned_off_by = "--no-sandbox" if args.no_sandbox else None if league.sandbox else "sandbox: none"
    if args.no_sandbox:
        league = league_without_sandbox(league)
    if any(bot.spec.command for bot in league.bots):
        refusal = _sandbox_refusal(args.command, turned_off_by, "sandbox: none in the league file (or --no-sandbox)")
        if refusal:
            print(refusal, file=sys.stderr)
            return 1
        frozen = any(bot.spec.command and bot.spec.freeze for bot in league.bots)
        off_move = f"frozen ({freezer.description()})" if frozen else "not frozen (freeze: false)"
        print(f"{sandbox.machine_summary(sandboxed=league.sandbox)}; off move: {off_move}")
    if isinstance(league.format, Sprt):
        from referee.duel import run_duel

        return run_duel(league, output, args.concurrency, not args.no_progress, backend)
    return run_command(league, output, args.concurrency, not args.no_progress, backend)


def _duel_format(args: argparse.Namespace, league) -> Sprt:
    """The sprt format the options of ``referee duel`` ask for; a :class:`UsageError` names a bad one."""
    from referee.config import MAX_GAMES
    from referee.schedule.sprt import MAX_ELO
    from referee.stats import Measure, SequentialTest, StatisticsError

    for name in (args.bot, args.other):
        if name not in league.bot_names:
            raise UsageError(f"{name!r} is not a bot of {args.league}; the bots are: {', '.join(league.bot_names)}")
    if args.bot == args.other:
        raise UsageError(f"A and B are both {args.bot!r}; name two different bots of the league")
    elo = (args.elo0, args.elo1)
    difference = (args.difference0, args.difference1)
    given = [pair for pair in (elo, difference) if pair != (None, None)]
    if len(given) != 1 or None in given[0]:
        raise UsageError("give --elo0 and --elo1 (the hypotheses in Elo, e.g. --elo0 0 --elo1 10), or --difference0 "
                         "and --difference1 (in mean score difference), one pair")  # fmt: skip
    measure = Measure.ELO if given[0] is elo else Measure.SCORE_DIFFERENCE
    h0, h1 = given[0]
    if measure is Measure.ELO and not (abs(h0) <= MAX_ELO and abs(h1) <= MAX_ELO):
        raise UsageError(f"--elo0 {h0:g} and --elo1 {h1:g} must be from -{MAX_ELO:g} to {MAX_ELO:g}")
    try:
        SequentialTest(measure, h0, h1, args.alpha, args.beta)
    except StatisticsError as error:
        raise UsageError(f"{error} (--elo0, --elo1, --difference0, --difference1, --alpha, --beta)") from None
    if not league.table_size <= args.max_games <= MAX_GAMES:
        raise UsageError(f"--max-games {args.max_games} must be from {league.table_size} (one deal at tables of "
                         f"{league.table_size}) to {MAX_GAMES}")  # fmt: skip
    return Sprt((args.bot, args.other), measure, h0, h1, args.alpha, args.beta, args.max_games)


def _seed(args: argparse.Namespace) -> int:
    """A seed no bot can guess, and the commitment that lets anyone check it once it is revealed."""
    import secrets

    from referee.seeding import GUESSABLE_SEED_BELOW, seed_commitment

    if args.check is not None:
        print(f"commitment: {seed_commitment(args.check)}")
        return 0
    value = GUESSABLE_SEED_BELOW + secrets.randbelow(2**64 - GUESSABLE_SEED_BELOW)
    print(f"seed: {value}")
    print(f"commitment: {seed_commitment(value)}")
    print("Put the seed in the league file and keep it secret until the league is over; publish the commitment now.",
          file=sys.stderr)  # fmt: skip
    return 0


def _backend(args: argparse.Namespace):
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


def _validate(args: argparse.Namespace, league) -> int:
    """Say what the league is and how many games it plays (counted, not listed); warn on stderr where it is big."""
    from referee.config import MANY_GAMES, unchecked_runs, unstartable_limits

    games = league.schedule()
    print(f"{args.league}: valid: league {league.name!r}, {league.game}, {len(league.bots)} bots, "
          f"tables of {league.table_size}, {games.format}: {games.summary()}")  # fmt: skip
    if games.note:
        print(f"{args.league}: {games.note}")
    if games.count > MANY_GAMES:
        print(f"{args.league}: warning: the league plays {games.count:,} games, more than {MANY_GAMES:,}; "
              "at a few hundred games a minute on one machine that is days or more (lower rounds, or use "
              "format: {type: sampled, games_per_bot: N})", file=sys.stderr)  # fmt: skip
    for note in (*league.warnings, *unchecked_runs(league), *unstartable_limits(league)):
        print(note, file=sys.stderr)
    return 0


def _schedule(args: argparse.Namespace, league) -> int:
    """Stream the schedule, a line at a time: as JSON objects, or as a table for people."""
    from referee.results import schedule_json_lines
    from referee.schedule import table_lines

    games = league.schedule()
    write = sys.stdout.write
    for line in schedule_json_lines(games, seeds=args.seeds) if args.json else table_lines(games, seeds=args.seeds):
        write(line + "\n")
    sys.stdout.flush()
    return 0


def _compare(args: argparse.Namespace) -> int:
    from referee.publish import comparison_text
    from referee.standings import folder_standings

    standings, _ = folder_standings(args.directory)
    print(comparison_text(args.bot, args.other, standings.comparison(args.bot, args.other)))
    return 0


# ----- show and replay -------------------------------------------------------------


def _game_log_path(game: str, output: Path | None) -> Path:
    """The log of ``game``: a file, or a game id in a league's output directory."""
    from referee.errors import LeagueError

    if output is not None:
        games = output / "games"
        path = games / (game if game.endswith(".jsonl") else f"{game}.jsonl")
        if not path.is_file():
            known = sorted(entry.stem for entry in games.glob("*.jsonl"))[:5] if games.is_dir() else []
            hint = f" (for example {', '.join(known)})" if known else f" ({games} holds no game logs)"
            raise LeagueError(f"--output {output}: no game {game!r}; give a game id from {games}{hint}")
        return path
    path = Path(game)
    if not path.is_file():
        raise LeagueError(f"{game}: no such game log; give a game log file, or a game id with --output DIR")
    return path


def _show(args: argparse.Namespace) -> int:
    import json

    from referee.publish.replay_page import write_replay_page
    from referee.transcript import read_game, transcript_json, transcript_lines

    path = _game_log_path(args.game, args.output)
    start, steps = read_game(path)
    html_out = args.out if args.command == "replay" else args.html
    if args.command == "replay" and html_out is None:
        html_out = Path(f"{start['game_id']}.html")
    if html_out is not None:
        size = write_replay_page(start, steps, html_out)
        print(f"{html_out}: the replay of {start['game_id']} ({len(steps)} steps, {size / 1024:.0f} KiB)")
        return 0
    seat = args.seat
    if seat is not None and not 0 <= seat < start["num_players"]:
        raise RefereeError(f"--seat {seat}: the game has seats 0 to {start['num_players'] - 1}")
    try:
        if args.json:
            print(json.dumps(transcript_json(start, steps, seat), ensure_ascii=False))
        else:
            for line in transcript_lines(start, steps, seat):
                print(line)
        sys.stdout.flush()
    except BrokenPipeError:  # `referee show ... | head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


# ----- verify ---------------------------------------------------------------------


def _verify(args: argparse.Namespace) -> int:
    from referee.gamelog import verify_log

    if not args.log.is_file():
        what = "is a folder" if args.log.is_dir() else "does not exist"
        raise RefereeError(f"{args.log}: {what}; give a game's log (games/GAME_ID.jsonl in a league's output)")
    try:
        problems = verify_log(args.log)
    except UnicodeDecodeError as error:
        reason = f"not UTF-8 text ({error.reason} at byte {error.start})"
        raise RefereeError(f"{args.log}: not a game log: {reason}") from None
    if problems:
        print("\n".join(problems))
        return 1
    print(f"{args.log}: the log replays exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
