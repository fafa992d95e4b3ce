"""A game's log: everything needed to replay the game exactly and to show it to a person.

The log is JSON lines, one object per line, each with a ``type``:

- ``game_start``: ``log_version``, ``game_id``, ``game``, ``num_players``,
  ``seed`` (a string of digits, exact in any JSON reader; a number in logs
  of version 2), ``first_dealer``, ``turn_limit``, ``players`` (names by seat),
  ``timing`` (``move_time_ms``, ``time_bank_ms``, ``grace_ms``), ``policy``
  (``mode``, ``max_faults``), ``decks`` (the fixed decks given, or null),
  ``referee_version``;
- ``deal``: a hand was dealt: ``hand``, ``dealer``, ``hands`` (every seat in
  the hand: its three cards), and the table: ``discard`` and ``stock`` (top
  first) in Stop the Bus, ``centre`` (slots 0, 1, 2) in Bastard Brag;
- ``decision``: ``n`` (decision number), ``hand``, ``seat``, ``holding`` (the
  seat's cards when asked), ``legal`` (the actions offered), ``action`` (the
  action played), ``drew`` (the card a ``draw`` took from the stock), ``ms``
  (the time charged, see :mod:`referee.protocol.clock`), ``wall_ms``, and
  ``"default": true`` when the fault policy chose the action;
- ``fault``: ``n`` (the decision, or null before the first), ``seat``,
  ``bot``, ``kind``, ``detail``, and where the bot's output was then:
  ``log`` (its output file's name, in the league's ``logs/``) and
  ``log_line`` (the lines of output received by then), when the bot has a
  log; the next record shows what the policy did;
- ``forfeit``: ``seat``, ``reason``;
- ``hand``: a hand's result: every hand revealed with its rank, the loser,
  lives and floating states after, eliminations; ``at``, when the referee
  saw it (Unix time, to the millisecond: when what the game shows of the
  hand's deals may be shown elsewhere is counted from it, :mod:`referee.records.visibility`);
- ``game_end``: ``at``, ``placements`` (seats, first to last), ``hands_played``,
  ``decisions``, ``faults`` (by seat), and ``void`` with ``void_reason``
  when fewer than two bots ever got to make a decision; ``output``, by
  seat, where the bot has an output file: ``log`` (its name, in the
  league's ``logs/``) and ``lines`` (``[first, last]``: the lines of output
  received before the game and by its end; what a bot writes is counted as
  it arrives, so a line written just before the end may fall in the next
  game's range), null for a seat without one.

The whole log is kept in memory and written when the game ends (to a
temporary name, then renamed into place), so nothing of a game can be read
from the log while it is played, not even by a bot that shares the referee's
file system.

**Stored compressed.** A league's logs are ``games/GAME_ID.jsonl.zst``: the
same JSON lines as one Zstandard frame (level :data:`COMPRESSION_LEVEL`),
compressed with the dictionary of the game (``referee/records/log_dictionaries/
GAME.N.zdict``, trained once on logs of the sample bots by
``bench/log_dictionaries.py`` and shipped with the referee; the frame names
its dictionary's id, so a log is read with the one it was written with, and
a dictionary once shipped is never changed or removed). A log given a name
ending in ``.jsonl`` (``referee play --log``, a check game) is written as
plain JSON lines. Logs written before they were compressed, plain
``games/GAME_ID.jsonl``, are still read: :func:`find_log` finds either form and :func:`log_text`
reads either (by its first bytes, whatever its name), and every reader of a
log goes through them (``referee show``, ``verify``, ``replay``, ``export``,
``referee serve``, the luck of a game, check games). Figures in
docs/performance.md, "Game logs on disk". :func:`verify_log` replays a log through the rules engine;
:mod:`referee.records.transcript` tells it step by step. A *listener* given to
:class:`GameLog` is handed each record as it is made (``referee play
--verbose``); it runs in the referee, never in a bot.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import zstandard

from referee import __version__
from referee.common.errors import RefereeError
from referee.engine.cards import Card, format_cards, parse_cards
from referee.engine.games import BastardBrag, Game, HandResult, StopTheBus, game_class
from referee.engine.games.game import Action

if TYPE_CHECKING:
    from referee.protocol.clock import Timing
    from referee.protocol.faults import FaultPolicy

# A record of a log: one line's JSON object, its ``type`` first.
LogRecord = dict[str, Any]

LOG_VERSION = 3  # 3: the seed is a string

GAME_LOG_DIR = "games"  # a league's OUTPUT/games/<game_id>.jsonl.zst: each game's log (log_path)
COMPRESSED_SUFFIX = ".jsonl.zst"  # a league's logs: games/GAME_ID.jsonl.zst
PLAIN_SUFFIX = ".jsonl"  # a log written as it is read (referee play --log, check games), or one from before
# Level 9 of 22: with the game's dictionary, about 0.6 ms a log of 18 KB, in a worker thread (docs/performance.md has
# the levels measured: 15 and up save another 10% for four to ten times the CPU).
COMPRESSION_LEVEL = 9
DICTIONARY_DIR = Path(__file__).resolve().parent / "log_dictionaries"  # GAME.N.zdict, N its version
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
MAX_LOG_BYTES = 256 * 2**20  # what a log may unpack to: logs are tens of KB, so a frame saying more is refused


# Each action's text and JSON text, by id: Action's hash goes through its kind's Python-level
# enum hash, and ids are safe because each entry keeps its action alive. Actions come from
# referee.engine.games.game.action(), which makes each one once, so these stay small.
_ACTION_TEXT: dict[int, tuple[Action, str]] = {}
_ACTION_JSON: dict[int, tuple[Action, str]] = {}


def action_text(act: Action) -> str:
    """The action's text form (``str(act)``), made once per action."""
    entry = _ACTION_TEXT.get(id(act))
    if entry is None:
        entry = _ACTION_TEXT[id(act)] = (act, str(act))
    return entry[1]


def _json_text(act: Action) -> str:
    entry = _ACTION_JSON.get(id(act))
    if entry is None:
        entry = _ACTION_JSON[id(act)] = (act, json.dumps(str(act)))
    return entry[1]


def _cards_json(cards: Sequence[Card]) -> str:
    return json.dumps(format_cards(cards))


def decision_record(
    number: int,
    hand: int,
    seat: int,
    holding: Sequence[Card],
    legal: Sequence[Action],
    played: Action,
    charged_ms: float,
    wall_ms: float,
    default: bool = False,
    drew: Card | None = None,
) -> LogRecord:
    """The log record of a decision (:meth:`GameLog.decision` writes it faster)."""
    record = {
        "type": "decision",
        "n": number,
        "hand": hand,
        "seat": seat,
        "holding": format_cards(holding),
        "legal": [action_text(act) for act in legal],
        "action": action_text(played),
    }
    if drew is not None:
        record["drew"] = str(drew)
    record["ms"] = round(charged_ms, 3)
    record["wall_ms"] = round(wall_ms, 3)
    if default:
        record["default"] = True
    return record


def hand_record(result: HandResult, at: float | None = None) -> LogRecord:
    """The log (and report) form of a hand's result (seen at Unix time ``at``, for a game's log)."""
    timed = {} if at is None else {"at": round(at, 3)}
    return {
        "type": "hand",
        **timed,
        "hand": result.hand_number,
        "dealer": result.dealer,
        "ended_by": result.ended_by.value,
        "ender": result.ender,
        "turns": result.turns,
        "hands": {str(seat): format_cards(cards) for seat, cards in sorted(result.hands.items())},
        "ranks": {str(seat): str(rank) for seat, rank in sorted(result.ranks.items())},
        "loser": result.loser,
        "lives": list(result.lives_after),
        "floating": list(result.floating_after),
        "eliminated": list(result.eliminated),
    }


def deal_record(game: Game) -> LogRecord:
    """The log record of the hand the game has just dealt: every hand and the table."""
    return deal_record_of(deal_state(game))


# A deal as deal_state copies it: hand number, dealer, (seat, cards) of each seat in the hand, (key, cards) of the table.
DealState = tuple[int, int, tuple[tuple[int, tuple[Card, ...]], ...], tuple[tuple[str, tuple[Card, ...]], ...]]


def deal_state(game: Game) -> DealState:
    """What :func:`deal_record` shows of the deal, copied as it is now (cheap: no text is made)."""
    hands = tuple((seat, tuple(game.hands[seat])) for seat in range(game.num_players) if game.in_hand[seat])
    table: tuple[tuple[str, tuple[Card, ...]], ...]
    if isinstance(game, StopTheBus):
        table = (("discard", tuple(game.discard_pile)), ("stock", tuple(reversed(game.stock))))  # stock: top first
    elif isinstance(game, BastardBrag):
        table = (("centre", tuple(game.centre)),)
    else:
        raise TypeError(f"no deal record for a game of {type(game).__name__}")
    return game.hand_number, game.dealer, hands, table


def deal_record_of(state: DealState) -> LogRecord:
    """The deal record of a :func:`deal_state`."""
    hand_number, dealer, hands, table = state
    record = {
        "type": "deal",
        "hand": hand_number,
        "dealer": dealer,
        "hands": {str(seat): format_cards(cards) for seat, cards in hands},
    }
    for key, cards in table:
        record[key] = format_cards(cards)
    return record


def _json_line(record: LogRecord) -> str:
    return json.dumps(record, separators=(",", ":"))


def _made_line(make: Callable[..., LogRecord], arguments: tuple[Any, ...]) -> str:
    return _json_line(make(*arguments))


def _decision_line(
    number: int,
    hand: int,
    seat: int,
    holding: Sequence[Card],
    legal: Sequence[Action],
    played: Action,
    charged_ms: float,
    wall_ms: float,
    default: bool,
    drew: Card | None,
) -> str:
    """The line of :func:`decision_record`'s record, put together from each action's JSON text, made once
    (decisions are most of a log; tests check that it equals ``json.dumps(decision_record(...))``)."""
    return (
        f'{{"type":"decision","n":{number},"hand":{hand},"seat":{seat},"holding":{_cards_json(holding)},'
        f'"legal":[{",".join(map(_json_text, legal))}],"action":{_json_text(played)}'
        + (f',"drew":"{drew}"' if drew is not None else "")
        + f',"ms":{round(charged_ms, 3)!r},"wall_ms":{round(wall_ms, 3)!r}'
        + (',"default":true}' if default else "}")
    )


class GameLog:
    """A game's JSON-lines log, kept in memory and written to ``path`` when closed; a ``None`` path logs nothing.

    Records are kept as made and turned into text by :meth:`catch_up`, which
    the referee calls while a bot thinks (after a request is sent), so that
    formatting costs the time between a reply and the next request nothing.
    ``listener``, when given, is called with each record as it is made (with
    or without a path); without one, making a record costs nothing more.
    """

    def __init__(self, path: Path | None, listener: Callable[[LogRecord], None] | None = None) -> None:
        self.path = path
        # Lines as text, then (from index _formatted) the lines still to make, as (line maker, its arguments).
        self._lines: list[str | tuple[Callable[..., str], tuple[Any, ...]]] | None = [] if path else None
        self._formatted = 0
        self._listener = listener
        self._file: BinaryIO | None = None  # made by prepare (in a worker thread), written by close
        self._file_lock = threading.Lock()

    def write(self, record: LogRecord) -> None:
        """Log ``record`` (a dict the caller no longer changes)."""
        if self._lines is not None:
            self._lines.append((_json_line, (record,)))
        if self._listener is not None:
            self._listener(record)

    def write_later(self, make: Callable[..., LogRecord], *arguments: Any) -> None:
        """Log the record ``make(*arguments)``, made by :meth:`catch_up` (the arguments must not change)."""
        if self._lines is not None:
            self._lines.append((_made_line, (make, arguments)))
        if self._listener is not None:
            self._listener(make(*arguments))

    def decision(
        self,
        number: int,
        hand: int,
        seat: int,
        holding: Sequence[Card],
        legal: Sequence[Action],
        played: Action,
        charged_ms: float,
        wall_ms: float,
        default: bool,
        drew: Card | None,
    ) -> None:
        """Log a decision: the record :func:`decision_record` makes (its line is made by :meth:`catch_up`)."""
        if self._lines is not None:
            self._lines.append(
                (_decision_line, (number, hand, seat, holding, legal, played, charged_ms, wall_ms, default, drew))
            )
        if self._listener is not None:
            self._listener(
                decision_record(number, hand, seat, holding, legal, played, charged_ms, wall_ms, default, drew)
            )

    def catch_up(self) -> None:
        """Turn the records logged since the last call into lines of JSON."""
        lines = self._lines
        if lines is None:
            return
        for index in range(self._formatted, len(lines)):
            entry = lines[index]
            assert not isinstance(entry, str), "a line formatted twice"  # lines before _formatted are text
            make_line, arguments = entry
            lines[index] = make_line(*arguments)
        self._formatted = len(lines)

    def prepare(self) -> None:
        """Create the log's file now, empty, under a temporary name: creating a file is the slow part of writing it.

        Safe to run in another thread (the referee does, while the game is
        played); a log discarded first makes no file. The file stays empty
        until :meth:`close`, so nothing of the game is in it during play.
        """
        with self._file_lock:
            if self._lines is not None and self.path is not None and self._file is None:
                self._file = open(self._temporary(), "wb")  # noqa: SIM115 - open until close()

    def close(self) -> None:
        """Write the log to its file (under a temporary name first, so a reader never sees half of it).

        Safe to run in another thread once the game is over (nothing is logged after); a name ending in
        :data:`COMPRESSED_SUFFIX` is written compressed (see the module's docstring), any other as plain JSON lines.
        """
        with self._file_lock:
            if self._lines is None or self.path is None:
                return
            self.catch_up()
            lines, self._lines = self._lines, None
            self._listener = None
            temporary = self._temporary()
            text = ("\n".join(lines) + "\n").encode("utf-8")  # type: ignore[arg-type]  # all text after catch_up
            try:
                out, self._file = self._file or open(temporary, "wb"), None  # noqa: SIM115 - closed by `with out`
                with out:
                    out.write(stored_form(self.path, text))
                os.replace(temporary, self.path)
            except BaseException:  # a full disk, say: leave nothing half written
                temporary.unlink(missing_ok=True)
                raise

    def discard(self) -> None:
        """Forget the log: nothing is written (a game that was interrupted is played again on resume)."""
        with self._file_lock:
            self._lines = None
            self._listener = None
            if self._file is not None:
                self._file.close()
                self._file = None
                self._temporary().unlink(missing_ok=True)

    def _temporary(self) -> Path:
        assert self.path is not None
        return self.path.with_name(f".{self.path.name}.part")


# ----- where logs are and how they are stored --------------------------------------------------------


def log_path(folder: Path, game_id: str) -> Path:
    """Where game ``game_id``'s log is written in ``folder`` (a league's ``games/``): compressed."""
    return folder / f"{game_id}{COMPRESSED_SUFFIX}"


def find_log(folder: Path, game_id: str) -> Path | None:
    """Game ``game_id``'s log in ``folder``: compressed, or plain as written before; None if neither is there."""
    for suffix in (COMPRESSED_SUFFIX, PLAIN_SUFFIX):
        path = folder / f"{game_id}{suffix}"
        if path.is_file():
            return path
    return None


def existing_log(path: Path) -> Path:
    """The log a person names by ``path``: itself if it is there, else the same log in its other form
    (``games/ID.jsonl`` finds ``games/ID.jsonl.zst``, and the other way round), else ``path`` as it was."""
    if path.exists():
        return path
    name = path.name
    other = name.removesuffix(".zst") if name.endswith(COMPRESSED_SUFFIX) else name + ".zst"
    if name.endswith((PLAIN_SUFFIX, COMPRESSED_SUFFIX)) and path.with_name(other).is_file():
        return path.with_name(other)
    return path


def log_files(folder: Path) -> list[Path]:
    """Every game log in ``folder``, in either form, in the order of their games' ids (one per game: the compressed
    one where both are there)."""
    found: dict[str, Path] = {}
    if folder.is_dir():
        for suffix in (PLAIN_SUFFIX, COMPRESSED_SUFFIX):  # compressed second: it wins
            for path in folder.glob(f"*{suffix}"):
                if not path.name.startswith("."):
                    found[log_game_id(path)] = path
    return [found[game_id] for game_id in sorted(found)]


def log_game_id(path: Path) -> str:
    """The game id a log's file is named for."""
    name = path.name
    return name.removesuffix(COMPRESSED_SUFFIX) if name.endswith(COMPRESSED_SUFFIX) else name.removesuffix(PLAIN_SUFFIX)


def remove_log(folder: Path, game_id: str) -> bool:
    """Remove game ``game_id``'s log from ``folder`` in either form; return whether there was one."""
    removed = False
    for suffix in (COMPRESSED_SUFFIX, PLAIN_SUFFIX):
        try:
            (folder / f"{game_id}{suffix}").unlink()
            removed = True
        except FileNotFoundError:
            pass
    return removed


def stored_form(path: Path, text: bytes) -> bytes:
    """A log's JSON lines as they are stored at ``path``: compressed where its name says so, else as they are."""
    return compress_log(text) if path.name.endswith(COMPRESSED_SUFFIX) else text


def store_log(path: Path, text: bytes) -> None:
    """Write a log's JSON lines to ``path`` as :class:`GameLog` does: in their stored form, under a temporary name
    first, so a reader never sees half of it (the Ray backend's games, whose logs are made on another machine)."""
    temporary = path.with_name(f".{path.name}.part")
    try:
        temporary.write_bytes(stored_form(path, text))
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def compress_log(text: bytes) -> bytes:
    """A log's JSON lines as one Zstandard frame, with its game's dictionary (named by the ``game_start`` line)."""
    first = text[: text.find(b"\n")]
    try:
        game = json.loads(first).get("game")
    except (ValueError, AttributeError):
        game = None
    return _compressor(game if isinstance(game, str) else None).compress(text)


def log_text(path: Path) -> str:
    """The JSON lines of the log ``path``, in either form (told apart by their first bytes, whatever the name).

    Raises :class:`OSError` if it cannot be read, :class:`GameLogError` if it is compressed but cannot be unpacked,
    :class:`UnicodeDecodeError` if it is not text.
    """
    data = Path(path).read_bytes()
    if data.startswith(_ZSTD_MAGIC):
        data = _decompressed(path, data)
    return data.decode("utf-8")


def _decompressed(path: Path, data: bytes) -> bytes:
    try:
        parameters = zstandard.get_frame_parameters(data)
        size = parameters.content_size
        if size > MAX_LOG_BYTES:  # an unknown size is ZSTD_CONTENTSIZE_UNKNOWN, larger still
            raise GameLogError(
                f"{path}: a compressed log says it unpacks to {size} bytes (or does not say); "
                f"a log may unpack to at most {MAX_LOG_BYTES}"
            )
        dictionary = None
        if parameters.dict_id:
            dictionary = _dictionaries().get(parameters.dict_id)
            if dictionary is None:
                known = ", ".join(f"{dict_id} ({name})" for dict_id, (name, _) in sorted(_shipped().items()))
                raise GameLogError(
                    f"{path}: compressed with dictionary {parameters.dict_id}, which this referee does not ship "
                    f"(a newer referee wrote it?); it ships {known or 'none'}"
                )
        return zstandard.ZstdDecompressor(dict_data=dictionary).decompress(data, max_output_size=MAX_LOG_BYTES)
    except zstandard.ZstdError as error:
        raise GameLogError(f"{path}: a compressed log that does not unpack: {error}") from None


@functools.cache
def _shipped() -> dict[int, tuple[str, bytes]]:
    """The dictionaries shipped, by id: each file's name and its bytes."""
    found: dict[int, tuple[str, bytes]] = {}
    for path in sorted(DICTIONARY_DIR.glob("*.zdict")):
        data = path.read_bytes()
        found[zstandard.ZstdCompressionDict(data).dict_id()] = (path.name, data)
    return found


def _dictionaries() -> dict[int, zstandard.ZstdCompressionDict]:
    return {dict_id: _dictionary(dict_id) for dict_id in _shipped()}


@functools.cache
def _dictionary(dict_id: int) -> zstandard.ZstdCompressionDict:
    return zstandard.ZstdCompressionDict(_shipped()[dict_id][1])


def game_dictionary(game: str) -> int | None:
    """The id of the dictionary new logs of ``game`` are compressed with: its newest (None: the game has none)."""
    versions = []
    for dict_id, (name, _) in _shipped().items():
        stem, _, version = name.removesuffix(".zdict").rpartition(".")
        if stem == game and version.isdigit():
            versions.append((int(version), dict_id))
    return max(versions)[1] if versions else None


# A compressor holds its own state while it works: each thread that writes logs has its own, one per game.
_COMPRESSORS = threading.local()


def _compressor(game: str | None) -> zstandard.ZstdCompressor:
    made: dict[str | None, zstandard.ZstdCompressor] | None = getattr(_COMPRESSORS, "made", None)
    if made is None:
        made = _COMPRESSORS.made = {}
    compressor = made.get(game)
    if compressor is None:
        dict_id = game_dictionary(game) if game else None
        dictionary = None if dict_id is None else _dictionary(dict_id)
        compressor = made[game] = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL, dict_data=dictionary)
    return compressor


def game_start_record(
    *,
    game: Game,
    game_id: str,
    players: Sequence[str],
    timing: Timing,
    policy: FaultPolicy,
    decks: Sequence[Sequence[Card]] | None,
) -> LogRecord:
    return {
        "type": "game_start",
        "log_version": LOG_VERSION,
        "game_id": game_id,
        "game": game.name,
        "num_players": game.num_players,
        "seed": str(game.seed),
        "first_dealer": game.dealer,
        "turn_limit": game.turn_limit,
        "players": list(players),
        "timing": {
            "move_time_ms": timing.move_time_ms,
            "time_bank_ms": timing.time_bank_ms,
            "grace_ms": timing.grace_ms,
        },
        "policy": {"mode": policy.mode.value, "max_faults": policy.max_faults},
        "decks": [format_cards(deck) for deck in decks] if decks else None,
        "referee_version": __version__,
    }


# ----- re-verification ---------------------------------------------------------------


def verify_log(path: Path) -> list[str]:
    """Replay a game log through the engine; return every difference found (empty: the log is sound)."""
    problems: list[str] = []
    game: Game | None = None
    hands_checked = 0
    lines = log_text(path).splitlines(keepends=True)  # not UTF-8 text: UnicodeDecodeError, for the caller to tell
    for line_number, line in enumerate(lines, start=1):
        where = f"{path}:{line_number}"
        try:
            record = json.loads(line)
            kind = record["type"]
        except (ValueError, KeyError, TypeError):
            problems.append(f"{where}: not a log record (a JSON object with a type): {line.strip()[:80]!r}")
            break
        try:
            if kind == "game_start":
                game = new_game(record)
                continue
            if game is None:
                return [f"{where}: the log does not start with game_start"]
            if kind == "deal":
                expected = deal_record(game)
                if expected != record:
                    problems.append(f"{where}: deal differs: logged {record}, engine gives {expected}")
            elif kind == "decision":
                if record["seat"] != game.current_seat:
                    problems.append(
                        f"{where}: seat {record['seat']} decided, but it was seat {game.current_seat}'s turn"
                    )
                    break
                offered = [action_text(act) for act in game.legal_actions()]
                if offered != record["legal"]:
                    problems.append(f"{where}: legal actions logged {record['legal']}, engine gives {offered}")
                holding = format_cards(game.hands[record["seat"]])  # the current seat's, checked above
                if "holding" in record and holding != record["holding"]:
                    problems.append(f"{where}: seat {record['seat']} held {holding}, the log says {record['holding']}")
                game.apply(Action.parse(record["action"]))
                drawn = getattr(game, "pending", None)
                if "drew" in record and (drawn is None or str(drawn[1]) != record["drew"]):
                    problems.append(
                        f"{where}: the log says {record['drew']} was drawn; the engine drew {drawn and drawn[1]}"
                    )
            elif kind == "forfeit":
                game.forfeit(record["seat"], record["reason"])
            elif kind == "hand":
                if hands_checked >= len(game.hand_results):
                    problems.append(f"{where}: hand {record['hand']} logged, but the engine has not finished it")
                    continue
                expected = hand_record(game.hand_results[hands_checked], record.get("at"))
                hands_checked += 1
                if expected != record:
                    problems.append(f"{where}: hand result differs: logged {record}, engine gives {expected}")
            elif kind == "game_end":
                if not game.is_over:
                    problems.append(f"{where}: game_end logged, but the engine's game is not over")
                elif list(game.result().placements) != record["placements"]:
                    problems.append(
                        f"{where}: placements logged {record['placements']}, "
                        f"engine gives {list(game.result().placements)}"
                    )
        except (KeyError, TypeError, ValueError, RefereeError) as error:
            # A missing field, a value of the wrong type, an unreadable or illegal action, a forfeit
            # the engine refuses: the replay cannot go on past this record.
            problems.append(f"{where}: cannot replay this {kind} record: {_error_text(error)}")
            break
    if game is not None and not game.is_over:
        problems.append(f"{path}: the log ends before the game does")
    return problems


def new_game(
    start: LogRecord, decks: Sequence[Sequence[Card]] | Callable[[int], Sequence[Card] | None] | None = None
) -> Game:
    """The game a ``game_start`` record sets up, before its first decision.

    ``decks`` replaces the record's own decks (a list or a callable, as
    :class:`Game` takes them); by default they are the record's.
    """
    if decks is None and start.get("decks"):
        decks = [parse_cards(deck) for deck in start["decks"]]
    return game_class(start["game"])(
        start["num_players"],
        int(start["seed"]),
        first_dealer=start["first_dealer"],
        decks=decks,
        turn_limit=start["turn_limit"],
    )


def replay(records: Sequence[LogRecord]) -> Game:
    """The game a log's records describe, replayed through the engine to its end (no checks: see verify_log)."""
    game = new_game(records[0])
    for record in records[1:]:
        if record["type"] == "decision":
            game.apply(Action.parse(record["action"]))
        elif record["type"] == "forfeit":
            game.forfeit(record["seat"], record["reason"])
    return game


def _error_text(error: Exception) -> str:
    return f"missing field {error}" if isinstance(error, KeyError) else str(error)


def read_log(path: Path) -> list[LogRecord]:
    """The records of a game log, the seed of its ``game_start`` as a number (the file holds it as a string)."""
    records = [json.loads(line) for line in log_text(path).splitlines() if line.strip()]
    if records and records[0].get("type") == "game_start" and isinstance(records[0].get("seed"), str):
        records[0]["seed"] = int(records[0]["seed"])
    return records


class GameLogError(RefereeError):
    """A file that cannot be read as a game log."""


def read_game_log(path: Path) -> list[LogRecord]:
    """The records of the game log ``path``; raise :class:`GameLogError` naming the file if it cannot be read."""
    try:
        return read_log(path)
    except OSError as error:
        raise GameLogError(f"{path}: cannot read the game log: {error.strerror or error}") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise GameLogError(f"{path}: not a game log (JSON lines): {error}") from None
