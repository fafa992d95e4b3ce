"""A league folder's standings, kept current as ``games.jsonl`` grows: each reading takes only the lines added.

What may be counted is :mod:`referee.records.visibility`'s to say (``Shown``): a
record past what its rule accounts for is not read yet, and a record held
is kept aside (``pending``, as many as the games held: those in play and
the spectator delay's) and counted once shown. Everything counted goes into
a :class:`~referee.records.standings.tally.Tally` and a summary of what a page shows
of the games (:class:`ShownGames`), both bounded however long the season.

The reading starts again from nothing when what was counted may have
changed under it: the file replaced or cut (a league grown renumbers it),
its lines before the point read no longer those read, a bot disqualified or
given back its games, the league's candidates or seed changed, or a bot
counted no longer in the league.
"""

from __future__ import annotations

import collections
import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.common.errors import OutputError
from referee.engine.seeding import SeedStream
from referee.protocol.standing import DISQUALIFIED
from referee.records.ranking import RESAMPLES
from referee.records.results import (
    LEAGUE_FILE,
    RESULTS_FILE,
    GameRecord,
    LeagueRecord,
    RecordError,
    parse_line,
    read_league,
)
from referee.records.standings.adjusted import folder_luck
from referee.records.standings.table import ShownGames, Standings
from referee.records.standings.tally import HISTORY_POINTS, WINDOW_DEALS, Deal, Tally
from referee.records.visibility import Shown

NEWEST_GAMES = 500  # the games a page lists: the newest
FAULTY_GAMES = 20  # each bot's newest games with a fault of its, whose logs a page reads for their details
_CHUNK = 1 << 22  # bytes of games.jsonl read at a time


def bootstrap_seed(league_seed: int | None) -> int:
    """The seed of the rank ranges' bootstrap: drawn from the league's seed, so anyone can recompute them."""
    return SeedStream.derive(league_seed if league_seed is not None else 0, "standings", "bootstrap").next_u64()


def adjusts_for_luck(league: LeagueRecord | None) -> bool:
    """Whether ``league`` (its ``league.json`` record) is a duel that tests on scores less the luck."""
    return league is not None and bool(league.format.get("adjust_for_luck"))


@dataclass
class _Summary:
    """:class:`ShownGames` as it is gathered."""

    count: int = 0
    first: GameRecord | None = None
    first_started: str | None = None
    last_started: str | None = None

    def __post_init__(self) -> None:
        self.newest: collections.deque[GameRecord] = collections.deque(maxlen=NEWEST_GAMES)
        self.with_faults: dict[str, collections.deque[GameRecord]] = {}

    def add(self, game: GameRecord) -> None:
        self.count += 1
        self.first = self.first or game
        self.newest.append(game)
        if game.started:
            self.first_started = min(self.first_started or game.started, game.started)
            self.last_started = max(self.last_started or game.started, game.started)
        for seat, faults in enumerate(game.faults):
            if any(faults.values()):
                self.with_faults.setdefault(game.seats[seat], collections.deque(maxlen=FAULTY_GAMES)).append(game)

    def shown(self) -> ShownGames:
        return ShownGames(
            count=self.count,
            newest=tuple(reversed(self.newest)),
            first=self.first,
            first_started=self.first_started,
            last_started=self.last_started,
            with_faults={bot: tuple(reversed(games)) for bot, games in self.with_faults.items()},
        )


class FolderStandings:
    """The standings of a league's output folder, read again as it grows (:meth:`update`); see the module's doc."""

    def __init__(self, directory: Path, *, adjust_for_luck: bool = False) -> None:
        self.directory = Path(directory)
        self.path = self.directory / RESULTS_FILE
        self.adjust_for_luck = adjust_for_luck
        self.readings = 0  # from nothing: the first, and each time what was counted changed under it
        self._key: tuple[Any, ...] | None = None
        self._start(None)

    def _start(self, league: LeagueRecord | None) -> None:
        disqualified = frozenset(
            name for name, entry in (league.entries if league else {}).items() if entry.get("status") == DISQUALIFIED
        )
        self._tally = Tally(
            league.bots if league else None,
            disqualified=disqualified,
            candidates=league.candidates if league else (),
            luck_of=folder_luck(self.directory) if league and self._luck(league) else None,
            window=WINDOW_DEALS,
            recall=_FileRecall(self),
            history=HISTORY_POINTS,
        )
        self._summary = _Summary()
        self.offset = 0  # bytes of games.jsonl read
        # The file as last read: which file, how long, when last written. Lines are only ever appended to it, or
        # it is replaced whole (a grown league's renumbered): written again at the same length, it was edited.
        self._identity: tuple[int, int] | None = None
        self._seen: tuple[int, int] | None = None  # size, mtime
        self._head = b""  # the first line read and the last: each must still be there, where it was
        self._tail = b""
        self._line = 0
        self.pending: dict[str, GameRecord] = {}  # read, held: counted once shown
        self.readings += league is not None

    def _luck(self, league: LeagueRecord) -> bool:
        return self.adjust_for_luck or adjusts_for_luck(league)

    def update(self, shown: Shown | None = None) -> tuple[Standings, LeagueRecord]:
        """The standings of the games ``shown`` lets be shown (else as now), reading only what came since; a folder
        without ``league.json`` (a page written beside records alone) is a league of the bots its games name."""
        league = read_league(self.directory) or LeagueRecord(name=self.directory.name, bots=None)
        shown = shown or Shown.read(self.directory)
        key = (
            frozenset(name for name, entry in league.entries.items() if entry.get("status") == DISQUALIFIED),
            league.candidates,
            league.seed,
            self._luck(league),
        )
        if key != self._key or not self._same_file() or not self._tally.take_bots(league.bots):
            self._key = key
            self._start(league)
        try:
            # The held games first, now shown: they are earlier in the file than what it gained.
            for game_id in [game_id for game_id in self.pending if shown.game(game_id)]:
                self._count(self.pending.pop(game_id))
            for game in self._read(shown.accounted):
                if shown.game(game.game_id):
                    self._count(game)
                else:
                    self.pending[game.game_id] = game
        except BaseException:
            self._key = None  # the next update reads from nothing, and meets the same error where it is
            raise
        standings = self._tally.standings(seed=bootstrap_seed(league.seed), resamples=RESAMPLES, entries=league.entries)
        return _with_shown(standings, self._summary.shown()), league

    def _count(self, game: GameRecord) -> None:
        self._summary.add(game.without_latencies())
        self._tally.add(game)

    def _same_file(self) -> bool:
        """Whether ``games.jsonl`` still holds, where they were, the lines read so far."""
        try:
            status = os.stat(self.path)
        except FileNotFoundError:
            return self.offset == 0
        if self._identity not in (None, (status.st_dev, status.st_ino)) or status.st_size < self.offset:
            return False
        if self._seen is not None and self._seen[0] == status.st_size and self._seen[1] != status.st_mtime_ns:
            return False
        if not self._tail:
            return True
        with open(self.path, "rb") as results:
            if results.read(len(self._head)) != self._head:
                return False
            results.seek(self.offset - len(self._tail))
            return results.read(len(self._tail)) == self._tail

    def _read(self, limit: int | None) -> Iterator[GameRecord]:
        """The whole records after the point read so far (up to byte ``limit``), each as it is read.

        A line that is not a record, with records after it, was damaged after
        it was written: an :class:`OutputError` names it. One with nothing
        after it but a power cut's zeros is left for the next reading, as a
        line still being written is.
        """
        if not self.path.exists():
            return
        with open(self.path, "rb") as results:
            status = os.fstat(results.fileno())
            self._identity = (status.st_dev, status.st_ino)
            self._seen = (status.st_size, status.st_mtime_ns)
            end = status.st_size if limit is None else min(limit, status.st_size)
            results.seek(self.offset)
            damaged: tuple[int, str] | None = None
            carried = b""
            while self.offset + len(carried) < end:
                added = results.read(min(_CHUNK, end - self.offset - len(carried)))
                if not added:
                    return
                chunk = carried + added
                whole = chunk.rfind(b"\n") + 1
                carried = chunk[whole:]
                for line in chunk[:whole].splitlines(keepends=True):
                    if damaged is not None:
                        if line.strip(b"\0\n\r\t "):
                            number, problem = damaged
                            raise OutputError(
                                f"{self.path}:{number}: {problem}; the lines after it hold finished games, so the "
                                f"file was damaged after it was written: repair or remove line {number}, then run again"
                            )
                        continue
                    try:
                        data = parse_line(line)
                    except RecordError as error:
                        damaged = (self._line + 1, str(error))
                        continue
                    try:
                        game = GameRecord.of(data, latencies=True)
                    except RecordError as error:
                        raise RecordError(f"{self.path}:{self._line + 1}: {error}") from None
                    self._line += 1
                    self.offset += len(line)
                    self._head = self._head or line
                    self._tail = line
                    yield game

    def scan(self, needle: bytes) -> Iterator[GameRecord]:
        """The records read so far whose line holds ``needle``, held ones left out."""
        with open(self.path, "rb") as results:
            read = 0
            for line in results:
                read += len(line)
                if read > self.offset:
                    return
                if needle in line:
                    game = GameRecord.of(parse_line(line), latencies=False)
                    if game.game_id not in self.pending:
                        yield game


def _with_shown(standings: Standings, shown: ShownGames) -> Standings:
    return dataclasses.replace(standings, shown=shown)


class _FileRecall:
    """A deal's earlier games, and a place's first game, found again in the part of ``games.jsonl`` read."""

    def __init__(self, folder: FolderStandings) -> None:
        self.folder = folder

    def deal(self, key: Deal) -> list[GameRecord]:
        return [game for game in self.folder.scan(str(key[1]).encode()) if game.deal == key]

    def index(self, index: int) -> str | None:
        return next((game.game_id for game in self.folder.scan(b"%d" % index) if game.index == index), None)


def folder_standings(
    directory: Path, *, adjust_for_luck: bool = False, shown: Shown | None = None
) -> tuple[Standings, LeagueRecord]:
    """The standings of a league's output folder (its ``league.json`` and the games of ``games.jsonl`` that may be
    shown: ``shown``, else as now, :mod:`referee.records.visibility`), and its league record; with each bot's mean score
    less the luck too when asked, or when the league is a duel that adjusts for it."""
    directory = Path(directory)
    if not directory.is_dir():
        what = "it is a file" if directory.exists() else "no such folder"
        raise OutputError(f"{directory}: no {LEAGUE_FILE} here ({what}); give the output folder of a league run")
    if read_league(directory) is None:
        raise OutputError(f"{directory}: no {LEAGUE_FILE} here; give the output folder of a league run")
    return FolderStandings(directory, adjust_for_luck=adjust_for_luck).update(shown)
