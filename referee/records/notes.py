"""A bot's private notes: what it wrote beside its decisions (``Decision.note``), kept apart from the game's log.

A note is for its bot's author alone: it may say what the bot believed of the hidden cards and why it chose,
which is its strategy. So it is never in the game's log, its record, its feed, its replay or an export: a
game's notes are their own file, ``notes/GAME_ID.jsonl.zst`` in a league's folder (the public routes of
``referee serve`` never read that folder), shown only in the author's private replay of the game (the
ladder's author page), to a league's organiser (``referee show --notes``) and by ``referee check-bot``.

The caps (never a fault: a bot's notes are counted and cut, its game goes on):

- a note is kept up to :data:`NOTE_BYTES` bytes of UTF-8, cut at a character and marked :data:`CUT_MARK`;
- a seat's notes in a game are kept up to :data:`GAME_NOTE_BYTES` bytes in all; the note that crosses the
  line is cut to fit, and the later ones are only counted.

The file is JSON lines: first ``{"type": "notes", "game_id": ..., "players": [...]}``, then one
``{"type": "note", "n": DECISION, "seat": SEAT, "note": TEXT}`` per note kept, in the order of the decisions,
and last ``{"type": "notes_end", "seats": [{"kept": K, "cut": C, "dropped": D, "bytes": B}, ...]}`` (by seat:
notes kept, notes cut, notes dropped past the game's cap, bytes kept). A game whose bots wrote no note has no file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.protocol.messages import CUT_MARK, GAME_NOTE_BYTES, NOTE_BYTES, cut_note
from referee.records.gamelog import (
    COMPRESSED_SUFFIX,
    GAME_LOG_DIR,
    PLAIN_SUFFIX,
    GameLogError,
    log_game_id,
    log_text,
    store_log,
)

NOTES_DIR = "notes"  # a league's notes/GAME_ID.jsonl.zst: each game's notes, private (see the module's text)


@dataclass
class SeatNotes:
    """What one seat's notes in a game came to: kept, cut, dropped (past the game's cap), and the bytes kept."""

    kept: int = 0
    cut: int = 0
    dropped: int = 0
    bytes: int = 0


class GameNotes:
    """One game's notes, taken decision by decision under the caps; written apart from the game's log."""

    def __init__(self, game_id: str, players: Sequence[str]) -> None:
        self.game_id = game_id
        self.players = list(players)
        self.seats = [SeatNotes() for _ in players]
        self.notes: list[tuple[int, int, str]] = []  # (decision, seat, note kept)

    def take(self, decision: int, seat: int, note: str) -> None:
        """Keep ``seat``'s ``note`` on ``decision``, as far as the caps allow."""
        counts = self.seats[seat]
        room = GAME_NOTE_BYTES - counts.bytes
        if room <= 0:
            counts.dropped += 1
            return
        kept, cut = cut_note(note, min(NOTE_BYTES, room))
        if cut:
            counts.cut += 1
            kept += CUT_MARK
        counts.kept += 1
        counts.bytes += len(kept.encode("utf-8")) - (len(CUT_MARK) if cut else 0)
        self.notes.append((decision, seat, kept))

    def __bool__(self) -> bool:
        return any(counts.kept or counts.dropped for counts in self.seats)

    def lines(self) -> bytes:
        """The notes file's JSON lines (see the module's text)."""
        records: list[dict[str, Any]] = [{"type": "notes", "game_id": self.game_id, "players": self.players}]
        records += [{"type": "note", "n": n, "seat": seat, "note": note} for n, seat, note in self.notes]
        records.append({"type": "notes_end", "seats": [vars(counts) for counts in self.seats]})
        return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records).encode("utf-8")

    def write(self, path: Path) -> None:
        """Write the notes to ``path`` (compressed where its name ends ``.jsonl.zst``), if any bot wrote one."""
        if self:
            path.parent.mkdir(parents=True, exist_ok=True)
            store_log(path, self.lines())


def notes_path(folder: Path, game_id: str) -> Path:
    """Where game ``game_id``'s notes are written in ``folder`` (a league's ``notes/``): compressed."""
    return folder / f"{game_id}{COMPRESSED_SUFFIX}"


def notes_beside(log: Path) -> Path:
    """Where the notes of the game whose log is ``log`` are: a league's ``notes/ID.jsonl.zst`` for its
    ``games/ID...`` log, else ``notes/NAME.jsonl`` in the log's folder for the log ``NAME.jsonl`` (``referee play
    --log``, a check game): a folder of their own, so that nothing that reads the folder's logs takes them for one."""
    game_id = log_game_id(log)
    if log.parent.name == GAME_LOG_DIR:
        return notes_path(log.parent.parent / NOTES_DIR, game_id)
    return log.parent / NOTES_DIR / f"{game_id}{PLAIN_SUFFIX}"


def remove_notes(folder: Path, game_id: str) -> None:
    """Remove game ``game_id``'s notes from ``folder``, if it has any (its log is gone: keep_logs)."""
    for suffix in (COMPRESSED_SUFFIX, PLAIN_SUFFIX):
        (folder / f"{game_id}{suffix}").unlink(missing_ok=True)


@dataclass(frozen=True)
class ReadNotes:
    """A game's notes as read back: each seat's notes by decision number, and what the caps did (by seat)."""

    players: list[str]
    by_seat: dict[int, dict[int, str]]
    seats: list[SeatNotes]

    def by_decision(self) -> dict[int, tuple[int, str]]:
        """Every note kept, by decision number: the seat that wrote it, and the note."""
        return {n: (seat, text) for seat, notes in self.by_seat.items() for n, text in notes.items()}

    def of_seats(self, seats: set[int]) -> ReadNotes:
        """Only the notes of ``seats`` (an author's own), the rest left out."""
        return ReadNotes(
            self.players,
            {seat: notes for seat, notes in self.by_seat.items() if seat in seats},
            [counts if seat in seats else SeatNotes() for seat, counts in enumerate(self.seats)],
        )


def seats_notes(path: Path, seats: set[int]) -> dict[int, tuple[int, str]]:
    """The notes in ``path`` of ``seats`` alone (an author's own), by decision; none if the game has no notes
    file, or a damaged one (its replay is then shown without them)."""
    if not path.is_file():
        return {}
    try:
        return read_notes(path).of_seats(seats).by_decision()
    except GameLogError:
        return {}


def read_notes(path: Path) -> ReadNotes:
    """The notes file ``path`` read back; raises :class:`GameLogError` naming the file and the line if it is not one."""
    try:
        text = log_text(path)
    except (OSError, UnicodeDecodeError) as error:
        raise GameLogError(f"{path}: cannot be read as a game's notes: {error}") from None
    players: list[str] = []
    by_seat: dict[int, dict[int, str]] = {}
    seats: list[SeatNotes] = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            record = json.loads(line)
            kind = record["type"]
            if kind == "notes":
                players = [str(name) for name in record["players"]]
            elif kind == "note":
                by_seat.setdefault(int(record["seat"]), {})[int(record["n"])] = str(record["note"])
            elif kind == "notes_end":
                seats = [SeatNotes(**{key: int(value) for key, value in counts.items()}) for counts in record["seats"]]
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise GameLogError(f"{path}, line {number}: not a notes record ({error!r}): {line[:120]!r}") from None
    return ReadNotes(players, by_seat, seats or [SeatNotes() for _ in players])
