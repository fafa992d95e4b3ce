"""The options several commands share, and what they turn into: a clock, a bot's spec, its sandbox."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.common.errors import RefereeError
from referee.engine.games.game import DEFAULT_TURN_LIMIT
from referee.play import sandbox
from referee.play.processes import BotSpec
from referee.protocol.clock import Timing

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]  # what ``referee``'s commands are added to


class UsageError(RefereeError):
    """An option's value the command cannot use (exit status 2, as for argparse's own refusals)."""


def add_timing_options(parser: argparse.ArgumentParser) -> None:
    defaults = Timing()
    parser.add_argument(
        "--move-time-ms",
        type=int,
        default=defaults.move_time_ms,
        metavar="MS",
        help=f"time for each move (default {defaults.move_time_ms})",
    )
    parser.add_argument(
        "--time-bank-ms",
        type=int,
        default=defaults.time_bank_ms,
        metavar="MS",
        help=f"reserve for a game, spent by moves over their time (default {defaults.time_bank_ms})",
    )
    parser.add_argument(
        "--grace-ms",
        type=int,
        default=defaults.grace_ms,
        metavar="MS",
        help="allowance for transport: a reply is a timeout once move time + bank left + grace "
        f"have been charged (default {defaults.grace_ms})",
    )
    parser.add_argument(
        "--startup-timeout-ms",
        type=int,
        default=defaults.startup_timeout_ms,
        metavar="MS",
        help=f"time to start listening and answer the handshake (default {defaults.startup_timeout_ms})",
    )
    parser.add_argument(
        "--turn-limit",
        type=int,
        default=DEFAULT_TURN_LIMIT,
        metavar="N",
        help=f"normal turns in a hand before a forced showdown (default {DEFAULT_TURN_LIMIT})",
    )
    parser.add_argument(
        "--tcp",
        action="store_true",
        help="bots listen on TCP 127.0.0.1 instead of a Unix socket (and so get the host's network)",
    )


def add_sandbox_options(parser: argparse.ArgumentParser, share: bool = True) -> None:
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run bots without their sandbox (only bots you trust; see docs/security.md)",
    )
    if share:
        parser.add_argument(
            "--share",
            action="append",
            type=Path,
            default=[],
            metavar="DIR",
            help="a folder the bots may write (repeat), e.g. for what a bot records while you debug it",
        )


def sandbox_refusal(command: str, turned_off_by: str | None, how_to_turn_off: str = "--no-sandbox") -> str | None:
    """Why bots cannot start in their sandbox here (bubblewrap missing or refused), or None.

    With the sandbox turned off (``turned_off_by`` names how), warn instead, on every run.
    """
    if turned_off_by:
        print(
            f"warning: the sandbox is off ({turned_off_by}): every bot runs as you, with your files, your network "
            "and the other bots within its reach; run only bots you trust (see docs/security.md)",
            file=sys.stderr,
        )
        return None
    bwrap = sandbox.bubblewrap()
    return f"referee {command}: {bwrap.refusal(how_to_turn_off)}" if bwrap.problem else None


def timing_of(args: argparse.Namespace) -> Timing:
    for option in ("move_time_ms", "time_bank_ms", "grace_ms", "startup_timeout_ms", "turn_limit"):
        value = getattr(args, option)
        low = 0 if option in ("time_bank_ms", "grace_ms") else 1
        if not low <= value <= 4_294_967_295:
            raise UsageError(f"--{option.replace('_', '-')} must be from {low} to 4294967295, got {value}")
    return Timing(
        move_time_ms=args.move_time_ms,
        time_bank_ms=args.time_bank_ms,
        grace_ms=args.grace_ms,
        startup_timeout_ms=args.startup_timeout_ms,
    )


def bot_spec(command: str | list[str], seat: int, args: argparse.Namespace, name: str | None = None) -> BotSpec:
    """A bot of the command line, named ``name`` or after its program and ``seat`` (``heuristic_bot#1``)."""
    spec = BotSpec.from_command(command, name=name)
    return BotSpec(
        name=name or f"{spec.name}#{seat}",
        command=_with_referee_python(spec.command),
        **sandbox_settings(args, shared=True),
    )


def _with_referee_python(command: tuple[str, ...]) -> tuple[str, ...]:
    """``python`` or ``python3`` means the Python running the referee, as in a league file.

    (A ``python`` found on PATH may be a launcher that needs the user's home folder, which a sandbox does not show.)
    """
    return (sys.executable, *command[1:]) if command[0] in ("python", "python3") else command


def sandbox_settings(args: argparse.Namespace, shared: bool) -> dict[str, Any]:
    """The BotSpec fields the options set: transport, sandbox, network (tcp needs the host's) and shared folders."""
    return {
        "transport": "tcp" if args.tcp else "unix",
        "sandbox": not args.no_sandbox,
        "network": "host" if args.tcp else "none",
        "shared": tuple(str(folder.resolve()) for folder in args.share) if shared else (),
    }


def concurrency(text: str) -> int | None:
    """``--concurrency``: a whole number of games, at least 1, or ``auto`` (None)."""
    if text == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of games or auto") from None
    from referee.leaguefile.config import MAX_CONCURRENCY

    if not 1 <= value <= MAX_CONCURRENCY:
        raise argparse.ArgumentTypeError(
            f"must be from 1 to {MAX_CONCURRENCY} games at once (as in a league file), or auto; got {value}"
        )
    return value
