"""The luck of the cards in a game, measured so that it can be taken out of the score (AIVAT's control variates).

At each chance event the referee saw (a hand's deal, a card drawn from the
stock, a recycled one too, and in Bastard Brag a centre card nobody had seen,
taken), a seat's *luck* is what the event gave it beyond what it could
expect: the value of the state the event made, less the mean value over every
outcome the event could have had. Summed over a game, ``score - luck`` is the
*luck-adjusted score*. Its mean is the raw score's, whatever the value
function, because each event's term has mean zero given everything before it
(the mean is exact: over the stock's cards one by one, over the cards nobody
has seen, and for a deal by symmetry, see :func:`deal_luck`); its variance is
lower when the value function follows the games well (Burch, Schmid,
Moravčík, Morrill and Bowling, "AIVAT", AAAI 2018). docs/statistics.md, "Luck".

The value function (:data:`MODEL`) is fixed: shipped here, fitted offline on
the sample bots' games by ``bench/fit_luck_model.py``, never on a league's own
(a value fitted to the games it judges can fake certainty), and named with
its digest in ``league.json``. A seat's value is its expected placement
score: first the chance that each seat in the hand loses it, then, after
the hand, every later hand's loser a seat drawn at random (so only the lives
left matter, not who plays better). The chance of losing the hand is a
softmax of each hand's *potential* (the mean strength its best three reach
with one more card), sharpened as the hand goes on; in the final turns of
Stop the Bus it is worked out: each seat still to play ends with its hand or
its best three with a card of the stock, the others as they are. Strengths
are percentiles among all 22,100 hands.

The engine stays pure: this module replays a game's log through it and
reads its state, never the bots.
"""

from __future__ import annotations

import hashlib
import json
import math
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import combinations
from pathlib import Path
from typing import Any

from referee.common.errors import RefereeError
from referee.engine.cards import DECK, Card
from referee.engine.games import ActionKind, Game, Phase
from referee.engine.games.actions import Action
from referee.engine.hands import rank_held
from referee.engine.placements import losses_left, placement_scores
from referee.records.gamelog import GameLogError, find_log, log_path, new_game, read_log


class LuckError(RefereeError, ValueError):
    """A game whose luck cannot be measured: a log this module cannot replay."""


# ----- the value function's parameters: fitted by bench/fit_luck_model.py on the sample bots' self-play -----------

#: How sharply the weaker hand loses before the hand's final turns, by game and by the rounds of turns played
#: (0, 1, 2, ...; the last figure for any later round): a softmax of ``-sharpness * potential`` over the seats in
#: the hand gives each its chance of losing it. In the final turns of Stop the Bus the chance is worked out
#: instead: each seat still to play ends with its hand or its best three with a card of the stock.
SHARPNESS: Mapping[str, tuple[float, ...]] = {
    "stop_the_bus": (3.22, 4.51, 6.68, 9.27, 20.63),
    "bastard_brag": (1.75, 4.97),
}


@dataclass(frozen=True, eq=False)  # compared, and hashed, as itself: a model is one object
class LuckModel:
    """The value function the luck is measured with: its name, its parameters and their digest."""

    name: str
    sharpness: Mapping[str, tuple[float, ...]]

    @property
    def digest(self) -> str:
        """A short digest of the parameters: two leagues measured their luck alike when name and digest agree."""
        text = json.dumps({"name": self.name, "sharpness": self.sharpness}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> dict[str, str]:
        """What ``league.json`` records of the model (``luck_model``)."""
        return {"name": self.name, "digest": self.digest}

    def sharpness_now(self, game: Game) -> float:
        """The softmax's sharpness for the hand ``game`` is in, at this round of its turns."""
        rounds = self.sharpness[game.name]
        players = sum(game.in_hand) or 1
        return rounds[min(game.turns_this_hand // players, len(rounds) - 1)]


MODEL = LuckModel("potential-then-lives-1", SHARPNESS)


# ----- hand strength ------------------------------------------------------------------------------------------


@cache
def _percentiles() -> dict[int, float]:
    """Every three-card hand (as a mask of card bits) -> the share of the other hands it beats."""
    hands = sorted(combinations(DECK, 3), key=rank_held)
    last = len(hands) - 1
    return {(1 << a.index) | (1 << b.index) | (1 << c.index): place / last for place, (a, b, c) in enumerate(hands)}


def strength(cards: Sequence[Card]) -> float:
    """A hand's percentile among all three-card hands (0 the worst, 1 the best); of four cards, the best three."""
    table = _percentiles()
    mask = 0
    for card in cards:
        mask |= 1 << card.index
    if len(cards) == 3:
        return table[mask]
    return max(table[mask ^ (1 << card.index)] for card in cards)


@lru_cache(maxsize=32_768)  # every three-card hand
def _potential(mask: int) -> float:
    """The mean strength of the best three of a hand (as a mask) and one more card from the rest of the deck."""
    table = _percentiles()
    own = table[mask]
    cards = [card for card in DECK if mask & (1 << card.index)]
    total = 0.0
    for extra in DECK:
        bit = 1 << extra.index
        if mask & bit:
            continue
        total += max(own, *(table[mask ^ (1 << card.index) | bit] for card in cards))
    return total / (len(DECK) - 3)


def potential(cards: Sequence[Card]) -> float:
    """What the chance of losing a hand is a softmax of before its final turns: the mean strength its best three
    cards reach with one more card from the rest of the deck (a hand that has just drawn: its best three's)."""
    table = _percentiles()
    mask = 0
    for card in cards:
        mask |= 1 << card.index
    if len(cards) == 4:
        mask = max((mask ^ (1 << card.index) for card in cards), key=table.__getitem__)
    return _potential(mask)


# ----- what a lost hand costs each seat, in places (the model: referee.engine.placements) -----------------------------


def _scores_if_lost(game: Game) -> dict[int, list[float]]:
    """For each seat in the hand: every seat's expected placement score should that seat lose the hand."""
    left = [
        losses_left(game.name, game.lives[seat], game.floating[seat]) if game.in_game[seat] else 0
        for seat in range(game.num_players)
    ]
    outcomes = {}
    for loser in range(game.num_players):
        if not game.in_hand[loser]:
            continue
        after = list(left)
        after[loser] -= 1
        order = list(game.eliminations) + ([loser] if after[loser] == 0 else [])
        outcomes[loser] = placement_scores(after, order)
    return outcomes


def _final_loss_chances(strengths: Mapping[int, float], to_play: Mapping[int, list[float]]) -> dict[int, float]:
    """In the final turns: each seat's chance of holding the worst hand at the showdown, the seats still to play
    (``to_play``: the strengths each may end with, equally likely) independent of one another, the others fixed."""
    chances = {}
    for seat, fixed in strengths.items():
        # A fixed other is above a value or not (a factor of 1 or 0); a seat still to play is above it with the
        # share of its ends above it. Factors of 1 are left out and a 0 ends the product: the sum is the same,
        # bit for bit, as the product over every other seat in order (this runs for every card of every draw;
        # tests/test_luck.py holds it to that product).
        lowest_fixed = min(
            (held for other, held in strengths.items() if other != seat and other not in to_play),
            default=math.inf,
        )
        ends_of_others = [to_play[other] for other in strengths if other != seat and other in to_play]
        outcomes = to_play.get(seat, [fixed])
        total = 0.0
        for value in outcomes:
            if lowest_fixed <= value:
                continue
            product = 1.0
            for ends in ends_of_others:
                product *= (len(ends) - bisect_right(ends, value)) / len(ends)
            total += product
        chances[seat] = total / len(outcomes)
    norm = sum(chances.values()) or 1.0
    return {seat: chance / norm for seat, chance in chances.items()}


def _final_turn_ends(
    game: Game, strengths: Mapping[int, float], stock: Sequence[Card], skip: int | None
) -> dict[int, list[float]]:
    """The strengths each seat still to play a final turn may end with: its own, or its best three with a card of
    the stock (the stock's cards as a set, never their order)."""
    pending = [seat for seat in game.final_queue if seat != skip]
    if game.current_seat is not None and game.current_seat != skip and game.current_seat in strengths:
        pending.append(game.current_seat)
    ends = {}
    for seat in pending:
        if not stock:
            continue
        hand = game.hands[seat][:3]
        ends[seat] = sorted(max(strengths[seat], strength((*hand, card))) for card in stock)
    return ends


def _loss_chances(sharpness: float, strengths: Mapping[int, float]) -> dict[int, float]:
    weights = {seat: math.exp(-sharpness * value) for seat, value in strengths.items()}
    total = sum(weights.values())
    return {seat: weight / total for seat, weight in weights.items()}


def _values(chances: Mapping[int, float], outcomes: Mapping[int, list[float]], seats: int) -> list[float]:
    values = [0.0] * seats
    for loser, chance in chances.items():
        for seat, score in enumerate(outcomes[loser]):
            values[seat] += chance * score
    return values


# ----- the chance events ------------------------------------------------------------------------------------------


def deal_luck(game: Game, model: LuckModel = MODEL) -> list[float]:
    """Each seat's luck in the deal ``game`` has just made: its value now less its mean over all deals.

    The value's chance of losing is a softmax of the hands' potentials, the same
    function for every seat, and a uniform deal gives every seat's hand the same
    law: so over all deals each seat in the hand loses with the same chance,
    exactly, and the mean value is that of a loser drawn at random.
    """
    outcomes = _scores_if_lost(game)
    strengths = {seat: potential(game.hands[seat]) for seat in outcomes}
    dealt = _values(_loss_chances(model.sharpness_now(game), strengths), outcomes, game.num_players)
    even = {seat: 1.0 / len(outcomes) for seat in outcomes}
    expected = _values(even, outcomes, game.num_players)
    return [value - mean for value, mean in zip(dealt, expected, strict=True)]


def draw_luck(game: Game, seat: int, stock: Sequence[Card], model: LuckModel = MODEL) -> list[float]:
    """Each seat's luck as ``seat`` draws the top of ``stock`` (the next card last, as the engine keeps it): the
    value with the card it gets, less the mean over every card the stock holds (each equally likely to be next,
    given all that came before)."""
    return _luck_of_cards(game, seat, game.hands[seat], stock, (stock[-1],), model)


def reveal_luck(
    game: Game, seat: int, kept: Sequence[Card], unseen: Sequence[Card], taken: Sequence[Card], model: LuckModel = MODEL
) -> list[float]:
    """Each seat's luck as ``seat`` takes ``taken``, centre cards nobody has seen, keeping ``kept``: the value
    with them less the mean over every such set of cards ``unseen`` holds (the centre's unseen cards and the
    set-aside rest of the deck: no move has depended on which is where, so any is as likely as another)."""
    return _luck_of_cards(game, seat, kept, unseen, taken, model)


def _luck_of_cards(
    game: Game, seat: int, kept: Sequence[Card], pool: Sequence[Card], got: Sequence[Card], model: LuckModel
) -> list[float]:
    """The value with ``kept`` and the cards ``got``, less its mean over every set of as many cards from ``pool``."""
    outcomes = _scores_if_lost(game)
    strengths = {other: strength(game.hands[other]) for other in outcomes}
    final = game.phase is Phase.FINAL and game.name == "stop_the_bus"
    to_play = _final_turn_ends(game, strengths, pool, seat) if final else {}
    sharpness = model.sharpness_now(game)

    features = {other: potential(game.hands[other]) for other in outcomes}

    def values_with(cards: Sequence[Card]) -> list[float]:
        strengths[seat] = strength((*kept, *cards))
        features[seat] = potential((*kept, *cards))
        chances = _final_loss_chances(strengths, to_play) if final else _loss_chances(sharpness, features)
        return _values(chances, outcomes, game.num_players)

    mean = [0.0] * game.num_players
    sets = list(combinations(pool, len(got)))
    for cards in sets:
        for index, value in enumerate(values_with(cards)):
            mean[index] += value / len(sets)
    actual = values_with(got)
    return [value - average for value, average in zip(actual, mean, strict=True)]


def luck_of_log(records: Sequence[Mapping[str, Any]], model: LuckModel = MODEL) -> list[float]:
    """Each seat's luck over a whole game, from its log's records (``game_start`` first), replayed through the
    engine: the sum of its luck at every deal and every draw from the stock."""
    if not records or records[0].get("type") != "game_start":
        raise LuckError("a game log starts with its game_start record; this one does not")
    try:
        game = new_game(dict(records[0]))
    except (KeyError, TypeError, ValueError) as error:
        raise LuckError(f"the game_start record cannot start a game: {error}") from None
    return LuckMeter(game, model).play(
        (Action.parse(record["action"]) if record["type"] == "decision" else (record["seat"], record["reason"]))
        for record in records[1:]
        if record["type"] in ("decision", "forfeit")
    )


class LuckMeter:
    """Follows one game, move by move, adding each seat's luck at the chance events it passes."""

    def __init__(self, game: Game, model: LuckModel = MODEL) -> None:
        self.game = game
        self.model = model
        self.luck = [0.0] * game.num_players
        self._hand = 0
        self._unseen_slots: set[int] = set()  # Bastard Brag: centre slots still holding a card nobody has seen
        self._count_deal()

    def _count_deal(self) -> None:
        game = self.game
        if game.hand_number != self._hand and not game.is_over:
            self._hand = game.hand_number
            self._unseen_slots = {0, 1} if game.name == "bastard_brag" else set()
            self._add(deal_luck(game, self.model))

    def _add(self, luck: Sequence[float]) -> None:
        for seat, value in enumerate(luck):
            self.luck[seat] += value

    def is_chance(self, act: Action) -> bool:
        """Whether playing ``act`` now shows a card nobody has seen: a draw from the stock, a centre card taken."""
        kind = act.kind
        if kind is ActionKind.DRAW:
            return bool(getattr(self.game, "stock", None))
        if kind is ActionKind.EXCHANGE:
            return act.slot in self._unseen_slots
        return kind is ActionKind.EXCHANGE_ALL and bool(self._unseen_slots)

    def apply(self, act: Action) -> None:
        """Count the luck of ``act`` (a draw from the stock, a centre card nobody has seen), then play it."""
        game = self.game
        seat = game.current_seat
        if seat is not None and self.is_chance(act):
            self._add(self._luck_of(act, seat))
        if act.kind is ActionKind.EXCHANGE:
            self._unseen_slots.discard(act.slot if act.slot is not None else -1)
        elif act.kind is ActionKind.EXCHANGE_ALL:
            self._unseen_slots.clear()
        game.apply(act)
        self._count_deal()

    def pool(self, act: Action) -> Sequence[Card]:
        """Every card the chance event ``act`` could show, each as likely as another given all that came before.

        For a draw, the stock's cards (the next card last, as the engine keeps
        them); for a centre card nobody has seen, the centre's unseen cards and
        the set-aside rest (no move has depended on which is where). The one
        place the pools are chosen: tests/test_luck_pools.py holds them to the
        cards that could truly come, and plants wrong ones through it.
        """
        game = self.game
        if act.kind is ActionKind.DRAW:
            return game.stock  # type: ignore[attr-defined,no-any-return]
        centre: list[Card] = game.centre  # type: ignore[attr-defined]
        return [centre[slot] for slot in sorted(self._unseen_slots)] + list(game.set_aside)  # type: ignore[attr-defined]

    def _luck_of(self, act: Action, seat: int) -> list[float]:
        game = self.game
        pool = self.pool(act)
        if act.kind is ActionKind.DRAW:
            return draw_luck(game, seat, pool, self.model)
        centre: list[Card] = game.centre  # type: ignore[attr-defined]
        if act.kind is ActionKind.EXCHANGE:
            kept = [card for card in game.hands[seat] if card != act.card]
            return reveal_luck(game, seat, kept, pool, [centre[act.slot]], self.model)  # type: ignore[index]
        kept = [card for slot, card in enumerate(centre) if slot not in self._unseen_slots]
        return reveal_luck(game, seat, kept, pool, [centre[slot] for slot in sorted(self._unseen_slots)], self.model)

    def forfeit(self, seat: int, reason: str) -> None:
        self.game.forfeit(seat, reason)
        self._count_deal()

    def play(self, moves: Iterable[Action | tuple[int, str]]) -> list[float]:
        """Play ``moves`` (actions, or ``(seat, reason)`` forfeits) and return each seat's luck."""
        for move in moves:
            if isinstance(move, Action):
                self.apply(move)
            else:
                self.forfeit(*move)
        return self.luck


# ----- a recorded game's luck --------------------------------------------------------------------------------


def game_luck(directory: Path, game_id: str, model: LuckModel = MODEL) -> tuple[float, ...]:
    """Each seat's luck in a game of the league whose output folder is ``directory`` (its log in ``games/``).

    Kept once measured: a finished game's log never changes, and pages made
    again after every game would otherwise replay every game each time.
    """
    games = Path(directory).resolve() / "games"
    return _game_luck(str(find_log(games, game_id) or log_path(games, game_id)), model)


@lru_cache(maxsize=200_000)
def _game_luck(path_text: str, model: LuckModel) -> tuple[float, ...]:
    path = Path(path_text)
    try:
        records = read_log(path)
    except (OSError, ValueError, GameLogError) as error:
        raise LuckError(f"{path}: the game's log cannot be read to measure its luck: {error}") from None
    return tuple(luck_of_log(records, model))
