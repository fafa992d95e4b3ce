"""The commands for a bot's author: play a game, check a bot before submitting it, replay a game to it."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from referee.cli.interrupts import run_interruptibly
from referee.cli.log_commands import game_log_path
from referee.cli.options import (
    UsageError,
    add_sandbox_options,
    add_timing_options,
    bot_spec,
    sandbox_refusal,
    sandbox_settings,
    timing_of,
)
from referee.common.errors import OutputError, RefereeError
from referee.common.resources import SAMPLE_BOT_NAMES, SAMPLE_OPPONENTS, sample_bot_path
from referee.engine.games import GAMES
from referee.play.processes import BotSpec, log_tail
from referee.protocol.clock import Timing
from referee.protocol.faults import FaultPolicy, PolicyMode

if TYPE_CHECKING:
    from referee.apps.checkbot import Submission
    from referee.apps.human.browser import BrowserServer
    from referee.cli.options import Commands
    from referee.play.match import MatchResult

DEFAULT_GAME = "stop_the_bus"  # referee play's game when --game names none


def add_play(commands: Commands) -> None:
    """Add ``referee play``: one game between bots (or a bot and you), every hand printed."""
    play = commands.add_parser("play", help="play one game between bots and print every hand")
    play.add_argument(
        "--game", choices=sorted(GAMES), default=DEFAULT_GAME, help=f"the game to play (default {DEFAULT_GAME})"
    )
    play.add_argument("--seed", type=int, default=1, help="the game's seed: it names every deal (default 1)")
    play.add_argument(
        "--bot",
        action="append",
        metavar="CMD|NAME",
        help="a bot's command line, one per seat in seat order (repeat); `python` is the referee's own; "
        f"{', '.join(SAMPLE_BOT_NAMES)}: that sample bot (default: the sample bots "
        f"{' and '.join(SAMPLE_OPPONENTS)} in turn, as many as the game needs)",
    )
    play.add_argument(
        "--name",
        action="append",
        metavar="NAME",
        help="the bots' names, in the order of --bot (default: each command's last word)",
    )
    play.add_argument(
        "--policy",
        choices=[mode.value for mode in PolicyMode],
        default="forfeit",
        help="what a fault costs: forfeit the game, or a default action (default forfeit)",
    )
    play.add_argument(
        "--max-faults",
        type=int,
        default=3,
        metavar="N",
        help="faults in a game before a forfeit, under --policy default_action (default 3)",
    )
    play.add_argument(
        "--log",
        type=Path,
        metavar="FILE",
        help="write the game's log here (JSON lines), and the bots' private notes, if any, beside it "
        "(notes/NAME.jsonl in FILE's folder, for FILE NAME.jsonl: referee show FILE --notes)",
    )
    play.add_argument(
        "--bot-logs",
        type=Path,
        metavar="DIR",
        help="keep each bot's output in this folder (default: kept only when a bot fails)",
    )
    play.add_argument("--quiet", action="store_true", help="print only the result")
    play.add_argument(
        "--verbose",
        action="store_true",
        help="print every move as it is played, with the cards (as `referee show` does)",
    )
    play.add_argument(
        "--human",
        type=int,
        metavar="SEAT",
        help="play this seat yourself, at the terminal (the --bot commands take the other seats, in "
        "order): each turn shows your seat's view and its legal actions, by number",
    )
    play.add_argument(
        "--browser",
        action="store_true",
        help="with --human: play in a web browser instead, at the address printed (a server on 127.0.0.1; "
        "needs the serve extra)",
    )
    play.add_argument(
        "--port", type=int, default=0, help="with --browser: the port to serve on (default: any free port)"
    )
    play.add_argument(
        "--human-clock",
        action="store_true",
        help="with --browser: put you on the bots' clock (--move-time-ms and --time-bank-ms); a move not made in "
        "time is a timeout, which --policy answers (default: all the time you want)",
    )
    add_timing_options(play)
    add_sandbox_options(play)
    play.set_defaults(func=lambda args: run_interruptibly(_play(args)))


def add_check_bot(commands: Commands) -> None:
    """Add ``referee check-bot``: a bot played the way a league plays it, before it is submitted."""
    check = commands.add_parser(
        "check-bot",
        help="test a bot before submitting it: a submission folder (DIR) or a command (-- CMD)",
        description="Plays the bot the way a league does: a submission folder built from its bot.yaml in a copy "
        "(the build kept for the next check while the folder is unchanged), or a command; one process "
        "for several games in a row, every game it says it plays at every table size, against the "
        "sample bots (or --opponent), with a default league's clock and fault policy. Exits 1 on any "
        "problem, 0 when there is none.",
    )
    check.add_argument(
        "--games",
        type=int,
        default=2,
        metavar="N",
        help="games in a row in one process, at each table size (default 2)",
    )
    check.add_argument(
        "--game",
        action="append",
        choices=sorted(GAMES),
        dest="only_games",
        help="check only this game (repeat; default: every game the bot plays)",
    )
    check.add_argument(
        "--seats",
        action="append",
        type=int,
        metavar="N",
        help="check only this table size (repeat; default: every size of each game)",
    )
    check.add_argument("--seed", type=int, default=1, help="the first game's seed (default 1)")
    check.add_argument(
        "--opponent",
        action="append",
        metavar="CMD|DIR",
        help="an opponent: its command line, started in its sandbox, or a submission folder, built as the "
        "bot checked is (repeat: the seats take them in turn); self: another process of the bot checked; "
        f"{', '.join(SAMPLE_BOT_NAMES)}: that sample bot, inside the referee (default: heuristic and random)",
    )
    check.add_argument(
        "--fault-policy",
        choices=[mode.value for mode in PolicyMode],
        default="forfeit",
        help="what a fault costs: forfeit the game, or a default action (default forfeit)",
    )
    check.add_argument(
        "--max-faults",
        type=int,
        default=3,
        metavar="N",
        help="faults in a game before a forfeit, under --fault-policy default_action (default 3)",
    )
    check.add_argument(
        "--json",
        action="store_true",
        help="print the report as JSON (every check, its verdict, the game and decision it concerns); "
        "the progress goes to stderr",
    )
    check.add_argument(
        "--logs",
        type=Path,
        metavar="DIR",
        help="keep every game's log and the bot's output here (default: a temporary folder, kept "
        "only when a problem is found)",
    )
    check.add_argument(
        "--build-cache",
        type=Path,
        metavar="DIR",
        help="where the builds of submission folders are kept (default $XDG_CACHE_HOME/referee/"
        "check-bot, or ~/.cache/referee/check-bot)",
    )
    check.add_argument(
        "bot_command",
        nargs="*",
        metavar="DIR | -- CMD",
        help="a submission folder (holding bot.yaml), or the bot's command line after --; `python` "
        "is the referee's own",
    )
    add_timing_options(check)
    add_sandbox_options(check)
    check.set_defaults(func=lambda args: run_interruptibly(_check_bot(args)))


def add_replay_to(commands: Commands) -> None:
    """Add ``referee replay-to``: a recorded game replayed to a bot from one seat."""
    replay_to = commands.add_parser(
        "replay-to",
        help="replay a recorded game to a bot from one seat, and say where its answers differ",
        description="Sends the bot, started in its sandbox, exactly what the seat received in the recorded game "
        "(handshake, game start, each decision request with its events, fault notices, game end) and "
        "compares each answer with the recorded one, with the fault it would be charged; the game goes "
        "on as recorded. Exit status 0 when every answer is as recorded, 1 otherwise.",
    )
    replay_to.add_argument("game", metavar="GAME", help="a game log file, or a game id with --output DIR")
    replay_to.add_argument(
        "--output", type=Path, metavar="DIR", help="a league's output directory, to find GAME by its id"
    )
    replay_to.add_argument("--seat", type=int, required=True, metavar="N", help="the seat replayed to the bot")
    replay_to.add_argument("--all", action="store_true", help="print every decision, not only those that differ")
    replay_to.add_argument("--json", action="store_true", help="print the report as JSON (the progress goes to stderr)")
    replay_to.add_argument(
        "--logs",
        type=Path,
        metavar="DIR",
        help="keep the bot's output here (default: kept only when an answer differs)",
    )
    replay_to.add_argument("--build-cache", type=Path, metavar="DIR", help="as for check-bot")
    replay_to.add_argument(
        "--startup-timeout-ms",
        type=int,
        default=Timing.startup_timeout_ms,
        metavar="MS",
        help=f"time to start and answer the handshake (default {Timing.startup_timeout_ms})",
    )
    replay_to.add_argument(
        "--tcp", action="store_true", help="the bot listens on TCP 127.0.0.1 (with the host's network)"
    )
    replay_to.add_argument(
        "bot_command",
        nargs="*",
        metavar="DIR | -- CMD",
        help="a submission folder (holding bot.yaml), or the bot's command line after --",
    )
    add_sandbox_options(replay_to)
    replay_to.set_defaults(func=lambda args: run_interruptibly(_replay_to(args)))


async def _browser_table(port: int, on_clock: bool) -> BrowserServer:
    """The browser's seat and its server, started; its address printed for the person to open."""
    from referee.apps.human.browser import BrowserServer, BrowserTable

    server = BrowserServer(BrowserTable(on_clock), port)
    address = await server.start()
    print(f"referee play: open {address} in a browser to play your seat", flush=True)
    return server


async def _play(args: argparse.Namespace) -> int:
    human = args.human is not None
    args.bot = args.bot or _sample_bots(args.game, human)
    seats = len(args.bot) + human
    refusal = _seats_refusal(args, seats)
    if refusal is None:
        _check_human_options(args, seats)
        refusal = _names_refusal(args)
    if refusal is not None:
        print(f"referee play: {refusal}", file=sys.stderr)
        return 2
    specs = _bot_specs(args)
    if len({spec.name for spec in specs}) != len(specs):
        print("referee play: two bots have the same name; give each its own with --name", file=sys.stderr)
        return 2
    if args.log is not None and not args.log.parent.is_dir():  # found now, not once the game is played
        raise OutputError(f"{args.log}: no folder {args.log.parent} to write the game's log in; make it first")
    refusal = sandbox_refusal("play", "--no-sandbox" if args.no_sandbox else None)
    if refusal:
        print(refusal, file=sys.stderr)
        return 1
    return await _play_and_report(args, specs, seats)


def _sample_bots(game: str, human: bool) -> list[str]:
    """The bots of a game whose --bot options name none: the sample opponents in turn, at least two of them, and as
    many as the game's smallest table needs."""
    count = max(len(SAMPLE_OPPONENTS), GAMES[game].min_players - human)
    return [SAMPLE_OPPONENTS[index % len(SAMPLE_OPPONENTS)] for index in range(count)]


def _seats_refusal(args: argparse.Namespace, seats: int) -> str | None:
    """Why the game cannot be played with ``seats`` players, or None."""
    game = GAMES[args.game]
    if game.min_players <= seats <= game.max_players:
        return None
    players = "players" if args.human is not None else "bots"
    return f"{args.game} needs {game.min_players} to {game.max_players} {players}, got {seats}"


def _check_human_options(args: argparse.Namespace, seats: int) -> None:
    """Raise :class:`UsageError` for options that do not go with a person's seat (--human) as given."""
    human = args.human is not None
    if human and args.verbose:
        raise UsageError("--verbose shows every seat's cards, which --human keeps from you; leave one out")
    if args.browser and not human:
        raise UsageError("--browser plays your seat in a browser: give it with --human SEAT")
    if args.human_clock and not args.browser:
        raise UsageError("--human-clock puts your seat in the browser on a clock: add --browser (a terminal has none)")
    if human and not 0 <= args.human < seats:
        raise UsageError(f"--human {args.human}: the game has seats 0 to {seats - 1} (one --bot for each other seat)")


def _names_refusal(args: argparse.Namespace) -> str | None:
    """Why the --name options cannot name the bots, or None."""
    names = args.name or []
    if names and len(names) != len(args.bot):
        return f"{len(names)} --name for {len(args.bot)} --bot; give one name per bot, in order"
    return None


def _bot_specs(args: argparse.Namespace) -> list[BotSpec]:
    """The bots of the --bot options (a sample bot's name is that sample bot's script, run as any bot is), each
    named by its --name or after its program and seat."""
    names = args.name or []
    # A bot is named after its program and its seat: with a person at --human, the bots after it sit one seat on.
    human = args.human is not None
    bot_seats = [index + (human and index >= args.human) for index in range(len(args.bot))]
    return [
        bot_spec(_command_of(command), seat, args, names[index] if names else None)
        for index, (command, seat) in enumerate(zip(args.bot, bot_seats, strict=True))
    ]


def _command_of(bot: str) -> str | list[str]:
    """A --bot's command line: a sample bot's name is its script's (``python .../heuristic_bot.py``)."""
    if bot in SAMPLE_BOT_NAMES:
        return ["python", str(sample_bot_path(f"{bot}_bot.py"))]
    return bot


async def _play_and_report(args: argparse.Namespace, specs: list[BotSpec], seats: int) -> int:
    """Play the game, print its hands and result, and tell each bot's faults; 1 if a bot failed, else 0.

    The bots' output is kept where --bot-logs says, or where a bot failed; otherwise it goes with the game.
    """
    timing = timing_of(args)
    policy = FaultPolicy(PolicyMode(args.policy), args.max_faults)
    kept = args.bot_logs is not None
    bot_logs = args.bot_logs or Path(tempfile.mkdtemp(prefix="referee-play-"))
    bot_logs.mkdir(parents=True, exist_ok=True)
    try:
        if args.human is not None:
            result = await _play_with_person(args, specs, timing, policy, bot_logs)
        else:
            result = await _play_bots(args, specs, timing, policy, bot_logs)
        if not args.quiet and not args.verbose and args.human is None:
            for hand in result.hand_results:
                print(_with_names(hand.describe(), result.players))
        print(_result_text(result))
        failed = _tell_failures(args, result, seats, bot_logs)
        if failed and not kept:
            kept = True
            print(f"bot output is kept in {bot_logs}", file=sys.stderr)
        if result.void:
            print(f"the game is void: {result.void_reason}", file=sys.stderr)
        return 1 if failed else 0
    finally:
        if not kept:
            shutil.rmtree(bot_logs, ignore_errors=True)


async def _play_bots(
    args: argparse.Namespace, specs: list[BotSpec], timing: Timing, policy: FaultPolicy, bot_logs: Path
) -> MatchResult:
    """A game of bots alone, each hand printed as it is played with --verbose."""
    from referee.play.match import play_game
    from referee.records.notes import notes_beside

    observer = None
    if args.verbose:
        from referee.records.transcript import LivePrinter

        observer = LivePrinter(lambda line: print(line, flush=True))
    return await play_game(
        args.game,
        specs,
        seed=args.seed,
        game_id=f"play-{args.seed}",
        timing=timing,
        turn_limit=args.turn_limit,
        policy=policy,
        log_path=args.log,
        bot_log_dir=bot_logs,
        observer=observer,
        notes_path=None if args.log is None else notes_beside(args.log),
    )


async def _play_with_person(
    args: argparse.Namespace, specs: list[BotSpec], timing: Timing, policy: FaultPolicy, bot_logs: Path
) -> MatchResult:
    """A game with a person at seat --human, in the terminal or, with --browser, in a browser."""
    from referee.apps.human.terminal import play_as_human

    browser = await _browser_table(args.port, args.human_clock) if args.browser else None
    try:
        return await play_as_human(
            args.game,
            args.human,
            specs,
            seed=args.seed,
            timing=timing,
            turn_limit=args.turn_limit,
            policy=policy,
            log_path=args.log,
            bot_log_dir=bot_logs,
            person=browser.table.seat if browser else None,
        )
    finally:
        if browser is not None:
            browser.table.ended()
            await browser.stop(linger_s=10.0)  # the page reads the last screen: the places


def _tell_failures(args: argparse.Namespace, result: MatchResult, seats: int, bot_logs: Path) -> list[int]:
    """Print each failed bot's faults with the end of its output; return the seats of the bots that failed."""
    # A person's faults (a move not made in time on --human-clock) are the game's own, not a bot's.
    failed = [seat for seat in range(seats) if result.faults[seat] and seat != args.human]
    for seat in failed:
        log_path = bot_logs / f"seat{seat}-{result.players[seat]}.log"
        print(
            f"seat {seat} ({result.players[seat]}) failed: "
            + "; ".join(f"{count} {kind}" for kind, count in sorted(result.faults[seat].items()))
            + log_tail(log_path),
            file=sys.stderr,
        )
    return failed


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


async def _check_bot(args: argparse.Namespace) -> int:
    from referee.apps.checkbot import CheckSettings, check_bot

    if args.games < 1:
        raise UsageError(f"--games must be at least 1, got {args.games}")
    if args.max_faults < 1:
        raise UsageError(f"--max-faults must be at least 1, got {args.max_faults}")
    for seats in args.seats or ():
        if not any(game.min_players <= seats <= game.max_players for game in GAMES.values()):
            raise UsageError(f"--seats {seats} fits no game (2 to 10 seats)")
    bot = _candidate(args, "check-bot")
    opponents = tuple(_opponent(text, index, args) for index, text in enumerate(args.opponent or ()))
    settings = CheckSettings(
        games_per_size=args.games,
        seed=args.seed,
        timing=timing_of(args),
        turn_limit=args.turn_limit,
        policy=FaultPolicy(PolicyMode(args.fault_policy), args.max_faults),
        games=tuple(args.only_games or ()),
        seats=tuple(args.seats or ()),
        opponents=opponents,
    )
    return await check_bot(bot, settings, args.logs, args.json)


async def _replay_to(args: argparse.Namespace) -> int:
    from referee.apps.replay_to import replay_command

    return await replay_command(
        game_log_path(args.game, args.output),
        args.seat,
        _candidate(args, "replay-to"),
        as_json=args.json,
        every=args.all,
        startup_timeout_ms=args.startup_timeout_ms,
        log_dir=args.logs,
    )


def _opponent(text: str, index: int, args: argparse.Namespace) -> Submission | BotSpec | str:
    """An --opponent: ``self``, a sample bot's name, a submission folder (built as the bot checked is), or a
    command line."""
    from referee.apps.checkbot import SELF, Submission, default_cache

    if text == SELF or text in SAMPLE_BOT_NAMES:
        return text
    if os.path.isdir(text):
        return Submission(text, sandbox_settings(args, shared=True), args.build_cache or default_cache())
    return bot_spec(text, index, args, BotSpec.from_command(text).name)


def _candidate(args: argparse.Namespace, command_name: str) -> Submission | BotSpec:
    """The bot a command checks: a submission folder (to build: a checkbot.Submission) or a command's BotSpec."""
    from referee.apps.checkbot import Submission, default_cache

    given = args.bot_command
    command = given[1:] if given[:1] == ["--"] else given
    if not command:
        raise UsageError(
            f"give a submission folder (referee {command_name} ... my-bot/) or the bot's command after -- "
            f"(referee {command_name} ... -- python my_bot.py)"
        )
    refusal = sandbox_refusal(command_name, "--no-sandbox" if args.no_sandbox else None)
    if refusal:
        raise RefereeError(refusal.removeprefix(f"referee {command_name}: "))
    if given[:1] != ["--"] and len(command) == 1 and os.path.isdir(command[0]):
        return Submission(command[0], sandbox_settings(args, shared=True), args.build_cache or default_cache())
    return bot_spec(command, 0, args, "candidate")
