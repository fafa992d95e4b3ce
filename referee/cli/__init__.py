"""The ``referee`` command line: the parser, the dispatch to each command, and the exit statuses.

Exit statuses: 0 success; 1 a failure (a bad league file, a bot that
failed, a folder that cannot be written); 2 a usage error (a bad option);
130 stopped by Ctrl-C (SIGINT), 143 by SIGTERM, 141 when the reader of the
output went away (a broken pipe, as in ``referee schedule x.yaml | head``).
Every failure is one line on standard error, never a traceback.

Each family of commands is a module that adds its commands' options and
sets each one's ``func``: :mod:`referee.cli.bot_commands` (play, check-bot,
replay-to), :mod:`referee.cli.log_commands` (verify, show, replay, export),
:mod:`referee.cli.result_commands` (seed, serve, leaderboard, compare) and
:mod:`referee.cli.league_commands` (run, duel, validate, schedule) and
:mod:`referee.cli.ladder_commands` (ladder).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys

from referee import __version__
from referee.cli import bot_commands, ladder_commands, league_commands, log_commands, result_commands
from referee.cli.interrupts import describe_os_error
from referee.cli.options import UsageError
from referee.common.errors import RefereeError

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 128 + 13  # as a program killed by SIGPIPE
EXIT_SIGINT = 128 + 2
EXIT_SIGTERM = 128 + 15
TRACEBACK_VARIABLE = "REFEREE_TRACEBACK"  # set to 1: show the traceback of an unexpected error


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command, each with its handler as ``func``, listed in the order of ``--help``."""
    parser = argparse.ArgumentParser(
        prog="referee",
        description="Referee for Stop the Bus and Bastard Brag bots.",
        epilog="Exit status: 0 success, 1 failure, 2 usage error, 130 Ctrl-C, 141 broken pipe, 143 SIGTERM.",
    )
    parser.add_argument(
        "--version", action="version", version=f"referee {__version__}", help="print the referee's version and exit"
    )
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help="what to do (referee COMMAND --help for its options)"
    )
    bot_commands.add_play(commands)
    bot_commands.add_check_bot(commands)
    log_commands.add_verify(commands)
    result_commands.add_seed(commands)
    log_commands.add_show(commands)
    log_commands.add_replay(commands)
    log_commands.add_export(commands)
    bot_commands.add_replay_to(commands)
    result_commands.add_serve(commands)
    league_commands.add_run(commands)
    league_commands.add_duel(commands)
    league_commands.add_validate(commands)
    league_commands.add_schedule(commands)
    ladder_commands.add_ladder(commands)
    result_commands.add_leaderboard(commands)
    result_commands.add_compare(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parse(list(sys.argv[1:] if argv is None else argv))  # a usage error exits here with status 2
    args.argv = list(sys.argv[1:] if argv is None else argv)  # to run again in a private network (--backend ray)
    name = f"referee {args.command}"
    try:
        status: int = args.func(args)
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
        return _fail(f"{name}: {describe_os_error(error)}")
    except KeyboardInterrupt:
        return _fail(f"{name}: interrupted (Ctrl-C)", EXIT_SIGINT)
    except asyncio.CancelledError:
        return _fail(f"{name}: stopped (SIGTERM)", EXIT_SIGTERM)
    except Exception as error:  # a bug: still one line, with the way to see more
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        return _fail(
            f"{name}: internal error: {type(error).__name__}: {error} (set {TRACEBACK_VARIABLE}=1 to see "
            "where; please report it)"
        )


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


def _fail(message: str, status: int = EXIT_FAILURE) -> int:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    with contextlib.suppress(BrokenPipeError):
        print(message, file=sys.stderr)
    return status


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so that Python's flush at exit does not complain about the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
