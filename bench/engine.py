"""Benchmark the rules engine against a naive reference: random games in-process, for each game and table size.

Target: at every table size of both games, the engine makes at least 1.5
times the decisions per second of the naive reference engine
(``bench/naive_reference.py``: the rules written plainly at a first go,
which ``tests/test_naive_reference.py`` checks move for move against the
engine). A decision is what the referee does for each move a bot makes:
``legal_actions()``, ``observation(current seat)`` (the referee builds one
for every decision) and ``apply(action)``. Whole games are timed, building
each game (which deals its first hand) included, in CPU time of this process
(``time.process_time``) so that other load on the machine does not count:
one clock reading at each end of a game, since reading the process's CPU
clock is a system call of 0.6 to 1 us on the 2-CPU virtual machines of
docs/performance.md (the ``timer:`` line prints its cost), against the
engine's 8 us a decision at two seats of Stop the Bus: timing each decision
would add that to both engines alike and so pull the ratio towards 1. The
random choices are drawn before the clock starts; picking the action from
them (an index into the legal actions) is timed in both.

Both engines play the very same games: each game is played by one and then
by the other (which goes first alternates) from the same seed and the same
random choices, so they deal the same cards and make the same decisions;
interleaved game by game, a moment of load elsewhere falls on both.

Then the learning environments (``referee.env``, when PettingZoo is
installed): random steps per second of each game's PettingZoo environment at
each table size, ``env()`` (PettingZoo's checks included: the target, 50,000
a second at every size, is its) beside ``raw_env()``, the two playing the
same games interleaved (see :func:`bench_environments`).

Run from the repository root (no install needed):

    python bench/engine.py            # about 6 seconds per game and size on each part, about 5 minutes
    python bench/engine.py --quick    # about 1 second per game and size, about a minute
    python bench/engine.py --games 200  # exactly 200 games per game and size, on each engine and environment

It prints the Python version, the machine and the cost of an empty timed
interval, then one line per game and size:
``<game> <players> players: decisions/s: N naive: M (xR) hands/s: H clone: C us``,
and ``from_observation: F us`` where the game has it: the engine's and the
reference's decisions per second and their ratio, the engine's hands per
second, and the mean CPU time of ``game.clone()`` and of sampling a whole
state from the current seat's observation, the two calls a search bot makes
most, over positions taken every few decisions of random games. Games and
choices are seeded (``random.Random``), so every run plays the same games.
The engines' last line gives the lowest ratio and whether the target is met;
then one line per game and size, ``environment <game> <players> players:
steps/s: env() N, raw_env() M``, and the fewest of env()'s with the verdict.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from time import perf_counter, process_time
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machine import cpu_name
from naive_reference import NAIVE_GAMES

from referee.engine.games import GAMES, Action, Game

TARGET_RATIO = 1.5  # the engine's decisions per second over the naive reference's, at every game and size
SECONDS_PER_SIZE = 6.0
QUICK_SECONDS_PER_SIZE = 1.0


class Playable(Protocol):
    """What the benchmark drives: the engine's games and the naive reference's alike."""

    @property
    def is_over(self) -> bool: ...

    @property
    def current_seat(self) -> int | None: ...

    @property
    def hand_results(self) -> Sequence[Any]: ...

    def legal_actions(self) -> Sequence[Action]: ...

    def observation(self, seat: int) -> object: ...

    def apply(self, action: Action) -> None: ...


# Choices drawn for each game before it is timed: more than the longest random game makes (about 1,500
# decisions, Stop the Bus at nine seats).
CHOICES_PER_GAME = 20_000


def play_timed_game(new_game: Callable[[], Playable], choices: Sequence[float]) -> tuple[int, int, float]:
    """Play one game, the action of each decision picked by the next of ``choices`` (each in [0, 1)); return its
    decisions, hands and the CPU seconds spent in it."""
    start = process_time()
    game = new_game()
    decisions = 0
    while not game.is_over:
        legal = game.legal_actions()
        game.observation(game.current_seat)  # type: ignore[arg-type]  # an int while the game is on
        game.apply(legal[int(choices[decisions] * len(legal))])
        decisions += 1
    return decisions, len(game.hand_results), process_time() - start


class Figures:
    """Decisions, hands and engine seconds summed over the games of one engine at one game and size."""

    def __init__(self) -> None:
        self.decisions = self.hands = 0
        self.seconds = 0.0

    def add(self, played: tuple[int, int, float]) -> None:
        self.decisions += played[0]
        self.hands += played[1]
        self.seconds += played[2]


def bench_size(name: str, players: int, seconds: float, games: int | None) -> tuple[Figures, Figures]:
    """Play ``games`` games (or as many as fit in ``seconds`` of wall time) on the engine and on the naive
    reference, interleaved; return the engine's figures and the reference's."""
    game_class, naive_class = GAMES[name], NAIVE_GAMES[name]
    rng = random.Random(f"bench:{name}:{players}")
    engine, naive = Figures(), Figures()
    deadline = perf_counter() + seconds
    played = 0
    while True:
        seed = played
        runs: list[tuple[Figures, Callable[[], Playable]]] = [
            (engine, functools.partial(game_class, players, seed=seed)),
            (naive, functools.partial(naive_class, players, seed=seed)),
        ]
        choices = [rng.random() for _ in range(CHOICES_PER_GAME)]  # the same choices: the same game on both
        for figures, new_game in runs if played % 2 == 0 else runs[::-1]:
            figures.add(play_timed_game(new_game, choices))
        if engine.decisions != naive.decisions:
            raise AssertionError(f"{name} {players} players, seed {seed}: the engines played different games")
        played += 1
        if (played >= games) if games is not None else (perf_counter() >= deadline):
            break
    return engine, naive


def empty_interval_us(intervals: int = 100_000) -> float:
    """The mean CPU time of an empty timed interval: what timing each decision would add to it."""
    total = 0.0
    for _ in range(intervals):
        start = process_time()
        total += process_time() - start
    return total / intervals * 1e6


SEARCH_POSITIONS = 300  # positions per game and size at which clone and from_observation are timed
SEARCH_REPEATS = 20  # calls timed at each position


def search_costs(game_class: type[Game], players: int) -> tuple[float, float | None]:
    """Mean microseconds of ``clone()`` and of ``from_observation`` (None where the game has none)."""
    rng = random.Random(f"search:{game_class.name}:{players}")
    sample = getattr(game_class, "from_observation", None)
    positions: list[Game] = []
    seed = 0
    while len(positions) < SEARCH_POSITIONS:
        game = game_class(players, seed=seed)
        seed += 1
        while not game.is_over and len(positions) < SEARCH_POSITIONS:
            legal = game.legal_actions()
            game.apply(legal[rng.randrange(len(legal))])
            if not game.is_over and rng.random() < 0.2:
                positions.append(game.clone())
    start = process_time()
    for game in positions:
        for _ in range(SEARCH_REPEATS):
            game.clone()
    clone_us = (process_time() - start) / (len(positions) * SEARCH_REPEATS) * 1e6
    if sample is None:
        return clone_us, None
    observations = [game.observation(game.current_seat) for game in positions if game.current_seat is not None]
    start = process_time()
    for observation in observations:
        for _ in range(SEARCH_REPEATS):
            sample(observation, rng)
    return clone_us, (process_time() - start) / (len(observations) * SEARCH_REPEATS) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"about {QUICK_SECONDS_PER_SIZE:g} s per game and size instead of {SECONDS_PER_SIZE:g}",
    )
    parser.add_argument("--games", type=int, metavar="N", help="play exactly N games per game and size on each engine")
    args = parser.parse_args(argv)
    if args.games is not None and args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    seconds = QUICK_SECONDS_PER_SIZE if args.quick else SECONDS_PER_SIZE

    print(f"python {platform.python_version()} ({platform.python_implementation()}) {sys.executable}")
    print(f"machine: {platform.platform()}, {cpu_name()}, {os.cpu_count()} logical cpus (benchmark uses one)")
    print(f"timer: {empty_interval_us():.2f} us an empty timed interval (whole games are timed, one interval each)")
    print(f"target: the engine at least x{TARGET_RATIO:g} the naive reference's decisions/s at every game and size")
    ratios: dict[str, float] = {}
    for name, game_class in GAMES.items():
        for players in range(game_class.min_players, game_class.max_players + 1):
            engine, naive = bench_size(name, players, seconds, args.games)
            ratio = naive.seconds / engine.seconds  # the same decisions on both
            ratios[f"{name} {players} players"] = ratio
            clone_us, sample_us = search_costs(game_class, players)
            sampled = "" if sample_us is None else f" from_observation: {sample_us:.0f} us"
            print(
                f"{name} {players} players: "
                f"decisions/s: {round(engine.decisions / engine.seconds)} "
                f"naive: {round(naive.decisions / naive.seconds)} (x{ratio:.2f}) "
                f"hands/s: {round(engine.hands / engine.seconds)} "
                f"clone: {clone_us:.1f} us{sampled}",
                flush=True,
            )
    lowest = min(ratios, key=ratios.__getitem__)
    verdict = "met" if ratios[lowest] >= TARGET_RATIO else "NOT met"
    print(f"lowest ratio: x{ratios[lowest]:.2f} ({lowest}): target x{TARGET_RATIO:g} {verdict}")
    bench_environments(seconds, args.games)
    return 0


# ----- the learning environments (referee.env) --------------------------------------------------------------

TARGET_ENV_STEPS_PER_SECOND = 50_000


def bench_environments(seconds: float, games: int | None) -> None:
    """Print the random steps per second of each game's PettingZoo environment at each table size.

    A step is what a user's loop does for each decision, as PettingZoo's
    documentation writes it: ``for agent in env.agent_iter()``, ``env.last()``
    (the numeric observation and the legal mask of the agent to act, made at
    every step), an action drawn uniformly from the mask's legal indices
    (``mask.nonzero()[0]``, then ``random.Random.randrange``), and
    ``env.step(action)``; the steps of agents that left the game
    (``step(None)``) and each ``reset`` are timed but not counted. Both ways of
    making one are timed, in CPU time of this process: ``env()``, as users call
    it (in PettingZoo's wrappers, which check each call: the target is this
    one's), and ``raw_env()``, the environment alone. They play the very same
    games (the same seeds, the same random choices), interleaved game by game
    (which goes first alternates), so that a moment of load elsewhere falls on
    both.
    """
    try:
        from referee.env import bastard_brag_v0, stop_the_bus_v0
    except ImportError as error:
        print(f"environment: skipped ({error})")
        return
    print(f"target: {TARGET_ENV_STEPS_PER_SECOND} environment steps/s for every game and size (env())", flush=True)
    lowest: tuple[float, str] | None = None
    for module in (stop_the_bus_v0, bastard_brag_v0):
        game_class = GAMES[module.GAME]
        for players in range(game_class.min_players, game_class.max_players + 1):
            made = (module.env(players), module.raw_env(players))  # env(), raw_env()
            figures = [[0, 0.0], [0, 0.0]]  # decisions and CPU seconds of each
            deadline = perf_counter() + seconds
            played = 0
            while (played < games) if games is not None else (played == 0 or perf_counter() < deadline):
                rng_seed = f"bench-env:{module.GAME}:{players}:{played}"  # the same random choices in both
                for which in (0, 1) if played % 2 == 0 else (1, 0):
                    steps, cpu = environment_game(made[which], played, random.Random(rng_seed))
                    figures[which][0] += steps
                    figures[which][1] += cpu
                if figures[0][0] != figures[1][0]:
                    raise AssertionError(f"{module.GAME} {players} players, seed {played}: env() and raw_env() differ")
                played += 1
            rates = [round(steps / cpu) for steps, cpu in figures]
            print(
                f"environment {module.GAME} {players} players: steps/s: env() {rates[0]}, raw_env() {rates[1]}",
                flush=True,
            )
            if lowest is None or rates[0] < lowest[0]:
                lowest = (rates[0], f"{module.GAME} {players} players")
    if lowest is not None:
        verdict = "met" if lowest[0] >= TARGET_ENV_STEPS_PER_SECOND else "NOT met"
        print(f"fewest environment steps/s: {lowest[0]} ({lowest[1]}): target {TARGET_ENV_STEPS_PER_SECOND} {verdict}")


def environment_game(env: Any, seed: int, rng: random.Random) -> tuple[int, float]:
    """Play one random game of ``env`` dealt with ``seed``; return its decisions and the CPU seconds it took."""
    steps = 0
    start = process_time()
    env.reset(seed=seed)
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = observation["action_mask"].nonzero()[0]
        env.step(int(legal[rng.randrange(len(legal))]))
        steps += 1
    return steps, process_time() - start


if __name__ == "__main__":
    sys.exit(main())
