"""A league's results store: ``games.jsonl`` (one typed record per game) and ``league.json`` (the league's identity).

Everything that reads or writes either file goes through here: the runner
(writing, resume), the standings, the duel, the leaderboards and the
league's page, ``referee serve``. So a field is named in one place only.

- :class:`GameRecord` is one line of ``games.jsonl``: :meth:`GameRecord.of`
  reads and checks one (older files' ``placements`` are read as
  ``finish_order``), :meth:`GameRecord.to_json` writes one.
- :class:`ResultsFile` appends records, flushed to disk, and on opening
  finds the games already finished (resume); :func:`read_games` is the
  one reader.
- :class:`LeagueRecord` is ``league.json``: :func:`read_league` and
  :func:`write_league`.

Each decision's charged time is kept in a record as its bin of one fixed
log scale (:func:`latency_bin`: 1% wide, 0.01 ms to 100 s), each seat's
bins ascending and written as steps (``timing.latency_bins``: the first
bin, then each next one less the one before, 0 for the same bin again):
what the standings' median and 99th percentile need, mergeable by adding
counts, in less than half the bytes of the times themselves (which the
game's log holds). Older files' ``timing.latency_ms`` lists are read into
the same bins.

Seeds are 64-bit numbers, more digits than a JavaScript number (a double)
holds, so every JSON file written here carries them as decimal strings
(``"seed": "6069488482021880639"``); readers take a string or, from older
files, a number.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeGuard

from referee.common.atomic import append_whole, replace_file
from referee.common.errors import OutputError, RefereeError
from referee.engine.seeding import SEED_RANGE
from referee.protocol.faults import FaultKind

RESULTS_FILE = "games.jsonl"
LEAGUE_FILE = "league.json"
LEAGUE_RECORD_VERSION = 2
ACCEPTED, REJECTED = "accepted", "rejected"  # a ladder's verdict on a version, as league.json's submissions say
FAULT_KINDS: tuple[str, ...] = tuple(kind.value for kind in FaultKind)

LATENCY_MIN_MS = 0.01
LATENCY_MAX_MS = 100_000.0
LATENCY_BIN_RATIO = 1.01
LATENCY_BINS = math.ceil(math.log(LATENCY_MAX_MS / LATENCY_MIN_MS) / math.log(LATENCY_BIN_RATIO))  # 1,620
_LOG_BIN_RATIO = math.log(LATENCY_BIN_RATIO)

_KNOWN_KEYS = frozenset(
    {
        "index",
        "game_id",
        "round",
        "table",
        "rotation",
        "seed",
        "seats",
        "candidate",
        "game",
        "finish_order",
        "placements",
        "hands_played",
        "decisions",
        "faults",
        "forfeits",
        "void",
        "timing",
    }
)


def latency_bin(latency_ms: float) -> int:
    """The bin of a decision time: ``k`` holds ``0.01 ms x 1.01^k`` up to the next edge; beyond the scale, an end."""
    if not latency_ms > LATENCY_MIN_MS:  # also catches NaN
        return 0
    return min(int(math.log(latency_ms / LATENCY_MIN_MS) / _LOG_BIN_RATIO), LATENCY_BINS - 1)


def bin_midpoint(bin_index: int) -> float:
    """The time a bin stands for, in milliseconds: its geometric midpoint, within 0.5% of any time in it."""
    return LATENCY_MIN_MS * math.pow(LATENCY_BIN_RATIO, bin_index + 0.5)


class RecordError(RefereeError, ValueError):
    """A game record is not in the ``games.jsonl`` format, or does not fit the league."""


def seed_text(seed: int) -> str:
    """A seed as JSON carries it: its decimal digits, as a string (exact in any JSON reader)."""
    return str(int(seed))


def parse_seed(value: Any, where: str = "seed") -> int:
    """A seed read from JSON: a decimal string, or a number from older files; a :class:`RecordError` otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.lstrip("-").isdigit() and value.isascii():
        number = int(value)
    else:
        raise RecordError(f"{where} is {value!r}; expected a whole number, written as a string of digits")
    if not SEED_RANGE[0] <= number <= SEED_RANGE[1]:
        raise RecordError(f"{where} is {value!r}; a seed has 64 bits ({SEED_RANGE[0]} to {SEED_RANGE[1]})")
    return number


# ----- one game's record -------------------------------------------------------------------


@dataclass(frozen=True)
class GameRecord:
    """One finished game, as a line of ``games.jsonl``.

    Everything but ``started``, ``wall_s`` and ``latency_bins`` (the line's
    ``timing``) is a pure function of the league file and the bots' choices.
    """

    index: int  # the game's place in the schedule
    game_id: str
    seats: tuple[str, ...]  # bot name by seat
    finish_order: tuple[int, ...]  # seats, first place first
    round: int | None = None
    table: int | None = None
    rotation: int | None = None
    seed: int | None = None  # the deal: games on one seed share their cards
    candidate: str | None = None  # a gauntlet's (or duel's) candidate at this table
    game: str | None = None
    hands_played: int | None = None
    decisions: int | None = None
    faults: tuple[Mapping[str, int], ...] = ()  # by seat: kind -> count
    forfeits: Mapping[int, str] = field(default_factory=dict)  # seat -> fault kind
    void: str | None = None  # why the game counts for nobody
    started: str | None = None
    wall_s: float | None = None
    # By seat, each decision's time as its bin (latency_bin), ascending; None when left out on reading.
    latency_bins: tuple[tuple[int, ...], ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys this version does not know, kept as they are

    @property
    def deal(self) -> tuple[str, int]:
        """What the games of one deal share: ``("seed", seed)``, or ``("game", index)`` for a game without a seed."""
        return ("game", self.index) if self.seed is None else ("seed", self.seed)

    def places(self) -> list[int]:
        """Each seat's place, 1 first."""
        places = [0] * len(self.seats)
        for place, seat in enumerate(self.finish_order, start=1):
            places[seat] = place
        return places

    def bots_in_finish_order(self) -> list[str]:
        """The bots from first place to last."""
        return [self.seats[seat] for seat in self.finish_order]

    def without_latencies(self) -> GameRecord:
        return GameRecord(**{**self.__dict__, "latency_bins": None})

    @classmethod
    def of(cls, data: Mapping[str, Any] | GameRecord, *, latencies: bool = True) -> GameRecord:
        """Read and check a record (a ``games.jsonl`` object); a :class:`RecordError` names what is wrong."""
        if isinstance(data, GameRecord):
            return data if latencies or data.latency_bins is None else data.without_latencies()
        if not isinstance(data, Mapping):
            raise RecordError(f"a game record must be a JSON object, not {type(data).__name__}: {data!r:.80}")
        where = f"game record index {data.get('index')!r} (game_id {data.get('game_id')!r})"
        index = data.get("index")
        if not _whole(index) or index < 0:
            raise RecordError(f"{where}: index must be a whole number 0 or more, the game's place in the schedule")
        game_id = data.get("game_id")
        if not isinstance(game_id, str):
            raise RecordError(f"{where}: game_id is {game_id!r}; expected the game's id, a string")
        seats = data.get("seats")
        if not isinstance(seats, list) or len(seats) < 2 or not all(isinstance(name, str) for name in seats):
            raise RecordError(f"{where}: seats is {seats!r}; expected a list of two or more bot names")
        if len(set(seats)) != len(seats):
            raise RecordError(f"{where}: seats {seats!r} name a bot twice; a bot plays one seat per game")
        size = len(seats)
        # Seats in finishing order; files written before it had its name hold it as "placements".
        order_key = "finish_order" if "finish_order" in data else "placements"
        order = data.get(order_key)
        if not isinstance(order, list) or sorted(order) != list(range(size)):
            raise RecordError(
                f"{where}: {order_key} is {order!r}; expected every seat 0..{size - 1} once, first place first"
            )
        faults = data.get("faults", [{}] * size)
        if not isinstance(faults, list) or len(faults) != size:
            raise RecordError(f"{where}: faults is {faults!r}; expected one object per seat ({size})")
        for seat, seat_faults in enumerate(faults):
            if not isinstance(seat_faults, Mapping):
                raise RecordError(f"{where}: faults[{seat}] is {seat_faults!r}; expected an object of kind -> count")
            for kind, count in seat_faults.items():
                if kind not in FAULT_KINDS:
                    raise RecordError(
                        f"{where}: faults[{seat}] has kind {kind!r}; the kinds are {', '.join(FAULT_KINDS)}"
                    )
                if not _whole(count) or count < 0:
                    raise RecordError(f"{where}: faults[{seat}][{kind!r}] is {count!r}; expected a count")
        forfeits = data.get("forfeits", {})
        if not isinstance(forfeits, Mapping):
            raise RecordError(f"{where}: forfeits is {forfeits!r}; expected an object of seat -> fault kind")
        for seat in forfeits:
            if not (isinstance(seat, str) and seat.isdigit() and int(seat) < size):
                raise RecordError(f"{where}: forfeits has seat {seat!r}; seats are '0'..'{size - 1}'")
        seed = data.get("seed")
        if seed is not None:
            seed = parse_seed(seed, f"{where}: seed")
        void = data.get("void")
        if void is not None and not isinstance(void, str):
            raise RecordError(f"{where}: void is {void!r}; expected the reason the game is void, a string")
        timing = data.get("timing", {})
        if not isinstance(timing, Mapping):
            raise RecordError(f"{where}: timing is {timing!r}; expected an object")
        bins = _latency_bins(timing, size, where, latencies)
        candidate = data.get("candidate")
        return cls(
            index=index,
            game_id=game_id,
            seats=tuple(seats),
            finish_order=tuple(order),
            round=_optional_whole(data.get("round")),
            table=_optional_whole(data.get("table")),
            rotation=_optional_whole(data.get("rotation")),
            seed=seed,
            candidate=candidate if isinstance(candidate, str) else None,
            game=data.get("game") if isinstance(data.get("game"), str) else None,
            hands_played=_optional_whole(data.get("hands_played")),
            decisions=_optional_whole(data.get("decisions")),
            faults=tuple(dict(seat_faults) for seat_faults in faults),
            forfeits={int(seat): str(kind) for seat, kind in forfeits.items()},
            void=void,
            started=timing.get("started") if isinstance(timing.get("started"), str) else None,
            wall_s=timing.get("wall_s") if _number(timing.get("wall_s")) else None,
            latency_bins=bins,
            extra={key: value for key, value in data.items() if key not in _KNOWN_KEYS},
        )

    def to_json(self) -> dict[str, Any]:
        """The record as its ``games.jsonl`` object (the seed as a string of digits)."""
        data: dict[str, Any] = {"index": self.index, "game_id": self.game_id}
        for key in ("round", "table", "rotation"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.seed is not None:
            data["seed"] = seed_text(self.seed)
        data["seats"] = list(self.seats)
        if self.candidate is not None:
            data["candidate"] = self.candidate
        if self.game is not None:
            data["game"] = self.game
        data["finish_order"] = list(self.finish_order)
        for key in ("hands_played", "decisions"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        data["faults"] = [dict(seat_faults) for seat_faults in self.faults] or [{} for _ in self.seats]
        data["forfeits"] = {str(seat): kind for seat, kind in sorted(self.forfeits.items())}
        if self.void is not None:
            data["void"] = self.void
        data.update(self.extra)
        timing: dict[str, Any] = {}
        if self.started is not None:
            timing["started"] = self.started
        if self.wall_s is not None:
            timing["wall_s"] = self.wall_s
        if self.latency_bins is not None:
            timing["latency_bins"] = [_steps(bins) for bins in self.latency_bins]
        data["timing"] = timing
        return data


def _latency_bins(timing: Mapping[str, Any], size: int, where: str, keep: bool) -> tuple[tuple[int, ...], ...] | None:
    """A record's decision times by seat, as bins: its ``latency_bins`` steps, or an older file's ``latency_ms``.

    Each value is checked only when kept: a reader that leaves them out pays nothing for them.
    """
    key = "latency_bins" if "latency_bins" in timing else "latency_ms"
    written = timing.get(key)
    if written is None:
        return None
    if not isinstance(written, list) or len(written) != size or not all(isinstance(seat, list) for seat in written):
        what = "list of bin steps" if key == "latency_bins" else "list of times"
        raise RecordError(f"{where}: timing.{key} is {written!r:.80}; expected one {what} per seat ({size})")
    if not keep:
        return None
    if key == "latency_ms":
        if not all(_number(time) for seat in written for time in seat):
            raise RecordError(f"{where}: timing.latency_ms is {written!r:.80}; expected numbers of milliseconds")
        return tuple(tuple(sorted(map(latency_bin, seat))) for seat in written)
    bins = tuple(tuple(itertools.accumulate(seat)) for seat in written)
    for seat, (steps, seat_bins) in enumerate(zip(written, bins, strict=True)):
        # Checked by builtins over the whole list (a record holds each decision's), not a step at a time.
        if steps and (set(map(type, steps)) != {int} or min(steps) < 0 or seat_bins[-1] >= LATENCY_BINS):
            raise RecordError(
                f"{where}: timing.latency_bins[{seat}] is {steps!r:.80}; expected a first bin, then steps of 0 or "
                f"more, every bin below {LATENCY_BINS}"
            )
    return bins


def _steps(bins: Sequence[int]) -> list[int]:
    """Ascending bins as the record writes them: the first, then each one's step from the one before."""
    return [bins[0], *(later - earlier for earlier, later in itertools.pairwise(bins))] if bins else []


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _optional_whole(value: Any) -> int | None:
    return value if _whole(value) else None


# ----- games.jsonl: the reader -----------------------------------------------------------------


def scan_results(path: Path, limit: int | None = None) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Yield ``(line number, end offset, JSON object)`` for each game of a ``games.jsonl`` file (of its first
    ``limit`` bytes, if given).

    A last line that is not a whole record (cut short by a crash or a full
    disk) is left out. A line that is not a game record, followed by lines,
    was damaged after it was written: an :class:`OutputError` names it.
    """
    if not path.exists():
        return
    damaged: tuple[int, str] | None = None
    offset = 0
    with open(path, "rb") as lines:
        for line_number, line in enumerate(lines, start=1):
            offset += len(line)
            if limit is not None and offset > limit:
                return  # written after the reader's rule was (referee.records.visibility)
            if damaged is not None:
                if not line.strip(b"\0\n\r\t "):
                    continue  # a tail of zeros, as a power cut leaves: still the end of the file
                number, problem = damaged
                raise OutputError(
                    f"{path}:{number}: {problem}; the lines after it hold finished games, so the file was damaged "
                    f"after it was written: repair or remove line {number}, then run again"
                )
            record = _game_object(line)
            if isinstance(record, str):
                damaged = (line_number, record)
                continue
            yield line_number, offset, record


def parse_line(line: bytes) -> dict[str, Any]:
    """A whole line of ``games.jsonl`` read as a game's JSON object; a :class:`RecordError` says why it is not one."""
    record = _game_object(line)
    if isinstance(record, str):
        raise RecordError(record)
    return record


def _game_object(line: bytes) -> dict[str, Any] | str:
    """A line of ``games.jsonl`` read as a game's JSON object, or why it is not a whole one."""
    if not line.endswith(b"\n"):
        return "the line is cut short"
    try:
        record = json.loads(line)
    except ValueError:
        return f"not a JSON game record: {_shown(line)}"
    if not isinstance(record, dict) or not isinstance(record.get("game_id"), str):
        return f"not a game record (a JSON object with a game_id): {_shown(line)}"
    if not _whole(record.get("index")):
        return f"game record without its index: {_shown(line)}"
    return record


def _shown(line: bytes, limit: int = 60) -> str:
    """The start of a damaged line as text a person can read: printable characters, the rest as escapes."""
    text = line[:limit].decode("utf-8", errors="backslashreplace").rstrip("\n")
    text = "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)
    more = "…" if len(line.rstrip(b"\n")) > limit else ""
    return f'"{text}{more}"'


def read_games(path: Path, *, latencies: bool = True) -> Iterator[GameRecord]:
    """Yield the records of a ``games.jsonl`` file, in the file's order (see :func:`scan_results`).

    Without ``latencies``, each record is read without its every decision's
    time (most of a line), so that a league of many games fits in memory.
    A line that is JSON but not a well-formed record is a :class:`RecordError`.
    """
    for line_number, _, data in scan_results(path):
        try:
            yield GameRecord.of(data, latencies=latencies)
        except RecordError as error:
            raise RecordError(f"{path}:{line_number}: {error}") from None


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of a ``games.jsonl`` file, as written (for tools that want the raw lines)."""
    for _, _, record in scan_results(path):
        yield record


def games_after(path: Path, offset: int, limit: int | None = None) -> tuple[list[GameRecord], int]:
    """The whole records added to a ``games.jsonl`` file after byte ``offset`` (up to byte ``limit``, if given), and
    the offset after the last.

    For a reader following a file as it grows (a duel's stop): a line still
    being written waits for the next call; a line that is not a record is
    skipped (the runner has refused a damaged file before it appends).
    """
    try:
        with open(path, "rb") as lines:
            lines.seek(offset)
            data = lines.read() if limit is None else lines.read(max(0, limit - offset))
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n") + 1
    games = []
    for line in data[:end].splitlines(keepends=True):
        record = _game_object(line)
        if isinstance(record, dict):
            with contextlib.suppress(RecordError):
                games.append(GameRecord.of(record, latencies=False))
    return games, offset + end


def count_games(path: Path) -> int:
    """How many whole records a ``games.jsonl`` file holds (none when there is no such file)."""
    return sum(1 for _ in scan_results(path))


# ----- games.jsonl: the writer -----------------------------------------------------------------


class Scheduled(Protocol):
    """What the results file reads of a scheduled game (a schedule's ``ScheduledGame``)."""

    @property
    def game_id(self) -> str: ...

    @property
    def seats(self) -> tuple[str, ...]: ...

    @property
    def index(self) -> int: ...


class ResultsFile:
    """``games.jsonl``: find the games that finished, then append one line per game, flushed to disk.

    Opening it checks every line against ``games`` (the schedule): a line is
    matched by its ``game_id``, must seat the same bots, and gets the
    game's ``index`` in this schedule (the file is rewritten, in one step,
    when a league has grown and places moved). A last line cut short by a
    crash or a full disk is dropped; a damaged line before others is an
    :class:`OutputError`, as is a game that is not in the schedule.
    """

    def __init__(self, path: Path, games: Iterable[Scheduled], stands_in: Mapping[str, str] | None = None) -> None:
        """``stands_in``: a new version -> the bot it replaces, whose seats it may hold in a game it played."""
        self.path = path
        replaced = dict(stands_in or {})
        self.finished: set[str] = set()  # game ids
        by_id = {game.game_id: game for game in games}
        first_line: dict[str, int] = {}
        moved = False
        good_bytes = 0
        for line_number, end, record in scan_results(path):
            game_id = record["game_id"]
            game = by_id.get(game_id)
            where = f"{path}:{line_number}"
            if game is None:
                raise OutputError(
                    f"{where}: game {game_id} is not in this league's schedule ({len(by_id)} games); "
                    "these results are of another league, or of this one with other bots playing: "
                    "give this league another --output"
                )
            if not _seats_match(game.seats, record.get("seats"), replaced):
                raise OutputError(
                    f"{where}: game {game_id} seats {record.get('seats')}, but this league seats {list(game.seats)} "
                    "there; these results were made with other bots playing: give this league another --output"
                )
            if game_id in first_line:
                raise OutputError(
                    f"{where}: game {game_id} is recorded twice (first on line {first_line[game_id]}); "
                    "remove one of the two lines, then run again"
                )
            first_line[game_id] = line_number
            moved = moved or record["index"] != game.index
            self.finished.add(game_id)
            good_bytes = end
        if moved:
            self._renumber(by_id)
        elif path.exists() and good_bytes != path.stat().st_size:
            with open(path, "r+b") as existing:  # drop the last line, cut short
                existing.truncate(good_bytes)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._size = os.fstat(self._fd).st_size

    @property
    def size(self) -> int:
        """The file's length: every record appended so far, whole."""
        return self._size

    def _renumber(self, by_id: Mapping[str, Scheduled]) -> None:
        """Give every line its game's index in the schedule (a grown league moved them), in one step."""
        lines = []
        for _, _, record in scan_results(self.path):
            record["index"] = by_id[record["game_id"]].index
            lines.append(_line(record))
        replace_file(self.path, b"".join(lines))

    def append(self, record: GameRecord | Mapping[str, Any]) -> None:
        """Append the game's line and flush it to disk; on failure (a full disk), leave the file as it was and raise."""
        game = GameRecord.of(record)
        data = _line(game.to_json())
        append_whole(self._fd, data, self._size)
        self._size += len(data)
        self.finished.add(game.game_id)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _seats_match(scheduled: tuple[str, ...], recorded: Any, stands_in: Mapping[str, str]) -> bool:
    """Whether a record's seats are the schedule's, each seat's bot or a later version of it."""
    if not isinstance(recorded, list) or len(recorded) != len(scheduled):
        return False
    for name, seated in zip(scheduled, recorded, strict=True):
        version, seen = seated, set()
        while version != name and version in stands_in and version not in seen:
            seen.add(version)
            version = stands_in[version]
        if version != name:
            return False
    return True


def _line(record: Mapping[str, Any]) -> bytes:
    return (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


# ----- league.json ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LeagueRecord:
    """``league.json``: the league's name, its bots, what its page shows of its settings, and its identity.

    ``identity`` is the league file as the results depend on it
    (:func:`referee.leaguefile.config.league_identity`), seeds as numbers; a later run
    compares the league file with it.
    """

    name: str
    bots: tuple[str, ...] | None  # the bots playing (the standings' rows); None in files that lack it
    game: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)  # seed as a number
    identity: Mapping[str, Any] | None = None
    record_version: int | None = None
    referee_version: str | None = None
    source: str | None = None
    started: str | None = None
    scheduled: int | None = None  # the games of the league's schedule, when its last run began
    # A season's: bot -> its status, reason, replaces, author (defaults left out); its recorded edits, {"at", "what"}.
    entries: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    changes: tuple[Mapping[str, str], ...] = ()
    # A ladder's: each author's versions as judged, {"author", "report", "versions": [{"bot", "verdict", ...}]}.
    submissions: tuple[Mapping[str, Any], ...] = ()

    @property
    def rules(self) -> Mapping[str, Any]:
        return (self.identity or {}).get("rules", {}) if isinstance(self.identity, Mapping) else {}

    @property
    def format(self) -> Mapping[str, Any]:
        written = self.rules.get("format")
        return written if isinstance(written, Mapping) else {"type": "round-robin"}

    @property
    def table_size(self) -> int | None:
        size = self.rules.get("table_size", self.settings.get("table_size"))
        return size if _whole(size) else None

    @property
    def seed(self) -> int | None:
        seed = self.rules.get("seed", self.settings.get("seed"))
        return seed if _whole(seed) else None

    @property
    def candidates(self) -> tuple[str, ...]:
        """The bots a gauntlet or a duel is about (its standings rank them apart from the field); none otherwise.

        A candidate's new versions (``entries``' replaces) are candidates too, after it: they play in its seats.
        """
        if self.format.get("type") not in ("gauntlet", "sprt"):
            return ()
        names = self.format.get("candidates")
        listed = [name for name in names if isinstance(name, str)] if isinstance(names, list) else []
        replaced_by = {entry.get("replaces"): name for name, entry in self.entries.items()}
        candidates: list[str] = []
        for name in listed:
            version: str | None = name
            while version is not None and version not in candidates:
                candidates.append(version)
                version = replaced_by.get(version)
        return tuple(candidates)


def read_league(output: Path) -> LeagueRecord | None:
    """The ``league.json`` of an output folder, or None if there is none; an :class:`OutputError` if unreadable."""
    path = output / LEAGUE_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise OutputError(f"{path}: cannot be read: {getattr(error, 'strerror', None) or error}") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise OutputError(f"{path}: is not valid JSON ({error}); it is not a league's record") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise OutputError(f"{path}: is not a league's record (a JSON object with its name)")
    bots = data.get("bots")
    if not isinstance(bots, list) or not all(isinstance(name, str) for name in bots):
        bots = None
    settings = dict(data.get("settings") or {}) if isinstance(data.get("settings"), dict) else {}
    identity = data.get("league") if isinstance(data.get("league"), dict) else None
    try:
        if "seed" in settings:
            settings["seed"] = parse_seed(settings["seed"], "settings.seed")
        if identity is not None and isinstance(identity.get("rules"), dict) and "seed" in identity["rules"]:
            identity = {
                **identity,
                "rules": {**identity["rules"], "seed": parse_seed(identity["rules"]["seed"], "league.rules.seed")},
            }
    except RecordError as error:
        raise OutputError(f"{path}: {error}") from None
    return LeagueRecord(
        name=data["name"],
        bots=tuple(bots) if bots is not None else None,
        game=data.get("game") if isinstance(data.get("game"), str) else None,
        settings=settings,
        identity=identity,
        record_version=data.get("record_version"),
        referee_version=data.get("referee_version"),
        source=data.get("source"),
        started=data.get("started"),
        scheduled=_optional_whole(data.get("scheduled")),
        entries={name: entry for name, entry in _of_type(data.get("entries"), dict).items() if isinstance(entry, dict)},
        changes=tuple(
            change
            for change in _of_type(data.get("changes"), list)
            if isinstance(change, dict) and isinstance(change.get("what"), str)
        ),
        submissions=tuple(_submissions(data.get("submissions"))),
    )


def _submissions(written: Any) -> Iterator[Mapping[str, Any]]:
    """League.json's ``submissions`` as far as they are well formed: each author's, with the versions that name a bot."""
    for author in _of_type(written, list):
        if not isinstance(author, dict) or not isinstance(author.get("author"), str):
            continue
        versions = [
            version
            for version in _of_type(author.get("versions"), list)
            if isinstance(version, dict)
            and isinstance(version.get("bot"), str)
            and isinstance(version.get("verdict"), str)
        ]
        yield {**author, "versions": versions}


def _of_type(value: Any, kind: type) -> Any:
    """``value`` if it is a ``kind`` (a dict or a list), else an empty one."""
    return value if isinstance(value, kind) else kind()
