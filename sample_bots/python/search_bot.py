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
  seat peeks at a card it could not see; in Stop the Bus the heuristic's own
  rules, its choice in 99 decisions of 100 at a twelfth of its time; in
  Bastard Brag a cruder copy at a fiftieth). Every action is tried
  in the same worlds, so the comparison between two actions is not blurred
  by the luck of the worlds.
- **Value of a hand's end.** Placement, not the life alone: the expected
  number of opponents this seat will finish above, from the lives left after
  the hand, when every later hand's loser is a seat drawn at random
  (``referee.placements``, the model the luck of the cards uses too).
  Losing the last life costs more than losing one of three; an opponent
  knocked out is a place gained.
- **Choice.** The heuristic's choice stands unless another action did better
  in the same worlds by a margin the simulations make sure of (a paired
  difference ``Z`` standard errors above zero). Thinking stops early, after
  ``SETTLE_WORLDS`` worlds, once no action can catch up, or the best is
  sure; the time it may take is its clock's (:func:`think_seconds`).
- **Time.** Each request tells the move time, the bank left and what the
  previous decision was charged. The search thinks the larger of
  ``THINK_SHARE`` of the move time and its share of the bank, the bank left
  spread over the next ``BANK_DECISIONS`` decisions: where the move time is
  short beside the bank, it spends the bank (never all of it: a decision
  takes at most that share of what is left); at the default clock (1,000 ms
  a move, a 10,000 ms bank) it thinks 400 ms and keeps the bank for a slow
  machine, under the half of the move time check-bot calls slow. What the
  previous decision was charged beyond what the bot itself measured from
  its request's arrival to its reply is time the bot cannot see (the stream,
  the kit, a thaw, a slow machine): it is taken off this decision's
  thinking, so a bot the machine runs slowly thinks less and is charged what
  it meant to be.

The search keeps what the heuristic knows and adds what it cannot see: how
the draws of this hand may actually fall, how the opponents will play them,
and what a life is worth at this score.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path

from referee.botkit import MoveClock, note, run_bot
from referee.cards import DECK, Card
from referee.games import GAMES, Action, ActionKind, BastardBrag, EventKind, Game, Observation, Phase, StopTheBus
from referee.games.actions import DRAW, KNOCK, STOP, TAKE, action
from referee.placements import losses_left, places_above

# The heuristic bot's way of playing is brag_heuristic.py, beside this file however this file is run or loaded.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import brag_heuristic as heuristic_bot

heuristic_decide = heuristic_bot.decide

# The kit gives decide() the request's clock (botkit.MoveClock): run_bot(..., timed=TIMED) below.
TIMED = True
# Of the move time, the share thinking may use: check-bot calls a reply slower than half the move time slow,
# and the rest covers the stream and a busy machine.
THINK_SHARE = 0.4
# The bank left is spread over this many decisions: each may think that share of it where that is more than
# THINK_SHARE of the move time (a game of most tables has fewer decisions a seat, and each takes a share of what
# is left, so the bank never runs out).
BANK_DECISIONS = 200
# Without a clock (called in process, no move time known): think this long.
DEFAULT_THINK_MS = 200.0
# An action displaces the heuristic's choice only when its paired gain is this many standard errors above 0.
Z = 2.0
# Worlds played before the statistics are trusted to change the choice.
MIN_WORLDS = 12
# Worlds played before thinking may stop early, the choice settled: a rarer better action shows itself late.
SETTLE_WORLDS = 80
# Worlds at most (a bound on a decision's work when the clock is generous).
MAX_WORLDS = 4000


def hand_end_value(game: Game, seat: int, opponents: Sequence[int]) -> float:
    """The value to ``seat`` of ``game`` at a hand's end: the opponents already out, and the places to come."""
    if not game.in_game[seat]:
        # Out this hand: above only those out before it (a forfeit can leave earlier in the same hand).
        order = game.eliminations
        return float(sum(1 for other in opponents if other in order and order.index(other) < order.index(seat)))
    name = game.name
    out = sum(1 for other in opponents if not game.in_game[other])
    theirs = [losses_left(name, game.lives[other], game.floating[other]) for other in opponents if game.in_game[other]]
    return out + places_above(losses_left(name, game.lives[seat], game.floating[seat]), theirs)


# ----- the rollout policy: the heuristic's way of playing, cheap enough for thousands of hands a move ----------
#
# Each seat in a rollout plays from what it may see only (its hand, the discard pile's top or the centre's
# face-up card, the turns played and the cards taken in view), read straight from the sampled game rather
# than through an observation. In Stop the Bus it is the heuristic bot's own rules, its opponent model and
# its sums over the next draw, kept in tables: the heuristic's choice in 99% of decisions (turns and discards
# alike, 40 seeded games at three seats), at about a twelfth of its time. In Bastard Brag it is cruder, a
# fiftieth of the time: end the hand when the chance of losing now, each opponent as the best of ``power``
# random hands, is below the seat's threshold for its turns this hand (measured from the heuristic bot's own
# knocks).

_STRENGTH = heuristic_bot._STRENGTH
_BIT = heuristic_bot._BIT
# An opponent's power after each number of turns played (the heuristic's figures), by game.
TURNS_MODELLED = 12


_POWERS = {game: [heuristic_bot.opponent_power(game, turns) for turns in range(TURNS_MODELLED)] for game in GAMES}
# The chance of losing below which the heuristic's way knocks, by the seat's own turns this hand.
KNOCK_AT = (0.40, 0.40, 0.55, 0.46, 0.40)
FACE_UP_SLOT = 2
EXPOSURE = heuristic_bot.EXPOSURE_COST


@lru_cache(maxsize=65_536)
def _mean_with_any_card(pair_mask: int) -> float:
    """Mean strength of a pair (as a mask) with a third card drawn from the rest of the deck."""
    return sum(_STRENGTH[pair_mask | bit] for bit in _ALL_BITS if not pair_mask & bit) / (len(_ALL_BITS) - 2)


_ALL_BITS = tuple(_BIT[card] for card in DECK)


def _lose_chance(game: Game, seat: int, s: float, turns: int) -> float:
    """The chance that every other seat in the hand beats strength ``s``, each modelled after ``turns`` turns."""
    power = _POWERS[game.name][min(turns, TURNS_MODELLED - 1)]
    others = sum(game.in_hand) - 1
    return (1.0 - s**power) ** others


def _knocks_now(game: Game, seat: int, s: float) -> bool:
    """Whether the heuristic's way would knock now with strength ``s``."""
    players = sum(game.in_hand)
    own_turns = game.turns_this_hand // players
    return _lose_chance(game, seat, s, own_turns + 1) <= KNOCK_AT[min(own_turns, len(KNOCK_AT) - 1)]


# The heuristic bot's loss chances, tabulated on _STEPS steps of strength (heuristic_bot._loss_table), and the
# constants of its Stop the Bus rules.
_STEPS = heuristic_bot._STEPS
_TIE_BREAK = heuristic_bot.TIE_BREAK
_POTENTIAL = heuristic_bot.POTENTIAL_WEIGHT
_DISCARD, _PASS, _TAKE = EventKind.DISCARD, EventKind.PASS, EventKind.TAKE


@cache
def _loss_steps(groups: tuple[tuple[float, int], ...]) -> tuple[float, ...]:
    """The chance that every opponent beats a hand at each step of strength; ``groups``: (power, opponents)."""
    return tuple(heuristic_bot._loss_table(groups))


@lru_cache(maxsize=65_536)
def _best_after_draw(mask: int) -> tuple[float, ...]:
    """For a three-card hand (as a mask), the strength of its best three with each card of the rest of the deck."""
    cards = [bit for bit in _ALL_BITS if mask & bit]
    kept = _STRENGTH[mask]
    return tuple(
        max(kept, *(_STRENGTH[mask ^ dropped | bit] for dropped in cards)) for bit in _ALL_BITS if not mask & bit
    )


def _value(loss: tuple[float, ...], s: float) -> float:
    """The heuristic's value of a hand of strength ``s``: the chance of not losing, strength breaking ties."""
    return 1.0 - loss[int(s * _STEPS)] + _TIE_BREAK * s


_DRAW_VALUES: dict[tuple[int, int], float] = {}


def _draw_value(loss: tuple[float, ...], mask: int) -> float:
    """The heuristic's value of drawing a card to a hand (as a mask) and keeping the best three."""
    key = (id(loss), mask)  # the loss tables live as long as the process (_loss_steps keeps them)
    value = _DRAW_VALUES.get(key)
    if value is None:
        if len(_DRAW_VALUES) >= 1_000_000:
            _DRAW_VALUES.clear()
        best = _best_after_draw(mask)
        value = _DRAW_VALUES[key] = sum(_value(loss, s) for s in best) / len(best)
    return value


def _opponent_losses(game: Game, seat: int) -> tuple[int, tuple[float, ...], tuple[float, ...]]:
    """The seat's own turns this hand, and the heuristic's loss tables once every opponent has played one more
    turn and two more (each opponent's power from its turns and the discards it took this hand)."""
    turns = {other: 0 for other in range(game.num_players) if game.in_hand[other] and other != seat}
    takes = dict.fromkeys(turns, 0)
    own = 0
    for event in game.hand_events:
        kind = event.kind
        if kind is _DISCARD or kind is _PASS:
            if event.seat == seat:
                own += 1
            elif event.seat in turns:
                turns[event.seat] += 1
        elif kind is _TAKE and event.seat in takes:
            takes[event.seat] += 1
    power, groups = heuristic_bot.opponent_power, heuristic_bot.loss_groups
    return (
        own,
        _loss_steps(groups([power("stop_the_bus", turns[other] + 1, takes[other]) for other in turns])),
        _loss_steps(groups([power("stop_the_bus", turns[other] + 2, takes[other]) for other in turns])),
    )


def _quick_stop_the_bus(game: StopTheBus, seat: int) -> Action:
    """heuristic_bot.decide_stop_the_bus from the game: stop when losing now is no likelier than after playing on
    (with its margin); take the discard when it helps more than a draw would; discard the card whose loss leaves
    the best hand, with an eye on the next draw (heuristic_bot.POTENTIAL_WEIGHT) before the final turns."""
    hand = game.hands[seat]
    own_turns, loss, later = _opponent_losses(game, seat)
    pending = game.pending
    if pending is not None:  # four cards: discard one
        mask = _BIT[hand[0]] | _BIT[hand[1]] | _BIT[hand[2]] | _BIT[hand[3]]
        taken = pending[1] if pending[0] is TAKE else None
        final = game.phase is not Phase.NORMAL
        best, best_score = None, (-1.0, -1)
        for card in hand:
            if card == taken:
                continue
            kept = mask ^ _BIT[card]
            now = _value(loss, _STRENGTH[kept])
            score = now if final else now + _POTENTIAL * (_draw_value(loss, kept) - now)
            if (score, card.index) > best_score:
                best, best_score = card, (score, card.index)
        return action(ActionKind.DISCARD, best)
    mask = _BIT[hand[0]] | _BIT[hand[1]] | _BIT[hand[2]]
    s = _STRENGTH[mask]
    top = _BIT[game.discard_pile[-1]] if game.discard_pile else None
    taken = max(_STRENGTH[mask ^ _BIT[card] | top] for card in hand) if top is not None else 0.0
    if game.phase is Phase.NORMAL:
        play_value = _draw_value(later, mask)
        if top is not None:
            play_value = max(play_value, _value(later, taken))
        margin = heuristic_bot.margin_at(game.name, seat, game.lives, game.floating, game.in_hand, own_turns)
        if loss[int(s * _STEPS)] <= 1.0 - play_value + _TIE_BREAK + margin:
            return STOP
    if top is not None:
        take_value = _value(loss, taken)
        if take_value > _value(loss, s) and take_value >= _draw_value(loss, mask):
            return TAKE
    return DRAW


def _quick_bastard_brag(game: BastardBrag, seat: int) -> Action:
    hand = game.hands[seat]
    mask = _BIT[hand[0]] | _BIT[hand[1]] | _BIT[hand[2]]
    s = _STRENGTH[mask]
    if game.knock_allowed() and _knocks_now(game, seat, s):
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
        if self.count < SETTLE_WORLDS:
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


# What the bot measured of each seat's last decision, from its request's arrival to its reply, in ms (by seat:
# in process, one module may play several seats).
measured_ms: dict[int, float] = {}


def think_seconds(clock: MoveClock | None, seat: int = 0) -> float:
    """How long this decision of ``seat`` may think, from its request's arrival: ``THINK_SHARE`` of the move time
    or, where it is more, the bank left over ``BANK_DECISIONS``; less the time the seat's previous decision was
    charged beyond what the bot measured of it (time it cannot see, so it thinks less on a machine that runs it
    slowly), less what has passed since the request arrived."""
    if clock is None:
        return DEFAULT_THINK_MS / 1000
    budget_ms = max(THINK_SHARE * clock.move_time_ms, clock.time_bank_ms / BANK_DECISIONS)
    if clock.last_charged_ms:  # 0: this game's first decision, nothing charged yet
        budget_ms -= max(0.0, clock.last_charged_ms - measured_ms.get(seat, 0.0))
    return max(0.0, budget_ms / 1000 - clock.elapsed_s())


def decide(obs: Observation, clock: MoveClock | None = None) -> Action:
    """Choose an action for either game within the time ``clock`` gives (see the module's docstring)."""
    try:
        return _search(obs, clock)
    finally:
        if clock is not None:
            measured_ms[obs.seat] = clock.elapsed_s() * 1000


def _search(obs: Observation, clock: MoveClock | None) -> Action:
    started = time.perf_counter()
    legal = obs.legal_actions
    if len(legal) == 1:
        return legal[0]
    search = Search(obs, random.Random(_seed_of(obs)))
    deadline = started + think_seconds(clock, obs.seat)
    world_cost = 0.0  # the last world's time: no world is begun that would likely end past the deadline
    while search.count < MAX_WORLDS and not search.settled():
        now = time.perf_counter()
        if now + world_cost >= deadline:
            break
        search.play_world()
        world_cost = time.perf_counter() - now
    chosen = search.choice_index()
    # A note for the author's replay (botkit.note): what the search saw, and why it chose.
    if chosen != search.default:
        gain = search.margins()[chosen][0]
        note(f"{search.count} worlds: {legal[chosen]}, {gain:+.3f} a hand over the heuristic's {legal[search.default]}")
    else:
        note(f"{search.count} worlds: nothing surely better than the heuristic's {legal[chosen]}")
    return legal[chosen]


def _seed_of(obs: Observation) -> int:
    """A seed from what the seat sees, so that the same view with the same time plays alike."""
    return hash((obs.seat, obs.hand_number, obs.turns_this_hand, obs.hand, obs.phase is Phase.FINAL)) & (2**64 - 1)


if __name__ == "__main__":
    run_bot(decide, name="search", version="1.0", timed=TIMED)
