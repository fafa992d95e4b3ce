"""The commands that read games' logs: verify one, tell it move by move, write its replay page, export a league's."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.common.errors import RefereeError

NOTES_HELP = (
    "with the bots' private notes beside their decisions (notes/GAME_ID.jsonl.zst in a league's output, "
    "notes/NAME.jsonl beside another log NAME.jsonl): for the organiser's eyes and each bot's author, never to publish"
)

if TYPE_CHECKING:
    from referee.cli.options import Commands
    from referee.records.transcript import Step


def add_verify(commands: Commands) -> None:
    """Add ``referee verify``: a game's log replayed through the rules engine."""
    verify = commands.add_parser("verify", help="replay a game log through the rules engine")
    verify.add_argument(
        "log", type=Path, help="a game's log (games/GAME_ID.jsonl.zst in a league's output, or a plain .jsonl)"
    )
    verify.set_defaults(func=_verify)


def add_show(commands: Commands) -> None:
    """Add ``referee show``: a game told move by move from its log."""
    show = commands.add_parser(
        "show",
        help="tell a game move by move from its log",
        description="One line per step: the deal, every move with the player's cards and the table, each "
        "showdown with its ranks and lives lost, the result.",
    )
    show.add_argument("game", metavar="GAME", help="a game log file, or a game id with --output DIR")
    show.add_argument("--output", type=Path, metavar="DIR", help="a league's output directory, to find GAME by its id")
    show.add_argument(
        "--seat",
        type=int,
        metavar="N",
        help="only what seat N saw: its own cards, the face-up cards and moves, the showdowns",
    )
    show.add_argument("--json", action="store_true", help="print JSON: every step with the table (or the seat's view)")
    show.add_argument("--html", type=Path, metavar="FILE", help="write the game's replay page to FILE instead")
    show.add_argument("--notes", action="store_true", help=NOTES_HELP)
    show.set_defaults(func=_show)


def add_replay(commands: Commands) -> None:
    """Add ``referee replay``: a game's replay page, one HTML file."""
    replay = commands.add_parser("replay", help="write a game's replay page: one HTML file that opens anywhere")
    replay.add_argument("game", metavar="GAME", help="a game log file, or a game id with --output DIR")
    replay.add_argument(
        "--output", type=Path, metavar="DIR", help="a league's output directory, to find GAME by its id"
    )
    replay.add_argument("-o", "--out", type=Path, metavar="FILE", help="the page to write (default: GAME_ID.html here)")
    replay.add_argument("--notes", action="store_true", help=NOTES_HELP)
    replay.set_defaults(func=_replay)


def add_export(commands: Commands) -> None:
    """Add ``referee export``: a league's games as training data, or as one archive of what may be published."""
    export = commands.add_parser(
        "export",
        help="write a league's games as training data, or as one archive of every game that may be shown",
        description="--trajectories: every seat's decisions of the league's games, replayed from their logs: the "
        "observation as the learning environments encode it, the legal actions, the action played and the seat's "
        "final reward (docs/environments.md). --archive: every game that may be shown now (none still held back "
        "for the games dealt alike with it), its record and its log, with the league's public record, as one "
        "compressed tar archive (docs/viewing.md).",
    )
    export.add_argument("output", type=Path, metavar="DIR", help="a league's output folder (the one holding games/)")
    what = export.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--trajectories",
        type=Path,
        metavar="OUT",
        help="the file to write: JSON lines, or numpy arrays if OUT ends in .npz",
    )
    what.add_argument(
        "--archive",
        type=Path,
        metavar="OUT",
        help="the archive to write: OUT ends in .tar.gz (or .tgz), gzip, or .tar.zst, Zstandard (written into DIR "
        "as games.tar.gz, it is linked from the league's page opened from disk)",
    )
    export.set_defaults(func=_export)


def game_log_path(game: str, output: Path | None) -> Path:
    """The log of ``game``: a file, or a game id in a league's output directory."""
    from referee.common.errors import LeagueError
    from referee.records.gamelog import existing_log, find_log, log_files, log_game_id

    if output is not None:
        games = output / "games"
        game_id = game.removesuffix(".zst").removesuffix(".jsonl")
        found = find_log(games, game_id) if game_id and "/" not in game_id else None
        if found is None:
            known = [log_game_id(entry) for entry in log_files(games)[:5]]
            hint = f" (for example {', '.join(known)})" if known else f" ({games} holds no game logs)"
            raise LeagueError(f"--output {output}: no game {game!r}; give a game id from {games}{hint}")
        return found
    path = existing_log(Path(game))
    if not path.is_file():
        raise LeagueError(f"{game}: no such game log; give a game log file, or a game id with --output DIR")
    return path


def _notes_of(log: Path, wanted: bool) -> dict[int, tuple[int, str]] | None:
    """The bots' private notes of the game whose log is ``log``, by decision, if ``wanted`` (--notes); None if not
    wanted, {} if its bots wrote none."""
    if not wanted:
        return None
    from referee.records.notes import notes_beside, read_notes

    path = notes_beside(log)
    return read_notes(path).by_decision() if path.is_file() else {}


def _show(args: argparse.Namespace) -> int:
    import json

    from referee.records.transcript import read_game, transcript_json, transcript_lines

    log = game_log_path(args.game, args.output)
    start, steps = read_game(log)
    notes = _notes_of(log, args.notes)
    if args.html is not None:
        return _write_replay(start, steps, args.html, notes)
    seat = args.seat
    if seat is not None and not 0 <= seat < start["num_players"]:
        raise RefereeError(f"--seat {seat}: the game has seats 0 to {start['num_players'] - 1}")
    try:
        if args.json:
            print(json.dumps(transcript_json(start, steps, seat), ensure_ascii=False))
        else:
            for line in transcript_lines(start, steps, seat, notes):
                print(line)
        sys.stdout.flush()
    except BrokenPipeError:  # `referee show ... | head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _replay(args: argparse.Namespace) -> int:
    from referee.records.transcript import read_game

    log = game_log_path(args.game, args.output)
    start, steps = read_game(log)
    return _write_replay(start, steps, args.out or Path(f"{start['game_id']}.html"), _notes_of(log, args.notes))


def _write_replay(
    start: dict[str, Any], steps: list[Step], page: Path, notes: dict[int, tuple[int, str]] | None = None
) -> int:
    from referee.publish.replay_page import write_replay_page

    size = write_replay_page(start, steps, page, notes=notes)
    private = f", with {len(notes)} private notes of its bots: not for publishing" if notes else ""
    print(f"{page}: the replay of {start['game_id']} ({len(steps)} steps, {size / 1024:.0f} KiB{private})")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from referee.records.gamelog import existing_log, verify_log

    args.log = existing_log(args.log)
    if not args.log.is_file():
        what = "is a folder" if args.log.is_dir() else "does not exist"
        raise RefereeError(f"{args.log}: {what}; give a game's log (games/GAME_ID.jsonl.zst in a league's output)")
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


def _export(args: argparse.Namespace) -> int:
    if args.archive is not None:
        return _export_archive(args.output, args.archive)
    from referee.env.trajectories import export_trajectories

    summary = export_trajectories(args.output, args.trajectories)
    print(f"{summary.path}: {summary.decisions} decisions of {summary.games} games")
    return 0


def _export_archive(output: Path, archive: Path) -> int:
    from referee.publish.archive import compression_of, export_archive

    compression_of(archive)  # a name it cannot be, said before the folder is read
    archived = export_archive(output, archive)
    games = len(archived.games)
    held = f"; {archived.held} held back (a game dealt alike still in play, or the spectator delay)"
    print(
        f"{archive}: {games} game{'' if games == 1 else 's'}, {archived.logs} with {'its' if archived.logs == 1 else 'their'} "
        f"log{'' if archived.logs == 1 else 's'}, in {archived.root}/ ({archive.stat().st_size / 1024:.0f} KiB)"
        + (held if archived.held else "")
    )
    return 0
