"""A league's or season's published games as one compressed archive: ``games.tar.gz`` (or ``.tar.zst``).

What may be in it is what may be shown now (:class:`referee.records.visibility.Shown`, asked once for the whole
archive): never a game held back, since whatever of one game is shown tells the cards of every game dealt alike.
A tar archive of one folder, named after the league, holding:

- ``league.json``: the league's public record: its name, game, bots, the games scheduled, its settings (the seed
  once every game scheduled is shown, until then only its commitment, as the league's page), a season's entries,
  changes and submissions (in the referee's words: :mod:`referee.publish.redaction`), the referee's version;
- ``games.jsonl``: the record of every game that may be shown, in ``games.jsonl``'s order, each as ``referee
  serve`` answers it (:func:`referee.publish.redaction.public_game_record`);
- ``games/GAME_ID.jsonl``: the log of each of those games that the league still keeps (``keep_logs``), as plain
  JSON lines, each record as ``referee serve`` answers it (:func:`referee.publish.redaction.public_log_record`:
  a fault in the referee's words);
- ``README.txt``: what the archive holds, and when it was made.

Never a bot's output (``logs/``), its code (``builds/``), ``league.json`` as the organiser keeps it (the league
file, the seed while games are held), nor any other file of the folder. Written as a stream: a season's archive
takes the memory of one game's log, whatever its size. Compressed with gzip (the standard library's; any ``tar``
opens it) or Zstandard (``.tar.zst``: ``zstd -d``, or ``tar --zstd``), chosen by the name's ending.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import tarfile
import tempfile
import time
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import zstandard

from referee import __version__
from referee.common.errors import OutputError, RefereeError
from referee.publish.league_page import public_settings
from referee.publish.redaction import public_game_record, public_log_record, public_submissions, public_text
from referee.records.gamelog import GameLogError, find_log, log_text
from referee.records.results import RESULTS_FILE, LeagueRecord, count_games, read_league
from referee.records.visibility import Shown

# The ends of an archive's name, and how each is compressed.
COMPRESSIONS = {".tar.gz": "gz", ".tgz": "gz", ".tar.zst": "zst"}
GZIP_LEVEL = 6
ZSTD_LEVEL = 9
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")  # a game id that may name a member (no separator, no "..")
_SPOOL_BYTES = 16 * 2**20  # games.jsonl's records are kept in memory up to this, then in a temporary file


class ArchiveError(RefereeError):
    """An archive that cannot be written as asked (its name, or the folder it is of)."""


@dataclass(frozen=True)
class Archived:
    """What an archive holds: the games (their records), the logs among them, and the games left out as held."""

    games: tuple[str, ...]
    logs: int
    held: int
    root: str


def compression_of(path: Path) -> str:
    """How an archive named ``path`` is compressed (``gz`` or ``zst``); an :class:`ArchiveError` for another name."""
    name = path.name.lower()
    for ending, kind in COMPRESSIONS.items():
        if name.endswith(ending) and len(name) > len(ending):
            return kind
    raise ArchiveError(
        f"{path}: an archive's name ends in .tar.gz (or .tgz), gzip, which any tar opens, or .tar.zst, Zstandard"
    )


def root_name(name: str) -> str:
    """The archive's one folder: the league's name as a file's name (``my league`` is ``my-league``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "league"


def public_league(directory: Path, league: LeagueRecord | None, shown_games: int) -> dict[str, Any]:
    """``league.json`` as anyone may read it, ``shown_games`` games being shown: the seed only once every game
    scheduled is (else its commitment), nothing of the league file but its settings, a season's reasons in the
    referee's words."""
    if league is None:
        return {"name": directory.name}
    finished = league.scheduled is not None and shown_games >= league.scheduled
    entries = {
        bot: {
            key: public_text(str(value), directory) if key == "reason" else value
            for key, value in entry.items()
            if key in ("status", "reason", "replaces", "author")
        }
        for bot, entry in league.entries.items()
    }
    data: dict[str, Any] = {
        "name": league.name,
        "game": league.game,
        "bots": list(league.bots) if league.bots is not None else None,
        "scheduled": league.scheduled,
        "settings": public_settings(league.settings, finished=finished),
        "referee_version": league.referee_version,
        "started": league.started,
    }
    if entries:
        data["entries"] = entries
    if league.changes:
        data["changes"] = [dict(change) for change in league.changes]
    if league.submissions:
        data["submissions"] = public_submissions(league.submissions, directory)
    return data


def write_archive(
    directory: Path, stream: IO[bytes], compression: str = "gz", *, shown: Shown | None = None
) -> Archived:
    """Write the archive of the league folder ``directory``'s games that ``shown`` lets be shown (else as now) to
    ``stream``, compressed with ``compression`` (``gz`` or ``zst``); what it holds."""
    directory = Path(directory)
    if not (directory / RESULTS_FILE).is_file():
        raise ArchiveError(f"{directory}: no {RESULTS_FILE}; give a league's output folder (the one holding games/)")
    shown = shown or Shown.read(directory)  # the rule first, then the records it accounts for
    try:
        league = read_league(directory)
    except OutputError:
        league = None  # the games are still published; of the league, its folder's name
    root = root_name(league.name if league else directory.name)
    made = time.time()
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as records:
        games = []
        for record in shown.records(directory):
            records.write(_line(public_game_record(record)))
            games.append(str(record["game_id"]))
        held = max(0, count_games(directory / RESULTS_FILE) - len(games))
        packed = _compressor(stream, compression)
        logs = 0
        with tarfile.open(fileobj=packed, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            league_data = public_league(directory, league, len(games))
            _add(tar, f"{root}/README.txt", _readme(league_data, len(games), made).encode(), made)
            _add(tar, f"{root}/league.json", _json(league_data), made)
            size = records.tell()
            records.seek(0)
            _add(tar, f"{root}/{RESULTS_FILE}", records, made, size)
            for game_id in games:
                text = _public_log(directory, game_id)
                if text is not None:
                    _add(tar, f"{root}/games/{game_id}.jsonl", text, made)
                    logs += 1
        packed.close()  # its end, in the stream, which stays open
    return Archived(tuple(games), logs, held, root)


def export_archive(directory: Path, target: Path, *, shown: Shown | None = None) -> Archived:
    """Write the archive of ``directory``'s games that may be shown to the file ``target`` (``.tar.gz``, ``.tgz`` or
    ``.tar.zst``), in one step: a reader never finds half of one."""
    compression = compression_of(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            archived = write_archive(directory, stream, compression, shown=shown)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    return archived


def _compressor(stream: IO[bytes], compression: str) -> IO[bytes]:
    """A stream that writes into ``stream`` compressed; closing it ends the compressed data, not ``stream``."""
    writer: IO[bytes]
    if compression == "gz":
        writer = gzip.GzipFile(fileobj=stream, mode="wb", compresslevel=GZIP_LEVEL, mtime=0)  # type: ignore[assignment]
        return writer
    if compression == "zst":
        writer = zstandard.ZstdCompressor(level=ZSTD_LEVEL).stream_writer(stream, closefd=False)
        return writer
    raise ArchiveError(f"compression {compression!r}: gz or zst")


def _public_log(directory: Path, game_id: str) -> bytes | None:
    """A game's log as plain JSON lines, each record as published; None where the league no longer keeps it."""
    if not _PLAIN_ID.match(game_id) or ".." in game_id:
        return None
    path = find_log(directory / "games", game_id)
    if path is None:
        return None
    try:
        text = log_text(path)
    except (OSError, ValueError, GameLogError):
        return None  # removed since (keep_logs), or damaged: the record stays, as on the league's page
    out = io.BytesIO()
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.write(_line(public_log_record(record)))
    return out.getvalue()


def _add(tar: tarfile.TarFile, name: str, content: bytes | IO[bytes], made: float, size: int | None = None) -> None:
    info = tarfile.TarInfo(name)
    info.mtime = int(made)
    info.mode = 0o644
    info.uname = info.gname = ""
    if isinstance(content, bytes):
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
    else:
        info.size = size or 0
        tar.addfile(info, content)


def _line(record: Mapping[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _json(data: Mapping[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode("utf-8")


def _readme(league: Mapping[str, Any], games: int, made: float) -> str:
    when = datetime.fromtimestamp(made, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{league.get('name')}: {games} game{'' if games == 1 else 's'}, as published at {when} by referee "
        f"{__version__}.\n\n"
        "league.json         the league's public record (the seed once every game scheduled is shown)\n"
        "games.jsonl         one line per game: its record, as games.jsonl has it\n"
        "games/GAME_ID.jsonl each game's log, as JSON lines (`referee show` and `referee verify` read them)\n\n"
        "Only games that could be shown then are here: a game is held back until every game dealt alike with it\n"
        "has ended (and the league's spectator delay after). A fault is told in the referee's words; no bot's\n"
        "output is here. A game whose log the league no longer keeps (keep_logs) has its record alone.\n"
    )
