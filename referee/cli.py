"""The ``referee`` command line."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

from referee import __version__
from referee.bots import BotSpec
from referee.session import BotSession, GameSetup, Timing
from referee.errors import RefereeError
from referee.faults import BotFault, FaultPolicy, PolicyMode
from referee.games import GAMES
from referee.match import MatchResult, play_game
from referee.protocol import GAME_FROM_PB, PROTOCOL_VERSION

SAMPLE_BOTS = Path(__file__).resolve().parent.parent / "sample_bots"


def _add_timing_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--move-time-ms", type=int, default=1000, help="time for each move (default 1000)")
    parser.add_argument("--time-bank-ms", type=int, default=10_000, help="reserve for a game (default 10000)")
    parser.add_argument("--startup-timeout-ms", type=int, default=10_000, help="time to start listening (default 10000)")
    parser.add_argument("--turn-limit", type=int, default=200, help="turns in a hand before a forced showdown")
    parser.add_argument("--tcp", action="store_true", help="bots listen on TCP 127.0.0.1 instead of a Unix socket")


def _timing(args: argparse.Namespace) -> Timing:
    return Timing(
        move_time_ms=args.move_time_ms, time_bank_ms=args.time_bank_ms, startup_timeout_ms=args.startup_timeout_ms
    )


def _spec(command: str | list[str], index: int, args: argparse.Namespace, name: str | None = None) -> BotSpec:
    spec = BotSpec.from_command(command, name=name)
    return BotSpec(
        name=name or f"{spec.name}#{index}", command=spec.command, transport="tcp" if args.tcp else "unix"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="referee", description="Referee for Stop the Bus and Bastard Brag bots.")
    parser.add_argument("--version", action="version", version=f"referee {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    play = commands.add_parser("play", help="play one game between bots and print every hand")
    play.add_argument("--game", choices=sorted(GAMES), required=True)
    play.add_argument("--seed", type=int, default=1)
    play.add_argument("--bot", action="append", required=True, metavar="CMD", help="a bot's command line (repeat)")
    play.add_argument("--policy", choices=[mode.value for mode in PolicyMode], default="forfeit")
    play.add_argument("--max-faults", type=int, default=3, help="faults in a game before a forfeit (default_action)")
    play.add_argument("--log", type=Path, help="write the JSON-lines game log here")
    play.add_argument("--bot-logs", type=Path, help="write each bot's output to a file in this directory")
    play.add_argument("--quiet", action="store_true", help="print only the result")
    _add_timing_options(play)

    check = commands.add_parser("check-bot", help="test a bot before submitting it")
    check.add_argument("--games", type=int, default=3, help="games of each game the bot plays (default 3)")
    check.add_argument("--seed", type=int, default=1)
    check.add_argument("--logs", type=Path, help="keep every bot's output here (default: a new temporary folder)")
    check.add_argument("bot_command", nargs=argparse.REMAINDER, metavar="-- CMD ...")
    _add_timing_options(check)

    verify = commands.add_parser("verify", help="replay a game log through the rules engine")
    verify.add_argument("log", type=Path)

    run = commands.add_parser("run", help="run a league (resumes in an existing output directory)")
    run.add_argument("league", type=Path)
    run.add_argument("--output", type=Path, help="results directory (overrides the league file's output)")
    run.add_argument("--concurrency", type=int, help="games at once (overrides the league file)")
    run.add_argument("--no-progress", action="store_true", help="print no progress or standings while running")

    validate = commands.add_parser("validate", help="check a league file without running it")
    validate.add_argument("league", type=Path)

    schedule = commands.add_parser("schedule", help="print a league's schedule")
    schedule.add_argument("league", type=Path)

    leaderboard = commands.add_parser("leaderboard", help="print the leaderboard of a results directory")
    leaderboard.add_argument("directory", type=Path)
    leaderboard.add_argument("--write", action="store_true", help="also rewrite the leaderboard files there")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "play":
            return asyncio.run(_play(args))
        if args.command == "check-bot":
            return asyncio.run(_check_bot(args))
        if args.command == "verify":
            return _verify(args)
        return _league_command(args)
    except RefereeError as error:
        print(f"referee {args.command}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: finished games are kept; run the same command again to resume", file=sys.stderr)
        return 130
    except asyncio.CancelledError:
        print("stopped: finished games are kept; run the same command again to resume", file=sys.stderr)
        return 143


# ----- play ----------------------------------------------------------------------


async def _play(args: argparse.Namespace) -> int:
    game = GAMES[args.game]
    if not game.min_players <= len(args.bot) <= game.max_players:
        print(f"referee play: {args.game} needs {game.min_players} to {game.max_players} bots, got {len(args.bot)}",
              file=sys.stderr)  # fmt: skip
        return 2
    specs = [_spec(command, index, args) for index, command in enumerate(args.bot)]
    if args.bot_logs:
        args.bot_logs.mkdir(parents=True, exist_ok=True)
    result = await play_game(
        args.game, specs, seed=args.seed, game_id=f"play-{args.seed}", timing=_timing(args),
        turn_limit=args.turn_limit, policy=FaultPolicy(PolicyMode(args.policy), args.max_faults),
        log_path=args.log, bot_log_dir=args.bot_logs,
    )  # fmt: skip
    if not args.quiet:
        for hand in result.hand_results:
            print(_with_names(hand.describe(), result.players))
    print(_result_text(result))
    return 0


def _with_names(text: str, players: list[str]) -> str:
    for seat in sorted(range(len(players)), reverse=True):
        text = text.replace(f"seat {seat}", f"seat {seat} ({players[seat]})")
    return text


def _result_text(result: MatchResult) -> str:
    lines = [f"{result.game} seed {result.seed}: {result.hands_played} hands, {result.decisions} decisions"]
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


def sample_bot_commands() -> list[tuple[str, list[str]]]:
    """The sample bots check-bot plays against: (name, command)."""
    python = sys.executable
    return [
        ("random", [python, str(SAMPLE_BOTS / "python" / "random_bot.py")]),
        ("heuristic", [python, str(SAMPLE_BOTS / "python" / "heuristic_bot.py")]),
    ]


async def _check_bot(args: argparse.Namespace) -> int:
    command = args.bot_command[1:] if args.bot_command[:1] == ["--"] else args.bot_command
    if not command:
        print("referee check-bot: give the bot's command after --, e.g. referee check-bot -- python my_bot.py",
              file=sys.stderr)  # fmt: skip
        return 2
    # Kept after the run: the problems point into it.
    log_dir = args.logs or Path(tempfile.mkdtemp(prefix="check-bot-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    status = await _check_bot_with_logs(args, command, log_dir)
    print(f"bot output is kept in {log_dir}")
    return status


async def _check_bot_with_logs(args: argparse.Namespace, command: list[str], log_dir: Path) -> int:
    timing = _timing(args)
    transport = "tcp" if args.tcp else "unix"
    candidate = BotSpec(name="candidate", command=tuple(command), transport=transport)
    problems: list[str] = []
    print(f"checking {candidate.describe()}")

    games = await _probe_games(candidate, timing, args.turn_limit, problems, log_dir / "handshake.log")
    if not games:
        return _report(problems)
    for game_name in sorted(GAMES):
        if game_name not in games:
            print(f"- {game_name}: the bot says it does not play it; skipped")
            continue
        opponents = [BotSpec(name=name, command=tuple(cmd), transport=transport) for name, cmd in sample_bot_commands()]
        for number in range(args.games):
            specs = [candidate, *opponents]
            # Rotate the candidate through the seats.
            shift = number % len(specs)
            specs = specs[shift:] + specs[:shift]
            seed = args.seed + number
            game_logs = log_dir / f"{game_name}-{number}"
            game_logs.mkdir(exist_ok=True)
            result = await play_game(
                game_name, specs, seed=seed, game_id=f"check-{game_name}-{number}", timing=timing,
                turn_limit=args.turn_limit, bot_log_dir=game_logs,
            )  # fmt: skip
            seat = result.players.index("candidate")
            place = result.place_of(seat)
            latencies = result.latencies_ms[seat]
            slowest = max(latencies, default=0.0)
            label = f"{game_name} game {number + 1}"
            print(f"- {label} (seed {seed}): placed {place} of {len(specs)}, "
                  f"{len(latencies)} decisions, slowest {slowest:.1f} ms")  # fmt: skip
            for kind, count in sorted(result.faults[seat].items()):
                problems.append(f"{label}: {count} {kind} fault{'s' if count > 1 else ''}")
            if seat in result.forfeits:
                problems.append(
                    f"{label}: forfeited the game: {result.forfeits[seat]}"
                    + _log_tail(game_logs / f"seat{seat}-candidate.log")
                )
            slow = [ms for ms in latencies if ms > timing.move_time_ms / 2]
            if slow:
                problems.append(
                    f"{label}: {len(slow)} slow repl{'y' if len(slow) == 1 else 'ies'} "
                    f"(over half the {timing.move_time_ms} ms move time; slowest {max(slow):.0f} ms)"
                )
    return _report(problems)


async def _probe_games(
    candidate: BotSpec, timing: Timing, turn_limit: int, problems: list[str], log_path: Path
) -> set[str]:
    """Start the bot once and handshake; return the games it plays (empty after a problem)."""
    bot = BotSession(candidate, log_path)
    fault = None
    try:
        await bot.start(GameSetup("stop_the_bus", 3, timing, turn_limit))
    except BotFault as error:
        fault = error
    finally:
        await bot.stop()
    reply = bot.handshake_reply
    games = set()
    if reply is not None and reply.protocol_version == PROTOCOL_VERSION:
        print(f"handshake ok: {reply.name or '(no name)'} {reply.version}" + (f" by {reply.author}" if reply.author else ""))
        games = {GAME_FROM_PB[game] for game in reply.games if game in GAME_FROM_PB}
        if not games:
            problems.append("the handshake lists no game the referee runs (STOP_THE_BUS, BASTARD_BRAG)")
        return games
    if fault is not None:
        problems.append(f"{fault.kind.value}: {fault.detail}" + _log_tail(log_path))
    return games


def _log_tail(path: Path, lines: int = 8) -> str:
    """The last lines of a bot's output, indented, to show with a problem."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").rstrip()
    except OSError:
        return ""
    if not text:
        return ""
    tail = text.splitlines()[-lines:]
    return "\n      its last output:\n" + "\n".join(f"        {line}" for line in tail)


def _report(problems: list[str]) -> int:
    if not problems:
        print("no problems found")
        return 0
    print(f"{len(problems)} problem{'s' if len(problems) > 1 else ''}:")
    for problem in problems:
        print(f"  - {problem}")
    return 1


# ----- leagues ---------------------------------------------------------------------


def _league_command(args: argparse.Namespace) -> int:
    from referee.config import load_league
    from referee.league import run_command, standings_from_directory
    from referee.publish import console_table, write_leaderboards
    from referee.schedule import format_schedule, schedule

    if args.command == "leaderboard":
        standings, title = standings_from_directory(args.directory)
        print(f"{title}: {standings.games} games")
        print(console_table(standings))
        if args.write:
            write_leaderboards(standings, args.directory, title)
        return 0
    league = load_league(args.league)
    if args.command == "validate":
        games = schedule(league)
        print(f"{args.league}: valid: league {league.name!r}, {league.game}, {len(league.bots)} bots, "
              f"tables of {league.table_size}, {len(games)} games")  # fmt: skip
        return 0
    if args.command == "schedule":
        print(format_schedule(schedule(league)))
        return 0
    if args.concurrency is not None and args.concurrency < 1:
        print(f"referee run: --concurrency must be at least 1, got {args.concurrency}", file=sys.stderr)
        return 2
    return run_command(league, args.output, args.concurrency, not args.no_progress)


# ----- verify ---------------------------------------------------------------------


def _verify(args: argparse.Namespace) -> int:
    from referee.match import verify_log

    problems = verify_log(args.log)
    if problems:
        print("\n".join(problems))
        return 1
    print(f"{args.log}: the log replays exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
