"""How the heuristic bot plays both games: keep the best hand, stop or knock when waiting costs more than it gains.

The heuristic bot (``heuristic_bot.py``) plays this module's :func:`decide`; the search bot uses its choices and
tables too. It is a module of its own, named by no bot's command, because a league hides each bot's own files
from every other bot: a search bot reading ``heuristic_bot.py`` could not, in a league that also plays it.

How it thinks:

- Every three-card hand has a *strength* ``s``: the fraction of all 22,100
  possible hands it beats (ordered by ``referee.engine.hands.hand_rank``).
- Each opponent is modelled as holding the best of ``power`` random hands, so
  it beats strength ``s`` with probability ``1 - s ** power``; its power grows
  with the turns it has played this hand (figures measured from showdowns in
  self-play) and with each visible card it chose to take. We lose the life
  only if *every* opponent beats us, so more opponents make a hand safer.
- Each choice maximises the expected chance of not losing. Unknown cards are
  those the public events do not place: in Stop the Bus the discard pile and
  the cards opponents took from it are not in the stock; in Bastard Brag the
  face-up card, face-down cards we put down and cards opponents took face up
  are not under a face-down slot.
- It stops (Stop the Bus) or knocks (Bastard Brag) when losing now, after each
  opponent's final turn, is no likelier than after one more round of play
  (our best move, then a turn for everyone, then their final turns). With
  lives to spare it ends hands a little sooner; on its last life, later.

Deterministic (no randomness at all) and fast (well under a millisecond a
decision on average, a few at most).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import combinations

from referee.cards import DECK, Card
from referee.games import (
    Action,
    ActionKind,
    BastardBragObservation,
    Event,
    EventKind,
    Observation,
    Phase,
    StopTheBusObservation,
)
from referee.hands import rank_held
from referee.placements import losses_left

# ----- hand strength ------------------------------------------------------------

_BIT = {card: 1 << card.index for card in DECK}


def _strength_table() -> dict[int, float]:
    """Map each three-card hand (as a bit mask of card indices) to the fraction of hands it beats."""
    # Every start of the bot builds this table, so it is built lean. DECK is in card order (index order), so the
    # hands come in increasing mask order (highest card, then middle, then lowest) and the stable sort by rank
    # alone orders equal ranks by mask; each hand is three distinct cards in order, which rank_held ranks as
    # hand_rank does without its checks.
    hands = [
        (low, middle, high)
        for high_at, high in enumerate(DECK)
        for middle_at, middle in enumerate(DECK[:high_at])
        for low in DECK[:middle_at]
    ]
    hands.sort(key=rank_held)
    return {
        _BIT[low] | _BIT[middle] | _BIT[high]: position / len(hands)
        for position, (low, middle, high) in enumerate(hands)
    }


_STRENGTH = _strength_table()


def strength(cards: Sequence[Card]) -> float:
    """Return the fraction of all three-card hands that ``cards`` beats (0 to 1)."""
    a, b, c = cards
    return _STRENGTH[_BIT[a] | _BIT[b] | _BIT[c]]


# ----- the opponent model --------------------------------------------------------

# An opponent's power after 0, 1, 2, ... turns this hand, then the gain per further
# turn: P(strength <= s) = s ** power fitted to the hands shown at showdowns in
# heuristic self-play, by the turns each seat played. Stop the Bus draws fresh
# cards every turn; the Bastard Brag centre offers little once it is picked over.
POWER_BY_TURNS = {"stop_the_bus": (1.0, 4.0, 8.0, 11.0, 13.0), "bastard_brag": (1.0, 3.0, 4.5, 5.0)}
POWER_PER_LATER_TURN = {"stop_the_bus": 2.0, "bastard_brag": 0.5}
# Taking a visible card (the discard, the face-up centre card) shows the card helped.
POWER_PER_VISIBLE_TAKE = 1.0
# Stop the Bus discards: how much the chances of the next draw count against the hand now.
POTENTIAL_WEIGHT = 0.3
# Ending the hand (stop, knock): margins of loss chance for lives to spare, for the last life,
# and per own turn after the first few (see ending_margin).
LIVES_MARGIN = 0.01
LAST_LIFE_CAUTION = 0.01
PATIENCE = 0.02
PATIENT_TURNS = 4
# Strength breaks ties between hands of (nearly) equal value; values carry up to this much of it,
# so comparisons of loss chances allow for it.
TIE_BREAK = 0.001
# For averages over many hands, loss chances are tabulated on this many steps of strength.
_STEPS = 512


def _lose_chance(groups: tuple[tuple[float, int], ...], s: float) -> float:
    """Chance that every opponent beats a hand of strength ``s``; ``groups`` holds (power, opponents)."""
    chance = 1.0
    for power, count in groups:
        chance *= (1.0 - s**power) ** count
    return chance


@lru_cache(maxsize=256)
def _loss_table(groups: tuple[tuple[float, int], ...]) -> list[float]:
    """:func:`_lose_chance` at the middle of each strength step (shared between decisions)."""
    table = [1.0] * _STEPS
    for power, count in groups:
        factors = [(1.0 - ((step + 0.5) / _STEPS) ** power) ** count for step in range(_STEPS)]
        table = [a * b for a, b in zip(table, factors, strict=True)]
    table.append(table[-1])  # strength is below 1, but keep an entry for it
    return table


def loss_groups(powers: Iterable[float]) -> tuple[tuple[float, int], ...]:
    """Opponents' powers, to the nearest half, as (power, opponents) pairs in order: few models to tabulate."""
    counts: dict[float, int] = {}
    for power in powers:
        rounded = round(power * 2) / 2
        counts[rounded] = counts.get(rounded, 0) + 1
    return tuple(sorted(counts.items()))


class Safety:
    """The chance of holding the single worst hand, for opponents of given powers."""

    def __init__(self, powers: Iterable[float]) -> None:
        self.groups = loss_groups(powers)
        self._loss = _loss_table(self.groups)

    def lose_chance(self, s: float) -> float:
        """Chance that every opponent beats a hand of strength ``s``."""
        return _lose_chance(self.groups, s)

    def mean_value(self, masks: Iterable[int]) -> float:
        """Mean value of the hands given as bit masks (0 if there are none: nothing is known to be there)."""
        strengths = [_STRENGTH[mask] for mask in masks]
        if not strengths:
            return 0.0
        loss = self._loss
        lost = sum(loss[int(s * _STEPS)] for s in strengths)
        return 1.0 - (lost - TIE_BREAK * sum(strengths)) / len(strengths)

    def value(self, cards: Sequence[Card]) -> float:
        """Value of holding ``cards``: the chance of not losing, with strength as a tie-break."""
        a, b, c = cards
        s = _STRENGTH[_BIT[a] | _BIT[b] | _BIT[c]]
        return 1.0 - self._loss[int(s * _STEPS)] + TIE_BREAK * s


class OpponentModel:
    """Turns played and visible cards taken by each opponent in this hand; builds :class:`Safety` models."""

    def __init__(self, obs: Observation, turn_kinds: set[EventKind], took_visible: Callable[[Event], bool]) -> None:
        self.game = obs.game
        self.turns = {seat: 0 for seat in range(obs.num_players) if obs.in_hand[seat] and seat != obs.seat}
        self.visible_takes = dict.fromkeys(self.turns, 0)
        self.own_turns = 0
        for event in obs.hand_events:
            if event.seat == obs.seat and event.kind in turn_kinds:
                self.own_turns += 1
            elif event.seat in self.turns:
                if event.kind in turn_kinds:
                    self.turns[event.seat] += 1
                if took_visible(event):
                    self.visible_takes[event.seat] += 1

    def power(self, turns: int, visible_takes: int) -> float:
        return opponent_power(self.game, turns, visible_takes)

    def safety(self, more_turns: int) -> Safety:
        """The model after each opponent plays ``more_turns`` more turns."""
        return Safety(self.power(turns + more_turns, self.visible_takes[seat]) for seat, turns in self.turns.items())


def opponent_power(game: str, turns: int, visible_takes: int = 0) -> float:
    """The power of an opponent's hand after ``turns`` turns and ``visible_takes`` cards taken in view."""
    table = POWER_BY_TURNS[game]
    extra = max(0, turns - len(table) + 1)
    return (
        table[min(turns, len(table) - 1)] + extra * POWER_PER_LATER_TURN[game] + visible_takes * POWER_PER_VISIBLE_TAKE
    )


def losses_to_elimination(obs: Observation, seat: int) -> int:
    """How many more lost hands ``seat`` survives before it is out (counting the floating life)."""
    return losses_left(obs.game, obs.lives[seat], obs.floating[seat])


def ending_margin(obs: Observation, own_turns: int) -> float:
    """How much likelier a loss we accept for ending the hand now rather than playing on.

    With lives to spare (more than the opponents' average) we end hands a
    little sooner, on our last life a little later. The longer the hand, the
    more we accept: the model's one round of look-ahead undervalues waiting
    when hands stop improving, and this makes sure every hand ends.
    """
    return margin_at(obs.game, obs.seat, obs.lives, obs.floating, obs.in_hand, own_turns)


def margin_at(
    game: str,
    seat: int,
    lives: Sequence[int],
    floating: Sequence[bool],
    in_hand: Sequence[bool],
    own_turns: int,
) -> float:
    """:func:`ending_margin` from the table's lives and who is in the hand (a search reads them from a game)."""
    opponents = [other for other in range(len(in_hand)) if in_hand[other] and other != seat]
    if not opponents:  # forfeits left nobody to lose to: ending now or later is all the same
        return 0.0
    mine = losses_left(game, lives[seat], floating[seat])
    theirs = sum(losses_left(game, lives[other], floating[other]) for other in opponents) / len(opponents)
    margin = -LAST_LIFE_CAUTION if mine == 1 else LIVES_MARGIN * max(-1.0, min(2.0, mine - theirs))
    return margin + PATIENCE * max(0, own_turns - PATIENT_TURNS)


def _best_of_four(safety: Safety, hand: Sequence[Card], extra: Card, keep_extra: bool = False) -> float:
    """Value of the best three of ``hand`` plus ``extra`` (keeping ``extra`` if ``keep_extra``)."""
    a, b, c = hand
    value = safety.value
    best = max(value((a, b, extra)), value((a, extra, c)), value((extra, b, c)))
    return best if keep_extra else max(best, value(hand))


# ----- Stop the Bus -----------------------------------------------------------------


def stop_the_bus_knowledge(obs: StopTheBusObservation) -> tuple[list[Card], set[Card]]:
    """Replay the hand's events: return the discard pile (top last) and the cards opponents took from it."""
    pile: list[Card] = []
    held: dict[int, set[Card]] = {}
    for event in obs.hand_events:
        kind = event.kind
        if kind is EventKind.DEAL:
            pile, held = [event.card], {}
        elif kind is EventKind.DISCARD:
            pile.append(event.card)
            held.get(event.seat, set()).discard(event.card)
        elif kind is EventKind.TAKE:
            if pile and pile[-1] == event.card:
                pile.pop()
            if event.seat != obs.seat:
                held.setdefault(event.seat, set()).add(event.card)
        elif kind is EventKind.RECYCLE:
            pile = pile[-1:]
    if obs.drawn_card is None and obs.discard_top is not None and (not pile or pile[-1] != obs.discard_top):
        pile = [obs.discard_top]  # the history is incomplete: trust what we see
    return pile, set().union(*held.values())


def stop_the_bus_unknown(obs: StopTheBusObservation) -> list[Card]:
    """The cards that may come from the stock: neither ours, nor in the discard pile, nor taken by others."""
    pile, taken_by_others = stop_the_bus_knowledge(obs)
    seen = set(obs.hand) | set(pile) | taken_by_others
    return [card for card in DECK if card not in seen]


def _draw_value(safety: Safety, hand: Sequence[Card], unknown: Sequence[Card]) -> float:
    """Expected value of drawing from the stock and keeping the best three."""
    if not unknown:
        return safety.value(hand)
    return sum(_best_of_four(safety, hand, card) for card in unknown) / len(unknown)


def _took_discard(event: Event) -> bool:
    return event.kind is EventKind.TAKE


def decide_stop_the_bus(obs: StopTheBusObservation) -> Action:
    """Choose a Stop the Bus action."""
    opponents = OpponentModel(obs, {EventKind.DISCARD, EventKind.PASS}, _took_discard)
    if obs.drawn_card is not None:
        return _choose_discard(obs, opponents.safety(1))
    hand, legal = obs.hand, obs.legal_actions
    # The discard pile is empty only after a player took its last card and then forfeited: nothing to take.
    top = obs.discard_top if _has(legal, ActionKind.TAKE) else None
    unknown = stop_the_bus_unknown(obs)
    if _has(legal, ActionKind.STOP):
        # Stopping gives everyone one final turn; playing on gives them a turn and then that final turn.
        lose_if_stop = opponents.safety(1).lose_chance(strength(hand))
        later = opponents.safety(2)
        play_value = _draw_value(later, hand, unknown)
        if top is not None:
            play_value = max(play_value, _best_of_four(later, hand, top, keep_extra=True))
        if lose_if_stop <= 1.0 - play_value + TIE_BREAK + ending_margin(obs, opponents.own_turns):
            return _find(legal, ActionKind.STOP)
    safety = opponents.safety(1)
    if top is not None:
        take_value = _best_of_four(safety, hand, top, keep_extra=True)
        if take_value > safety.value(hand) and take_value >= _draw_value(safety, hand, unknown):
            return _find(legal, ActionKind.TAKE)
    return _find(legal, ActionKind.DRAW)  # drawing never loses: the drawn card may be discarded


def _choose_discard(obs: StopTheBusObservation, safety: Safety) -> Action:
    """Discard the card whose loss leaves the best hand, counting a little on the next draw."""
    unknown = [card for card in stop_the_bus_unknown(obs) if card != obs.drawn_card]
    final_turn = obs.phase is Phase.FINAL

    def score(act: Action) -> tuple[float, int]:
        kept = [card for card in obs.hand if card != act.card]
        now = safety.value(kept)
        if final_turn:
            return now, act.card.index
        later = _draw_value(safety, kept, unknown)
        return now + POTENTIAL_WEIGHT * (later - now), act.card.index

    return max(obs.legal_actions, key=score)


# ----- Bastard Brag --------------------------------------------------------------------

FACE_UP = 2
# Giving a card face up may hand it to the next player: a small cost per rank.
EXPOSURE_COST = 0.0005


def bastard_brag_known_elsewhere(obs: BastardBragObservation) -> set[Card]:
    """Cards whose place we know outside our hand: the centre cards we see and cards opponents took face up."""
    held: dict[int, set[Card]] = {}
    for event in obs.hand_events:
        seat = event.seat
        if event.kind is EventKind.DEAL:
            held = {}
        elif seat is None or seat == obs.seat:
            continue
        elif event.kind is EventKind.EXCHANGE:
            if event.slot == FACE_UP:
                cards = held.setdefault(seat, set())
                cards.discard(event.card)
                cards.add(event.taken)
            else:
                held.pop(seat, None)  # it gave an unseen card: maybe one we knew of
        elif event.kind is EventKind.EXCHANGE_ALL:
            held[seat] = {event.taken}
    known = set().union(*held.values())
    known.update(card for card in obs.centre if card is not None)
    return known


def _took_face_up(event: Event) -> bool:
    return (event.kind is EventKind.EXCHANGE and event.slot == FACE_UP) or event.kind is EventKind.EXCHANGE_ALL


class _Centre:
    """Expected values of taking centre cards, some of them unknown."""

    def __init__(self, obs: BastardBragObservation, safety: Safety) -> None:
        known_elsewhere = bastard_brag_known_elsewhere(obs)
        self.unknown = [card for card in DECK if card not in known_elsewhere and card not in obs.hand]
        self.cards = obs.centre
        self.safety = safety

    def exchange_value(self, kept: Sequence[Card], slot: int) -> float:
        """Expected value of keeping ``kept`` and taking the card in ``slot``."""
        card = self.cards[slot]
        if card is not None:
            return self.safety.value((*kept, card))
        base = _BIT[kept[0]] | _BIT[kept[1]]
        return self.safety.mean_value(base | _BIT[unknown] for unknown in self.unknown)

    def exchange_all_value(self) -> float:
        """Expected value of taking the whole centre."""
        known = [card for card in self.cards if card is not None]
        if len(known) == 3:
            return self.safety.value(known)
        base = sum(_BIT[card] for card in known)
        bits = [_BIT[card] for card in self.unknown]
        if len(known) == 2:
            return self.safety.mean_value(base | bit for bit in bits)
        return self.safety.mean_value(base | a | b for a, b in combinations(bits, 2))


def _best_exchange(obs: BastardBragObservation, safety: Safety) -> tuple[Action, float]:
    """The exchange (one card or all three) of greatest expected value, and that value."""
    centre = _Centre(obs, safety)
    best_action, best_score = obs.legal_actions[0], -2.0
    whole_centre = None
    for act in obs.legal_actions:
        if act.kind is ActionKind.EXCHANGE:
            kept = [card for card in obs.hand if card != act.card]
            score = centre.exchange_value(kept, act.slot)
            if act.slot == FACE_UP:
                score -= EXPOSURE_COST * act.card.rank
        elif act.kind is ActionKind.EXCHANGE_ALL:
            if whole_centre is None:
                whole_centre = centre.exchange_all_value()
            score = whole_centre - EXPOSURE_COST * act.card.rank  # the card laid face up: show the lowest
        else:
            continue
        if score > best_score:
            best_action, best_score = act, score
    return best_action, best_score


def decide_bastard_brag(obs: BastardBragObservation) -> Action:
    """Choose a Bastard Brag action."""
    opponents = OpponentModel(obs, {EventKind.EXCHANGE, EventKind.EXCHANGE_ALL}, _took_face_up)
    if any(act.kind is ActionKind.KNOCK for act in obs.legal_actions):
        # Knocking gives everyone one final turn; playing on gives them a turn and then that final turn.
        lose_if_knock = opponents.safety(1).lose_chance(strength(obs.hand))
        _, play_value = _best_exchange(obs, opponents.safety(2))
        if lose_if_knock <= 1.0 - play_value + TIE_BREAK + ending_margin(obs, opponents.own_turns):
            return _find(obs.legal_actions, ActionKind.KNOCK)
    best, _ = _best_exchange(obs, opponents.safety(1))
    return best


# ----- entry point ----------------------------------------------------------------------


def _has(legal: Sequence[Action], kind: ActionKind) -> bool:
    return any(act.kind is kind for act in legal)


def _find(legal: Sequence[Action], kind: ActionKind) -> Action:
    """The legal action of ``kind``; if there is none, the first legal action rather than no answer at all."""
    return next((act for act in legal if act.kind is kind), legal[0])


def decide(obs: Observation) -> Action:
    """Choose an action for either game."""
    if isinstance(obs, StopTheBusObservation):
        return decide_stop_the_bus(obs)
    return decide_bastard_brag(obs)
