"""The learning environments (referee.env): PettingZoo's own checks at every table size, the engine's rules and
observations through them, real league logs replayed through them, the Gymnasium seat, and the export."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="PettingZoo is not installed: pip install 'brag-referee[env]'")

from pettingzoo.test import api_test, seed_test

from referee.apps.league import run_league
from referee.cli import main as referee_main
from referee.common.errors import EnvArgumentError, ExportError
from referee.engine.games import (
    GAMES,
    Action,
    BastardBrag,
    BastardBragObservation,
    EventKind,
    Game,
    Observation,
    StopTheBus,
    StopTheBusObservation,
)
from referee.env import bastard_brag_v0, single_seat, stop_the_bus_v0
from referee.env.action_index import BASTARD_BRAG_ACTIONS, STOP_THE_BUS_ACTIONS, action_index
from referee.env.encoding import (
    BASTARD_BRAG_FIELDS,
    BASTARD_BRAG_SIZE,
    SEAT_WIDTH,
    STOP_THE_BUS_FIELDS,
    STOP_THE_BUS_SIZE,
    ObservationEncoder,
)
from referee.env.trajectories import export_trajectories, read_trajectories
from referee.leaguefile.config import load_league
from referee.records.gamelog import log_files, new_game, read_log
from referee.records.stats import placement_score

from .conftest import BAD_BOTS, PYTHON, SAMPLE_BOTS

MODULES = {StopTheBus.name: stop_the_bus_v0, BastardBrag.name: bastard_brag_v0}
SIZES = [(name, players) for name, cls in GAMES.items() for players in range(cls.min_players, cls.max_players + 1)]


def play_randomly(env: Any, rng: random.Random, check: Any = None) -> None:
    """Play ``env`` (after reset) to its end with random legal actions; call ``check(env, agent)`` before each."""
    while env.agents:
        agent = env.agent_selection
        observation, _, terminated, truncated, _ = env.last()
        if check is not None:
            check(env, agent)
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))


# ----- PettingZoo's checks -------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("game, players", SIZES)
def test_pettingzoo_api_and_seed_tests_pass_at_every_table_size(game: str, players: int) -> None:
    module = MODULES[game]
    api_test(module.env(players=players), num_cycles=300)
    api_test(module.raw_env(players=players), num_cycles=300)
    seed_test(lambda: module.env(players=players), num_cycles=300)


# ----- the engine's game, through the environment --------------------------------------------------------


@pytest.mark.parametrize("game, players", [("stop_the_bus", 2), ("stop_the_bus", 5), ("bastard_brag", 4)])
def test_a_seed_deals_the_referees_game_and_each_step_shows_the_engines_observation(game: str, players: int) -> None:
    env = MODULES[game].raw_env(players=players)
    env.reset(seed=1234)
    twin: Game = GAMES[game](players, seed=1234)  # the game a league deals with seed 1234
    assert env.game.hands == twin.hands and env.game.dealer == twin.dealer
    encoder = ObservationEncoder(game)
    actions = action_index(game)
    rng = random.Random(5)

    def check(env: Any, agent: str) -> None:
        if env.terminations[agent]:
            return
        seat = int(agent.removeprefix("player_"))
        assert seat == twin.current_seat
        engine = twin.observation(seat)
        assert env.infos[agent]["observation"] == engine
        numbers = env.observe(agent)
        assert np.array_equal(numbers["observation"], encoder.encode(engine))
        assert np.flatnonzero(numbers["action_mask"]).tolist() == actions.indices(twin.legal_actions())
        assert env.observation_space(agent).contains(numbers)

    while env.agents:
        agent = env.agent_selection
        observation, _, terminated, _, _ = env.last()
        check(env, agent)
        if terminated:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        choice = int(legal[rng.randrange(len(legal))])
        env.step(choice)
        twin.apply(actions.action(choice))
    assert twin.is_over


@pytest.mark.parametrize(
    "game, players", [("stop_the_bus", 3), ("stop_the_bus", 9), ("bastard_brag", 3), ("bastard_brag", 10)]
)
def test_each_seat_is_rewarded_its_placement_score_when_it_leaves_the_game(game: str, players: int) -> None:
    env = MODULES[game].raw_env(players=players)
    for seed in range(3):
        env.reset(seed=seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        ended: list[str] = []

        def check(env: Any, agent: str, totals: dict[str, float] = totals, ended: list[str] = ended) -> None:
            if env.terminations[agent] and agent not in ended:
                ended.append(agent)
                totals[agent] = env._cumulative_rewards[agent]
                assert env.infos[agent]["place"] == env.placements[agent]

        play_randomly(env, random.Random(seed), check)
        placements = env.game.result().placements
        for place, seat in enumerate(placements, 1):
            agent = f"player_{seat}"
            assert env.placements[agent] == place
            assert totals[agent] == pytest.approx(float(placement_score(place, players)))
        # Seats are terminated as they leave, the last place first; the game's last hand ends two seats at once.
        places = [env.placements[agent] for agent in ended]
        assert places[:-2] == list(range(players, 2, -1)) and sorted(places[-2:]) == [1, 2]


def test_without_a_seed_the_games_follow_from_the_environments_seed() -> None:
    first, second = stop_the_bus_v0.raw_env(players=3, seed=77), stop_the_bus_v0.raw_env(players=3, seed=77)
    seeds = []
    for _ in range(3):
        first.reset()
        second.reset()
        assert first.game_seed == second.game_seed
        seeds.append(first.game_seed)
    assert seeds[0] == 77 and len(set(seeds)) == 3
    first.reset(seed=77)
    assert first.game_seed == 77 and first.game.hands == StopTheBus(3, seed=77).hands


def test_an_illegal_action_raises_in_the_raw_environment_and_ends_the_wrapped_one() -> None:
    raw = stop_the_bus_v0.raw_env(players=3)
    raw.reset(seed=3)
    discard = STOP_THE_BUS_ACTIONS.index(Action.parse("discard AS"))
    with pytest.raises(
        EnvArgumentError,
        match=r"player_\d: action \d+ \(discard AS\) is not legal now: .*legal actions are 0 \(draw\), 1 \(take\), 2 \(stop\)",
    ):
        raw.step(discard)
    with pytest.raises(EnvArgumentError, match=r"action index 56 is out of range: stop_the_bus has actions 0\.\.55"):
        raw.step(56)
    with pytest.raises(EnvArgumentError, match=r"an action is an int index 0\.\.55 .* got 'draw' \(str\)"):
        raw.step("draw")  # type: ignore[arg-type]

    wrapped = stop_the_bus_v0.env(players=3)
    wrapped.reset(seed=3)
    offender = wrapped.agent_selection
    wrapped.step(discard)
    assert all(wrapped.terminations.values())
    assert wrapped._cumulative_rewards[offender] == -1.0


@pytest.mark.parametrize("module", [stop_the_bus_v0, bastard_brag_v0])
def test_the_wrapped_environment_behaves_as_pettingzoos_own_wrappers_step_for_step(module: Any) -> None:
    # env() reads the step's state straight from the environment rather than through each wrapper's __getattr__:
    # the same games, illegal actions and out-of-range indices included, must give the same steps as PettingZoo's
    # wrappers as they come, and the same refusals before reset.
    from pettingzoo.utils import wrappers

    from referee.env.aec import ILLEGAL_ACTION_REWARD

    def stock(players: int) -> Any:
        chain: Any = wrappers.TerminateIllegalWrapper(module.raw_env(players), illegal_reward=ILLEGAL_ACTION_REWARD)
        return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(chain))

    for name in ("agents", "agent_selection", "rewards", "terminations", "infos", "num_agents"):
        with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
            getattr(module.env(players=3), name)
    assert module.env(players=3).possible_agents == stock(3).possible_agents  # allowed before reset, as in PettingZoo
    for seed in range(8):
        players = 3 + seed % 2
        ours, theirs = module.env(players=players), stock(players)
        steps = []
        for env in (ours, theirs):
            env.reset(seed=seed)
            chooser = random.Random(seed)
            played = []
            while env.agents:
                observation, reward, terminated, truncated, info = env.last()
                played.append((env.agent_selection, reward, terminated, truncated, sorted(info),
                               observation["observation"].tobytes(), observation["action_mask"].tobytes()))  # fmt: skip
                if terminated or truncated:
                    env.step(None)
                elif chooser.random() < 0.02:  # now and then an illegal action: the game ends, -1 to the agent
                    env.step(int(np.flatnonzero(observation["action_mask"] == 0)[0]))
                else:
                    env.step(int(chooser.choice(np.flatnonzero(observation["action_mask"]))))
            steps.append((played, dict(env.rewards), dict(env._cumulative_rewards)))
        assert steps[0] == steps[1], seed
    for env in (module.env(players=3), stock(3)):
        env.reset(seed=1)
        with pytest.raises(AssertionError, match="action is not in action space"):
            env.step(10_000)


def outcome(call: Any) -> tuple[str, str]:
    """What a call did: its exception's type and message, or what it returned, with PettingZoo's warnings."""
    from pettingzoo.utils.env_logger import EnvLogger

    EnvLogger.flush()
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - every kind of refusal is compared
        return f"{type(error).__name__}: {error}", repr(EnvLogger.mqueue)
    if isinstance(result, tuple) and result and isinstance(result[0], dict):  # last(): the arrays by their bytes
        result = ({key: value.tobytes() for key, value in result[0].items()}, *result[1:4], sorted(result[4]))
    return f"returned {result!r}", repr(EnvLogger.mqueue)


@pytest.mark.parametrize("module", [stop_the_bus_v0, bastard_brag_v0])
def test_the_wrapped_environments_checks_refuse_and_end_as_pettingzoos_own_wrappers(module: Any) -> None:
    # Every call a user may get wrong, in turn, on env() and on PettingZoo's own chain: the same refusal (type and
    # message), the same warning, the same state after. The checks are kept; only their cost is not.
    from pettingzoo.utils import wrappers

    from referee.env.aec import ILLEGAL_ACTION_REWARD

    def stock() -> Any:
        chain: Any = wrappers.TerminateIllegalWrapper(module.raw_env(3), illegal_reward=ILLEGAL_ACTION_REWARD)
        return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(chain))

    size = module.raw_env(3).actions.size

    def after_last(env: Any, action: Any) -> None:
        env.last()  # the observation TerminateIllegalWrapper reads the mask of
        env.step(action)

    def illegal(env: Any) -> int:
        return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])

    def legal(env: Any) -> Any:
        return np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]  # a numpy int, as users pass

    script: list[tuple[str, Any]] = [
        ("step before reset", lambda env: env.step(0)),
        ("observe before reset", lambda env: env.observe("player_0")),
        ("last before reset", lambda env: env.last()),
        ("agent_iter before reset", lambda env: env.agent_iter()),
        ("reset", lambda env: env.reset(seed=4)),
        ("a step with no observation made", lambda env: env.step(int(legal(env)))),
        *(
            (f"step({bad!r})", lambda env, bad=bad: after_last(env, bad))
            for bad in (size, 10_000, -1, None, True, np.bool_(False), 2.5, "0", np.int64(size), np.array(0))
        ),
        ("a numpy int", lambda env: after_last(env, legal(env))),
        ("agent_iter twice with no step between", lambda env: [next(iter(env.agent_iter())) for _ in range(2)]),
        ("an illegal move", lambda env: after_last(env, illegal(env))),
        ("last() after it", lambda env: env.last()),
        ("a live action for an agent that is out", lambda env: env.step(0)),
        *(("step(None) for each agent that is out", lambda env: after_last(env, None)) for _ in range(3)),
        ("step after the game", lambda env: env.step(None)),
        ("agents after the game", lambda env: (env.agents, env.rewards, env._cumulative_rewards)),
    ]
    ours, theirs = module.env(players=3), stock()
    for what, call in script:
        mine, pettingzoos = outcome(lambda call=call: call(ours)), outcome(lambda call=call: call(theirs))
        assert mine == pettingzoos, what
        if ours._has_reset:
            state = [(env.agents, env.agent_selection, env.rewards, env.terminations, env.truncations,
                      env._cumulative_rewards, env._has_updated) for env in (ours, theirs)]  # fmt: skip
            assert state[0] == state[1], what


def test_the_action_space_answers_as_gymnasiums_discrete() -> None:
    from gymnasium import spaces

    ours, theirs = stop_the_bus_v0.raw_env(players=3).action_space("player_0"), spaces.Discrete(56)
    assert ours == theirs and isinstance(ours, spaces.Discrete)
    for value in (0, 55, 56, -1, 2**70, True, False, np.int64(3), np.int32(60), np.uint8(7), np.bool_(True), 3.0,
                  "3", None, np.array(3), np.array([3])):  # fmt: skip
        assert ours.contains(value) == theirs.contains(value), repr(value)


def test_a_forfeit_terminates_the_seat_with_its_place() -> None:
    env = bastard_brag_v0.raw_env(players=3)
    env.reset(seed=8)
    env.forfeit("player_1", "left the table")
    assert env.terminations["player_1"] and env.placements["player_1"] == 3
    assert env.agent_selection == "player_1"  # a terminated agent steps first
    env.step(None)
    assert "player_1" not in env.agents
    with pytest.raises(EnvArgumentError, match=r"forfeit: 'player_1' is not an agent still in the game"):
        env.forfeit("player_1")
    env.forfeit("player_2")  # one seat left: the game is over
    assert env.placements == {"player_1": 3, "player_2": 2, "player_0": 1}
    play_randomly(env, random.Random(0))
    assert not env.agents


def test_the_wrong_table_size_or_turn_limit_is_refused_naming_what_is_allowed() -> None:
    with pytest.raises(EnvArgumentError, match=r"players: bastard_brag is played by 3 to 10 players, got 2"):
        bastard_brag_v0.raw_env(players=2)
    with pytest.raises(EnvArgumentError, match=r"turn_limit must be an int, at least 1"):
        stop_the_bus_v0.raw_env(players=3, turn_limit=0)
    with pytest.raises(EnvArgumentError, match=r"reset\(seed\) must be an int"):
        stop_the_bus_v0.raw_env(players=3).reset(seed="7")  # type: ignore[arg-type]


def test_a_turn_limit_ends_hands_as_the_engine_says() -> None:
    env = stop_the_bus_v0.raw_env(players=2, turn_limit=1)
    env.reset(seed=4)
    play_randomly(env, random.Random(4))
    results = env.game.hand_results
    assert results and all(result.ended_by.value in ("turn-limit", "stop") for result in results)


# ----- the action index and the encoding -------------------------------------------------------------------


def test_the_action_index_numbers_every_action_once_as_documented() -> None:
    assert STOP_THE_BUS_ACTIONS.size == 56 and BASTARD_BRAG_ACTIONS.size == 209
    assert [str(STOP_THE_BUS_ACTIONS.action(i)) for i in (0, 1, 2, 3, 4, 55)] == [
        "draw", "take", "stop", "pass", "discard 2C", "discard AS",
    ]  # fmt: skip
    assert [str(BASTARD_BRAG_ACTIONS.action(i)) for i in (0, 2, 3, 155, 156, 207, 208)] == [
        "exchange 2C 0", "exchange 2C 2", "exchange 2D 0", "exchange AS 2", "exchange-all 2C", "exchange-all AS", "knock",
    ]  # fmt: skip
    for index in (STOP_THE_BUS_ACTIONS, BASTARD_BRAG_ACTIONS):
        assert [index.index(index.action(i)) for i in range(index.size)] == list(range(index.size))
        assert index.index(Action.parse(str(index.action(7)))) == 7  # an equal action made anew
    with pytest.raises(EnvArgumentError, match=r"knock is not an action of stop_the_bus"):
        STOP_THE_BUS_ACTIONS.index(Action.parse("knock"))
    # The package's name action_index is the module (a submodule's name, as Python sets it), which holds the function.
    import referee.env

    assert referee.env.action_index.action_index("bastard_brag") is BASTARD_BRAG_ACTIONS


def played_this_hand(observation: Observation) -> list[bool]:
    """Which seats took a turn in this hand of Bastard Brag (an exchange, or a knock), from its events."""
    played = [False] * observation.num_players
    for event in observation.hand_events:
        if event.kind in (EventKind.EXCHANGE, EventKind.EXCHANGE_ALL, EventKind.KNOCK):
            played[event.seat] = True
    return played


@pytest.mark.parametrize(
    "game, players", [("stop_the_bus", 4), ("stop_the_bus", 9), ("bastard_brag", 3), ("bastard_brag", 10)]
)
def test_the_encoding_follows_the_events_step_by_step_as_if_read_from_the_start(game: str, players: int) -> None:
    cls = GAMES[game]
    encoder = ObservationEncoder(game)
    fields = {field.name: field for field in encoder.fields}
    rng = random.Random(players)
    for seed in range(2):
        state = cls(players, seed=seed)
        while not state.is_over:
            seat = rng.randrange(players)
            observation = state.observation(seat)
            vector = encoder.encode(observation)
            afresh = ObservationEncoder(game).encode(observation)
            assert np.array_equal(vector, afresh)
            assert vector.dtype == np.float32 and vector.min() >= 0.0 and vector.max() <= 1.0
            hand = fields["hand"]
            assert sorted(np.flatnonzero(vector[hand.offset : hand.offset + 52])) == sorted(
                c.index for c in observation.hand
            )
            assert vector[fields["seat[0].lives"].offset] == pytest.approx(observation.lives[seat] / 3)
            left = (seat + 1) % players
            assert vector[fields["seat[1].in_game"].offset] == float(observation.in_game[left])
            fifth = observation.floating if game == "stop_the_bus" else played_this_hand(observation)
            for relative in range(players):  # every seat's row, from the observer's on (each seat's left)
                shown = (seat + relative) % players
                row = fields[f"seat[{relative}].present"].offset
                expected = [
                    1,
                    observation.in_game[shown],
                    observation.in_hand[shown],
                    observation.lives[shown] / 3,
                    fifth[shown],
                    shown == observation.dealer,
                    shown == observation.current_seat,
                    shown == observation.ender,
                ]
                assert list(vector[row : row + SEAT_WIDTH]) == pytest.approx(list(map(float, expected))), shown
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])


def reference_vector(observation: Observation) -> np.ndarray:
    """The observation vector written plainly from docs/environments.md's tables, the hand's events read from the
    start: what the encoder, which follows the events step by step and joins ready-made blocks, must equal."""
    stop_the_bus = observation.game == StopTheBus.name
    at = {field.name: field.offset for field in (STOP_THE_BUS_FIELDS if stop_the_bus else BASTARD_BRAG_FIELDS)}
    vector = np.zeros(STOP_THE_BUS_SIZE if stop_the_bus else BASTARD_BRAG_SIZE, dtype=np.float32)
    n, seat = observation.num_players, observation.seat
    pile: list[Any] = []
    taken: list[set[Any]] = [set() for _ in range(n)]
    played = [False] * n
    for event in observation.hand_events:
        kind = event.kind
        if kind is EventKind.DEAL and stop_the_bus:
            pile = [event.card]
        elif kind is EventKind.DISCARD:
            taken[event.seat].discard(event.card)
            pile.append(event.card)
        elif kind is EventKind.TAKE:
            pile.pop()
            taken[event.seat].add(event.card)
        elif kind is EventKind.RECYCLE:
            pile = pile[-1:]
        elif kind in (EventKind.EXCHANGE, EventKind.EXCHANGE_ALL, EventKind.KNOCK):
            played[event.seat] = True
            if kind is EventKind.EXCHANGE and event.slot == 2:
                taken[event.seat].discard(event.card)
                taken[event.seat].add(event.taken)
            elif kind is EventKind.EXCHANGE_ALL:
                taken[event.seat] = {event.taken}
        elif kind is EventKind.FORFEIT:
            taken[event.seat] = set()

    def cards(name: str, held: Any) -> None:
        for card in held:
            if card is not None:
                vector[at[name] + card.index] = 1.0

    fifth = observation.floating if stop_the_bus else played
    for relative in range(n):
        shown = (seat + relative) % n
        vector[at[f"seat[{relative}].present"] : at[f"seat[{relative}].present"] + SEAT_WIDTH] = [
            1.0, observation.in_game[shown], observation.in_hand[shown], observation.lives[shown] / 3, fifth[shown],
            shown == observation.dealer, shown == observation.current_seat, shown == observation.ender,
        ]  # fmt: skip
        if relative:
            cards(f"taken[{relative}]", taken[shown])
    vector[at["final_turns"]] = observation.phase.value == "final"
    vector[at["turns"]] = min(1.0, observation.turns_this_hand / observation.turn_limit)
    cards("hand", observation.hand)
    if stop_the_bus:
        assert isinstance(observation, StopTheBusObservation)
        cards("drawn", [observation.drawn_card])
        vector[at["took_discard"]] = observation.drawn_card is not None and observation.took_discard
        cards("discard_top", [observation.discard_top])
        vector[at["stock_count"]] = observation.stock_count / 52
        vector[at["discard_count"]] = observation.discard_count / 52
        cards("discard_pile", pile)
    else:
        assert isinstance(observation, BastardBragObservation)
        for slot, card in enumerate(observation.centre):
            cards(f"centre[{slot}]", [card])
    return vector


@pytest.mark.parametrize("game, players", SIZES)
def test_the_encoding_is_the_documented_layout_at_every_table_size(game: str, players: int) -> None:
    # Seeded random games, now and then a forfeit: every seat's observation at every step, the encoder following
    # the events as the environments use it, against the layout written plainly.
    cls = GAMES[game]
    encoder = ObservationEncoder(game)
    rng = random.Random(f"layout:{game}:{players}")
    for seed in range(3):
        state = cls(players, seed=seed)
        while not state.is_over:
            for seat in (state.current_seat, rng.randrange(players)):
                observation = state.observation(seat)
                assert np.array_equal(encoder.encode(observation), reference_vector(observation)), (seed, seat)
            if rng.random() < 0.01 and sum(state.in_game) > 2:
                state.forfeit(rng.choice([s for s in range(players) if state.in_game[s]]), "left")
                continue
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        final = state.observation(0)
        assert np.array_equal(encoder.encode(final), reference_vector(final))


# What env() showed, step for step, before its checks and encoding were made faster (commit 87310c0's code): a
# digest of every last() (agent, reward, flags, info keys, place, vector and mask) of one seeded random game.
SHOWN_BEFORE = {
    ("stop_the_bus", 2): "a4e5023b87355e07",
    ("stop_the_bus", 5): "65ae7164dda8eee7",
    ("stop_the_bus", 9): "8afa8fc18ff06a10",
    ("bastard_brag", 3): "d678ab6b35923988",
    ("bastard_brag", 6): "8fe9724911a6efa4",
    ("bastard_brag", 10): "85c79577ff8561e7",
}


@pytest.mark.parametrize("game, players", list(SHOWN_BEFORE))
def test_the_environments_show_what_they_showed_before_step_for_step(game: str, players: int) -> None:
    for make in (MODULES[game].env, MODULES[game].raw_env):
        env = make(players=players)
        env.reset(seed=11 + players)
        chooser = random.Random(11 + players)
        digest = hashlib.sha256()
        kept = []
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, info = env.last()
            digest.update(f"{agent} {reward} {terminated} {truncated} {sorted(info)} {info.get('place')}".encode())
            digest.update(observation["observation"].tobytes())
            digest.update(observation["action_mask"].tobytes())
            kept.append((observation, observation["observation"].tobytes(), observation["action_mask"].tobytes()))
            if terminated or truncated:
                env.step(None)
            else:
                legal = np.flatnonzero(observation["action_mask"])
                env.step(int(legal[chooser.randrange(len(legal))]))
        assert digest.hexdigest()[:16] == SHOWN_BEFORE[game, players]
        # Each observation is arrays of its own, writable, that no later step changed.
        for observation, vector, mask in kept:
            assert observation["observation"].tobytes() == vector and observation["action_mask"].tobytes() == mask
            assert observation["observation"].flags.writeable and observation["action_mask"].flags.writeable
        first = kept[0][0]["observation"]
        first[0] = 0.5
        assert not any(observation["observation"][0] == 0.5 for observation, _, _ in kept[1:])


def test_a_mask_takes_actions_made_anew_and_names_what_is_no_action() -> None:
    mask = STOP_THE_BUS_ACTIONS.mask([Action.parse("draw"), Action.parse("discard AS")])  # equal, not the engine's
    assert np.flatnonzero(mask).tolist() == [0, 55] and mask.dtype == np.int8 and mask.flags.writeable
    with pytest.raises(EnvArgumentError, match=r"knock is not an action of stop_the_bus"):
        STOP_THE_BUS_ACTIONS.mask([Action.parse("draw"), Action.parse("knock")])


def test_the_documented_fields_fill_the_vector_exactly() -> None:
    for fields, size in ((STOP_THE_BUS_FIELDS, STOP_THE_BUS_SIZE), (BASTARD_BRAG_FIELDS, BASTARD_BRAG_SIZE)):
        assert fields[0].offset == 0
        assert all(a.offset + a.width == b.offset for a, b in itertools.pairwise(fields))
        assert fields[-1].offset + fields[-1].width == size
    assert (STOP_THE_BUS_SIZE, BASTARD_BRAG_SIZE) == (701, 758)
    guide = (Path(__file__).resolve().parent.parent / "docs" / "environments.md").read_text(encoding="utf-8")
    for size in (STOP_THE_BUS_SIZE, BASTARD_BRAG_SIZE):
        assert f"{size} values" in guide


# ----- the Gymnasium seat ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "game, players, opponents",
    [("stop_the_bus", 4, "heuristic"), ("bastard_brag", 5, ["random", "heuristic", "random", "heuristic"])],
)
def test_a_single_seat_plays_whole_games_against_the_sample_bots(game: str, players: int, opponents: Any) -> None:
    env = single_seat(game, players, seat=1, opponents=opponents)
    rng = random.Random(0)
    for seed in range(3):
        observation, info = env.reset(seed=seed)
        replayed = []
        while True:
            assert env.observation_space.contains(observation)
            assert info["observation"].seat == 1
            legal = np.flatnonzero(observation["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
            replayed.append(action)
            observation, reward, terminated, truncated, info = env.step(action)
            if terminated:
                break
        assert reward == pytest.approx(float(placement_score(info["place"], players)))
        # The same seed and the same actions give the same game: the sample bots decide from what they see.
        env.reset(seed=seed)
        for action in replayed:
            again, again_reward, *_ = env.step(action)
        assert np.array_equal(again["observation"], observation["observation"]) and again_reward == reward


def test_a_single_seat_takes_a_decide_function_and_refuses_what_is_not_an_opponent() -> None:
    def first_legal(observation: Any) -> Action:
        return observation.legal_actions[0]

    env = single_seat("stop_the_bus", 2, seat=0, opponents=first_legal)
    observation, _ = env.reset(seed=2)
    assert observation["action_mask"].sum() >= 2
    with pytest.raises(EnvArgumentError, match=r"no sample bot 'clever'; name one of random, heuristic"):
        single_seat("stop_the_bus", 3, opponents="clever")
    with pytest.raises(EnvArgumentError, match=r"a table of 4 has 3 other seats; .* got 2"):
        single_seat("bastard_brag", 4, opponents=["random", "random"])
    with pytest.raises(EnvArgumentError, match=r"seat must be a seat of the table, 0\.\.2, got 3"):
        single_seat("bastard_brag", 3, seat=3)

    def cheat(observation: Any) -> Action:
        return Action.parse("knock")

    cheated = single_seat("stop_the_bus", 2, seat=0, opponents=cheat)
    observation, _ = cheated.reset(seed=1)
    if cheated.game.current_seat == 0:  # the learner's turn: draw, then discard its card
        observation, *_ = cheated.step(0)
        drawn = np.flatnonzero(observation["action_mask"])[0]
    with pytest.raises(EnvArgumentError, match=r"opponent in seat 1 \(cheat\) chose .*knock.* not legal now"):
        cheated.step(int(drawn))


# ----- a real league's logs, replayed through the environment, and exported ---------------------------------


def write_league(folder: Path, game: str) -> Path:
    """A league of real bot processes: a random bot, the heuristic bot and one that plays illegal actions."""
    folder.mkdir()
    bots = [
        ("ada", [PYTHON, str(SAMPLE_BOTS / "random_bot.py")]),
        ("bob", [PYTHON, str(SAMPLE_BOTS / "heuristic_bot.py")]),
        ("cy", [PYTHON, str(BAD_BOTS / "bad_reply.py"), "--mode", "illegal", "--at", "3,5", "--every-game"]),
    ]
    lines = [
        "name: env-league",
        f"game: {game}",
        "seed: 5",
        "table_size: 3",
        "rounds: 1",
        "move_time_ms: 1000",
        "time_bank_ms: 2000",
        "startup_timeout_ms: 30000",
        "concurrency: 2",
        # The illegal bot's first fault gets a default action, its second a forfeit: both reach the logs.
        "fault_policy: {mode: default_action, max_faults: 2}",
        "output: results",
        "bots:",
    ]
    for name, command in bots:
        lines += [f"  - name: {name}", f"    command: {json.dumps(command)}"]
    path = folder / "league.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    asyncio.run(run_league(load_league(path), output=folder / "results"))
    return folder / "results"


@pytest.fixture(scope="module", params=["stop_the_bus", "bastard_brag"])
def league(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_league(tmp_path_factory.mktemp("env") / "league", request.param)


def test_a_leagues_games_replayed_through_the_environment_give_the_same_observations_and_placements(
    league: Path,
) -> None:
    logs = log_files(league / "games")
    assert logs
    kinds = set()
    for log in logs:
        records = read_log(log)
        start, end = records[0], records[-1]
        players = start["num_players"]
        env = MODULES[start["game"]].raw_env(players=players, turn_limit=start["turn_limit"])
        env.reset(seed=start["seed"])
        engine = new_game(start)  # the referee's own replay of the log, beside the environment
        actions = env.actions
        rewards: dict[str, float] = {}

        def step_out(env: Any = env, rewards: dict[str, float] = rewards) -> None:
            while env.agents and env.terminations[env.agent_selection]:
                rewards[env.agent_selection] = env.last()[1]
                env.step(None)  # a seat that left the game steps out first

        for record in records[1:]:
            kinds.add(record["type"] + (" default" if record.get("default") else ""))
            step_out()
            if record["type"] == "decision":
                agent = f"player_{record['seat']}"
                assert env.agent_selection == agent
                shown = env.infos[agent]["observation"]
                assert shown == engine.observation(record["seat"])
                assert " ".join(map(str, shown.hand)) == record["holding"]
                assert [str(act) for act in shown.legal_actions] == record["legal"]
                mask = env.observe(agent)["action_mask"]
                played = actions.index(Action.parse(record["action"]))
                assert mask[played] == 1
                env.step(played)
                engine.apply(Action.parse(record["action"]))
            elif record["type"] == "forfeit":
                env.forfeit(f"player_{record['seat']}", record["reason"])
                engine.forfeit(record["seat"], record["reason"])
        assert env.game.is_over
        step_out()
        placements = end["placements"]
        assert [
            int(agent.removeprefix("player_")) for agent, _ in sorted(env.placements.items(), key=lambda item: item[1])
        ] == placements
        for place, seat in enumerate(placements, 1):
            assert rewards[f"player_{seat}"] == pytest.approx((players - place) / (players - 1))
    assert {"decision", "decision default", "forfeit"} <= kinds


def test_a_leagues_decisions_export_as_trajectories_in_the_environments_spaces(league: Path, tmp_path: Path) -> None:
    out = tmp_path / "decisions.jsonl"
    assert referee_main(["export", str(league), "--trajectories", str(out)]) == 0
    decisions = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    logged = [record for log in log_files(league / "games") for record in read_log(log) if record["type"] == "decision"]
    assert len(decisions) == len(logged)
    assert [(d["step"], d["seat"], d["action_text"]) for d in decisions] == [
        (r["n"], r["seat"], r["action"]) for r in logged
    ]

    npz = tmp_path / "decisions.npz"
    assert referee_main(["export", str(league), "--trajectories", str(npz)]) == 0
    game = decisions[0]["game"]
    env = MODULES[game].raw_env(players=3)
    space = env.observation_space("player_0")
    for path in (out, npz):
        data = read_trajectories(path)
        assert len(data["action"]) == len(decisions)
        for observation, mask, act, reward in zip(
            data["observation"], data["action_mask"], data["action"], data["reward"], strict=True
        ):
            assert space.contains({"observation": observation, "action_mask": mask})
            assert env.action_space("player_0").contains(act) and mask[act] == 1
            assert 0.0 <= reward <= 1.0
    first, second = read_trajectories(out), read_trajectories(npz)
    assert np.allclose(first["observation"], second["observation"], atol=1e-6)
    assert np.array_equal(first["action_mask"], second["action_mask"])
    assert np.array_equal(first["reward"], second["reward"]) and np.array_equal(first["default"], second["default"])
    assert first["default"].any()


def test_export_says_what_is_wrong_with_its_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert referee_main(["export", str(tmp_path / "nowhere"), "--trajectories", str(tmp_path / "out.jsonl")]) == 1
    assert "nowhere: does not exist; give a league's output folder" in capsys.readouterr().err
    assert referee_main(["export", str(tmp_path), "--trajectories", str(tmp_path / "out.jsonl")]) == 1
    assert "no game logs in" in capsys.readouterr().err
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "broken.jsonl").write_text('{"type": "game_start"}\n{"type": "game_end"}\n')
    with pytest.raises(ExportError, match=r"broken\.jsonl: cannot replay the game"):
        export_trajectories(tmp_path, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


# ----- the optional extra -------------------------------------------------------------------------------------


def test_the_referee_loads_no_learning_library_and_the_environments_say_how_to_get_them() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, referee, referee.cli, referee.apps.league, referee.env, referee.env.trajectories;"
         " print(sorted(m for m in ('pettingzoo', 'gymnasium') if m in sys.modules))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert loaded.stdout.strip() == "[]"
    missing = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['pettingzoo'] = None; from referee.env import stop_the_bus_v0"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert missing.returncode == 1
    assert "EnvUnavailableError" in missing.stderr
    assert "need PettingZoo and Gymnasium, and pettingzoo cannot be imported" in missing.stderr
    assert "pip install 'brag-referee[env]'" in missing.stderr
