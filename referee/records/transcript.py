"""A game told step by step, for people: ``referee show``, ``referee play --verbose`` and the replay pages.

A game's log (:mod:`referee.records.gamelog`) is the truth and the engine rebuilds
the table from it. Each :class:`Step` is one record of the log (a deal, a
decision, a fault, a forfeit, a hand's showdown, the end) with the whole
table after it and every seat's view of it. A seat's view is
:meth:`Game.observation` (the one place that says what a seat may see), so a
seat's transcript names only cards that seat could know: its own cards, the
face-up cards and public moves, and the hands shown at each showdown.

The lines name cards as people read them (``10♥``: :func:`referee.engine.cards.pretty_cards`);
the JSON of a table or a view keeps the logs' compact form (``TH``).

A hand's last move is shown on the table it leaves, before the next deal:
the engine is replayed with a deck source that can refuse the next hand's
deck, which leaves a copy of the game as the hand ended (see :class:`Game`).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.common.errors import DecksExhaustedError, RefereeError
from referee.common.printable import printable
from referee.engine.cards import Card, format_cards, parse_cards, pretty_cards
from referee.engine.games import (
    BastardBrag,
    BastardBragObservation,
    Game,
    Observation,
    StopTheBus,
    StopTheBusObservation,
)
from referee.engine.games.game import Action, ActionKind
from referee.records.gamelog import GameLogError, LogRecord, new_game, read_game_log

HIDDEN = "??"  # a card a seat cannot see
PILE_SHOWN = 4  # discard pile cards listed in the referee's view, top first
NOTED_STEPS = ("decision", "fault")  # the steps a bot's note on its decision goes with: the first of them


class TranscriptError(RefereeError):
    """A game log cannot be told: it is not a game log, or its records do not replay."""


@dataclass(frozen=True)
class Table:
    """The whole table after a step, as the referee sees it (never a seat's view: see :class:`Step`)."""

    hand_number: int
    dealer: int
    current_seat: int | None  # whose decision is next (None at a showdown and at the end)
    hands: tuple[tuple[Card, ...], ...]  # every seat's cards (empty when out of the hand)
    lives: tuple[int, ...]
    floating: tuple[bool, ...]
    in_game: tuple[bool, ...]
    in_hand: tuple[bool, ...]
    stock: tuple[Card, ...] = ()  # Stop the Bus: the next card to draw first
    discard_pile: tuple[Card, ...] = ()  # Stop the Bus: the face-up top first
    centre: tuple[Card, ...] = ()  # Bastard Brag: by slot, slot 2 face up
    drawn: Card | None = None  # Stop the Bus mid-turn: the card the current seat just drew or took
    ender: int | None = None  # the seat that stopped the bus or knocked, this hand


@dataclass(frozen=True)
class Step:
    """One record of the log, with the table after it and each seat's view of it."""

    number: int  # 0 for the first deal
    kind: str  # the record's type: deal, decision, fault, forfeit, hand, game_end
    hand_number: int
    seat: int | None  # who decided, faulted or forfeited; the loser of a showdown
    decision: int | None  # the decision's number (decision and fault steps)
    record: LogRecord
    table: Table
    views: tuple[Observation, ...]  # Game.observation(seat) after the step, for every seat
    text: str  # the step as the referee sees it: every card, and the table after it
    seat_texts: tuple[str, ...]  # the step as each seat saw it ("you" marked), and the table as it saw it
    brief: str  # the step alone, without the table (the replay page draws the table)
    seat_briefs: tuple[str, ...]  # the step alone, as each seat saw it

    @property
    def revealed(self) -> dict[int, tuple[tuple[Card, ...], str]]:
        """At a showdown, each hand shown with its rank (shown to every seat); else empty."""
        if self.kind != "hand":
            return {}
        return {
            int(seat): (parse_cards(cards), self.record["ranks"][seat]) for seat, cards in self.record["hands"].items()
        }


class _Decks:
    """The decks of a replayed game, hand by hand, that can refuse to deal past a given hand."""

    def __init__(self, start: LogRecord) -> None:
        self._given = [parse_cards(deck) for deck in start["decks"]] if start.get("decks") else None
        self._seed = start["seed"]
        self.last_hand: int | None = None  # refuse every hand after this one

    def __call__(self, hand_number: int) -> Sequence[Card] | None:
        if self.last_hand is not None and hand_number > self.last_hand:
            raise DecksExhaustedError(hand_number, self.last_hand)
        if self._given is None:
            return None  # the seeded deck
        if hand_number > len(self._given):
            raise DecksExhaustedError(hand_number, len(self._given))
        return self._given[hand_number - 1]


class Teller:
    """Turns a game's log records into :class:`Step` values, as they come.

    Feed it the records in order (:meth:`feed`), then :meth:`finish`. A
    decision or forfeit is told when the record after it arrives, which says
    whether it ended a hand.
    """

    def __init__(self) -> None:
        self.start: LogRecord | None = None
        self.players: list[str] = []
        self._game: Game | None = None
        self._decks: _Decks | None = None
        self._held: LogRecord | None = None  # a decision or forfeit waiting for the next record
        self._table: Table | None = None  # the table after the last step
        self._last_views: tuple[Observation, ...] = ()
        self._steps = 0
        self._record_number = 0

    # ----- feeding --------------------------------------------------------------------

    def feed(self, record: LogRecord) -> list[Step]:
        """Take the next record; return the steps it completes (none, one or two)."""
        self._record_number += 1
        if not isinstance(record, dict) or "type" not in record:
            raise TranscriptError(f"record {self._record_number} is not a log record (a JSON object with a type)")
        try:
            return self._feed(record)
        except (KeyError, TypeError, ValueError, IndexError, RefereeError) as error:
            if isinstance(error, TranscriptError):
                raise
            detail = f"missing field {error}" if isinstance(error, KeyError) else str(error)
            raise TranscriptError(
                f"record {self._record_number} ({record.get('type')}) does not replay: {detail}; "
                "`referee verify` checks the whole log"
            ) from None

    def finish(self) -> list[Step]:
        """The steps still held back (a log that ends without its game_end)."""
        held, self._held = self._held, None
        return [self._told(held, ends_hand=True)] if held is not None else []

    def _feed(self, record: LogRecord) -> list[Step]:
        kind = record["type"]
        if kind == "game_start":
            if self.start is not None:
                raise TranscriptError(f"record {self._record_number}: a second game_start")
            self.start = record
            self.players = list(record["players"])
            self._decks = _Decks(record)
            self._game = new_game(record, decks=self._decks)
            return []
        if self._game is None:
            raise TranscriptError("the log does not start with game_start")
        steps = []
        if self._held is not None:
            held, self._held = self._held, None
            steps.append(self._told(held, ends_hand=kind == "hand"))
        if kind in ("decision", "forfeit"):
            self._held = record
        else:
            steps.append(self._told(record, ends_hand=False))
        return steps

    # ----- one step -------------------------------------------------------------------

    def _told(self, record: dict[str, Any], ends_hand: bool) -> Step:
        game, decks = self._game, self._decks
        assert game is not None and decks is not None, "told before game_start"  # _feed checks it
        before = self._table
        kind = record["type"]
        shown = game  # the game whose table the step shows
        if kind in ("decision", "forfeit"):
            if ends_hand and not game.is_over:
                # A copy that will not deal the next hand: it keeps the table the hand ended on.
                decks.last_hand = game.hand_number
                shown = copy.deepcopy(game, {id(decks): decks})
                with contextlib.suppress(DecksExhaustedError):
                    _apply(shown, record)
                decks.last_hand = None
            _apply(game, record)
        table: Table
        if kind == "hand" and before is not None:
            # The showdown: the table the last move left, with the lives after.
            table = _with_result(before, record)
            views = self._last_views
        else:
            table = _table(shown, showdown=ends_hand)
            if kind == "decision" and ends_hand and before is not None:
                # Lives change at the showdown, the step after this one.
                table = _replace_lives(table, before)
            views = tuple(shown.observation(seat) for seat in range(shown.num_players))
        self._last_views = views
        step_number = self._steps
        self._steps += 1
        self._table = table
        texts = _Texts(self, record, before, table, views)
        seats = range(len(self.players))
        return Step(
            number=step_number,
            kind=kind,
            hand_number=record.get("hand", table.hand_number),
            seat=record.get("seat", record.get("loser")),
            decision=record.get("n"),
            record=record,
            table=table,
            views=views,
            text=texts.line(None),
            seat_texts=tuple(texts.line(seat) for seat in seats),
            brief=texts.line(None, brief=True),
            seat_briefs=tuple(texts.line(seat, brief=True) for seat in seats),
        )

    def name(self, seat: int) -> str:
        return f"seat {seat} {self.players[seat]}"


def _apply(game: Game, record: LogRecord) -> None:
    if record["type"] == "decision":
        game.apply(Action.parse(record["action"]))
    else:
        game.forfeit(record["seat"], record["reason"])


def _table(game: Game, showdown: bool = False) -> Table:
    stock: tuple[Card, ...] = ()
    discard_pile: tuple[Card, ...] = ()
    centre: tuple[Card, ...] = ()
    drawn = None
    if isinstance(game, StopTheBus):
        stock, discard_pile = game.stock_top_first(), game.discard_pile_top_first()
        current = game.current_seat
        if current is not None and not game.is_over and not showdown:
            view = game.observation(current)
            drawn = view.drawn_card if isinstance(view, StopTheBusObservation) else None
    elif isinstance(game, BastardBrag):
        centre = game.centre_by_slot()
    return Table(
        hand_number=game.hand_number,
        dealer=game.dealer,
        current_seat=None if showdown or game.is_over else game.current_seat,
        hands=tuple(tuple(game.hands[seat]) for seat in range(game.num_players)),
        lives=tuple(game.lives),
        floating=tuple(game.floating),
        in_game=tuple(game.in_game),
        in_hand=tuple(game.in_hand),
        stock=stock,
        discard_pile=discard_pile,
        centre=centre,
        drawn=drawn,
        ender=game.ender,
    )


def _replace_lives(table: Table, before: Table) -> Table:
    return replace(table, lives=before.lives, floating=before.floating, in_game=before.in_game)


def _with_result(table: Table, record: dict[str, Any]) -> Table:
    """The table at a showdown: as the last move left it, with the lives after the showdown."""
    in_game = tuple(seat not in record["eliminated"] and table.in_game[seat] for seat in range(len(table.lives)))
    return replace(
        table,
        lives=tuple(record["lives"]),
        floating=tuple(record["floating"]),
        in_game=in_game,
        current_seat=None,
        drawn=None,
    )


# ----- the words -------------------------------------------------------------------------

_END_REASONS = {
    "stock-exhausted": "the stock ran out",
    "turn-limit": "the turn limit was reached",
    "forfeit": "one player is left after forfeits",
}


class _Texts:
    """The line of one step, as the referee sees it and as each seat saw it."""

    def __init__(
        self, teller: Teller, record: dict[str, Any], before: Table | None, after: Table, views: tuple[Observation, ...]
    ) -> None:
        assert teller.start is not None, "a step before game_start"
        self.teller = teller
        self.record = record
        self.before = before
        self.after = after
        self.views = views
        self.game = teller.start["game"]
        self.brief = False

    def line(self, viewer: int | None, brief: bool = False) -> str:
        """The step as ``viewer`` saw it (None: the referee); ``brief``: without the table or "you"."""
        self.brief = brief
        kind = self.record["type"]
        return getattr(self, f"_{kind}", self._other)(viewer)

    def _name(self, seat: int, viewer: int | None) -> str:
        you = " (you)" if seat == viewer and not self.brief else ""
        return f"{self.teller.name(seat)}{you}"

    # deal ---------------------------------------------------------------------------

    def _deal(self, viewer: int | None) -> str:
        record = self.record
        parts = [f"hand {record['hand']} dealt by {self._name(record['dealer'], viewer)}"]
        if self.brief:
            return parts[0]
        for key, cards in record["hands"].items():
            seat = int(key)
            if viewer is None or seat == viewer:
                parts.append(f"{self._name(seat, viewer)}: {_pretty(cards)}")
        if viewer is not None and str(viewer) not in record["hands"]:
            parts.append("you are out of this hand")
        return "; ".join(parts) + "; " + self._table_text(viewer)

    # decision -----------------------------------------------------------------------

    def _decision(self, viewer: int | None) -> str:
        record = self.record
        seat = record["seat"]
        own = viewer is None or viewer == seat
        holding = f" [{_pretty(record['holding'])}]" if own else ""
        action = Action.parse(record["action"])
        what = self._move(action, own)
        default = " (the fault policy's default action)" if record.get("default") else ""
        line = f"{record['n']}. {self._name(seat, viewer)}{holding} {what}{default}"
        return line if self.brief else f"{line}; {self._table_text(viewer)}"

    def _move(self, action: Action, own: bool) -> str:
        kind = action.kind
        before = self.before
        assert before is not None, "a move before the deal"
        if kind is ActionKind.DRAW:
            drew = self.record.get("drew")
            return f"draws {_pretty(drew)} from the stock" if own and drew else "draws from the stock"
        if kind is ActionKind.TAKE:
            return f"takes {before.discard_pile[0].pretty} from the discard pile"
        card = action.card.pretty if action.card is not None else ""  # a discard's or an exchange's
        if kind is ActionKind.DISCARD:
            held = [other for other in parse_cards(self.record["holding"]) if other != action.card]
            return f"discards {card}" + (f", keeps {pretty_cards(held)}" if own else "")
        if kind is ActionKind.STOP:
            return "stops the bus"
        if kind is ActionKind.PASS:
            return "passes"
        if kind is ActionKind.KNOCK:
            return "knocks"
        if kind is ActionKind.EXCHANGE:
            assert action.slot is not None, "an exchange names its slot"
            taken = before.centre[action.slot].pretty
            if action.slot == 2:
                return f"gives {card} for {taken}, face up"
            if own:
                return f"gives {card} for {taken}, face down in slot {action.slot}"
            return f"exchanges a card for the face-down card in slot {action.slot}"
        # exchange-all
        if own:
            return f"swaps the hand for the centre ({pretty_cards(before.centre)}), laying {card} face up"
        return f"swaps the hand for the centre, laying {card} face up"

    # faults, forfeits ---------------------------------------------------------------

    def _fault(self, viewer: int | None) -> str:
        record = self.record
        seat = record["seat"]
        own = viewer is None or viewer == seat
        # Another seat's fault detail may name that seat's cards (an illegal move lists its legal ones).
        detail = f": {record['detail']}" if own else ""
        where = f" (decision {record['n']})" if record.get("n") is not None else " (before the game)"
        return f"fault{where}: {self._name(seat, viewer)}: {record['kind']}{detail}"

    def _forfeit(self, viewer: int | None) -> str:
        record = self.record
        seat = record["seat"]
        reason = record["reason"] if viewer is None or viewer == seat else record["reason"].split(":", 1)[0]
        return f"{self._name(seat, viewer)} forfeits ({reason})"

    # showdown, end ------------------------------------------------------------------

    def _hand(self, viewer: int | None) -> str:
        record = self.record
        ender = record.get("ender")
        how = {"stop": "stopped by", "knock": "knocked by"}.get(record["ended_by"])
        if how and ender is not None:
            head = f"hand {record['hand']} ends, {how} {self._name(ender, viewer)}"
        else:
            head = f"hand {record['hand']} ends: {_END_REASONS.get(record['ended_by'], record['ended_by'])}"
        if record["loser"] is None:
            return head
        shown = "; ".join(
            f"{self._name(int(seat), viewer)} {_pretty(cards)} {record['ranks'][seat]}"
            for seat, cards in record["hands"].items()
        )
        return f"{head}: {shown}; {self._loss(record['loser'], viewer)}"

    def _loss(self, loser: int, viewer: int | None) -> str:
        record = self.record
        before = self.before
        name = self._name(loser, viewer)
        out = loser in record["eliminated"]
        if self.game == "stop_the_bus" and before is not None and before.floating[loser]:
            return f"{name} loses the floating life and is out of the game"
        lives = record["lives"][loser]
        text = f"{name} loses a life ({lives} left)"
        if record["floating"][loser]:
            text += ", now floating"
        if out:
            text += " and is out of the game"
        return text

    def _game_end(self, viewer: int | None) -> str:
        record = self.record
        places = ", ".join(f"{place}. {self._name(seat, viewer)}" for place, seat in enumerate(record["placements"], 1))
        void = f" (void: {record['void_reason']})" if record.get("void") else ""
        hands, decisions = record["hands_played"], record["decisions"]
        counts = f"{hands} hand{'s' * (hands != 1)} and {decisions} decision{'s' * (decisions != 1)}"
        return f"game over after {counts}: {places}{void}"

    def _other(self, viewer: int | None) -> str:
        return f"{self.record['type']}"

    # the table ----------------------------------------------------------------------

    def _table_text(self, viewer: int | None) -> str:
        table = self.after
        if self.game == "stop_the_bus":
            if viewer is None:
                pile = table.discard_pile
                shown = pretty_cards(pile[:PILE_SHOWN]) + (" ..." if len(pile) > PILE_SHOWN else "")
                top = f"discard {shown} ({len(pile)})" if pile else "no discard"
                nxt = f", next {table.stock[0].pretty}" if table.stock else ""
                return f"{top}; stock {len(table.stock)}{nxt}"
            view = self.views[viewer]
            assert isinstance(view, StopTheBusObservation)
            top = f"discard {view.discard_top.pretty} ({view.discard_count})" if view.discard_top else "no discard"
            return f"{top}; stock {view.stock_count}"
        if viewer is None:
            centre = table.centre
            return f"centre {centre[0].pretty} {centre[1].pretty} | {centre[2].pretty}"
        brag_view = self.views[viewer]
        assert isinstance(brag_view, BastardBragObservation)
        slots = [card.pretty if card is not None else HIDDEN for card in brag_view.centre]
        return f"centre {slots[0]} {slots[1]} | {slots[2]}"


# ----- whole games --------------------------------------------------------------------


def tell(records: Iterable[LogRecord]) -> tuple[LogRecord, list[Step]]:
    """The ``game_start`` record and every step of a game's log records."""
    teller = Teller()
    steps: list[Step] = []
    for record in records:
        steps.extend(teller.feed(record))
    steps.extend(teller.finish())
    if teller.start is None:
        raise TranscriptError("the log holds no game_start record: it is not a game log")
    return teller.start, steps


def read_game(
    path: Path, shown: Callable[[Iterable[LogRecord]], Iterable[LogRecord]] = lambda records: records
) -> tuple[LogRecord, list[Step]]:
    """Read and tell a game log file (its records as ``shown`` gives them); raise :class:`TranscriptError` naming the
    file when it cannot be told."""
    try:
        records = read_game_log(path)
    except GameLogError as error:
        raise TranscriptError(str(error)) from None
    try:
        return tell(shown(records))
    except TranscriptError as error:
        raise TranscriptError(f"{path}: {error}") from None


def header(start: LogRecord, viewer: int | None = None) -> str:
    """The transcript's first line: the game, its players, its deal seed (the table's, not the league's) and
    settings."""
    players = ", ".join(
        f"seat {seat} {name}" + (" (you)" if seat == viewer else "") for seat, name in enumerate(start["players"])
    )
    timing = start.get("timing", {})
    policy = start.get("policy", {})
    return (
        f"{start['game_id']}: {start['game']}, {start['num_players']} players ({players}); deal seed {start['seed']}; "
        f"move {timing.get('move_time_ms')} ms, bank {timing.get('time_bank_ms')} ms; "
        f"faults: {policy.get('mode')}; referee {start.get('referee_version')}"
    )


def transcript_lines(
    start: LogRecord,
    steps: Sequence[Step],
    seat: int | None = None,
    notes: Mapping[int, tuple[int, str]] | None = None,
) -> Iterator[str]:
    """The transcript, one line per step: everything, or what ``seat`` saw; with ``notes`` (a bot's private notes
    by decision number: the seat and the note, :mod:`referee.records.notes`), each note under its decision."""
    yield header(start, seat)
    noted = dict(notes or {})
    for step in steps:
        yield _line(step, seat)
        note = noted.pop(step.decision, None) if step.decision is not None and step.kind in NOTED_STEPS else None
        if note is not None and seat in (None, note[0]):
            for line in printable(note[1]).splitlines() or [""]:
                yield f"    note of seat {note[0]}: {line}"


def transcript_json(start: LogRecord, steps: Sequence[Step], seat: int | None = None) -> dict[str, Any]:
    """The transcript for machines: the game, then each step with the table (or, for a seat, its view)."""
    return {
        "game": {key: start[key] for key in ("game_id", "game", "num_players", "seed", "players") if key in start},
        "seat": seat,
        "steps": [
            {
                "step": step.number,
                "kind": step.kind,
                "hand": step.hand_number,
                "seat": step.seat,
                "decision": step.decision,
                "text": step.text if seat is None else step.seat_texts[seat],
                **({"table": table_json(step.table)} if seat is None else {"view": view_json(step.views[seat])}),
                **(
                    {
                        "revealed": {
                            str(s): {"hand": format_cards(cards), "rank": rank}
                            for s, (cards, rank) in step.revealed.items()
                        }
                    }
                    if step.revealed
                    else {}
                ),
            }
            for step in steps
        ],
    }


def table_json(table: Table) -> dict[str, Any]:
    data: dict[str, Any] = {
        "hand": table.hand_number,
        "dealer": table.dealer,
        "current_seat": table.current_seat,
        "hands": [format_cards(hand) for hand in table.hands],
        "lives": list(table.lives),
        "floating": list(table.floating),
        "in_game": list(table.in_game),
        "in_hand": list(table.in_hand),
    }
    if table.centre:
        data["centre"] = [str(card) for card in table.centre]
    else:
        data["stock"] = format_cards(table.stock)
        data["discard_pile"] = format_cards(table.discard_pile)
        data["drawn"] = str(table.drawn) if table.drawn else None
    return data


def view_json(view: Observation) -> dict[str, Any]:
    """A seat's observation as JSON: its own cards and the table as it may see it."""
    data = {
        "hand_number": view.hand_number,
        "hand": format_cards(view.hand),
        "lives": list(view.lives),
        "floating": list(view.floating),
        "in_game": list(view.in_game),
        "current_seat": view.current_seat,
    }
    if isinstance(view, StopTheBusObservation):
        data.update(
            discard_top=str(view.discard_top) if view.discard_top else None,
            discard_count=view.discard_count,
            stock_count=view.stock_count,
            drawn_card=str(view.drawn_card) if view.drawn_card else None,
        )
    elif isinstance(view, BastardBragObservation):
        data["centre"] = [str(card) if card is not None else None for card in view.centre]
    return data


class LivePrinter:
    """Prints a game's transcript as its log records are made (``referee play --verbose``)."""

    def __init__(self, write: Callable[[str], None], seat: int | None = None) -> None:
        self._teller = Teller()
        self._write = write
        self._seat = seat

    def __call__(self, record: LogRecord) -> None:
        for step in self._teller.feed(record):
            self._print(step)
        if record["type"] == "game_start":
            self._write(header(record, self._seat))

    def _print(self, step: Step) -> None:
        self._write(_line(step, self._seat))


def _pretty(cards: str) -> str:
    """Cards of a log record (``"TH 2C"``) as people read them (``"10♥ 2♣"``)."""
    return pretty_cards(parse_cards(cards))


def _line(step: Step, seat: int | None) -> str:
    text = step.text if seat is None else step.seat_texts[seat]
    return text if step.kind in ("deal", "hand", "game_end") else "  " + text
