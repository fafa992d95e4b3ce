"""The PettingZoo AEC environment of both games: the engine drives, the environment numbers and encodes.

Every rule is the engine's: the environment holds a :class:`referee.engine.games.Game`,
turns an action index into the engine's action
(:mod:`referee.env.action_index`), applies it, and shows each agent its
observation as numbers (:mod:`referee.env.encoding`) with the legal mask.
Agent ``player_i`` is seat ``i``. A seat that leaves the game (out of lives,
or forfeited through :meth:`BragEnv.forfeit`) is terminated at once with its
reward: the placement score the referee gives its place, ``(n - place) /
(n - 1)`` (first 1, last 0; :func:`referee.records.stats.placement_score`). When the
game ends, the others are terminated with theirs. Every other reward is 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from referee.env.extra import unavailable

try:
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
    from pettingzoo.utils.env_logger import EnvLogger
    from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator
except ImportError as error:
    raise unavailable(error) from None

from referee.common.errors import EnvArgumentError, IllegalActionError
from referee.engine.games import Game, Observation, Phase, game_class
from referee.engine.games.game import DEFAULT_TURN_LIMIT
from referee.env.action_index import ActionIndex, action_index
from referee.env.encoding import ObservationEncoder
from referee.env.episodes import INFO_OBSERVATION, GameSeeds, placement_reward

ObsDict = dict[str, Any]  # "observation": the vector (float32), "action_mask": the mask (int8)
ActionType = int | np.int64 | None
_OVER = Phase.OVER


class ActionSpace(spaces.Discrete):
    """Gymnasium's ``Discrete(n)``, whose ``contains`` answers a plain ``int`` at once.

    ``Discrete.contains`` asks numpy for the bounds of its dtype and casts the value on every call (a few µs,
    and PettingZoo's ``AssertOutOfBoundsWrapper`` asks it at every step); for an ``int`` (not a ``bool``) the
    answer is always ``0 <= x < n``, and every other value gets Gymnasium's own answer.
    """

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self._size = n

    def contains(self, x: Any) -> bool:
        if x.__class__ is int:
            return 0 <= x < self._size
        return super().contains(x)


class BragEnv(AECEnv[str, ObsDict, ActionType]):
    """One game of ``game`` at a table of ``players``, as a PettingZoo AEC environment (see the module)."""

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "is_parallelizable": False}  # noqa: RUF012 - PettingZoo names it so; each env gets its own copy

    def __init__(
        self,
        game: str,
        players: int,
        *,
        seed: int | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # PettingZoo's AECEnv.__init__ is not annotated
        self._game_class: type[Game] = game_class(game)
        cls = self._game_class
        if players.__class__ is not int or not cls.min_players <= players <= cls.max_players:
            raise EnvArgumentError(
                f"players: {game} is played by {cls.min_players} to {cls.max_players} players, got {players!r}"
            )
        if turn_limit.__class__ is not int or turn_limit < 1:
            raise EnvArgumentError(
                f"turn_limit must be an int, at least 1 (normal turns in a hand), got {turn_limit!r}"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise EnvArgumentError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}"
            )
        self.metadata = {**self.metadata, "name": f"{game}_v0"}
        self.render_mode = render_mode
        self.game_name = game
        self.num_players = players
        self.turn_limit = turn_limit
        self.actions: ActionIndex = action_index(game)
        self.encoder = ObservationEncoder(game)
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, shape=(self.encoder.size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(self.actions.size,), dtype=np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = {agent: ActionSpace(self.actions.size) for agent in self.possible_agents}
        self._seeds = GameSeeds(seed)
        self.game: Game | None = None
        self.game_seed: int | None = None
        self._empty_mask = np.zeros(self.actions.size, dtype=np.int8)
        self._action_of = self.actions.actions  # index -> action, for the common case of a plain int in range
        self._encode, self._memory = self.encoder.function, self.encoder.memory  # for this game's own observations
        self._mask = self.actions.mask

    # ----- the spaces -------------------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ----- playing -----------------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game: the one a league deals with ``seed`` (see :class:`GameSeeds` without one)."""
        self.game_seed = self._seeds.next(seed)
        self.game = self._game_class(self.num_players, int(self.game_seed), turn_limit=self.turn_limit)
        self.encoder.reset()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self._skip_agent_selection = None  # type: ignore[assignment]  # PettingZoo's own marker of no agent
        self._rewarded = False  # whether rewards holds anything but zeros
        self._left = 0  # seats whose leaving the game has been turned into a termination
        self.placements: dict[str, int] = {}  # agent -> place, as each is known
        self._seen: tuple[str, ObsDict] | None = None  # the agent observed since the last move, and what it saw
        self._to_act()

    def step(self, action: ActionType) -> None:
        """Play ``action`` (an index into the game's actions) for the agent to act; ``None`` for a terminated one."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        assert game is not None  # agent_selection is set by reset
        if action.__class__ is int and 0 <= action < len(self._action_of):  # the common case, at once
            act = self._action_of[action]
        else:
            act = self.actions.action(action)
        try:
            game.apply(act)
        except IllegalActionError as error:
            legal = self.actions.indices(game.legal_actions())
            raise EnvArgumentError(
                f"{agent}: action {action} ({act}) is not legal now: {error.reason}; the legal actions are "
                + ", ".join(f"{index} ({self.actions.describe(index)})" for index in legal)
            ) from None
        self._seen = None
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        infos = self.infos
        infos[agent] = {}
        # _settle() written out, as every step takes it: the seats that left, then the agent to act.
        if len(game.eliminations) != self._left or game.phase is _OVER:
            self._terminate_leavers(game)
        seat = game.current_seat
        if seat is not None:
            agent = self.possible_agents[seat]
            self.agent_selection = agent
            infos[agent] = {INFO_OBSERVATION: game.observation(seat)}
        if self._rewarded:
            self._deads_step_first()

    def forfeit(self, agent: str, reason: str = "") -> None:
        """Remove ``agent``'s seat from the game at once, as the referee's fault policy does (RULES.md, players
        leaving): it is terminated with the reward of its place; if one seat is left, the game is over."""
        seat = self._seat_of.get(agent)
        game = self.game
        if seat is None or game is None or agent not in self.agents or self.terminations[agent]:
            raise EnvArgumentError(
                f"forfeit: {agent!r} is not an agent still in the game ({', '.join(self.live_agents)})"
            )
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        if self._skip_agent_selection is not None:  # a terminated agent was to step first: it still is
            self.agent_selection = self._skip_agent_selection
            self._skip_agent_selection = None  # type: ignore[assignment]  # as above
        self.infos[self.agent_selection] = {}
        game.forfeit(seat, reason)
        self._seen = None
        self._settle()

    @property
    def live_agents(self) -> list[str]:
        """The agents still in the game (not terminated)."""
        return [agent for agent in self.agents if not self.terminations[agent]]

    def _settle(self) -> None:
        """After the game moved: terminate the seats that left it, then point at the agent to act."""
        game = self.game
        assert game is not None
        if len(game.eliminations) != self._left or game.phase is _OVER:
            self._terminate_leavers(game)
        self._to_act()

    def _terminate_leavers(self, game: Game) -> None:
        n = self.num_players
        names = self.possible_agents
        left = game.eliminations
        placed = [(left[position], n - position) for position in range(self._left, len(left))]  # (seat, place)
        self._left = len(left)
        if game.is_over:
            already = {seat for seat, _ in placed}
            for place, seat in enumerate(game.result().placements, 1):
                if names[seat] not in self.placements and seat not in already:
                    placed.append((seat, place))
        for seat, place in placed:
            agent = names[seat]
            self.placements[agent] = place
            reward = placement_reward(place, n)
            self.terminations[agent] = True
            self.rewards[agent] = reward
            self._cumulative_rewards[agent] += reward
            self.infos[agent] = {INFO_OBSERVATION: game.observation(seat), "place": place}
            self._rewarded = True

    def _to_act(self) -> None:
        """Point ``agent_selection`` at the seat to act (a terminated agent first, as PettingZoo wants)."""
        game = self.game
        assert game is not None
        seat = game.current_seat
        if seat is not None:
            agent = self.possible_agents[seat]
            self.agent_selection = agent
            self.infos[agent] = {INFO_OBSERVATION: game.observation(seat)}
        if self._rewarded:
            self._deads_step_first()

    def observe(self, agent: str) -> ObsDict:
        """``agent``'s observation: the numbers of :mod:`referee.env.encoding` and the mask of its legal actions."""
        seen = self._seen  # asked again before a move (last(), then a wrapper's check): the same dict
        if seen is not None and seen[0] == agent:
            return seen[1]
        game = self.game
        seat = self._seat_of.get(agent)
        if game is None or seat is None:
            raise EnvArgumentError(f"observe: no agent {agent!r}; the agents are {', '.join(self.possible_agents)}")
        info = self.infos.get(agent)
        observation: Observation | None = info.get(INFO_OBSERVATION) if info else None
        if observation is None:
            observation = game.observation(seat)
        legal = observation.legal_actions
        result: ObsDict = {
            "observation": self._encode(observation, self._memory),
            "action_mask": self._mask(legal) if legal else self._empty_mask.copy(),
        }
        self._seen = (agent, result)
        return result

    def engine_observation(self, agent: str) -> Observation:
        """``agent``'s observation as the engine makes it now (what a bot in its seat would be shown)."""
        seat = self._seat_of.get(agent)
        if self.game is None or seat is None:
            raise EnvArgumentError(f"no agent {agent!r}; the agents are {', '.join(self.possible_agents)}")
        return self.game.observation(seat)

    # ----- showing ------------------------------------------------------------------------------------------

    def render(self) -> str | None:
        """The table as the agent to act sees it, as text (``ansi``: returned; ``human``: printed)."""
        if self.render_mode is None or self.game is None:
            return None
        game = self.game
        seat = game.current_seat
        who = f"{self.possible_agents[seat]} to act" if seat is not None else "game over"
        lives = " ".join(f"{agent}:{game.lives[index]}" for index, agent in enumerate(self.possible_agents))
        text = f"{self.game_name} hand {game.hand_number}, {who}; lives {lives}"
        if seat is not None:
            observation = game.observation(seat)
            text += "; hand " + " ".join(map(str, observation.hand))
            text += "; legal " + ", ".join(map(str, observation.legal_actions))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""

    def __str__(self) -> str:
        return f"{self.game_name}_v0"


ILLEGAL_ACTION_REWARD = -1.0  # below every placement's reward: an illegal action is worse than finishing last


def wrapped(raw: BragEnv) -> Any:
    """``raw`` in PettingZoo's classic wrappers: an illegal action terminates the game with
    :data:`ILLEGAL_ACTION_REWARD` to the agent that played it and 0 to the others (a penalty is policy, not
    a rule: the raw environment raises instead); an index out of range is refused; the calls must come in order.

    The wrappers are PettingZoo's own, ``TerminateIllegalWrapper`` in ``AssertOutOfBoundsWrapper`` in
    ``OrderEnforcingWrapper``, the outermost a subclass (:class:`OrderEnforcing`) that makes the three
    wrappers' checks of an ordinary step itself, reading the environment directly, where PettingZoo's chain
    hands every call and every read down one wrapper at a time (each read through a ``__getattr__``: most of
    a step's cost); anything but an ordinary step goes down the chain, to PettingZoo's own code.
    tests/test_env.py holds the wrapped environment to PettingZoo's ``api_test``, and step for step to
    PettingZoo's own chain, illegal moves, indices out of range and calls out of order included.
    """
    terminate_illegal = wrappers.TerminateIllegalWrapper(raw, illegal_reward=ILLEGAL_ACTION_REWARD)
    return OrderEnforcing(wrappers.AssertOutOfBoundsWrapper(terminate_illegal), terminate_illegal)


# What an agent's step reads of the environment's state (AECEnv.last(), and the wrappers' own checks).
STEP_STATE = (
    "agents",
    "possible_agents",
    "agent_selection",
    "rewards",
    "terminations",
    "truncations",
    "infos",
    "_cumulative_rewards",
    "num_agents",
    "max_num_agents",
)


class OrderEnforcing(wrappers.OrderEnforcingWrapper[str, ObsDict, ActionType]):
    """PettingZoo's ``OrderEnforcingWrapper`` (nothing of the game before ``reset()``, a step only while
    agents are left, a loop over ``agent_iter()`` that steps each time) over the other two, making their
    checks of an ordinary step itself, as their own code makes them:

    - ``AssertOutOfBoundsWrapper``'s: the action is in the agent's action space, or is ``None`` for an
      agent terminated or truncated;
    - ``TerminateIllegalWrapper``'s: the mask of the observation last made for the agent to act (``last()``
      makes it) allows the action, or the agent is terminated or truncated; and no illegal move has ended
      the game.

    A step that passes them goes to the environment itself; any other (before ``reset()``, after the game,
    out of range, an illegal move, a step with no observation made) goes down the chain, to PettingZoo's own
    code. ``last()`` and ``observe()`` keep what ``TerminateIllegalWrapper.observe`` keeps.

    The step's state (:data:`STEP_STATE`) is read from the environment itself: the wrappers set none of it
    on themselves (they change the environment's own). Before ``reset()`` the environment has none of it:
    the property's AttributeError sends Python to ``__getattr__``, which refuses it in PettingZoo's words.
    """

    def __init__(self, env: Any, terminate_illegal: Any) -> None:
        super().__init__(env)
        self._raw: BragEnv = env.unwrapped
        self._below = terminate_illegal  # the TerminateIllegalWrapper: its record of the last observation is kept here

    def step(self, action: ActionType) -> None:
        raw = self._raw
        below = self._below
        seen = below._prev_obs
        if (
            self._has_reset
            and raw.agents
            and not below._terminated
            and seen.__class__ is dict
            and "action_mask" in seen
        ):
            agent = raw.agent_selection
            done = raw.terminations[agent] or raw.truncations[agent]
            if action is None:
                ordinary = done
            elif action.__class__ is int or isinstance(action, np.integer):  # an index: the mask can be read at it
                ordinary = raw.action_space(agent).contains(action) and (done or bool(seen["action_mask"][action]))
            else:
                ordinary = False
            if ordinary:
                self._has_updated = True
                below._prev_obs = below._prev_info = None
                raw.step(action)
                return
        super().step(action)  # down the chain: refused, warned of, or an illegal move that ends the game

    def observe(self, agent: str) -> ObsDict:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        raw = self._raw
        observation = raw.observe(agent)
        if agent == raw.agent_selection:
            self._below._prev_obs = observation
            self._below._prev_info = raw.infos.get(agent, {})
        return observation

    def last(self, observe: bool = True) -> tuple[ObsDict | None, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            return super().last(observe)  # refused, in PettingZoo's words
        raw = self._raw
        agent = raw.agent_selection
        assert agent is not None
        infos = raw.infos
        observation = None
        if observe:  # observe(agent), written out
            observation = raw.observe(agent)
            self._below._prev_obs = observation
            self._below._prev_info = infos.get(agent, {})
        return (
            observation,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            infos[agent],
        )

    def agent_iter(self, max_iter: int = 2**63) -> _AgentIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _AgentIterable(self, max_iter)  # type: ignore[no-untyped-call]  # PettingZoo's __init__ is not annotated

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo's own OrderEnforcingWrapper names itself: the environment's name


def _read_from_raw(name: str) -> property:
    return property(lambda self: getattr(self._raw, name))


for _name in STEP_STATE:
    setattr(OrderEnforcing, _name, _read_from_raw(_name))


class _AgentIterable(AECOrderEnforcingIterable[str, ObsDict, ActionType]):
    def __iter__(self) -> _AgentIterator:
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator(AECOrderEnforcingIterator[str, ObsDict, ActionType]):
    """PettingZoo's iterator of ``agent_iter()``, reading the environment itself: the next agent while agents
    are left, and only after a step (or a reset) since the last."""

    env: OrderEnforcing

    def __next__(self) -> str:
        env = self.env
        raw = env._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return raw.agent_selection
