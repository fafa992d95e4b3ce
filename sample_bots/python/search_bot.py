"""A search bot for both games: the heuristic bot's choice, changed only where simulation shows a better one.

How it thinks (determinized Monte Carlo with the heuristic as the rollout policy):

- **Worlds.** The cards this seat has not seen are dealt at random among the
  places they could be, as often as time allows: ``Game.states_from_observation``
  gives whole game states that this seat cannot tell from the real one. Then
  each opponent's hand is made as strong as hands were, in the heuristic
  bot's self-play, after what that opponent has done in this hand (its turns,
  a card taken in view, a stop or a knock: :data:`SEEN_POWER`), by swapping
  cards this seat has never seen between places it cannot see
  (:func:`bias_world`). An opponent who took the discard, or stopped, rarely
  holds a dealt hand's rubbish.
- **Rollouts.** In each world, each legal action is played, then the rest of
  the hand with every seat (this one included) playing the heuristic bot's
  way, cheaply (:func:`play_out_hand`: from what that seat may see only, no
  seat peeks at a card it could not see; about a twentieth of the heuristic
  bot's time, choosing as it does in most decisions). Every action is tried
  in the same worlds, so the comparison between two actions is not blurred
  by the luck of the worlds.
- **Value of a hand's end.** Placement, not the life alone: the expected
  number of opponents this seat will finish above, from the lives left after
  the hand, when every later hand's loser is a seat drawn at random
  (:func:`placement_value`). Losing the last life costs more than losing one
  of three; an opponent knocked out is a place gained.
- **Choice.** The heuristic's choice stands unless another action did better
  in the same worlds by a margin the simulations make sure of (a paired
  difference ``Z`` standard errors above zero). Thinking stops early once no
  action can catch up, or the best is sure; at most ``THINK_SHARE`` of the
  move time is used (the referee charges only the time used).

The search keeps what the heuristic knows and adds what it cannot see: how
the draws of this hand may actually fall, how the opponents will play them,
and what a life is worth at this score.
"""

from __future__ import annotations

import importlib.util
import random
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from referee.botkit import MoveClock, run_bot
from referee.cards import DECK, Card
from referee.games import GAMES, Action, ActionKind, BastardBrag, EventKind, Game, Observation, Phase, StopTheBus
from referee.games.actions import DRAW, KNOCK, STOP, TAKE, action


def _beside_this_file(name: str) -> ModuleType:
    """A sample bot in this file's folder (the sample bots are scripts, not a package)."""
    path = Path(__file__).resolve().with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"search_bot_uses_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"the search bot needs {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


heuristic_bot = _beside_this_file("heuristic_bot")  # its choices, its hand strengths, its model of opponents
heuristic_decide = heuristic_bot.decide

# The kit gives decide() the request's clock (botkit.MoveClock): run_bot(..., timed=TIMED) below.
TIMED = True
# Of the move time, the share thinking may use: check-bot calls a reply slower than half the move time slow,
# and the rest covers the stream and a busy machine.
THINK_SHARE = 0.4
# Without a clock (called in process, no move time known): think this long.
DEFAULT_THINK_MS = 200.0
# An action displaces the heuristic's choice only when its paired gain is this many standard errors above 0.
Z = 2.0
# Worlds played before the statistics are trusted to stop early or to change the choice.
MIN_WORLDS = 12
# Worlds at most (a bound on a decision's work when the clock is generous).
MAX_WORLDS = 4000


def losses_left(game: str, lives: int, floating: bool) -> int:
    """How many more lost hands a seat survives before it is out (Stop the Bus counts the floating life)."""
    if game == "stop_the_bus":
        return 1 if floating else lives + 1
    return lives


@lru_cache(maxsize=100_000)
def placement_value(mine: int, theirs: tuple[int, ...]) -> float:
    """Expected number of opponents finished above, for a seat that survives ``mine`` more losses against
    opponents surviving ``theirs`` (sorted), when each hand's loser is a seat drawn at random."""
    if mine <= 0:
        return 0.0
    if not theirs:
        return 0.0
    total = placement_value(mine - 1, theirs)
    for index, left in enumerate(theirs):
        rest = theirs[:index] + theirs[index + 1 :]
        if left == 1:
            total += 1.0 + placement_value(mine, rest)
        else:
            total += placement_value(mine, tuple(sorted((*rest, left - 1))))
    return total / (len(theirs) + 1)


def hand_end_value(game: Game, seat: int, opponents: Sequence[int]) -> float:
    """The value to ``seat`` of ``game`` at a hand's end: the opponents already out, and the places to come."""
    if not game.in_game[seat]:
        # Out this hand: above only those out before it (a forfeit can leave earlier in the same hand).
        order = game.eliminations
        return float(sum(1 for other in opponents if other in order and order.index(other) < order.index(seat)))
    name = game.name
    out = sum(1 for other in opponents if not game.in_game[other])
    left = tuple(
        sorted(losses_left(name, game.lives[other], game.floating[other]) for other in opponents if game.in_game[other])
    )
    return out + placement_value(losses_left(name, game.lives[seat], game.floating[seat]), left)


# ----- the rollout policy: the heuristic's way of playing, cheap enough for thousands of hands a move ----------
#
# Each seat in a rollout plays from what it may see only (its hand, the discard pile's top or the centre's
# face-up card, the turns played), read straight from the sampled game rather than through an observation:
# about a twentieth of the heuristic bot's time a decision. Ending a hand follows the heuristic's opponent
# model (each opponent as the best of ``power`` random hands, stronger with each turn it played): end when
# the chance of losing now is below the seat's threshold for its turns this hand, thresholds measured from the
# heuristic bot's own stops and knocks.

_STRENGTH = heuristic_bot._STRENGTH
_BIT = heuristic_bot._BIT
# An opponent's power after each number of turns played (the heuristic's figures), by game.
TURNS_MODELLED = 12


def _power(game: str, turns: int) -> float:
    table = heuristic_bot.POWER_BY_TURNS[game]
    later = max(0, turns - len(table) + 1)
    return table[min(turns, len(table) - 1)] + later * heuristic_bot.POWER_PER_LATER_TURN[game]


_POWERS = {game: [_power(game, turns) for turns in range(TURNS_MODELLED)] for game in GAMES}
# The chance of losing below which the heuristic's way ends the hand, by the seat's own turns this hand.
END_AT = {"stop_the_bus": (0.40, 0.45, 0.36, 0.30, 0.38, 0.48, 0.53), "bastard_brag": (0.40, 0.40, 0.55, 0.46, 0.40)}
FACE_UP_SLOT = 2
EXPOSURE = heuristic_bot.EXPOSURE_COST


@lru_cache(maxsize=65_536)
def _mean_with_any_card(pair_mask: int) -> float:
    """Mean strength of a pair (as a mask) with a third card drawn from the rest of the deck."""
    return sum(_STRENGTH[pair_mask | bit] for bit in _ALL_BITS if not pair_mask & bit) / (len(_ALL_BITS) - 2)


@lru_cache(maxsize=65_536)
def _mean_best_of_four(hand_mask: int) -> float:
    """Mean strength of the best three of a hand (as a mask) and a card drawn from the rest of the deck."""
    cards = [bit for bit in _ALL_BITS if hand_mask & bit]
    total = 0.0
    for bit in _ALL_BITS:
        if hand_mask & bit:
            continue
        best = _STRENGTH[hand_mask]
        for dropped in cards:
            best = max(best, _STRENGTH[hand_mask ^ dropped | bit])
        total += best
    return total / (len(_ALL_BITS) - 3)


_ALL_BITS = tuple(_BIT[card] for card in DECK)


def _lose_chance(game: Game, seat: int, s: float, turns: int) -> float:
    """The chance that every other seat in the hand beats strength ``s``, each modelled after ``turns`` turns."""
    power = _POWERS[game.name][min(turns, TURNS_MODELLED - 1)]
    others = sum(game.in_hand) - 1
    return (1.0 - s**power) ** others


def _ends_now(game: Game, seat: int, s: float) -> bool:
    """Whether the heuristic's way would stop (knock) now with strength ``s``."""
    players = sum(game.in_hand)
    own_turns = game.turns_this_hand // players
    return _lose_chance(game, seat, s, own_turns + 1) <= END_AT[game.name][min(own_turns, len(END_AT[game.name]) - 1)]


def _quick_stop_the_bus(game: StopTheBus, seat: int) -> Action:
    hand = game.hands[seat]
    pending = game.pending
    if pending is not None:  # four cards: discard the one whose loss leaves the strongest three
        mask = _BIT[hand[0]] | _BIT[hand[1]] | _BIT[hand[2]] | _BIT[hand[3]]
        taken = pending[1] if pending[0] is TAKE else None
        best, best_strength = None, -1.0
        for card in hand:
            if card == taken:
                continue
            kept = _STRENGTH[mask ^ _BIT[card]]
            if kept > best_strength:
                best, best_strength = card, kept
        return action(ActionKind.DISCARD, best)
    mask = _BIT[hand[0]] | _BIT[hand[1]] | _BIT[hand[2]]
    s = _STRENGTH[mask]
    if game.phase is Phase.NORMAL and _ends_now(game, seat, s):
        return STOP
    if game.discard_pile:
        top = _BIT[game.discard_pile[-1]]
        take = max(_STRENGTH[mask ^ _BIT[card] | top] for card in hand)
        if take > s and take >= _mean_best_of_four(mask):
            return TAKE
    return DRAW


def _quick_bastard_brag(game: BastardBrag, seat: int) -> Action:
    hand = game.hands[seat]
    mask = _BIT[hand[0]] | _BIT[hand[1]] | _BIT[hand[2]]
    s = _STRENGTH[mask]
    if game.knock_allowed() and _ends_now(game, seat, s):
        return KNOCK
    centre, known_to = game.centre, game.centre_known_to
    face_up = _BIT[centre[FACE_UP_SLOT]]
    best, best_value = None, -1.0
    for card in hand:
        kept = mask ^ _BIT[card]
        value = _STRENGTH[kept | face_up] - EXPOSURE * card.rank
        if value > best_value:
            best, best_value = action(ActionKind.EXCHANGE, card, FACE_UP_SLOT), value
        for slot in (0, 1):
            # The card it put there itself is known; any other is a card from the rest of the deck.
            value = _STRENGTH[kept | _BIT[centre[slot]]] if known_to[slot] == seat else _mean_with_any_card(kept)
            if value > best_value:
                best, best_value = action(ActionKind.EXCHANGE, card, slot), value
    lowest = min(hand, key=_rank_of)  # the whole centre, the lowest card laid face up
    value = _mean_with_two_cards(face_up) - EXPOSURE * lowest.rank
    if value > best_value:
        best = action(ActionKind.EXCHANGE_ALL, lowest)
    assert best is not None
    return best


def _rank_of(card: Card) -> int:
    return card.rank


@lru_cache(maxsize=64)
def _mean_with_two_cards(bit: int) -> float:
    """Mean strength of a card (as a mask) with two more drawn from the rest of the deck."""
    others = [other for other in _ALL_BITS if other != bit]
    total = sum(_STRENGTH[bit | a | b] for i, a in enumerate(others) for b in others[i + 1 :])
    return total / (len(others) * (len(others) - 1) / 2)


def play_out_hand(game: Game, hand_number: int) -> None:
    """Play ``game`` to the end of hand ``hand_number``, every seat playing the heuristic's way, cheaply."""
    quick = _quick_stop_the_bus if game.name == "stop_the_bus" else _quick_bastard_brag
    while game.hand_number == hand_number and not game.is_over:
        seat = game.current_seat
        assert seat is not None
        game.apply(quick(game, seat))  # type: ignore[arg-type]


def never_seen(obs: Observation) -> frozenset[Card]:
    """The cards this seat has not seen in this hand: any of them may be in any place it cannot see."""
    seen = set(obs.hand)
    for event in obs.hand_events:
        if event.card is not None:
            seen.add(event.card)
        if event.taken is not None:
            seen.add(event.taken)
    for name in ("centre", "discard_top", "drawn_card"):
        value = getattr(obs, name, None)
        if isinstance(value, Card):
            seen.add(value)
        elif isinstance(value, tuple):
            seen.update(card for card in value if card is not None)
    return frozenset(card for card in DECK if card not in seen)


# How strong opponents' hands are, as the power of a best-of-``power``-random-hands model: fitted (by maximum
# likelihood) to the hands of the heuristic bot's self-play at three and five seats, by the turns the opponent
# has played in this hand (0 to 5 and more), and by what it showed: it ended the hand (stopped or knocked), it
# took a card in view (the discard, the face-up card), or neither. The heuristic bot's own model (power 4
# after a turn in Stop the Bus, whatever the opponent did) overrates an opponent that only drew, and underrates
# one that took the discard or stopped.
SEEN_POWER = {
    "stop_the_bus": {
        "ended": (5.0, 14.0, 21.0, 28.0, 30.0, 40.0),
        "took": (9.0, 9.0, 12.0, 15.0, 19.0, 26.0),
        "neither": (1.0, 1.6, 2.5, 4.5, 9.0, 14.0),
    },
    "bastard_brag": {
        "ended": (9.0, 9.0, 13.0, 18.0, 20.0, 20.0),
        "took": (3.2, 3.2, 4.0, 3.8, 3.8, 3.5),
        "neither": (1.0, 1.8, 1.9, 1.7, 1.5, 1.5),
    },
}


def opponent_powers(obs: Observation) -> list[tuple[int, float]]:
    """Each opponent in the hand and the power of its hand (:data:`SEEN_POWER`): as strong as the best of that
    many random hands (1: a hand as dealt)."""
    if obs.game == "stop_the_bus":
        model = heuristic_bot.OpponentModel(obs, {EventKind.DISCARD, EventKind.PASS}, heuristic_bot._took_discard)
    else:
        model = heuristic_bot.OpponentModel(
            obs, {EventKind.EXCHANGE, EventKind.EXCHANGE_ALL}, heuristic_bot._took_face_up
        )
    table = SEEN_POWER[obs.game]
    powers = []
    for seat, turns in model.turns.items():
        shown = "ended" if seat == obs.ender else "took" if model.visible_takes[seat] else "neither"
        row = table[shown]
        powers.append((seat, row[min(turns, len(row) - 1)]))
    return powers


_HIDDEN_PLACES = ("stock", "centre", "set_aside", "out_of_play")


def bias_world(
    world: Game, seat: int, unseen: frozenset[Card], powers: Sequence[tuple[int, float]], rng: random.Random
) -> None:
    """Make each opponent's unseen cards as strong as the best of ``power`` random draws of them (``powers``: each
    opponent's), by swapping cards this seat has never seen (``unseen``) between places it cannot see: the world
    stays one this seat cannot tell from the real one."""
    where: dict[Card, tuple[list[Card], int]] = {}
    for other, cards in enumerate(world.hands):
        if other != seat:
            for index, card in enumerate(cards):
                if card in unseen:
                    where[card] = (cards, index)
    for name in _HIDDEN_PLACES:
        place = getattr(world, name, None)
        if isinstance(place, list):
            for index, card in enumerate(place):
                if card in unseen:
                    where[card] = (place, index)
    fixed: set[Card] = set()
    for other, power in powers:
        hand = world.hands[other]
        free = [index for index, card in enumerate(hand) if card in unseen]
        draws = int(power) + (rng.random() < power - int(power))
        if not free or draws <= 1 or len(hand) != 3:
            fixed.update(hand[index] for index in free)
            continue
        pool = [card for card in where if card not in fixed]
        if len(pool) < len(free):
            continue
        known = 0
        for card in hand:
            if card not in unseen:
                known |= _BIT[card]
        best = [hand[index] for index in free]
        best_strength = _STRENGTH[known | _mask(best)]
        for _ in range(draws - 1):
            candidate = rng.sample(pool, len(free))
            candidate_strength = _STRENGTH[known | _mask(candidate)]
            if candidate_strength > best_strength:
                best, best_strength = candidate, candidate_strength
        for index, card in zip(free, best, strict=True):
            current = hand[index]
            if current != card:
                place, at = where[card]
                place[at], hand[index] = current, card
                where[current], where[card] = (place, at), (hand, index)
        fixed.update(best)


def _mask(cards: Sequence[Card]) -> int:
    mask = 0
    for card in cards:
        mask |= _BIT[card]
    return mask


class Search:
    """The actions of one decision, tried in the same sampled worlds; paired with the heuristic's choice."""

    def __init__(self, obs: Observation, rng: random.Random) -> None:
        self.obs = obs
        self.actions = obs.legal_actions
        self.default = self.actions.index(heuristic_decide(obs))
        self.rng = rng
        self.worlds = GAMES[obs.game].states_from_observation(obs, rng)
        self.never_seen = never_seen(obs)
        self.powers = opponent_powers(obs)
        self.opponents = [seat for seat in range(obs.num_players) if seat != obs.seat and obs.in_game[seat]]
        self.gain_sums = [0.0] * len(self.actions)  # paired: value of the action minus the default's
        self.gain_squares = [0.0] * len(self.actions)
        self.count = 0

    def play_world(self) -> None:
        """Try every action in one more sampled world."""
        world = next(self.worlds)
        bias_world(world, self.obs.seat, self.never_seen, self.powers, self.rng)
        hand_number, seat, opponents = world.hand_number, self.obs.seat, self.opponents
        values = []
        for tried in self.actions:
            game = world.clone()
            game.apply(tried)
            play_out_hand(game, hand_number)
            values.append(hand_end_value(game, seat, opponents))
        base = values[self.default]
        for index, value in enumerate(values):
            gain = value - base
            self.gain_sums[index] += gain
            self.gain_squares[index] += gain * gain
        self.count += 1

    def margins(self) -> list[tuple[float, float]]:
        """Each action's mean paired gain over the default, and that mean's standard error."""
        n = self.count
        result = []
        for total, squares in zip(self.gain_sums, self.gain_squares, strict=True):
            mean = total / n
            variance = max(0.0, squares / n - mean * mean) * n / max(1, n - 1)
            result.append((mean, (variance / n) ** 0.5))
        return result

    def settled(self) -> bool:
        """Whether more worlds could not change the choice: every action surely no better, or one surely best."""
        if self.count < MIN_WORLDS:
            return False
        margins = self.margins()
        if all(mean + Z * error < 0.0 for index, (mean, error) in enumerate(margins) if index != self.default):
            return True
        best = self.choice_index()
        if best == self.default:
            return False
        best_mean, best_error = margins[best]
        return all(
            best_mean - mean > Z * (best_error + error) for index, (mean, error) in enumerate(margins) if index != best
        )

    def choice_index(self) -> int:
        """The default, unless an action's gain over it is ``Z`` standard errors above zero (the best such)."""
        if self.count < MIN_WORLDS:
            return self.default
        chosen, chosen_mean = self.default, 0.0
        for index, (mean, error) in enumerate(self.margins()):
            if mean - Z * error > 0.0 and mean > chosen_mean:
                chosen, chosen_mean = index, mean
        return chosen


def think_seconds(clock: MoveClock | None) -> float:
    """How long this decision may think: ``THINK_SHARE`` of the move time, less what has passed since the request
    arrived (the bank is never spent)."""
    if clock is None:
        return DEFAULT_THINK_MS / 1000
    return max(0.0, THINK_SHARE * clock.move_time_ms / 1000 - clock.elapsed_s())


def decide(obs: Observation, clock: MoveClock | None = None) -> Action:
    """Choose an action for either game within the time ``clock`` gives (see the module's docstring)."""
    started = time.perf_counter()
    legal = obs.legal_actions
    if len(legal) == 1:
        return legal[0]
    search = Search(obs, random.Random(_seed_of(obs)))
    deadline = started + think_seconds(clock)
    world_cost = 0.0  # the last world's time: no world is begun that would likely end past the deadline
    while search.count < MAX_WORLDS and not search.settled():
        now = time.perf_counter()
        if now + world_cost >= deadline:
            break
        search.play_world()
        world_cost = time.perf_counter() - now
    return legal[search.choice_index()]


def _seed_of(obs: Observation) -> int:
    """A seed from what the seat sees, so that the same view with the same time plays alike."""
    return hash((obs.seat, obs.hand_number, obs.turns_this_hand, obs.hand, obs.phase is Phase.FINAL)) & (2**64 - 1)


if __name__ == "__main__":
    run_bot(decide, name="search", version="1.0", timed=TIMED)
