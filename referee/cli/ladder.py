"""``referee ladder``: a continuous league fed by a folder of submissions (docs/ladder.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from referee.cli.leagues import _backend as backend_of
from referee.cli.options import UsageError, concurrency, sandbox_refusal

if TYPE_CHECKING:
    from referee.cli.options import Commands


def add_ladder(commands: Commands) -> None:
    """Add ``referee ladder``: a season played as authors submit, resumed where it stopped."""
    ladder = commands.add_parser(
        "ladder",
        help="run a ladder: a continuous league fed by a folder of submissions (one folder per author)",
        description="Watches the ladder file's submissions folder: each new or changed author folder is built "
        "once in a copy, checked as check-bot checks it, and entered as the author's next version "
        "(replacing the previous one) or rejected, the reason in OUTPUT/reports/AUTHOR.md. Plays "
        "tables drawn as it goes, concurrency games at once, until stopped (Ctrl-C, SIGTERM) or "
        "--games are started; run again, it resumes where it stopped. Exit status: 0 after --games, "
        "1 on a failure, 2 for a bad option, 130 after Ctrl-C, 143 after SIGTERM.",
    )
    ladder.add_argument("ladder", type=Path, help="the ladder file (YAML; see tournaments/ladder.example.yaml)")
    ladder.add_argument(
        "--concurrency",
        type=concurrency,
        metavar="N|auto",
        help="games at once, or auto: one per CPU (overrides the ladder file)",
    )
    ladder.add_argument(
        "--games", type=int, metavar="N", help="stop once this run has started N games (and they have finished)"
    )
    ladder.add_argument(
        "--backend",
        choices=["local", "ray"],
        default="local",
        help="where games are played: on this machine (local, the default) or on a Ray cluster (ray)",
    )
    ladder.add_argument("--address", metavar="ADDR", help="with --backend ray: the Ray cluster to run on")
    change = ladder.add_mutually_exclusive_group()
    change.add_argument(
        "--withdraw", metavar="NAME", help="withdraw version NAME (it plays no new game; its games count), then exit"
    )
    change.add_argument(
        "--disqualify",
        metavar="NAME",
        help="disqualify version NAME (its games count for no one), then exit",
    )
    ladder.add_argument("--reason", metavar="TEXT", default="", help="why, for --withdraw or --disqualify")
    ladder.set_defaults(func=_ladder)


def _ladder(args: argparse.Namespace) -> int:
    from referee.cli.process import run_interruptibly
    from referee.ladder.file import load_ladder
    from referee.ladder.history import DISQUALIFIED, WITHDRAWN
    from referee.ladder.run import change_status, run_ladder

    if args.games is not None and args.games < 1:
        raise UsageError(f"--games must be at least 1, got {args.games}")
    if args.reason and not (args.withdraw or args.disqualify):
        raise UsageError("--reason goes with --withdraw NAME or --disqualify NAME")
    ladder = load_ladder(args.ladder)
    if args.withdraw or args.disqualify:
        status = WITHDRAWN if args.withdraw else DISQUALIFIED
        change = change_status(ladder, args.withdraw or args.disqualify, status, args.reason)
        print(f"{change.bot}: {change.status}" + (f" ({change.reason})" if change.reason else ""))
        return 0
    for warning in ladder.league.warnings:
        print(warning)
    backend = backend_of(args)  # first: with Ray, this process may be replaced by one in a private network
    if ladder.league.sandbox:
        refusal = sandbox_refusal("ladder", None)
        if refusal:
            print(refusal, file=sys.stderr)
            return 1
    else:
        sandbox_refusal("ladder", "sandbox: none")  # the warning
    print(f"ladder {ladder.league.name}: submissions from {ladder.submissions}, results in {ladder.output}", flush=True)
    summary = run_interruptibly(
        run_ladder(ladder, concurrency=args.concurrency, backend=backend, max_games=args.games, say=_say)
    )
    print(
        f"{summary.played} games played; versions accepted: {', '.join(summary.accepted) or 'none'}; "
        f"rejected: {', '.join(summary.rejected) or 'none'}; standings in {ladder.output / 'leaderboard.md'}"
    )
    return 0


def _say(line: str) -> None:
    print(line, flush=True)
