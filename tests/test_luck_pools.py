"""The pools of the luck's chance events, held to the cards that could truly come (``referee.records.luck``), and
the sampler's chance of where a card a seat showed came from (``referee.engine.games.brag_sampling``).

A chance event's luck is the value of what it showed less the mean value over
every outcome it could have had, and its mean is zero, whatever the value
function, when that mean is over the cards the event could truly show, each as
likely as another. Averaging the luck over the pool luck.py itself uses proves
nothing (the average of "value less the pool's mean" over that pool is zero for
any pool), so the pools here are worked out apart from luck.py:

- a draw in Stop the Bus can give any card in no hand, not in the discard pile
  and not out of play: the stock, shuffled at the deal or at a recycle, whose
  order nobody has seen;
- a centre card taken in Bastard Brag is a chance event only while no seat has
  seen it (every seat's observation, the one function that builds a seat's
  view, read after every move since the deal), and it could be any card no seat
  has seen this hand: the centre's other unseen card and the set-aside rest;
- no other move shows a card nobody has seen: taking the discard, taking the
  face-up card, taking back a face-down card a seat put there (the referee saw
  it go down), knocking, stopping, passing, forfeiting.

At every move of random games (every table size, forfeits, recycled stocks,
final turns, exchange-alls) the meter must call a chance event exactly where
there is one, over exactly those cards, and count no luck for a move that shows
nothing; at a sample of chance events, each outcome the engine could have given
put in its place in turn, the luck the meter counts must average zero to 1e-12.
Each wrong pool the meter could take (a card out of play counted, a recycled
card missed, a face-down card its taker put there counted as unseen, the
set-aside cards missed) is planted through ``LuckMeter.pool`` and fails both.
A hand's deal, whose outcomes are too many to go through, is tested exactly
over the ways its hands could have gone round the table, and statistically,
with the power to see a bias of a hundredth of a game's score.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import pytest

from referee.engine.cards import DECK, Card, format_cards
from referee.engine.games import GAMES, BastardBrag, BastardBragObservation, Game
from referee.engine.games.actions import Action, action
from referee.engine.games.game import ActionKind, EventKind, Phase
from referee.records.luck import LuckMeter, deal_luck, draw_luck, strength

GAME_NAMES = tuple(GAMES)
ENDINGS = (ActionKind.STOP, ActionKind.KNOCK, ActionKind.PASS)
EXACT = 1e-12


# ----- the cards that could truly come, worked out apart from luck.py ------------------------------------------


@dataclass(frozen=True)
class TrueEvent:
    """A chance event as worked out here: the cards it shows, from where, and every card it could have shown."""

    shown: tuple[Card, ...]
    could_show: frozenset[Card]
    slots: tuple[int, ...] = ()  # Bastard Brag: the centre slots whose unseen cards it takes


class Table:
    """A game played at random, a luck meter (of ``meter_class``) following it, and the cards a seat has seen.

    Players seldom stop or knock, so that hands run long and stocks recycle,
    and now and then one forfeits (its cards leave play). ``seen`` is every
    card some seat's observation has shown this hand.
    """

    def __init__(self, game_name: str, players: int, seed: int, meter_class: type[LuckMeter] = LuckMeter) -> None:
        self.rng = random.Random(seed)
        self.game: Any = GAMES[game_name](players, seed=seed)
        self.meter = meter_class(self.game)
        self.seen: set[Card] = set()
        self.hand = 0
        self._look()

    def _look(self) -> None:
        game = self.game
        if game.is_over:
            return
        if game.hand_number != self.hand:
            self.hand, self.seen = game.hand_number, set()
        if game.name != "bastard_brag":
            return
        for seat in range(game.num_players):
            view = game.observation(seat)
            self.seen.update(view.hand)
            self.seen.update(card for card in view.centre if card is not None)
            self.seen.update(card for event in view.hand_events for card in (event.card, event.taken) if card)

    def true_event(self, act: Action) -> TrueEvent | None:
        """The chance event ``act`` would be now, worked out from the table (None: it shows nothing unseen)."""
        game = self.game
        if act.kind is ActionKind.DRAW:
            in_play = {card for hand in game.hands for card in hand} | set(game.discard_pile) | set(game.out_of_play)
            return TrueEvent((game.stock[-1],), frozenset(DECK) - in_play)
        if act.kind is ActionKind.EXCHANGE:
            slots: tuple[int, ...] = (act.slot,)
        elif act.kind is ActionKind.EXCHANGE_ALL:
            slots = (0, 1, 2)
        else:
            return None
        slots = tuple(slot for slot in slots if game.centre[slot] not in self.seen)
        if not slots:
            return None
        return TrueEvent(tuple(game.centre[slot] for slot in slots), frozenset(DECK) - self.seen, slots)

    def choose(self, end_rate: float) -> Action | None:
        """A random move (None: the seat to play forfeits instead)."""
        game = self.game
        if self.rng.random() < 0.003 and sum(game.in_game) > 2:
            return None
        legal = game.legal_actions()
        quiet = [act for act in legal if act.kind not in ENDINGS]
        return self.rng.choice(list(legal) if self.rng.random() < end_rate or not quiet else quiet)

    def play(self, act: Action | None) -> None:
        if act is None:
            self.meter.forfeit(self.game.current_seat, "forfeited at random")
        else:
            self.meter.apply(act)
        self._look()

    def kind_of(self, act: Action, event: TrueEvent | None) -> str:
        """What sort of move ``act`` is, for the tests' coverage."""
        game = self.game
        if event is None:
            if act.kind is ActionKind.EXCHANGE and act.slot != 2:
                put_by = game.centre_known_to[act.slot]
                return "taking back a card it put face down" if put_by == game.current_seat else "taking a seen card"
            return act.kind.value
        if game.out_of_play:
            return "after a forfeit"
        if act.kind is ActionKind.DRAW:
            if any(seen.kind is EventKind.RECYCLE for seen in game.hand_events):
                return "draw from a recycled stock"
            return "final-turn draw" if game.phase is Phase.FINAL else "draw"
        if act.kind is ActionKind.EXCHANGE:
            return "exchange with an unseen slot"
        return f"exchange-all taking {len(event.slots)} unseen"


@dataclass(frozen=True)
class Play:
    """How the checks play a game: the tables (players, seed), the hands of each, how often a player ends a hand."""

    tables: tuple[tuple[int, int], ...]
    hands: int
    end_rate: float


# Stop the Bus: long hands, so that stocks recycle. Bastard Brag: short ones, so that many start with two cards
# nobody has seen in the centre, which an exchange-all takes.
PLAY = {
    "stop_the_bus": Play(tuple((players, 0) for players in range(2, 10)), hands=2, end_rate=0.01),
    "bastard_brag": Play(
        tuple((players, seed) for players in range(3, 11) for seed in range(2)), hands=6, end_rate=0.1
    ),
}


def tables(game_name: str, meter_class: type[LuckMeter]) -> list[Table]:
    return [Table(game_name, players, 1000 * players + seed, meter_class) for players, seed in PLAY[game_name].tables]


# ----- the checks, for the meter and for the wrong pools planted in it ------------------------------------------


def check_pools(game_name: str, meter_class: type[LuckMeter] = LuckMeter) -> Counter[str]:
    """At every move of random games, before it is played: for each legal action, the meter calls it a chance
    event exactly when it is one, over exactly the cards that could come; the move played, if it shows nothing,
    counts no luck. Returns how many moves of each kind were played."""
    play = PLAY[game_name]
    played: Counter[str] = Counter()
    for table in tables(game_name, meter_class):
        game, meter = table.game, table.meter
        while not game.is_over and table.hand <= play.hands:
            where = f"{game_name} at {game.num_players}, hand {game.hand_number}, turn {game.turns_this_hand}"
            for act in game.legal_actions():
                event = table.true_event(act)
                assert meter.is_chance(act) == (event is not None), f"{where}: {act} is a chance event: {event}"
                if event is not None:
                    pool = list(meter.pool(act))
                    extra = sorted(set(pool) - event.could_show)
                    missed = sorted(event.could_show - set(pool))
                    assert not extra and not missed and len(pool) == len(event.could_show), (
                        f"{where}: {act}: the pool holds {format_cards(extra) or 'nothing'} that cannot come, and "
                        f"misses {format_cards(missed) or 'nothing'} that could"
                    )
            act = table.choose(play.end_rate)
            event = None if act is None else table.true_event(act)
            if act is not None:
                played[table.kind_of(act, event)] += 1
            before, hand = list(meter.luck), game.hand_number
            table.play(act)
            if event is None and game.hand_number == hand:
                assert meter.luck == before, f"{where}: {act} shows nothing unseen, yet counts luck"
    return played


def fork(meter: LuckMeter) -> LuckMeter:
    """A copy of the meter and its game, to play a move on apart from them."""
    twin = type(meter).__new__(type(meter))
    for name, value in vars(meter).items():
        setattr(twin, name, value.copy() if isinstance(value, (list, set, dict)) else value)
    twin.game = meter.game.clone()
    return twin


def put(game: Any, event: TrueEvent, cards: Sequence[Card]) -> None:
    """Make ``cards`` the outcome of ``event``: each swapped with the card in the place it is taken from."""
    if not event.slots:  # a draw: the card on top of the stock
        stock = game.stock
        where = stock.index(cards[0])
        stock[where], stock[-1] = stock[-1], stock[where]
        return
    centre, set_aside = game.centre, game.set_aside
    for slot, card in zip(event.slots, cards, strict=True):
        if card in set_aside:
            where = set_aside.index(card)
            set_aside[where], centre[slot] = centre[slot], card
        else:
            where = centre.index(card)
            centre[where], centre[slot] = centre[slot], card


def mean_luck_over_outcomes(table: Table, act: Action, event: TrueEvent) -> list[float] | None:
    """Each seat's luck the meter counts for ``act``, averaged over every outcome ``event`` could have had, each
    put where the move takes it from (None if the move ends the hand: the next deal's luck would be in it)."""
    game, meter = table.game, table.meter
    outcomes = list(combinations(sorted(event.could_show), len(event.shown)))
    totals = [0.0] * game.num_players
    for cards in outcomes:
        twin = fork(meter)
        put(twin.game, event, cards)
        before = list(twin.luck)
        twin.apply(act)
        if twin.game.hand_number != game.hand_number:
            return None
        for seat, (after, was) in enumerate(zip(twin.luck, before, strict=True)):
            totals[seat] += (after - was) / len(outcomes)
    return totals


# Chance events whose outcomes are gone through, a few of each kind (fewer where there are many outcomes).
ENUMERATED = {
    "draw": 4,
    "final-turn draw": 3,
    "draw from a recycled stock": 3,
    "after a forfeit": 3,
    "exchange with an unseen slot": 6,
    "exchange-all taking 1 unseen": 3,
    "exchange-all taking 2 unseen": 1,
}


def check_means(game_name: str, meter_class: type[LuckMeter] = LuckMeter) -> Counter[str]:
    """At chance events of random games, a few of each kind: the luck the meter counts averages zero over every
    outcome the engine could have given; a move whose outcome is known (it shows nothing unseen) counts none.
    Returns how many chance events of each kind were gone through."""
    play = PLAY[game_name]
    wanted = {kind: count for kind, count in ENUMERATED.items() if kind in COVERED[game_name]}
    done: Counter[str] = Counter()

    def go_through(table: Table, act: Action, event: TrueEvent) -> None:
        kind, game = table.kind_of(act, event), table.game
        outcomes = math.comb(len(event.could_show), len(event.shown))
        if done[kind] >= wanted.get(kind, 0) or outcomes > 250:
            return
        mean = mean_luck_over_outcomes(table, act, event)
        if mean is not None:
            done[kind] += 1
            assert mean == pytest.approx([0.0] * game.num_players, abs=EXACT), (
                f"{game_name} at {game.num_players}, hand {game.hand_number}: {act} ({kind}): the luck averages "
                f"{[f'{value:+.2e}' for value in mean]} over the {outcomes} outcomes that could have come"
            )

    if game_name == "bastard_brag":  # an exchange-all of the deal's centre, at ten seats (the fewest outcomes)
        table = Table(game_name, 10, 10_000, meter_class)
        act = next(act for act in table.game.legal_actions() if act.kind is ActionKind.EXCHANGE_ALL)
        go_through(table, act, table.true_event(act))  # type: ignore[arg-type]
    for table in tables(game_name, meter_class):
        game, meter = table.game, table.meter
        while not game.is_over and table.hand <= play.hands and done.total() < sum(wanted.values()):
            act = table.choose(play.end_rate)
            event = None if act is None else table.true_event(act)
            if act is not None and event is not None:
                go_through(table, act, event)
            before, hand = list(meter.luck), game.hand_number
            table.play(act)
            if event is None and game.hand_number == hand:  # its one outcome known: its luck is nil
                assert meter.luck == before, f"{game_name} at {game.num_players}: {act} shows nothing, yet counts luck"
    return done


# ----- the meter's pools --------------------------------------------------------------------------------------


COVERED = {
    "stop_the_bus": (
        "draw",
        "final-turn draw",
        "draw from a recycled stock",
        "after a forfeit",
        "take",
        "pass",
        "stop",
    ),
    "bastard_brag": (
        "exchange with an unseen slot",
        "exchange-all taking 1 unseen",
        "exchange-all taking 2 unseen",
        "after a forfeit",
        "taking back a card it put face down",
        "taking a seen card",
        "exchange",  # the face-up card
        "exchange-all",  # every centre card seen
        "knock",
    ),
}


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_every_chance_event_is_over_the_cards_that_could_truly_come(game_name: str) -> None:
    played = check_pools(game_name)
    assert all(played[kind] for kind in COVERED[game_name]), played


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_a_chance_events_luck_averages_zero_over_what_the_engine_could_have_given(game_name: str) -> None:
    """The luck's mean given all that came before, exactly: each outcome of the event (each card of the stock on
    top; each card nobody has seen in the slots taken, swapped with where it lay) played in turn on a copy."""
    done = check_means(game_name)
    assert all(done[kind] for kind in ENUMERATED if kind in COVERED[game_name]), done


# ----- the wrong pools, planted: each fails both checks ---------------------------------------------------------


class DiscardsCounted(LuckMeter):
    """A card out of play counted: a draw's mean is over the discard pile too."""

    def pool(self, act: Action) -> Sequence[Card]:
        pool = super().pool(act)
        return [*self.game.discard_pile, *pool] if act.kind is ActionKind.DRAW else pool  # type: ignore[attr-defined]


class ForfeitedCounted(LuckMeter):
    """A card out of play counted: the cards a forfeiting seat took out of play are in every pool."""

    def pool(self, act: Action) -> Sequence[Card]:
        return [*self.game.out_of_play, *super().pool(act)]


class RecycledMissed(LuckMeter):
    """A recycled card missed: the hand's first face-up card (the deal's), once recycled into the stock, is left
    out of a draw's pool, unless it is the card drawn."""

    def pool(self, act: Action) -> Sequence[Card]:
        pool = super().pool(act)
        if act.kind is not ActionKind.DRAW:
            return pool
        first = self.game.hand_events[0].card
        return [card for card in pool[:-1] if card != first] + list(pool[-1:])


class TakerPutItThere(LuckMeter):
    """A face-down card its taker put there counted as unseen: an exchange with a face-down slot leaves it unseen."""

    def apply(self, act: Action) -> None:
        unseen, hand = set(self._unseen_slots), self.game.hand_number
        super().apply(act)
        if act.kind is ActionKind.EXCHANGE and self.game.hand_number == hand:
            self._unseen_slots = unseen


class SetAsideMissed(LuckMeter):
    """The set-aside cards missed: a centre card taken unseen is measured against the centre's unseen cards alone."""

    def pool(self, act: Action) -> Sequence[Card]:
        pool = super().pool(act)
        if act.kind is ActionKind.DRAW:
            return pool
        return [card for card in pool if card not in self.game.set_aside]  # type: ignore[attr-defined]


WRONG_POOLS = [
    ("stop_the_bus", DiscardsCounted),
    ("stop_the_bus", ForfeitedCounted),
    ("bastard_brag", ForfeitedCounted),
    ("stop_the_bus", RecycledMissed),
    ("bastard_brag", TakerPutItThere),
    ("bastard_brag", SetAsideMissed),
]


@pytest.mark.parametrize("check", [check_pools, check_means], ids=["pools", "means"])
@pytest.mark.parametrize(("game_name", "meter_class"), WRONG_POOLS, ids=lambda value: getattr(value, "__name__", value))
def test_a_wrong_pool_fails_the_checks(
    check: Callable[[str, type[LuckMeter]], Counter[str]], game_name: str, meter_class: type[LuckMeter]
) -> None:
    with pytest.raises(AssertionError):
        check(game_name, meter_class)


# ----- a draw's luck is the card's value less the mean over its pool -------------------------------------------


def test_a_draws_luck_is_the_cards_value_less_the_mean_over_the_whole_pool_it_is_given() -> None:
    """``draw_luck`` from a pool: two cards' lucks differ by as much from any pool holding both (the difference
    of their values), and the pool's cards' lucks sum to zero; so each is its value less the pool's mean, the card
    drawn counted in it. Positions before the final turns, where the value of a card does not depend on the pool."""
    rng = random.Random(5)
    checked = 0
    for players in (2, 3, 6):
        table = Table("stop_the_bus", players, players)
        game = table.game
        here = 0
        while here < 5 and not game.is_over:
            act = table.choose(end_rate=0.01)
            if act is not None and act.kind is ActionKind.DRAW and game.phase is Phase.NORMAL and len(game.stock) > 3:
                seat = game.current_seat
                first, second, third = rng.sample(list(game.stock), 3)

                def lucks(pool: list[Card], game: Game = game, seat: int = seat) -> dict[Card, list[float]]:
                    return {card: draw_luck(game, seat, [*(c for c in pool if c != card), card]) for card in pool}

                whole, pair, three = lucks(list(game.stock)), lucks([first, second]), lucks([first, second, third])
                for pool in (whole, pair, three):
                    assert [sum(values) for values in zip(*pool.values(), strict=True)] == pytest.approx(
                        [0.0] * players, abs=EXACT
                    )
                for other in (whole, three):
                    apart = [a - b for a, b in zip(other[first], other[second], strict=True)]
                    assert apart == pytest.approx([a - b for a, b in zip(pair[first], pair[second], strict=True)])
                here += 1
            table.play(act)
        checked += here
    assert checked == 15


# ----- a hand's deal ----------------------------------------------------------------------------------------------


def hasty_deals(game_name: str, players: int, seed: int) -> Any:
    """Each hand's fresh deal in games of random players who stop or knock as soon as they may (so that a game of a
    dozen hands takes a few dozen moves): every count of lives a game goes through."""
    rng = random.Random(seed)
    game = GAMES[game_name](players, seed=seed)
    hand = 0
    while not game.is_over:
        if game.hand_number != hand:
            hand = game.hand_number
            yield game
        legal = game.legal_actions()
        ending = [act for act in legal if act.kind in (ActionKind.STOP, ActionKind.KNOCK)]
        game.apply(ending[0] if ending else rng.choice(legal))


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_a_deals_luck_averages_zero_over_the_ways_its_hands_could_have_gone_round(game_name: str) -> None:
    """The deck is shuffled, so the hands dealt are as likely to have gone to the seats in any order: each seat's
    luck averages zero exactly over the rotations of the hands round the seats in the hand."""
    for seed in range(60):
        for game in hasty_deals(game_name, 4, seed):
            seats = [seat for seat in range(game.num_players) if game.in_hand[seat]]
            hands = [game.hands[seat] for seat in seats]
            totals = [0.0] * game.num_players
            for turn in range(len(seats)):
                for seat, hand in zip(seats, hands[turn:] + hands[:turn], strict=True):
                    game.hands[seat] = hand
                for seat, value in enumerate(deal_luck(game)):
                    totals[seat] += value / len(seats)
            assert totals == pytest.approx([0.0] * game.num_players, abs=EXACT), (game_name, seed, game.hand_number)
            assert sum(deal_luck(game)) == pytest.approx(0.0, abs=EXACT)  # the places are shared out


# The deals each game's statistical test takes, and the standard errors it tests at: see the power calculation in
# the test's docstring.
DEALS = {"stop_the_bus": 11_000, "bastard_brag": 2_500}
Z_FALSE_ALARM = 3.59  # two-sided, 3.3e-4 a seat: 1e-3 for the three seats of a game
Z_POWER = 1.645  # a bias of a hundredth of a game's score seen 95% of the time


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_a_deals_luck_averages_zero_with_the_power_to_see_a_hundredth_of_a_games_score(game_name: str) -> None:
    """The deals the engine makes, as they come, at tables of 3, each hand of each game: each seat's mean luck per
    deal is zero within 3.59 standard errors.

    The power. A game's luck is the sum of its events' lucks, so a bias of
    0.01 of a game's score that comes from its deals is one of b = 0.01 / H a
    deal, H the hands a game has: between 8 and 11 in Stop the Bus at tables of
    3 (every seat but the winner loses four times, the winner at most three),
    10.1 on average; between 6 and 8 in Bastard Brag, 7.3 on average. The
    other chance events are tested exactly above (a bias of 1e-12 in an event
    fails), so this is the part of a game's bias only a sample can see. A
    seat's luck per deal has a standard deviation of 0.035 in Stop the Bus and
    0.024 in Bastard Brag; less the part its hand's strength less the mean
    strength of the hands dealt explains (a control variate whose mean is
    exactly zero, every seat's hand having the same law), 0.018 and 0.012
    (measured on these games). To see the bias b with probability 0.95 at
    3.59 standard errors (a false alarm 1e-3 of the time for a game's three
    seats) takes N = ((3.59 + 1.645) sigma / b)^2 deals: (5.23 x 0.018 x 10.1
    / 0.01)^2 = 9,000 in Stop the Bus and (5.23 x 0.012 x 7.3 / 0.01)^2 = 2,100
    in Bastard Brag (DEALS; 4 and 1 seconds of CPU). The test checks that its
    own standard error is small enough. Whole games would not do: a seat's
    luck over a game of Stop the Bus varies by 0.21 (its draws' luck), so the
    same power would take (5.23 x 0.21 / 0.01)^2 = 12,000 games, five minutes.
    """
    lucks: list[list[float]] = []
    controls: list[list[float]] = []
    games = 0
    while len(lucks) < DEALS[game_name]:
        for game in hasty_deals(game_name, 3, games):
            lucks.append(deal_luck(game))
            dealt = [strength(hand) for hand in game.hands if hand]
            controls.append([strength(hand) - statistics.fmean(dealt) if hand else 0.0 for hand in game.hands])
        games += 1
    bias = 0.01 / (len(lucks) / games)  # a hundredth of a game's score, a deal
    for seat in range(3):
        values = [luck[seat] for luck in lucks]
        control = [row[seat] for row in controls]
        slope = statistics.covariance(values, control) / statistics.variance(control)
        adjusted = [value - slope * known for value, known in zip(values, control, strict=True)]
        error = statistics.stdev(adjusted) / math.sqrt(len(adjusted))
        assert (Z_FALSE_ALARM + Z_POWER) * error < bias, (seat, error, bias)  # the power holds
        assert abs(statistics.fmean(adjusted)) < Z_FALSE_ALARM * error, (seat, statistics.fmean(adjusted), error)


# ----- the sampler: where a card shown from a hand came from ---------------------------------------------------


def shown_after_a_face_down_exchange(seed: int) -> tuple[BastardBrag, Card] | None:
    """A hand of three where seat 0 takes the face-up card A, gives one of its three cards face down in slot 0, then
    gives a card face up that is not A (seats 1 and 2 exchange with slot 1 between): the game, and A. None if the
    card seat 0 showed was A. Every card chosen at random, as the sampler's model assumes."""
    rng = random.Random(seed)
    game = BastardBrag(3, seed=seed, first_dealer=2)
    face_up = game.centre[2]

    def exchange(seat: int, slot: int) -> Card:
        given = rng.choice(game.hands[seat])
        game.apply(action(ActionKind.EXCHANGE, given, slot))
        return given

    exchange(0, 2)
    exchange(1, 1)
    exchange(2, 1)
    exchange(0, 0)
    exchange(1, 1)
    exchange(2, 1)
    return None if exchange(0, 2) == face_up else (game, face_up)


# Seat 0 gave A face down with chance 1/3 (one of its three cards). It then showed a card nobody had seen: any of
# its three if it had given A (A gone, three cards never seen), two of its three if not (it holds A). So
# P(A in slot 0 | what seat 1 sees) = (1/3 x 1) / (1/3 x 1 + 2/3 x 2/3) = 3/7. A sampler that weighs a hand's cards
# never seen as one (the card shown as likely from a hand of one such card as of three) makes it 1/3.
GIVEN_DOWN = 3 / 7


def test_a_card_given_face_down_is_where_the_cards_never_seen_of_the_hand_make_it() -> None:
    """The real games of the script put A in slot 0 3/7 of the time; so do the states the sampler draws from seat
    1's view of them, within four standard errors (0.009 for 3,000 draws; the weights' error, 1/3, is ten away)."""
    games = [played for seed in range(3_000) if (played := shown_after_a_face_down_exchange(seed)) is not None]
    real = sum(game.centre[0] == face_up for game, face_up in games) / len(games)
    assert abs(real - GIVEN_DOWN) < 4 * math.sqrt(GIVEN_DOWN * (1 - GIVEN_DOWN) / len(games)), real
    rng = random.Random(4)
    down = draws = 0
    for game, face_up in games[:60]:
        view = game.observation(1)
        assert isinstance(view, BastardBragObservation)
        states = BastardBrag.states_from_observation(view, rng)
        for _ in range(50):
            down += next(states).centre[0] == face_up
            draws += 1
    sampled = down / draws
    assert abs(sampled - GIVEN_DOWN) < 4 * math.sqrt(GIVEN_DOWN * (1 - GIVEN_DOWN) / draws), sampled
