"""``referee ladder``: a continuous league fed by a folder of submissions (docs/ladder.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from referee.backends import BACKENDS
from referee.cli.league_commands import _backend as backend_of
from referee.cli.options import UsageError, concurrency, sandbox_refusal

if TYPE_CHECKING:
    from referee.apps.ladder.file import Ladder
    from referee.cli.options import Commands


def add_ladder(commands: Commands) -> None:
    """Add ``referee ladder``: a season played as authors submit, resumed where it stopped."""
    ladder = commands.add_parser(
        "ladder",
        help="run a ladder: a continuous league fed by a folder of submissions (one folder per author)",
        description="Watches the ladder file's submissions folder: each new or changed author folder is built "
        "once in a copy, checked as check-bot checks it, and entered as the author's next version "
        "(replacing the previous one) or rejected; the verdict and why are on the author's page of "
        "`referee serve` (from OUTPUT/reports/AUTHOR.json). Plays tables drawn as it goes, concurrency "
        "games at once, until stopped (Ctrl-C, SIGTERM) or --games are started; run again, it resumes "
        "where it stopped. A version that reaches its restart limit or forfeits forfeits_in_a_row games "
        "in a row is suspended (--reinstate lets it play again); with rest: in the ladder file, a ladder "
        "whose standings are settled starts no table until the field changes. --withdraw, --disqualify "
        "and --reinstate work on a running ladder too: it takes the order up within its poll_s, and the "
        "command prints what came of it. Exit status: 0 after --games or an order applied, 1 on a "
        "failure or an order refused, 2 for a bad option, 130 after Ctrl-C, 143 after SIGTERM.",
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
        choices=BACKENDS,
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
        help="disqualify version NAME (its games count for no one; its tables' games not started are dropped), "
        "then exit",
    )
    change.add_argument(
        "--reinstate",
        metavar="NAME",
        help="let version NAME play again (suspended, withdrawn or disqualified; its author's latest), then exit",
    )
    ladder.add_argument(
        "--reason", metavar="TEXT", default="", help="why, for --withdraw, --disqualify or --reinstate (pages show it)"
    )
    authors = ladder.add_mutually_exclusive_group()
    authors.add_argument(
        "--add-author",
        metavar="NAME",
        help="issue author NAME a token to upload with and sign in on `referee serve` (printed once; a new one "
        "replaces the old), then exit",
    )
    authors.add_argument("--revoke-author", metavar="NAME", help="end author NAME's token at once, then exit")
    authors.add_argument("--authors", action="store_true", help="list the authors with a token, then exit")
    ladder.set_defaults(func=_ladder)


def _ladder(args: argparse.Namespace) -> int:
    from referee.apps.ladder.file import load_ladder
    from referee.apps.ladder.orders import give
    from referee.apps.ladder.run import run_ladder
    from referee.cli.interrupts import run_interruptibly

    if args.games is not None and args.games < 1:
        raise UsageError(f"--games must be at least 1, got {args.games}")
    action = next((name for name in ("withdraw", "disqualify", "reinstate") if getattr(args, name)), None)
    if args.reason and action is None:
        raise UsageError("--reason goes with --withdraw NAME, --disqualify NAME or --reinstate NAME")
    ladder = load_ladder(args.ladder)
    if args.add_author or args.revoke_author or args.authors:
        if action is not None:
            raise UsageError(
                "--add-author, --revoke-author and --authors go alone, without --withdraw, --disqualify or --reinstate"
            )
        return _authors(args, ladder)
    if action is not None:
        answer = give(ladder, action, getattr(args, action), args.reason, _say)
        print(answer.said, file=sys.stdout if answer.ok else sys.stderr)
        return 0 if answer.ok else 1
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
    _print_standings(ladder.output)
    suspended = f"; suspended: {', '.join(summary.suspended)}" if summary.suspended else ""
    print(
        f"{summary.played} games played; versions accepted: {', '.join(summary.accepted) or 'none'}; "
        f"rejected: {', '.join(summary.rejected) or 'none'}{suspended}; the standings are in "
        f"{ladder.output}/leaderboard.*"
    )
    return 0


def _print_standings(output: Path) -> None:
    """The ladder's standings as a table, where it has any."""
    from referee.common.errors import RefereeError
    from referee.publish.console_table import console_table
    from referee.records.standings import folder_standings

    try:
        standings, _ = folder_standings(output)
    except (RefereeError, OSError):
        return
    if standings.rows:
        print(console_table(standings))


def _authors(args: argparse.Namespace, ladder: Ladder) -> int:
    """--add-author, --revoke-author, --authors: the authors' tokens, kept (hashed) in the ladder's output."""
    from referee.apps.site.auth import Authors

    authors = Authors(ladder.output)
    if args.add_author:
        token = authors.issue(args.add_author, ladder.source)
        print(
            f"author {args.add_author}'s token (shown this once; only its hash is kept, in "
            f"{authors.path}):\n\n    {token}\n\n"
            "Give it to the author alone. With it they upload (POST /api/submissions, Authorization: Bearer TOKEN) "
            "and sign in to their page on `referee serve`; --revoke-author ends it, --add-author again replaces it."
        )
        return 0
    if args.revoke_author:
        key = authors.revoke(args.revoke_author)
        print(f"author {key.author}: token revoked ({key.revoked}); it signs in and uploads no more")
        return 0
    if not authors.keys:
        print(f"no author has a token yet: referee ladder {args.ladder} --add-author NAME")
    for name, key in sorted(authors.keys.items()):
        state = f"revoked {key.revoked}" if key.revoked else "in force"
        print(f"{name}: token issued {key.issued}, {state}")
    return 0


def _say(line: str) -> None:
    print(line, flush=True)
