"""The commands around a league's results: a seed to commit to, the leaderboard, two bots compared, the pages served."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from referee.apps.site import DEFAULT_PORT

if TYPE_CHECKING:
    from referee.cli.options import Commands


def add_seed(commands: Commands) -> None:
    """Add ``referee seed``: a secret league seed and its commitment."""
    seed = commands.add_parser(
        "seed",
        help="print a fresh secret league seed (64 random bits) and its commitment, to publish before the league",
        description="Prints a fresh secret league seed (64 random bits) and its commitment. Put the seed in the "
        "league file and keep it secret until the league is over; publish the commitment now, so that anyone can "
        "check afterwards that the seed was chosen before the games.",
    )
    seed.add_argument(
        "--check", type=int, metavar="SEED", help="print the commitment of SEED instead of a fresh seed's"
    )
    seed.set_defaults(func=_seed)


def add_serve(commands: Commands) -> None:
    """Add ``referee serve``: a league's or ladder's output folder over HTTP; for a ladder, its authors' pages."""
    serve = commands.add_parser(
        "serve",
        help="serve a league's or ladder's pages on this machine; open pages update as games finish, and a "
        "ladder's authors upload and follow their bots",
        description="Serves the pages of a league's or ladder's output folder (the standings, the replays and game "
        "logs; never league.json, the builds or any bot's output). Given a ladder file, or the output folder of a "
        "ladder whose authors have tokens (referee ladder LADDER.yaml --add-author NAME), each author also signs in "
        "to a page of their own and uploads new versions (POST /api/submissions). See docs/ladder.md.",
    )
    serve.add_argument(
        "target", type=Path, metavar="DIR|LADDER.yaml", help="a league's or ladder's output folder, or a ladder file"
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)"
    )
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"the port (default {DEFAULT_PORT})")
    serve.add_argument(
        "--forwarded-allow-ips",
        default="",
        metavar="ADDRESSES",
        help="the reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed, as IP addresses or "
        "networks, comma-separated (default: none; a TLS proxy on this machine: 127.0.0.1)",
    )
    serve.add_argument(
        "--offer-play",
        action="store_true",
        help="let visitors play the league's game against the sample bots at /play/ (in the server; at most a few "
        "games at once)",
    )
    serve.set_defaults(func=_serve)


def add_leaderboard(commands: Commands) -> None:
    """Add ``referee leaderboard``: the standings of a results folder."""
    leaderboard = commands.add_parser("leaderboard", help="print the leaderboard of a results directory")
    leaderboard.add_argument("directory", type=Path, help="a league's output folder (it holds league.json)")
    leaderboard.add_argument("--write", action="store_true", help="also rewrite the leaderboard files there")
    leaderboard.add_argument(
        "--adjust-for-luck",
        action="store_true",
        help="also show each bot's mean score with the luck of the cards taken out, beside the raw one, with their "
        "intervals (each game's log replayed; docs/statistics.md, 'Luck')",
    )
    leaderboard.set_defaults(func=_leaderboard)


def add_compare(commands: Commands) -> None:
    """Add ``referee compare``: two bots compared on the deals they shared."""
    compare = commands.add_parser("compare", help="compare two bots on the deals they shared in a results directory")
    compare.add_argument("directory", type=Path, help="a league's output folder (it holds league.json)")
    compare.add_argument("bot", help="the bot whose advantage is measured")
    compare.add_argument("other", help="the bot it is measured against")
    compare.add_argument(
        "--adjust-for-luck",
        action="store_true",
        help="also show the mean score difference with the luck of the cards taken out (each game's log replayed; "
        "docs/statistics.md, 'Luck')",
    )
    compare.set_defaults(func=_compare)


def _seed(args: argparse.Namespace) -> int:
    """A seed no bot can guess, and the commitment that lets anyone check it once it is revealed."""
    import secrets

    from referee.engine.seeding import GUESSABLE_SEED_BELOW, seed_commitment

    if args.check is not None:
        print(f"commitment: {seed_commitment(args.check)}")
        return 0
    value = GUESSABLE_SEED_BELOW + secrets.randbelow(2**64 - GUESSABLE_SEED_BELOW)
    print(f"seed: {value}")
    print(f"commitment: {seed_commitment(value)}")
    print(
        "Put the seed in the league file and keep it secret until the league is over; publish the commitment now.",
        file=sys.stderr,
    )
    return 0


def _serve(args: argparse.Namespace) -> int:
    from referee.apps.site import serve

    return serve(args.target, args.host, args.port, args.forwarded_allow_ips, args.offer_play)


def _leaderboard(args: argparse.Namespace) -> int:
    """Print the standings of a results folder (and a duel's verdict); with ``--write``, write its files again."""
    from referee.leaguefile.duel_state import duel_report
    from referee.publish.console_table import console_table
    from referee.publish.files import write_leaderboards
    from referee.publish.live import rebuild_replays
    from referee.publish.text import duel_lines
    from referee.records.results import RESULTS_FILE, read_games
    from referee.records.standings import folder_standings

    standings, recorded = folder_standings(args.directory, adjust_for_luck=args.adjust_for_luck)
    print(f"{recorded.name}: {standings.games} game{'s' if standings.games != 1 else ''}")
    print(console_table(standings))
    games = list(read_games(args.directory / RESULTS_FILE, latencies=False))
    duel = duel_report(recorded, games, args.directory)
    if duel is not None:
        print("\n".join(duel_lines(duel)))
    if args.write:
        rebuilt = rebuild_replays(args.directory, [game.game_id for game in games])
        write_leaderboards(standings, args.directory, recorded.name)
        print(
            f"leaderboards written to {args.directory}"
            + (
                f"; {len(rebuilt)} missing or damaged replay page{'s' if len(rebuilt) != 1 else ''} "
                "written again from the game logs"
                if rebuilt
                else ""
            )
        )
    return 0


def _compare(args: argparse.Namespace) -> int:
    from referee.publish.text import comparison_text
    from referee.records.standings import folder_standings

    standings, _ = folder_standings(args.directory)
    print(comparison_text(args.bot, args.other, standings.comparison(args.bot, args.other)))
    if args.adjust_for_luck:
        from referee.publish.text import luck_adjusted_text
        from referee.records.results import RESULTS_FILE, read_games
        from referee.records.standings import folder_luck, luck_adjusted

        records = read_games(args.directory / RESULTS_FILE, latencies=False)
        adjusted = luck_adjusted(records, args.bot, args.other, folder_luck(args.directory))
        print(luck_adjusted_text(adjusted))
    return 0
