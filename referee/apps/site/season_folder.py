"""What the site reads of a league's or a season's folder, never writing to it but the record of uploads.

The ladder writes, the site reads: each author's report (``reports/AUTHOR.json``,
whole verdicts and checks), the register of versions judged, ``games.jsonl``
(followed as it grows, each game indexed by the bots at its table), a game's
log and, from its ``game_end``, which lines of a bot's output file it wrote
during that game. The site adds one file of its own, ``uploads.jsonl``:
each upload landed (author, digest, time, size; never a token), so an
author's page can say a version is waiting to be judged.

Every name that comes from a request is checked against the names the
records hold before it becomes part of a path, and a file is read only
inside the folder it belongs in.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any

from referee.apps.ladder.entries import CHECKS_DIR, REPORTS_DIR
from referee.apps.ladder.guard import plain_detail
from referee.apps.ladder.history import Judged, judged_versions
from referee.common.atomic import append_whole
from referee.records.gamelog import GameLogError, find_log, read_game_log
from referee.records.results import RESULTS_FILE, GameRecord, games_after
from referee.records.visibility import Shown

UPLOADS_FILE = "uploads.jsonl"
BOT_LOGS = "logs"
GAME_LOGS = "games"
OUTPUT_LINES_SHOWN = 5_000  # of one bot in one game: a bot that prints without end still makes a page
OUTPUT_BYTES_SHOWN = 2 * 2**20
LINE_CHARS_SHOWN = 2_000
EXCERPT_BEFORE, EXCERPT_AFTER = 12, 6  # lines of output shown around a fault
A_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
# Faults whose details differ only by a number, a card or what follows a parenthesis or a semicolon (the legal
# moves then, the times) have one cause.
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_CARD = re.compile(r"\b(?:[2-9TJQKA]|10)[SHDC]\b")
_OUTPUT_FILE = re.compile(r"\(its output is in (?:[^()]*/)?([A-Za-z0-9][A-Za-z0-9._-]*\.log)\)")
STARTING_KINDS = ("startup", "handshake")  # faults of a process that played no game: its output holds none


def plain_name(name: str) -> bool:
    """Whether ``name`` names a file in a folder (no separator, no ``..``, nothing hidden), and so may join a path."""
    return bool(A_FILE_NAME.match(name)) and ".." not in name


def read_report(output: Path, author: str) -> dict[str, Any] | None:
    """``reports/AUTHOR.json``: the author's versions, whole (None before their first verdict)."""
    if not plain_name(author):
        return None
    try:
        data = json.loads((output / REPORTS_DIR / f"{author}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def versions_of(output: Path, author: str) -> list[Judged]:
    """The author's versions judged, in order (from the register, read and never written)."""
    return [judged for judged in judged_versions(output) if judged.author == author]


def read_board(output: Path) -> dict[str, Any]:
    """``leaderboard.json`` (the standings as last published), or an empty board."""
    try:
        data = json.loads((output / "leaderboard.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# ----- the games, followed as games.jsonl grows ---------------------------------------------------------


class GamesIndex:
    """Every finished game of ``games.jsonl`` that a visibility rule accounts for, by the bots at its table, in the
    order they finished; which of them may be shown is the rule's to say (:class:`referee.records.visibility.Shown`)."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.path = output / RESULTS_FILE
        self._offset = 0
        self._identity: tuple[int, int] | None = None
        self._by_bot: dict[str, list[GameRecord]] = {}
        self._ids: set[str] = set()

    def shown(self) -> Shown:
        """The folder's rule as of now, with every record it accounts for read (the rule first, then the records)."""
        shown = Shown.read(self.output)
        self._refresh(shown.accounted)
        return shown

    def recorded(self, game_id: str, shown: Shown) -> bool:
        """Whether ``game_id`` is over, counted, and may be shown by ``shown`` (as :meth:`shown` gave it)."""
        return game_id in self._ids and shown.game(game_id)

    def _refresh(self, limit: int | None) -> None:
        try:
            status = self.path.stat()
        except FileNotFoundError:
            return
        identity = (status.st_dev, status.st_ino)
        if identity != self._identity or status.st_size < self._offset:  # a new file: read it from its start
            self._identity, self._offset, self._by_bot, self._ids = identity, 0, {}, set()
        games, self._offset = games_after(self.path, self._offset, limit)
        for game in games:
            self._ids.add(game.game_id)
            for bot in set(game.seats):
                self._by_bot.setdefault(bot, []).append(game)

    def of(self, bot: str, shown: Shown) -> list[GameRecord]:
        """``bot``'s games that ``shown`` (as :meth:`shown` gave it) lets be shown, newest first."""
        return [game for game in reversed(self._by_bot.get(bot, [])) if shown.game(game.game_id)]


# ----- a bot's output in a game ----------------------------------------------------------------------


@dataclass(frozen=True)
class SeatOutput:
    """What the bot at ``seat`` wrote during a game: lines ``first`` + 1 onwards of its output file."""

    seat: int
    bot: str
    log: str  # the output file's name
    first: int  # lines before the game
    lines: list[str]
    more: int  # lines left out (past what a page shows)


def game_log(folder: Path, game_id: str) -> list[dict[str, Any]] | None:
    """The records of game ``game_id``'s log in ``folder`` (None if there is no such game)."""
    path = find_log(folder, game_id) if plain_name(game_id) else None
    if path is None:  # no such game, or its log no longer kept (keep_logs)
        return None
    try:
        return read_game_log(path)
    except GameLogError:
        return None


def outputs_in(records: list[dict[str, Any]], logs: Path, bots: Iterable[str]) -> list[SeatOutput]:
    """The output, during the game of ``records``, of each seat played by one of ``bots`` (files in ``logs``)."""
    wanted = set(bots)
    start = records[0] if records else {}
    end: Mapping[str, Any] = next((record for record in reversed(records) if record.get("type") == "game_end"), {})
    players = start.get("players") or []
    where = end.get("output") or [None] * len(players)
    found = []
    for seat, (name, output) in enumerate(zip(players, where, strict=False)):
        if name not in wanted or not isinstance(output, Mapping) or not plain_name(str(output.get("log", ""))):
            continue
        first, last = (int(number) for number in output.get("lines", (0, 0)))
        lines, more = read_lines(logs / str(output["log"]), first, last)
        found.append(SeatOutput(seat, name, str(output["log"]), first, lines, more))
    return found


def read_lines(path: Path, first: int, last: int) -> tuple[list[str], int]:
    """Lines ``first`` + 1 to ``last`` of ``path`` (as many as a page shows), and how many more there were."""
    wanted = max(0, last - first)
    shown: list[str] = []
    size = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as text:
            for raw in islice(text, first, last):
                line = raw.rstrip("\n")[:LINE_CHARS_SHOWN]
                size += len(line) + 1
                if len(shown) >= OUTPUT_LINES_SHOWN or size > OUTPUT_BYTES_SHOWN:
                    break
                shown.append(line)
    except OSError:
        return [], 0
    return shown, max(0, wanted - len(shown))


def excerpt(path: Path, line: int) -> tuple[int, list[str]]:
    """The output around line ``line`` of ``path`` (where it stood at a fault): the first line's number, the lines."""
    first = max(0, line - EXCERPT_BEFORE)
    lines, _ = read_lines(path, first, line + EXCERPT_AFTER)
    return first + 1, lines


def faults_of(output: Path, games: Iterable[GameRecord], bot: str, games_read: int) -> tuple[list[dict[str, Any]], int]:
    """``bot``'s faults in ``games`` (oldest first; those whose record counts one for it), grouped by cause: the
    first fault of each cause with the output around it, and how many of that cause were found; and how many of
    the games with a fault were read (at most ``games_read``, the oldest: what went wrong first is what matters)."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    read = 0
    for game in games:
        seats = [seat for seat, name in enumerate(game.seats) if name == bot]
        if not any(sum(game.faults[seat].values()) for seat in seats if seat < len(game.faults)):
            continue
        if read >= games_read:
            break
        records = game_log(output / GAME_LOGS, game.game_id)
        if records is None:
            continue  # its log is no longer kept (keep_logs): the next game's tells
        read += 1
        for record in records:
            if record.get("type") != "fault" or record.get("bot") != bot:
                continue
            kind, detail = str(record.get("kind") or ""), str(record.get("detail") or "")
            words = plain_detail(detail, output)
            cause = (kind, _cause(words))
            if cause in groups:
                groups[cause]["count"] += 1
                continue
            groups[cause] = {"game": game.game_id, "n": record.get("n"), "kind": kind, "detail": words, "count": 1,
                             "excerpt": _fault_output(output, bot, record, detail)}  # fmt: skip
    return list(groups.values()), read


def _cause(words: str) -> str:
    """What a fault's detail says of its cause: its words before any parenthesis or semicolon, no number or card."""
    head = re.split(r" \(|;", words, maxsplit=1)[0]
    return _NUMBER.sub("N", _CARD.sub("CARD", head))


def _fault_output(output: Path, bot: str, record: Mapping[str, Any], detail: str) -> tuple[int, list[str]] | None:
    """The output around a fault: where the bot's output file stood at it; for a start that failed (no line
    recorded), the output of that process, which played no game."""
    log, line = str(record.get("log") or ""), record.get("log_line")
    if plain_name(log) and line is not None:
        return excerpt(output / BOT_LOGS / log, int(line))
    named = _OUTPUT_FILE.search(detail)
    if record.get("kind") in STARTING_KINDS and named is not None and _own_log(named.group(1), bot):
        return start_output(output, named.group(1))
    return None


def _own_log(name: str, bot: str) -> bool:
    return plain_name(name) and name.startswith(f"{bot}-") and name.endswith(".log")


def start_output(output: Path, log: str, folder: str = BOT_LOGS) -> tuple[int, list[str]] | None:
    """The output of a process of a bot that failed to start, from its first line (it played no game): ``log`` in
    ``folder`` (its output file, or the copy the ladder kept); None for any other file."""
    if not plain_name(log) or not log.endswith(".log"):
        return None
    lines, _ = read_lines(output / folder / log, 0, EXCERPT_BEFORE + EXCERPT_AFTER)
    return (1, lines) if lines else None


def check_folder(output: Path, bot: str) -> Path:
    """``checks/BOT/``: the game logs of version ``bot``'s check and its output there."""
    return output / CHECKS_DIR / bot


def check_start_output(output: Path, bot: str, log: str) -> tuple[int, list[str]] | None:
    """The output of version ``bot``'s process that failed to start in its check (``log``: the file the check
    names, ``checks/BOT/NAME.log``), from its first line; None for any other file."""
    name = log.rsplit("/", 1)[-1]
    if not plain_name(name) or not name.endswith(".log") or log not in (name, f"{CHECKS_DIR}/{bot}/{name}"):
        return None
    lines, _ = read_lines(check_folder(output, bot) / name, 0, EXCERPT_BEFORE + EXCERPT_AFTER)
    return (1, lines) if lines else None


# ----- uploads ---------------------------------------------------------------------------------------------


def record_upload(output: Path, author: str, digest: str, size: int) -> dict[str, Any]:
    """Add an upload landed to ``uploads.jsonl``; return its record."""
    record = {"author": author, "digest": digest, "bytes": size, "at": datetime.now(UTC).isoformat(timespec="seconds")}
    data = (json.dumps(record, separators=(",", ":")) + "\n").encode()
    fd = os.open(output / UPLOADS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        append_whole(fd, data, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    return record


def last_upload(output: Path, author: str) -> dict[str, Any] | None:
    """The author's latest upload landed, as ``uploads.jsonl`` has it."""
    found = None
    try:
        with open(output / UPLOADS_FILE, "rb") as lines:
            for line in lines:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("author") == author:
                    found = record
    except OSError:
        return None
    return found
