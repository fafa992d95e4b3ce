"""A ladder's own records: the register of submissions judged and of status changes, and the tables drawn.

Two append-only files in the ladder's output folder, beside the
``games.jsonl`` that every league writes:

- ``register.jsonl``: every version of every author's bot as it was judged
  (accepted or rejected, why, its content digest, when), and every change of
  a bot's status (withdrawn, disqualified, suspended, reinstated: active
  again), in the order they happened, each with the number of tables drawn
  before it took effect. Those decide which bots could be drawn for each
  table, so with the seed and ``tables.jsonl`` they make a ladder's history
  replayable: every table's draw can be done again. Between them, each
  failure of a version's process (a crash, a start that failed), so that a
  ladder started again counts them toward the restart limit.
- ``tables.jsonl``: each table as it was drawn, before its first game
  started: its number, its bots in seat order and its seed, and, drawn where
  the ranking is unsure, ``draw: unsure`` with the places in the standings it
  was drawn from (every active bot the standings placed: rank, best and worst
  rank), so that its draw can be done again without the games. A run that
  stops with a table half played finds it here and plays the rest of it.

Each line is written whole and flushed to disk before anything depends on
it; a last line cut short by a crash is dropped when the file is read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from referee.apps.ladder.table_draw import EVEN, UNSURE, Place
from referee.common.atomic import append_whole
from referee.common.errors import OutputError
from referee.leaguefile.schedule.scheduled_games import ScheduledGame, rotation_group
from referee.protocol.standing import ACTIVE, DISQUALIFIED, SUSPENDED, WITHDRAWN, BotStatus
from referee.records.results import ACCEPTED

REGISTER_FILE = "register.jsonl"
FAILURES_DIR = "failures"  # OUTPUT/failures/: the output of each start of a version that failed, kept
TABLES_FILE = "tables.jsonl"


@dataclass(frozen=True)
class Judged:
    """One version of an author's submission as the ladder judged it."""

    author: str
    version: int  # from 1, counting every version judged, accepted or not
    bot: str  # its name on the ladder's pages: AUTHOR-vVERSION
    digest: str  # of the submission folder's content (referee.leaguefile.submissions.folder_digest)
    verdict: str  # ACCEPTED or REJECTED
    reason: str = ""  # why it was rejected, whole: for its author alone (a build's or a check's output in it)
    at: str = ""  # when, in UTC (ISO 8601)
    tables_drawn: int = 0  # tables drawn before the verdict: an accepted version may sit at the next one
    kind: str = "judged"
    summary: str = ""  # why it was rejected, in the referee's words alone: what everyone may read


#: The statuses that close a version's tables drawn before: their games not started are never played.
CLOSING = (DISQUALIFIED, SUSPENDED)


@dataclass(frozen=True)
class StatusChange:
    """A bot withdrawn (it plays no new game; its games count), disqualified (its games count for no one),
    suspended (it could not play: it plays no new game, its games count) or reinstated (active again)."""

    bot: str
    status: BotStatus
    reason: str = ""
    at: str = ""
    tables_drawn: int = 0  # tables drawn before the change: the next one is drawn without the bot
    kind: str = "status"


@dataclass(frozen=True)
class Failure:
    """A failure of an accepted version's process (a crash, a start that failed), as the restart limit counts it."""

    bot: str
    detail: str  # what happened, in the referee's words (no path of the machine)
    log: str = ""  # the process's output file, in OUTPUT/logs
    at: str = ""
    tables_drawn: int = 0
    kind: str = "failure"
    # A failed start's output, kept in OUTPUT/failures (a later run's process of the same number writes its log anew)
    kept: str = ""


@dataclass(frozen=True)
class DrawnTable:
    """A table as it was drawn: its number from 1, its bots in seat order before rotation, its seed; how it was drawn.

    ``places`` are what an unsure draw was given (None: the table was drawn evenly).
    """

    number: int
    bots: tuple[str, ...]
    seed: int
    places: Mapping[str, Place] | None = None

    @property
    def draw(self) -> str:
        return EVEN if self.places is None else UNSURE

    def games(self) -> list[ScheduledGame]:
        """Its games, one per seat rotation, all on its seed (duplicate deals), numbered after the tables before it.

        Every table of a ladder seats as many bots as the ladder's tables do,
        so table ``n``'s first game has index ``(n - 1) x table size``.
        """
        size = len(self.bots)
        return list(rotation_group((self.number - 1) * size, 1, self.number, self.bots, self.seed))

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"table": self.number, "bots": list(self.bots), "seed": str(self.seed)}
        if self.places is not None:
            record["draw"] = UNSURE
            record["places"] = {bot: place.to_json() for bot, place in sorted(self.places.items())}
        return record

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> DrawnTable:
        """A table from its line of ``tables.jsonl``; one written before the unsure draw was drawn evenly."""
        places = None
        if record.get("draw", EVEN) == UNSURE:
            places = {str(bot): Place.of(place) for bot, place in record["places"].items()}
        elif record.get("draw", EVEN) != EVEN:
            raise ValueError(f"no draw is called {record['draw']!r}")
        return cls(int(record["table"]), tuple(record["bots"]), int(record["seed"]), places)


class JsonLines:
    """An append-only file of JSON objects, one a line, each flushed to disk as it is added."""

    def __init__(self, path: Path) -> None:
        self.path = path
        records, good_bytes = _read(path)
        self.records: list[dict[str, Any]] = records
        if path.exists() and good_bytes != path.stat().st_size:
            with open(path, "r+b") as existing:  # drop the last line, cut short by a crash
                existing.truncate(good_bytes)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)

    def append(self, record: Mapping[str, Any]) -> None:
        data = (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        append_whole(self._fd, data, os.fstat(self._fd).st_size)
        self.records.append(dict(record))

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _read(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The whole records of ``path`` and the bytes they take; a damaged line before others is an OutputError."""
    records: list[dict[str, Any]] = []
    good_bytes = 0
    if not path.exists():
        return records, good_bytes
    with open(path, "rb") as lines:
        damaged: int | None = None
        for line_number, line in enumerate(lines, start=1):
            if damaged is not None:
                raise OutputError(
                    f"{path}:{damaged}: the line is not a whole JSON object, and lines follow it: the file was "
                    f"damaged after it was written; repair or remove line {damaged}, then run again"
                )
            try:
                record = json.loads(line) if line.endswith(b"\n") else None
            except ValueError:
                record = None
            if not isinstance(record, dict):
                damaged = line_number
                continue
            records.append(record)
            good_bytes += len(line)
    return records, good_bytes


class Register:
    """``register.jsonl``: the versions judged and the status changes, in order."""

    def __init__(self, output: Path) -> None:
        self.file = JsonLines(output / REGISTER_FILE)

    def judged(self) -> Iterator[Judged]:
        for record in self.file.records:
            if record.get("kind") == "judged":
                yield _judged(record)

    def status_changes(self) -> Iterator[StatusChange]:
        for record in self.file.records:
            if record.get("kind") == "status":
                yield StatusChange(**{key: record[key] for key in StatusChange.__dataclass_fields__ if key in record})

    def add(self, record: Judged | StatusChange | Failure) -> None:
        self.file.append(asdict(record))

    def failures_since_entry(self) -> dict[str, list[Failure]]:
        """Each version's failures since it last entered play (accepted, or reinstated): what its restarts used."""
        since: dict[str, list[Failure]] = {}
        for record in self.file.records:
            kind, bot = record.get("kind"), record.get("bot")
            if kind == "failure" and isinstance(bot, str):
                since.setdefault(bot, []).append(_failure(record))
            elif kind == "status" and record.get("status") == ACTIVE:
                since.pop(str(bot), None)
        return since

    def closed_before(self) -> dict[str, int]:
        """Each version disqualified or suspended, with the tables drawn before the last such change: the games not
        started of its tables up to that number are never played, whatever its status later."""
        closed: dict[str, int] = {}
        for change in self.status_changes():
            if change.status in CLOSING:
                closed[change.bot] = max(closed.get(change.bot, 0), change.tables_drawn)
        return closed

    def entered_at(self) -> dict[str, int]:
        """Each accepted version's tables drawn when it last entered play (its verdict, or its reinstatement)."""
        entered: dict[str, int] = {}
        for record in self.file.records:
            accepted = record.get("kind") == "judged" and record.get("verdict") == ACCEPTED
            if accepted or (record.get("kind") == "status" and record.get("status") == ACTIVE):
                entered[record["bot"]] = int(record.get("tables_drawn", 0))
        return entered

    def statuses(self, table: int | None = None) -> dict[str, str]:
        """Every accepted bot's status, in the order accepted: active, withdrawn (replaced, or by the organiser)...

        Now, or with ``table``: as table number ``table`` was drawn (from what
        was recorded before it), so that its draw can be done again.
        """
        status: dict[str, str] = {}
        latest: dict[str, str] = {}
        for record in self.file.records:
            if table is not None and record.get("tables_drawn", 0) >= table:
                break
            if record.get("kind") == "judged" and record.get("verdict") == ACCEPTED:
                previous = latest.get(record["author"])
                if previous is not None and status.get(previous) == ACTIVE:
                    status[previous] = WITHDRAWN  # replaced by its author's new version
                latest[record["author"]] = record["bot"]
                status[record["bot"]] = ACTIVE
            elif record.get("kind") == "status" and record.get("bot") in status:
                status[record["bot"]] = record["status"]
        return status

    def close(self) -> None:
        self.file.close()


def _judged(record: Mapping[str, Any]) -> Judged:
    return Judged(**{key: record[key] for key in Judged.__dataclass_fields__ if key in record})


def judged_versions(output: Path) -> list[Judged]:
    """The versions judged, in order: ``register.jsonl`` read by another process than the ladder's, never written.

    A line being written is not read yet; a damaged file reads as no version.
    """
    try:
        records, _ = _read(output / REGISTER_FILE)
    except (OSError, OutputError):
        return []
    return [_judged(record) for record in records if record.get("kind") == "judged"]


def version_failures(output: Path, bot: str) -> list[Failure]:
    """Version ``bot``'s failures since it last entered play, in order: ``register.jsonl`` read by another process
    than the ladder's, never written (a damaged file reads as none)."""
    try:
        records, _ = _read(output / REGISTER_FILE)
    except (OSError, OutputError):
        return []
    found: list[Failure] = []
    for record in records:
        if record.get("bot") != bot:
            continue
        if record.get("kind") == "failure":
            found.append(_failure(record))
        elif record.get("kind") == "status" and record.get("status") == ACTIVE:
            found = []
    return found


def _failure(record: Mapping[str, Any]) -> Failure:
    return Failure(**{key: record[key] for key in Failure.__dataclass_fields__ if key in record})


class Tables:
    """``tables.jsonl``: the tables drawn, in order."""

    def __init__(self, output: Path) -> None:
        self.file = JsonLines(output / TABLES_FILE)
        self.drawn: list[DrawnTable] = []
        for line_number, record in enumerate(self.file.records, start=1):
            try:
                table = DrawnTable.of(record)
            except (KeyError, TypeError, ValueError, AttributeError):
                raise OutputError(f"{self.file.path}:{line_number}: not a table record: {record}") from None
            if table.number != line_number:
                raise OutputError(f"{self.file.path}:{line_number}: table {table.number} where {line_number} was due")
            self.drawn.append(table)

    def add(self, table: DrawnTable) -> None:
        if table.number != len(self.drawn) + 1:
            raise ValueError(f"table {table.number} drawn where {len(self.drawn) + 1} is due")
        self.file.append(table.to_json())
        self.drawn.append(table)

    def games(self) -> list[ScheduledGame]:
        return [game for table in self.drawn for game in table.games()]

    def close(self) -> None:
        self.file.close()
