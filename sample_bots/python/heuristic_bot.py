"""A heuristic bot for both games: keep the best hand, stop or knock when it is safe enough.

How it thinks, in short:

- Every three-card hand has a *strength*: the fraction of all 22,100 possible
  hands it beats (``referee.hands.hand_rank`` orders them).
- An opponent who has had ``t`` turns this hand is modelled as holding the best
  of about ``1 + 0.6 t`` random hands (more if it took a visible card), so it
  beats a hand of strength ``s`` with probability ``1 - s ** power``. The
  chance that *every* opponent beats us is the chance that we lose the life;
  a hand's *value* is one minus that chance. More opponents make any hand
  safer, because only the single worst hand loses.
- Each choice takes the action of greatest (expected) value. Unknown cards are
  the cards whose place the public events do not reveal: in Stop the Bus the
  discard pile and the cards opponents took from it are not in the stock; in
  Bastard Brag the face-up card, the face-down cards we put down and the cards
  opponents took face up are not under the face-down slots.
- It stops (Stop the Bus) or knocks (Bastard Brag) when the chance of losing,
  after every opponent's final turn, is below a share of the fair ``1/players``,
  a smaller share on its last life and a larger one with lives to spare.

Deterministic (no randomness at all) and fast (about a millisecond a decision).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations

from referee.botkit import run_bot
from referee.cards import DECK, Card
from referee.games import (
    Action,
    ActionKind,
    BastardBragObservation,
    EventKind,
    Observation,
    Phase,
    StopTheBusObservation,
)
from referee.hands import hand_rank

# ----- hand strength ------------------------------------------------------------

_BIT = {card: 1 << card.index for card in DECK}


def _strength_table() -> dict[int, float]:
    """Map each three-card hand (as a bit mask) to the fraction of hands it beats."""
    ranked = sorted((hand_rank(cards), _BIT[cards[0]] | _BIT[cards[1]] | _BIT[cards[2]]) for cards in combinations(DECK, 3))
    total = len(ranked)
    return {mask: position / total for position, (_, mask) in enumerate(ranked)}


_STRENGTH = _strength_table()


def strength(cards: Sequence[Card]) -> float:
    """Return the fraction of all three-card hands that ``cards`` beats (0 to 1)."""
    a, b, c = cards
    return _STRENGTH[_BIT[a] | _BIT[b] | _BIT[c]]


# ----- the opponent model --------------------------------------------------------

# Each turn an opponent plays is worth this much "power" (best of that many random hands).
POWER_PER_TURN = 0.6
# Taking a visible card (the discard, the face-up centre card) shows the card helped.
POWER_PER_VISIBLE_TAKE = 0.5
MAX_POWER = 5.0
# Stop or knock when the chance of losing is at most this share of the fair 1/players.
RISK_SHARE = 0.5
# In the discard step of Stop the Bus: how much the chances of the next draw count.
POTENTIAL_WEIGHT = 0.3
# Strength breaks ties between hands of (nearly) equal value.
TIE_BREAK = 0.01


class Safety:
    """The chance of *not* holding the single worst hand, for opponents of given powers."""

    def __init__(self, powers: Iterable[float]) -> None:
        self.groups = sorted(Counter(round(power * 4) / 4 for power in powers).items())
        self._memo: dict[int, float] = {}

    def lose_chance(self, s: float) -> float:
        """Chance that every opponent beats a hand of strength ``s``."""
        chance = 1.0
        for power, count in self.groups:
            chance *= (1.0 - s**power) ** count
        return chance

    def value(self, cards: Sequence[Card]) -> float:
        """Value of holding ``cards``: chance of not losing, with strength as a tie-break."""
        a, b, c = cards
        mask = _BIT[a] | _BIT[b] | _BIT[c]
        found = self._memo.get(mask)
        if found is None:
            s = _STRENGTH[mask]
            found = self._memo[mask] = 1.0 - self.lose_chance(s) + TIE_BREAK * s
        return found

    def after_final_turns(self) -> Safety:
        """The model once every opponent has played one more (final) turn."""
        return Safety(power + POWER_PER_TURN for power, count in self.groups for _ in range(count))


def losses_to_elimination(obs: Observation, seat: int) -> int:
    """How many more lost hands ``seat`` survives before it is out (counting the floating life)."""
    if obs.game == "stop_the_bus":
        return 1 if obs.floating[seat] else obs.lives[seat] + 1
    return obs.lives[seat]


def risk_target(obs: Observation) -> float:
    """The chance of losing the hand that this bot accepts when it stops or knocks."""
    opponents = [seat for seat in range(obs.num_players) if obs.in_hand[seat] and seat != obs.seat]
    fair_share = 1.0 / (len(opponents) + 1)
    mine = losses_to_elimination(obs, obs.seat)
    theirs = sum(losses_to_elimination(obs, seat) for seat in opponents) / max(len(opponents), 1)
    if mine == 1:
        factor = 0.7  # the next loss ends our game: wait for a safer hand
    else:
        factor = 1.0 + 0.15 * max(-1.0, min(2.0, mine - theirs))  # lives to spare: accept a little more risk
    return RISK_SHARE * fair_share * factor


def _turn_powers(obs: Observation, turn_kinds: set[EventKind], visible_kinds: set[EventKind]) -> Safety:
    """Build the opponent model from how many turns each opponent played this hand."""
    power = {seat: 1.0 for seat in range(obs.num_players) if obs.in_hand[seat] and seat != obs.seat}
    for event in obs.hand_events:
        seat = event.seat
        if seat not in power:
            continue
        if event.kind in turn_kinds:
            power[seat] += POWER_PER_TURN
        if event.kind in visible_kinds and (event.kind is not EventKind.EXCHANGE or event.slot == 2):
            power[seat] += POWER_PER_VISIBLE_TAKE
    return Safety(min(value, MAX_POWER) for value in power.values())


def _best_of_four(safety: Safety, hand: Sequence[Card], extra: Card, keep: Card | None = None) -> float:
    """Value of the best three of ``hand`` plus ``extra`` (``keep``, if given, must stay)."""
    a, b, c = hand
    options = [(a, b, c), (a, b, extra), (a, extra, c), (extra, b, c)]
    if keep is not None:
        options = [option for option in options if keep in option]
    return max(safety.value(option) for option in options)


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
    if obs.discard_top is not None and (not pile or pile[-1] != obs.discard_top):
        pile = [obs.discard_top]  # the history is incomplete: trust what we see
    return pile, set().union(*held.values())


def _stop_the_bus_unknown(obs: StopTheBusObservation) -> list[Card]:
    """The cards that may be drawn from the stock."""
    pile, taken_by_others = stop_the_bus_knowledge(obs)
    seen = set(obs.hand) | set(pile) | taken_by_others
    return [card for card in DECK if card not in seen]


def _draw_value(safety: Safety, hand: Sequence[Card], unknown: Sequence[Card]) -> float:
    """Expected value of drawing from the stock and keeping the best three."""
    if not unknown:
        return safety.value(hand)
    return sum(_best_of_four(safety, hand, card) for card in unknown) / len(unknown)


def decide_stop_the_bus(obs: StopTheBusObservation) -> Action:
    """Choose a Stop the Bus action."""
    legal = obs.legal_actions
    safety = _turn_powers(obs, {EventKind.DISCARD, EventKind.PASS}, {EventKind.TAKE})
    if obs.drawn_card is not None:
        return _choose_discard(obs, safety)
    hand = obs.hand
    stop = next((act for act in legal if act.kind is ActionKind.STOP), None)
    if stop is not None:
        lose_chance = safety.after_final_turns().lose_chance(strength(hand))
        if lose_chance <= risk_target(obs):
            return stop
    unknown = _stop_the_bus_unknown(obs)
    draw_value = _draw_value(safety, hand, unknown)
    take_value = _best_of_four(safety, hand, obs.discard_top, keep=obs.discard_top)
    if take_value > safety.value(hand) and take_value >= draw_value:
        return _find(legal, ActionKind.TAKE)
    return _find(legal, ActionKind.DRAW)


def _choose_discard(obs: StopTheBusObservation, safety: Safety) -> Action:
    """Discard the card whose loss leaves the best hand, counting a little on the next draw."""
    unknown = [card for card in _stop_the_bus_unknown(obs) if card != obs.drawn_card]
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
EXPOSURE_COST = 0.002


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
                held.setdefault(seat, set()).discard(event.card)
                held[seat].add(event.taken)
            else:
                held.pop(seat, None)  # it gave an unseen card: maybe one we knew of
        elif event.kind is EventKind.EXCHANGE_ALL:
            held[seat] = {event.taken}
    known = set().union(*held.values())
    known.update(card for card in obs.centre if card is not None)
    return known


def decide_bastard_brag(obs: BastardBragObservation) -> Action:
    """Choose a Bastard Brag action."""
    hand = obs.hand
    safety = _turn_powers(obs, {EventKind.EXCHANGE, EventKind.EXCHANGE_ALL}, {EventKind.EXCHANGE})
    unknown = [card for card in DECK if card not in bastard_brag_known_elsewhere(obs) and card not in hand]
    centre = obs.centre

    def slot_value(kept: list[Card], slot: int) -> float:
        known = centre[slot]
        if known is not None:
            return safety.value((*kept, known))
        return sum(safety.value((*kept, card)) for card in unknown) / len(unknown)

    def centre_value() -> float:
        known = [card for card in centre if card is not None]
        if len(known) == 3:
            return safety.value(known)
        if len(known) == 2:
            return sum(safety.value((*known, card)) for card in unknown) / len(unknown)
        pairs = list(combinations(unknown, 2))
        return sum(safety.value((known[0], a, b)) for a, b in pairs) / len(pairs)

    best_action, best_score = None, -math.inf
    whole_centre = None
    for act in obs.legal_actions:
        if act.kind is ActionKind.EXCHANGE:
            kept = [card for card in hand if card != act.card]
            score = slot_value(kept, act.slot)
            if act.slot == FACE_UP:
                score -= EXPOSURE_COST * act.card.rank
        elif act.kind is ActionKind.EXCHANGE_ALL:
            if whole_centre is None:
                whole_centre = centre_value()
            # The card laid face up is shown to the next player: show the lowest.
            score = whole_centre - EXPOSURE_COST * act.card.rank
        else:
            continue
        if score > best_score:
            best_action, best_score = act, score
    knock = next((act for act in obs.legal_actions if act.kind is ActionKind.KNOCK), None)
    if knock is not None:
        lose_chance = safety.after_final_turns().lose_chance(strength(hand))
        fair_share = 1.0 / sum(obs.in_hand)
        keeping_is_better = best_score < safety.value(hand)
        if lose_chance <= risk_target(obs) or (keeping_is_better and lose_chance <= fair_share):
            return knock
    return best_action


# ----- entry point ----------------------------------------------------------------------


def _find(legal: Sequence[Action], kind: ActionKind) -> Action:
    return next(act for act in legal if act.kind is kind)


def decide(obs: Observation) -> Action:
    """Choose an action for either game."""
    if isinstance(obs, StopTheBusObservation):
        return decide_stop_the_bus(obs)
    return decide_bastard_brag(obs)


if __name__ == "__main__":
    run_bot(decide, name="heuristic", version="1.0")
