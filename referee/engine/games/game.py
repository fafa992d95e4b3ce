"""The game interface both games share: a pure state machine (actions and records are beside it).

A game is a pure state machine. It does no I/O, reads no clock and keeps no
global random state: every deck comes from a :class:`~referee.engine.seeding.SeedStream`
named by the game's seed (or from decks given for tests and tools, see
:class:`Game`). The referee drives it through one interface, the same for
both games:

- :attr:`Game.current_seat` whose decision it is (``None`` once the game is over);
- :meth:`Game.legal_actions` the legal actions, in a stable order;
- :meth:`Game.check_action` raises :class:`IllegalActionError` with the reason,
  :meth:`Game.is_legal` asks, :meth:`Game.apply` checks then applies; all three
  refuse what is no possible action (say slot ``1.0``) with
  :class:`MalformedActionError`;
- :meth:`Game.observation` what one seat may know, built in one place;
- :attr:`Game.events` the public record of everything that happened;
- :attr:`Game.hand_results` and :meth:`Game.result` the outcomes;
- :meth:`Game.clone` an independent copy, for search (and, on each game's
  class, ``from_observation``: a whole state sampled from what a seat knows);
- :meth:`Game.forfeit` removes a player at once (used by the referee's fault
  policy; the penalty itself is not part of the rules);
- for the referee and tools only, never a seat: the whole table
  (``StopTheBus.stock_top_first()``, ``BastardBrag.centre_by_slot()``).

Seats are numbered 0..n-1 clockwise: the seat on a player's left is the next
number, wrapping round.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, MutableSequence, Sequence
from functools import cache
from typing import Any, ClassVar, Protocol, Self

from referee.common.errors import DecksExhaustedError, GameArgumentError, GameOverError, IllegalActionError
from referee.engine.cards import Card
from referee.engine.games.actions import (
    CENTRE_SLOTS,
    DRAW,
    KNOCK,
    PASS,
    SHARED_ACTION_IDS,
    STOP,
    TAKE,
    Action,
    ActionKind,
    action,
    check_action_form,
    require_int,
)
from referee.engine.games.decks import checked_deck, checked_decks, seeded_deck
from referee.engine.games.events import EndReason, Event, EventKind, GameResult, HandResult, Observation, Phase, made
from referee.engine.hands import HandRank, rank_held
from referee.engine.seeding import SeedStream

# Actions and records are re-exported: ``from referee.engine.games.game import Action`` keeps working.
__all__ = [
    "CENTRE_SLOTS",
    "DEFAULT_TURN_LIMIT",
    "DRAW",
    "KNOCK",
    "PASS",
    "STARTING_LIVES",
    "STOP",
    "TAKE",
    "Action",
    "ActionKind",
    "EndReason",
    "Event",
    "EventKind",
    "Game",
    "GameResult",
    "HandResult",
    "Observation",
    "Phase",
    "RandomSource",
    "action",
    "check_action_form",
]

DEFAULT_TURN_LIMIT = 200
STARTING_LIVES = 3
# The seat of one who watches and holds no cards (Game.spectator_view): it matches no seat of any game.
SPECTATOR = -1

# The phases, read on every decision: a member read through its enum class costs about 0.1 us, a global far less.
_NORMAL, _FINAL, _OVER = Phase.NORMAL, Phase.FINAL, Phase.OVER
_SHOWDOWN = EventKind.SHOWDOWN
_new_tuple = tuple.__new__  # _new_tuple(Event, all seven fields) is Event(...) without its keyword defaults' cost


@cache
def _turn_order(num_players: int, seat: int, in_hand: tuple[bool, ...]) -> tuple[int, ...]:
    """The seats in the hand (``in_hand``) in turn order from ``seat``'s left, ``seat`` left out (a pure function,
    its answers kept: every deal, stop and knock asks it, and a table has few states)."""
    return tuple(other % num_players for other in range(seat + 1, seat + num_players) if in_hand[other % num_players])


class RandomSource(Protocol):
    """What ``from_observation`` draws with: a ``random.Random`` (the engine itself keeps no random state)."""

    def shuffle(self, x: MutableSequence[Any]) -> None: ...

    def getrandbits(self, k: int, /) -> int: ...

    def random(self) -> float: ...


class Game(ABC):
    """A game of Stop the Bus or Bastard Brag between ``num_players`` seats.

    ``seed`` (an ``int``) names every deck (see :mod:`referee.engine.seeding`);
    ``first_dealer`` defaults to a seat drawn from ``SeedStream.derive(seed,
    "first-dealer")``. ``decks`` fixes the deck of each hand (index 0 is the
    first card dealt), for tests and tools: either a list, ``decks[0]`` for
    hand 1, ``decks[1]`` for hand 2 and so on, where a hand past the end of
    the list raises :class:`DecksExhaustedError` (give enough decks, or a
    callable); or a callable ``decks(hand_number) -> deck``, called once as
    each hand starts, which may return ``None`` for that hand's seeded deck.
    A deck holds distinct cards of :data:`referee.engine.cards.DECK`, at least
    :meth:`cards_needed` of them; it may hold fewer than 52.
    ``turn_limit`` caps the normal turns of a hand: after the limit-th normal
    turn with no stop or knock, the showdown comes at once (see
    :meth:`_end_turn`). Bad values raise :class:`GameArgumentError`.
    """

    name: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    # The attributes that are lists the game changes in place: clone() copies these (and each hand); every
    # other attribute holds a value nothing changes in place (ints, cards, events, tuples, results).
    _LIST_ATTRIBUTES: ClassVar[tuple[str, ...]] = (
        "lives",
        "floating",
        "in_game",
        "in_hand",
        "out_of_play",
        "eliminations",
        "forfeited",
        "events",
        "hand_results",
        "final_queue",
        "_eliminated_this_hand",
    )

    def __init__(
        self,
        num_players: int,
        seed: int,
        first_dealer: int | None = None,
        decks: Sequence[Sequence[Card]] | Callable[[int], Sequence[Card] | None] | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
    ) -> None:
        if num_players.__class__ is not int or not self.min_players <= num_players <= self.max_players:
            players = f"{self.min_players} to {self.max_players}"
            require_int("num_players", num_players, f"{self.name} is played by {players} players")
            raise GameArgumentError(f"{self.name} is played by {players} players, not {num_players}")
        require_int("seed", seed, "any whole number")
        require_int("turn_limit", turn_limit, "normal turns in a hand, at least 1")
        if turn_limit < 1:
            raise GameArgumentError(f"turn_limit must be at least 1 (normal turns in a hand), got {turn_limit}")
        if first_dealer is None:
            first_dealer = SeedStream.derive(seed, "first-dealer").randbelow(num_players)
        else:
            require_int("first_dealer", first_dealer, f"a seat 0..{num_players - 1}, or None for a seeded choice")
            if not 0 <= first_dealer < num_players:
                raise GameArgumentError(f"first_dealer must be a seat 0..{num_players - 1}, got {first_dealer}")
        self.num_players = num_players
        self.seed = seed
        self.turn_limit = turn_limit
        self._deck_source: Callable[[int], Sequence[Card] | None] | None = None
        self._fixed_decks: list[tuple[Card, ...]] | None = None
        if callable(decks):
            self._deck_source = decks
        elif decks is not None:
            self._fixed_decks = checked_decks(decks)
        self.lives = [STARTING_LIVES] * num_players
        self.floating = [False] * num_players
        self.in_game = [True] * num_players
        self.in_hand = [False] * num_players
        self.hands: list[list[Card]] = [[] for _ in range(num_players)]
        self.out_of_play: list[Card] = []  # cards of players who forfeited mid-hand
        self.eliminations: list[int] = []  # seats in the order they left the game
        self.forfeited: list[int] = []
        self.events: list[Event] = []
        self.hand_results: list[HandResult] = []
        self.hand_number = 0
        self.dealer = first_dealer
        self.phase = Phase.NORMAL
        self.current_seat: int | None = None
        self.ender: int | None = None
        self.final_queue: list[int] = []
        self.turns_this_hand = 0
        self._hand_event_start = 0
        self._eliminated_this_hand: list[int] = []
        self._legal: tuple[Action, ...] | None = None
        self._view: dict[str, Any] | None = None  # see _public_view: replaced, never changed in place
        self._next_deck: tuple[int, list[Card]] | None = None  # deal_ahead's shuffle: (hand number, deck)
        self._start_hand()

    # ----- queries ---------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.phase is _OVER

    @property
    def seats_in_game(self) -> list[int]:
        return [seat for seat in range(self.num_players) if self.in_game[seat]]

    @property
    def hand_events(self) -> tuple[Event, ...]:
        """The public events of the current hand (the last hand, once the game is over)."""
        return tuple(self.events[self._hand_event_start :])

    def legal_actions(self) -> tuple[Action, ...]:
        """Return the legal actions of the current seat, in a stable order."""
        legal = self._legal
        if legal is None:
            if self.phase is _OVER:
                return ()
            legal = self._legal = self._compute_legal()
        return legal

    def check_action(self, action: Action) -> None:
        """Raise :class:`IllegalActionError` saying why ``action`` is illegal now; else return.

        An ``action`` that is no possible action at all (see :func:`action`:
        slot ``1.0`` or ``True``, a card given as text, a kind that is not an
        :class:`ActionKind`) raises :class:`MalformedActionError`, a kind of
        :class:`IllegalActionError`; after the game ends, :class:`GameOverError`.
        """
        check_action_form(action, self.current_seat)
        if self.phase is Phase.OVER:
            raise GameOverError(f"the game is over; no action {str(action)!r} can be played")
        if action not in self.legal_actions():
            raise IllegalActionError(action, self.why_illegal(action), self.current_seat)

    def is_legal(self, action: Action) -> bool:
        """Say whether the current seat may play ``action`` now (``False`` once the game is over).

        Raises :class:`MalformedActionError` for an ``action`` that is no
        possible action at all, as :meth:`check_action` does.
        """
        check_action_form(action, self.current_seat)
        return self.phase is not Phase.OVER and action in self.legal_actions()

    def apply(self, action: Action) -> None:
        """Play ``action`` for the current seat, after checking it is legal (see :meth:`check_action`)."""
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()  # none once the game is over
        if id(action) not in SHARED_ACTION_IDS or action not in legal:
            self.check_action(action)
        self._legal = None
        self._apply(action)

    def result(self) -> GameResult:
        """Return the placements; the game must be over."""
        if self.phase is not Phase.OVER:
            raise GameOverError("the game is not over yet; there is no result")
        survivors = self.seats_in_game
        return GameResult(
            placements=tuple(survivors) + tuple(reversed(self.eliminations)),
            hands_played=len(self.hand_results),
            forfeited=tuple(self.forfeited),
        )

    def observation(self, seat: int) -> Observation:
        """Return exactly what ``seat`` may know now (the one place that builds a seat's view)."""
        if seat.__class__ is not int or not 0 <= seat < self.num_players:
            self._check_seat(seat, "observation(seat)")
        return self._view_of(seat)

    def spectator_view(self) -> Observation:
        """Return what anyone watching may know now: the view of a seat that holds no cards (``seat`` is
        :data:`SPECTATOR`: no hand, no legal actions, none of a seat's own cards such as the card it just drew
        or a face-down centre card it put there). Hands are seen only in the showdowns' results."""
        return self._view_of(SPECTATOR)

    def _view_of(self, seat: int) -> Observation:
        """A seat's view, or with :data:`SPECTATOR` a watcher's: built here alone, so the two cannot differ."""
        current = self.current_seat
        view = (self._view or self._public_view()).copy()
        # The fields that change from decision to decision: the seat's own hand and legal actions, the turn.
        # Each is a tuple or a value nothing changes, so that the observation stays as it was made.
        view["seat"] = seat
        view["phase"] = self.phase
        view["current_seat"] = current
        view["hand"] = tuple(self.hands[seat]) if seat != SPECTATOR else ()
        view["ender"] = self.ender
        view["turns_this_hand"] = self.turns_this_hand
        view["hand_events"] = tuple(self.events[self._hand_event_start :])
        view["legal_actions"] = (self._legal or self.legal_actions()) if seat == current else ()
        return self._observe(seat, view)

    def _public_view(self) -> dict[str, Any]:
        """Make (and keep, as ``_view``) what every seat's observation shows that changes only when a hand
        starts, at a showdown or at a forfeit, where it is forgotten: every observation copies it and fills in
        the rest (its keys are all the fields', so that the copy has room for them)."""
        view = self._view = {
            "game": self.name,
            "seat": None,
            "num_players": self.num_players,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "phase": None,
            "current_seat": None,
            "hand": (),
            "lives": tuple(self.lives),
            "floating": tuple(self.floating),
            "in_game": tuple(self.in_game),
            "in_hand": tuple(self.in_hand),
            "ender": None,
            "turns_this_hand": 0,
            "turn_limit": self.turn_limit,
            "hand_events": (),
            "legal_actions": (),
            **dict.fromkeys(self._table_fields),
        }
        return view

    def _check_seat(self, seat: object, where: str) -> None:
        require_int(where, seat, f"a seat 0..{self.num_players - 1}")
        if not 0 <= seat < self.num_players:  # type: ignore[operator]
            raise GameArgumentError(f"{where}: seat must be 0..{self.num_players - 1}, got {seat}")

    def clone(self) -> Self:
        """Return an independent copy of the game: what is played on either leaves the other as it was.

        For search: a copy plays on exactly as the original would (the same
        decks, the same recycles), and costs a few microseconds, far less than
        ``copy.deepcopy``. A ``decks`` callable given to the game is shared, not
        copied.
        """
        twin = object.__new__(type(self))
        state = twin.__dict__
        state.update(self.__dict__)
        for name in self._LIST_ATTRIBUTES:
            state[name] = state[name].copy()
        twin.hands = [hand.copy() for hand in self.hands]
        return twin

    @classmethod
    def from_observation(cls, observation: Observation, rng: RandomSource) -> Self:
        """A whole game state that ``observation``'s seat cannot tell from the real one (each game says how)."""
        return next(cls.states_from_observation(observation, rng))

    @classmethod
    @abstractmethod
    def states_from_observation(cls, observation: Observation, rng: RandomSource) -> Iterator[Self]:
        """Endless states drawn as :meth:`from_observation` draws one, the observation read once, up front."""

    # ----- forfeit ----------------------------------------------------------

    def forfeit(self, seat: int, reason: str = "") -> None:
        """Remove ``seat`` from the game at once (RULES.md, "players leaving").

        Its cards leave play, it takes no further turns, it is not compared at
        the showdown and it ranks below every player still in the game. If
        one player remains, that player wins at once.
        """
        self._check_seat(seat, "forfeit(seat)")
        if self.phase is Phase.OVER:
            raise GameOverError(f"the game is over; seat {seat} cannot forfeit")
        if not self.in_game[seat]:
            raise GameArgumentError(f"forfeit(seat): seat {seat} is not in the game and cannot forfeit")
        self._legal = self._view = None
        self.in_game[seat] = False
        self.in_hand[seat] = False
        self.forfeited.append(seat)
        self.eliminations.append(seat)
        self._eliminated_this_hand.append(seat)
        self.out_of_play.extend(self._release_cards(seat))
        self.hands[seat] = []
        self.events.append(Event(EventKind.FORFEIT, self.hand_number, seat))
        if sum(self.in_game) == 1:
            self._finish_hand(EndReason.FORFEIT, loser=None)
            return
        if seat in self.final_queue:
            self.final_queue.remove(seat)
        if seat == self.current_seat:
            self._seat_leaves_turn(seat)

    def _release_cards(self, seat: int) -> list[Card]:
        """Return the cards that leave play with a forfeiting seat (and clear any turn state)."""
        return list(self.hands[seat])

    def _seat_leaves_turn(self, seat: int) -> None:
        """Move play on after the current seat left the game mid-turn."""
        self._advance(seat)

    # ----- hand flow ---------------------------------------------------------

    def _next_in_hand(self, seat: int) -> int:
        """Return the next seat on ``seat``'s left that is in the current hand."""
        n, in_hand = self.num_players, self.in_hand
        following = seat + 1
        if following < n and in_hand[following]:  # the common case, at once
            return following
        for candidate in range(following, seat + n + 1):
            if in_hand[candidate % n]:
                return candidate % n
        raise AssertionError("no seat is in the hand")

    def _seats_from_left_of(self, seat: int) -> list[int]:
        """Seats in the hand, in turn order from ``seat``'s left, ``seat`` excluded."""
        return list(_turn_order(self.num_players, seat, tuple(self.in_hand)))

    def _deck_for(self, hand_number: int) -> list[Card]:
        """Return the deck of hand ``hand_number`` (given by ``decks``, or seeded), checked for the deal."""
        if self._deck_source is not None:
            source = f"decks({hand_number})"
            given = self._deck_source(hand_number)
            deck = seeded_deck(self.seed, hand_number) if given is None else list(checked_deck(given, source))
        elif self._fixed_decks is not None:
            if hand_number > len(self._fixed_decks):
                raise DecksExhaustedError(hand_number, len(self._fixed_decks))
            source = f"decks[{hand_number - 1}] (hand {hand_number})"
            deck = list(self._fixed_decks[hand_number - 1])
        else:
            ahead = self._next_deck
            if ahead is not None and ahead[0] == hand_number:
                self._next_deck = None
                return ahead[1]
            return seeded_deck(self.seed, hand_number)
        players = sum(self.in_game)
        if len(deck) < self.cards_needed(players):
            needed = self.cards_needed(players)
            raise GameArgumentError(
                f"{source}: the deck has {len(deck)} cards; {players} players need at least {needed}"
            )
        return deck

    def deal_ahead(self) -> None:
        """Shuffle the next hand's seeded deck now, so that the end of this hand need not wait for it.

        The deck of a hand is a pure function of the seed and the hand's
        number, so this changes nothing the game does or shows; it only
        moves the work (a referee calls it while a bot thinks). Games given
        their ``decks`` have nothing to shuffle.
        """
        upcoming = self.hand_number + 1
        if (
            self._next_deck is None
            and self._deck_source is None
            and self._fixed_decks is None
            and self.phase is not Phase.OVER
        ):
            self._next_deck = (upcoming, seeded_deck(self.seed, upcoming))

    def _start_hand(self) -> None:
        # The deck first: if there is none to be had, the game is left as the last hand ended.
        deck = self._deck_for(self.hand_number + 1)
        self.hand_number += 1
        self._hand_event_start = len(self.events)
        self._eliminated_this_hand = []
        self.in_hand = list(self.in_game)
        self._view = None
        self.phase = _NORMAL
        self.ender = None
        self.final_queue = []
        self.turns_this_hand = 0
        self.out_of_play = []
        self._deal(deck)
        self.current_seat = self._next_in_hand(self.dealer)
        self._before_turn()

    def _deal_rounds(self, deck: list[Card], to_centre: list[Card] | None) -> int:
        """Deal three rounds one card at a time from the dealer's left; return cards used.

        If ``to_centre`` is given, it receives a card at the end of each round.
        """
        dealer, in_hand = self.dealer, self.in_hand
        order = _turn_order(self.num_players, dealer, tuple(in_hand))
        if in_hand[dealer]:
            order += (dealer,)  # the dealer last
        hands = self.hands
        for seat in range(self.num_players):
            hands[seat] = []
        # A round deals one card to each seat in order (and one to the centre): the cards of the seat
        # dealt k-th in a round lie at k, k + round and k + 2 * round of the deck.
        round_size = len(order) + (to_centre is not None)
        for position, seat in enumerate(order):
            hand = deck[position : position + 2 * round_size + 1 : round_size]
            hand.sort()
            hands[seat] = hand
        if to_centre is not None:
            to_centre += deck[round_size - 1 : 3 * round_size : round_size]
        return 3 * round_size

    def _end_turn(self, seat: int) -> None:
        """Count a finished turn, then move play on, or end the hand at the turn limit.

        Ruling (turn limit): the limit counts normal turns only, the turn that
        stops or knocks included. When the limit-th normal turn ends with no
        stop or knock, the showdown comes at once. A stop or knock on that
        turn still gives every other player its one final turn, and final
        turns are never cut short by the limit: they keep counting in
        ``turns_this_hand``, which may so pass ``turn_limit`` by up to the
        number of players less one. A forfeit is not a turn.
        """
        turns = self.turns_this_hand = self.turns_this_hand + 1
        if self.phase is not _NORMAL:
            self._advance(seat)
        elif turns < self.turn_limit:
            self.current_seat = self._next_in_hand(seat)
            self._before_turn()
        else:
            self.events.append(Event(EventKind.TURN_LIMIT, self.hand_number, count=turns))
            self._showdown(EndReason.TURN_LIMIT)

    def _advance(self, seat: int) -> None:
        """Give the turn to the next seat, or go to the showdown after the last final turn."""
        if self.phase is _FINAL:
            if not self.final_queue:
                self._showdown(self._final_reason)
                return
            self.current_seat = self.final_queue.pop(0)
        else:
            self.current_seat = self._next_in_hand(seat)
        self._before_turn()

    def _before_turn(self) -> None:
        """Hook run at the start of every turn, a hand's first included (Stop the Bus recycles an empty stock
        here)."""

    def _begin_final_turns(self, ender: int) -> None:
        self.ender = ender
        self.phase = _FINAL
        self.final_queue = self._seats_from_left_of(ender)

    def _showdown(self, reason: EndReason) -> None:
        hands, in_hand = self.hands, self.in_hand
        ranks = {seat: rank_held(hands[seat]) for seat in range(self.num_players) if in_hand[seat]}
        loser = min(ranks, key=ranks.__getitem__)
        self.events.append(_new_tuple(Event, (_SHOWDOWN, self.hand_number, loser, None, None, None, None)))
        self._view = None
        if self._lose_life(loser):
            self.in_game[loser] = False
            self.eliminations.append(loser)
            self._eliminated_this_hand.append(loser)
            self.events.append(Event(EventKind.ELIMINATED, self.hand_number, loser))
        self._finish_hand(reason, loser, ranks)

    def _finish_hand(self, reason: EndReason, loser: int | None, ranks: dict[int, HandRank] | None = None) -> None:
        ranks = ranks or {}
        hands = self.hands
        self.hand_results.append(
            made(
                HandResult,
                {
                    "hand_number": self.hand_number,
                    "dealer": self.dealer,
                    "ended_by": reason,
                    "ender": self.ender,
                    "turns": self.turns_this_hand,
                    "hands": {seat: tuple(hands[seat]) for seat in ranks},
                    "ranks": ranks,
                    "loser": loser,
                    "lives_after": tuple(self.lives),
                    "floating_after": tuple(self.floating),
                    "eliminated": tuple(self._eliminated_this_hand),
                },
            )
        )
        self._legal = None
        if sum(self.in_game) == 1:
            self.phase = _OVER
            self.current_seat = None
            winner = self.in_game.index(True)
            self.events.append(Event(EventKind.GAME_OVER, self.hand_number, winner))
            return
        self.dealer = self._next_dealer()
        self.current_seat = None  # nobody is on turn between hands (nor after them, should no deck follow)
        self._start_hand()

    # ----- per game -----------------------------------------------------------

    _final_reason: ClassVar[EndReason]
    _table_fields: ClassVar[tuple[str, ...]] = ()  # the fields _observe adds to an observation (see _public_view)

    @classmethod
    @abstractmethod
    def cards_needed(cls, players: int) -> int:
        """Cards a deck must hold to deal a hand to ``players`` players."""

    @abstractmethod
    def _deal(self, deck: list[Card]) -> None:
        """Deal ``deck`` (index 0 first) for the hand that is starting."""

    @abstractmethod
    def _compute_legal(self) -> tuple[Action, ...]:
        """Legal actions of the current seat, in a stable order."""

    @abstractmethod
    def why_illegal(self, action: Action) -> str:
        """Say why ``action`` is not legal now (it is known not to be)."""

    @abstractmethod
    def default_action(self) -> Action:
        """The neutral legal action of the current seat: what a fault policy may play for a bot that failed."""

    @abstractmethod
    def _apply(self, action: Action) -> None:
        """Apply a legal action."""

    @abstractmethod
    def _lose_life(self, seat: int) -> bool:
        """Take a life from the showdown's loser; return whether it is eliminated."""

    @abstractmethod
    def _next_dealer(self) -> int:
        """Return the dealer of the next hand (called after eliminations are known)."""

    @abstractmethod
    def table_view(self, seat: int) -> tuple[object, ...]:
        """What ``seat`` may see of the game's own table (piles, centre): the one place a game decides it, read
        by :meth:`observation` and by the referee's request encoder alike."""

    @abstractmethod
    def _observe(self, seat: int, common: dict[str, Any]) -> Observation:
        """Build the game's observation from the common fields (a new dict, which it may keep) and
        :meth:`table_view`."""

    @abstractmethod
    def cards_in_play(self) -> int:
        """Count every card the hand holds anywhere (hands, piles, centre, out of play)."""
