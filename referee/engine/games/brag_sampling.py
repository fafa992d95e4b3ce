"""Where the cards of a Bastard Brag hand may be, as one seat can tell: for ``BastardBrag.from_observation``.

In Bastard Brag a card's path can hide it again after it was seen. A seat
that takes the face-up 7H and later exchanges with a face-down slot gives one
of its three cards, unseen: the 7H went down or stayed in its hand. So the
cards seen this hand (the deal's face-up card, every card given or taken face
up, the face-up card of an exchange-all) are followed as *tokens* whose place
may be uncertain, and every other card is an anonymous token, all alike.

The model is the one determinized search assumes: the deck was shuffled
uniformly and the players' choices tell nothing of their cards, so a hidden
choice (which card a seat gave to a face-down slot) is any of its three cards
with equal chance. Its distribution given the public record is computed by a
forward pass over the hand's events that keeps every *configuration* (the
seen cards each place holds) with its weight:

- a face-down exchange by seat X branches into one configuration per card X
  may have given: each followed token X holds, weight 1, and any of its
  anonymous cards, weight their number;
- a card shown from X's hand (given face up, or laid face up by an
  exchange-all) keeps the configurations where X could hold it: its token
  in X's hand, or, for a card not seen before, one of X's anonymous cards
  (weight their number: each is that card with the same chance);
- an exchange-all lays the other two given cards face down in slots 0 and 1.
  Two followed cards go in card order, as the rules lay them; otherwise
  either order is taken as equally likely. This is the model's one
  simplification: the rule's order says a little of an anonymous card (it is
  above or below the card beside it), and the model does not use it;
- only the seat's own turns change its hand, so from its last turn on, the
  configurations must give it the seen cards it holds; at the end, the
  face-down cards it put in the centre must be where it sees them.

The pass is exact while there are at most ``FOLLOWED_CONFIGURATIONS`` of
them; past that (long hands of many face-down exchanges) it carries a
weighted sample of them, a particle filter (see ``_resampled``), and starts
again should that sample lose every configuration the later events allow. A
state is then drawn: a configuration by weight, and the cards never seen
dealt uniformly at random into the anonymous places left.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate

from referee.common.errors import GameArgumentError
from referee.engine.cards import DECK, Card
from referee.engine.games.events import Event, EventKind
from referee.engine.games.game import RandomSource

# Past this many configurations, the forward pass carries a weighted sample of them (see _resampled).
FOLLOWED_CONFIGURATIONS = 400
_HAND_SIZE = 3
_FACE_DOWN_SLOTS = (0, 1)
_NO_GAME = "from_observation: no game of Bastard Brag shows this observation"

# A configuration: for each place (each seat's hand, the three centre slots, out of play), the seen cards it
# holds, a bit per card (bit k: the card seen k-th this hand).
Configuration = tuple[int, ...]
# What one event makes of a configuration: its branches, each with the factor its weight is multiplied by.
Step = Callable[[Configuration], Iterator[tuple[Configuration, float]]]


def inconsistent(problem: str) -> GameArgumentError:
    return GameArgumentError(f"{_NO_GAME}: {problem}")


class NoConfiguration(GameArgumentError):
    """No configuration followed agrees with the record (none could, or resampling dropped those that do)."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"{_NO_GAME}: {problem}")


@dataclass(frozen=True, slots=True)
class CardPlaces:
    """One state's cards by place: what ``BastardBrag.from_observation`` builds its game from."""

    hands: list[list[Card]]
    centre: list[Card]  # by slot, slot 2 face up
    set_aside: list[Card]
    out_of_play: list[Card]


class CardInference:
    """The configurations of a hand's seen cards given its public events, with their weights."""

    def __init__(self, num_players: int, starting: Sequence[bool], rng: RandomSource) -> None:
        self.rng = rng  # for resampling, when there are too many configurations to follow
        self.players = num_players
        self.slots = (num_players, num_players + 1, num_players + 2)  # the centre's places, by slot
        self.out = num_players + 3  # the cards of seats that forfeited in this hand
        self.capacity = [_HAND_SIZE if playing else 0 for playing in starting] + [1, 1, 1, 0]
        self.tokens: list[Card] = []  # the cards seen this hand, in the order they were first seen
        self.token_of: dict[Card, int] = {}
        self.configurations: dict[Configuration, float] = {}
        self.centre_known_to: list[int | None] = [None, None]  # who put each face-down card there (and knows it)
        self.has_had_turn = [False] * num_players
        self.forfeits: list[int] = []  # seats that forfeited in this hand, in order
        self.resampled = False  # whether the configurations followed are a sample (see _resampled)
        self.placed = 0  # the seen cards seen so far (each is in one place of every configuration)
        self.allowed: tuple[int, ...] = ()  # after the current event: the seen cards each place may hold
        # The acting seat's next turn, and what each place may hold after it (see _can_play).
        self.next_turn: tuple[Event, tuple[int, ...]] | None = None

    # ----- the forward pass ---------------------------------------------------------------------------------

    def play(self, events: Sequence[Event], seat: int, hand: Sequence[Card], centre: Sequence[Card | None]) -> None:
        """Follow a hand's public events, from its deal, as ``seat`` sees them: holding ``hand``, seeing ``centre``.

        Each event's branches are kept only where every seen card can still
        reach the places the later events and the seat's own view put it (see
        :meth:`_reachable`): the others have no chance, and dropping them at
        once keeps them from crowding out those that do (see _resampled).
        """
        for event in events:
            for card in (event.card, event.taken) if event.kind is not EventKind.DEAL else (event.card,):
                if card is not None and card not in self.token_of:
                    self.token_of[card] = len(self.tokens)
                    self.tokens.append(card)
        reachable = self._reachable(events, seat, hand, centre)
        next_turn: dict[int, int] = {}  # a turn's event -> the same seat's next turn's (or forfeit's)
        last_turn: dict[int, int] = {}
        for index, event in enumerate(events):
            if event.kind is not EventKind.DEAL and event.seat is not None:
                if event.seat in last_turn:
                    next_turn[last_turn[event.seat]] = index
                last_turn[event.seat] = index
        for index, (event, allowed) in enumerate(zip(events, reachable, strict=True)):
            self.allowed = allowed
            following = next_turn.get(index)
            self.next_turn = None if following is None else (events[following], reachable[following])
            self._follow(event)

    def _reachable(
        self, events: Sequence[Event], seat: int, hand: Sequence[Card], centre: Sequence[Card | None]
    ) -> list[tuple[int, ...]]:
        """For each event: the seen cards each place may hold after it, such that the later events can follow.

        A backward pass from the end, where a seen card is in the seat's hand
        if and only if the seat holds it, and in a face-down slot the seat
        knows if it sees it there. An event leads each place to the places a
        card there may go (an exchange with a slot swaps a card of the hand
        with the slot's, an exchange-all the hand with the centre); a card
        shown from a hand was in that hand. It is a necessary condition only,
        each card on its own: what it drops cannot happen, what it keeps may.
        """
        tokens = self.tokens
        every_card = (1 << len(tokens)) - 1
        in_hand = sum(1 << token for token, card in enumerate(tokens) if card in hand)
        after = [every_card & ~in_hand] * len(self.capacity)  # place -> the seen cards it may hold
        after[seat] = in_hand
        for slot in _FACE_DOWN_SLOTS:
            seen = centre[slot]
            if seen is not None and seen in self.token_of:
                card = 1 << self.token_of[seen]
                after = [allowed & ~card for allowed in after]
                after[self.slots[slot]] |= card
        by_event: list[tuple[int, ...]] = []
        low, high, top = self.slots
        for event in reversed(events):
            by_event.append(tuple(after))
            kind, holder = event.kind, event.seat
            if holder is None or kind in (EventKind.DEAL, EventKind.KNOCK):
                continue
            before = after.copy()
            if kind is EventKind.EXCHANGE and event.slot in _FACE_DOWN_SLOTS:
                slot = self.slots[event.slot]
                before[holder] = after[holder] | after[slot]
                before[slot] = after[holder]
            elif kind is EventKind.FORFEIT:
                before[holder] = after[self.out]
            elif event.card is not None and event.taken is not None:  # a face-up exchange, or an exchange-all
                if kind is EventKind.EXCHANGE_ALL:
                    before[holder] = after[low] | after[high]
                    before[low] = before[high] = after[holder]
                shown, taken = 1 << self.token_of[event.card], 1 << self.token_of[event.taken]
                before = [allowed & ~(shown | taken) for allowed in before]
                before[top] = taken if after[holder] & taken else 0  # the face-up card, taken by the seat
                if after[top] & shown:  # the card laid face up was in the seat's hand
                    before[holder] |= shown
            after = before
        by_event.reverse()
        return by_event

    def _follow(self, event: Event) -> None:
        kind, seat = event.kind, event.seat
        if kind is EventKind.DEAL:
            if event.card is None or self.configurations:
                raise inconsistent(f"a hand's events start with its deal, not {event}")
            start = [0] * len(self.capacity)
            start[self.slots[2]] = self.placed = 1 << self.token_of[event.card]
            self.configurations = {tuple(start): 1.0}
            return
        if not self.configurations:
            raise inconsistent(f"a hand's events start with its deal, not {event}")
        if seat is None or not 0 <= seat < self.players:
            raise inconsistent(f"{event} names no seat of the table")
        if kind is EventKind.EXCHANGE and event.slot == 2:
            self._face_up_exchange(seat, event)
        elif kind is EventKind.EXCHANGE and event.slot in _FACE_DOWN_SLOTS:
            self._face_down_exchange(seat, event.slot)
        elif kind is EventKind.EXCHANGE_ALL:
            self._exchange_all(seat, event)
        elif kind is EventKind.FORFEIT:
            self._forfeit(seat)
        elif kind is not EventKind.KNOCK:
            raise inconsistent(f"{event} is no event of a hand in play")
        if kind is not EventKind.FORFEIT:
            self.has_had_turn[seat] = True
        if not self.configurations:
            raise NoConfiguration(f"{event}: no deal and choices lead to it")

    def _branch(self, step: Step, touched: tuple[int, ...]) -> None:
        """Replace each configuration by its branches that may still be, adding the weights of branches that meet.

        Only the ``touched`` places change, so only they are checked against
        what the later events allow.
        """
        allowed = self.allowed
        refused = [(place, ~allowed[place]) for place in touched]
        seat, next_turn = touched[0], self.next_turn
        playable: dict[int, bool] = {}  # the seat's seen cards -> whether it can play its next turn with them
        branches: dict[Configuration, float] = defaultdict(float)
        for configuration, weight in self.configurations.items():
            for branch, factor in step(configuration):
                for place, outside in refused:
                    if branch[place] & outside:
                        break
                else:
                    if next_turn is not None:
                        held = branch[seat]
                        can = playable.get(held)
                        if can is None:
                            can = playable[held] = self._can_play(seat, held, *next_turn)
                        if not can:
                            continue
                    branches[branch] += weight * factor
        if len(branches) > FOLLOWED_CONFIGURATIONS:
            branches = self._resampled(branches)
            self.resampled = True
        top = max(branches.values(), default=1.0)
        self.configurations = {configuration: weight / top for configuration, weight in branches.items()}

    def _can_play(self, seat: int, held: int, turn: Event, after: tuple[int, ...]) -> bool:
        """Whether ``seat``, holding the seen cards ``held`` until its next ``turn``, can play it as the record says.

        Its hand changes only on its own turns, so what it holds now must let
        that turn happen with every card going where the places ``after`` it
        allow: one card given and two kept, or the three laid in the centre.
        The per-card check (see :meth:`_reachable`) cannot see that only one
        card leaves.
        """
        kind, given = turn.kind, turn.card
        unseen = held.bit_count() < self.capacity[seat]
        if kind is EventKind.EXCHANGE and turn.slot in _FACE_DOWN_SLOTS:
            lying = after[self.slots[turn.slot]]
            leaving = held & ~after[seat]
            if leaving:
                return leaving.bit_count() == 1 and bool(leaving & lying)
            return bool(held & lying) or unseen
        if given is None or kind not in (EventKind.EXCHANGE, EventKind.EXCHANGE_ALL):
            return True  # a knock keeps the hand to the end, a forfeit takes it out: each card on its own
        card = 1 << self.token_of[given]
        if not held & card and (self.placed & card or not unseen):
            return False  # the card shown is neither held nor one of its cards never seen
        rest = held & ~card
        if kind is EventKind.EXCHANGE:
            return not rest & ~after[seat]
        low, high = after[self.slots[0]], after[self.slots[1]]
        if rest.bit_count() == 2:
            first = rest & -rest
            second = rest ^ first
            if self.tokens[first.bit_length() - 1] > self.tokens[second.bit_length() - 1]:
                first, second = second, first
            return bool(first & low and second & high)
        return not rest & ~(low | high)

    def _resampled(self, branches: dict[Configuration, float]) -> dict[Configuration, float]:
        """``FOLLOWED_CONFIGURATIONS`` draws from ``branches`` by weight (systematic resampling), equally weighted.

        A configuration is kept as often as its share of the weight says,
        give or take one: the particle filter's unbiased estimate of the
        distribution, where following every configuration would cost too much.
        """
        step = sum(branches.values()) / FOLLOWED_CONFIGURATIONS
        mark = self.rng.random() * step
        reached = 0.0
        kept: dict[Configuration, float] = defaultdict(float)
        for configuration, weight in branches.items():
            reached += weight
            while mark < reached:
                kept[configuration] += step
                mark += step
        return kept

    def _from_hand(self, places: Configuration, seat: int, card: int) -> float:
        """The weight of ``seat`` holding the seen card ``card`` (a bit), which it shows: 1 where it holds it, 0
        where another place does; for a card not seen before, its cards never seen (each is it with equal chance)."""
        if places[seat] & card:
            return 1.0
        if self.placed & card:
            return 0.0
        return float(self.capacity[seat] - places[seat].bit_count())

    def _face_up_exchange(self, seat: int, event: Event) -> None:
        given, taken = event.card, event.taken
        if given is None or taken is None:
            raise inconsistent(f"{event}: a face-up exchange shows both cards")
        given_bit, taken_bit = 1 << self.token_of[given], 1 << self.token_of[taken]
        face_up = self.slots[2]

        def swapped(places: Configuration) -> Iterator[tuple[Configuration, float]]:
            factor = self._from_hand(places, seat, given_bit)
            if factor and places[face_up] == taken_bit:
                after = list(places)
                after[seat] = (places[seat] & ~given_bit) | taken_bit
                after[face_up] = given_bit
                yield tuple(after), factor

        self._branch(swapped, (seat, face_up))
        self.placed |= given_bit

    def _face_down_exchange(self, seat: int, slot: int) -> None:
        self.centre_known_to[slot] = seat
        place = self.slots[slot]
        room = self.capacity[seat]

        def gave(places: Configuration) -> Iterator[tuple[Configuration, float]]:
            held, lying = places[seat], places[place]
            after = list(places)
            rest = held
            while rest:  # the seat gave one of its seen cards
                card = rest & -rest
                rest ^= card
                after[seat], after[place] = (held ^ card) | lying, card
                yield tuple(after), 1.0
            unnamed = room - held.bit_count()
            if unnamed:  # or one of its cards never seen
                after[seat], after[place] = held | lying, 0
                yield tuple(after), float(unnamed)

        self._branch(gave, (seat, place))

    def _exchange_all(self, seat: int, event: Event) -> None:
        face_up, taken = event.card, event.taken
        if face_up is None or taken is None:
            raise inconsistent(f"{event}: an exchange-all shows the card laid face up and the one taken")
        face_up_token = self.token_of[face_up]
        face_up_bit, taken_bit = 1 << face_up_token, 1 << self.token_of[taken]
        self.centre_known_to = [seat, seat]
        low, high, top = self.slots

        def swapped(places: Configuration) -> Iterator[tuple[Configuration, float]]:
            factor = self._from_hand(places, seat, face_up_bit)
            if not factor or places[top] != taken_bit:
                return
            given = places[seat] & ~face_up_bit
            after = list(places)
            after[seat] = places[low] | places[high] | taken_bit  # the seat takes the centre
            after[top] = face_up_bit
            count = given.bit_count()
            if count == 2:  # two seen cards: laid in card order, as the rules lay them (bits follow first sight)
                first = given & -given
                second = given ^ first
                if self.tokens[first.bit_length() - 1] > self.tokens[second.bit_length() - 1]:
                    first, second = second, first
                after[low], after[high] = first, second
                yield tuple(after), 2.0 * factor
            elif count == 1:  # one seen card, beside one never seen: either order
                after[low], after[high] = given, 0
                yield tuple(after), factor
                after[low], after[high] = 0, given
                yield tuple(after), factor
            else:
                after[low] = after[high] = 0
                yield tuple(after), 2.0 * factor

        self._branch(swapped, (seat, low, high, top))
        self.placed |= face_up_bit

    def _forfeit(self, seat: int) -> None:
        self.forfeits.append(seat)
        self.capacity[self.out] += self.capacity[seat]
        self.capacity[seat] = 0
        out = self.out

        def left(places: Configuration) -> Iterator[tuple[Configuration, float]]:
            after = list(places)
            after[out] |= after[seat]
            after[seat] = 0
            yield tuple(after), 1.0

        self._branch(left, (seat, out))

    # ----- what the seat itself sees, then a draw -------------------------------------------------------------

    def agree_with(self, centre: Sequence[Card | None]) -> None:
        """Keep the configurations that put the face-down cards the seat knows where ``centre`` shows them."""
        lying = [
            (self.slots[slot], 1 << self.token_of[card] if card in self.token_of else 0)
            for slot in _FACE_DOWN_SLOTS
            if (card := centre[slot]) is not None
        ]
        self.configurations = {
            places: weight
            for places, weight in self.configurations.items()
            if all(places[place] == card for place, card in lying)
        }
        if not self.configurations:
            raise NoConfiguration("no deal and choices put the face-down cards the seat knows where it sees them")

    def draw(self, seat: int, hand: Sequence[Card], centre: Sequence[Card | None], rng: RandomSource) -> CardPlaces:
        """Draw one state: a configuration by weight, then the cards never seen into the places left for them.

        The seat's own cards that no one else has seen go to its hand, the
        face-down cards it knows to their slots; the rest of the cards never
        seen are dealt uniformly at random into the other places, the set-aside
        rest of the deck taking what is left.
        """
        configurations = list(self.configurations)
        bounds = list(accumulate(self.configurations.values()))
        places = configurations[min(bisect_right(bounds, rng.random() * bounds[-1]), len(configurations) - 1)]
        tokens = self.tokens
        by_place = [[tokens[token] for token in range(len(tokens)) if held >> token & 1] for held in places]
        by_place[seat] += [card for card in hand if card not in self.token_of]
        withheld = set(self.token_of) | set(hand)
        for slot in _FACE_DOWN_SLOTS:
            card = centre[slot]
            if card is not None and card not in self.token_of:
                by_place[self.slots[slot]].append(card)
                withheld.add(card)
        pool = [card for card in DECK if card not in withheld]
        rng.shuffle(pool)
        for place, room in enumerate(self.capacity):
            missing = room - len(by_place[place])
            if missing < 0 or missing > len(pool):
                raise inconsistent(f"place {place} would hold {len(by_place[place])} cards, not {room}")
            if missing:
                by_place[place] += pool[-missing:]
                del pool[-missing:]
        return CardPlaces(
            hands=[sorted(by_place[holder]) for holder in range(self.players)],
            centre=[by_place[slot][0] for slot in self.slots],
            set_aside=pool,
            out_of_play=by_place[self.out],
        )
