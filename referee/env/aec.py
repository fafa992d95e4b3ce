"""The PettingZoo AEC environment of both games: the engine drives, the environment numbers and encodes.

Every rule is the engine's: the environment holds a :class:`referee.engine.games.Game`,
turns an action index into the engine's action
(:mod:`referee.env.actions`), applies it, and shows each agent its
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
except ImportError as error:
    raise unavailable(error) from None

from referee.common.errors import EnvArgumentError, IllegalActionError
from referee.engine.games import Game, Observation, game_class
from referee.engine.games.game import DEFAULT_TURN_LIMIT
from referee.env.actions import ActionIndex, action_index
from referee.env.encoding import ObservationEncoder
from referee.env.episodes import INFO_OBSERVATION, GameSeeds, placement_reward

ObsDict = dict[str, Any]  # "observation": the vector (float32), "action_mask": the mask (int8)
ActionType = int | np.int64 | None


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
        self.action_spaces = {agent: spaces.Discrete(self.actions.size) for agent in self.possible_agents}
        self._seeds = GameSeeds(seed)
        self.game: Game | None = None
        self.game_seed: int | None = None
        self._empty_mask = np.zeros(self.actions.size, dtype=np.int8)

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
        self._step = 0
        self._seen: tuple[int, str, ObsDict] | None = None
        self._to_act()

    def step(self, action: ActionType) -> None:
        """Play ``action`` (an index into the game's actions) for the agent to act; ``None`` for a terminated one."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        assert game is not None  # agent_selection is set by reset
        act = self.actions.action(action)
        try:
            game.apply(act)
        except IllegalActionError as error:
            legal = self.actions.indices(game.legal_actions())
            raise EnvArgumentError(
                f"{agent}: action {action} ({act}) is not legal now: {error.reason}; the legal actions are "
                + ", ".join(f"{index} ({self.actions.describe(index)})" for index in legal)
            ) from None
        self._step += 1
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        self.infos[agent] = {}
        self._settle()

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
        self._step += 1
        self._settle()

    @property
    def live_agents(self) -> list[str]:
        """The agents still in the game (not terminated)."""
        return [agent for agent in self.agents if not self.terminations[agent]]

    def _settle(self) -> None:
        """After the game moved: terminate the seats that left it, then point at the agent to act."""
        game = self.game
        assert game is not None
        left = game.eliminations
        if len(left) != self._left or game.is_over:
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
            observation = game.observation(seat)
            self.infos[agent] = {INFO_OBSERVATION: observation}
        if self._rewarded:
            self._deads_step_first()

    def observe(self, agent: str) -> ObsDict:
        """``agent``'s observation: the numbers of :mod:`referee.env.encoding` and the mask of its legal actions."""
        seen = self._seen
        step = self._step
        if seen is not None and seen[0] == step and seen[1] == agent:
            return seen[2]
        game = self.game
        seat = self._seat_of.get(agent)
        if game is None or seat is None:
            raise EnvArgumentError(f"observe: no agent {agent!r}; the agents are {', '.join(self.possible_agents)}")
        info_observation = self.infos.get(agent, {}).get(INFO_OBSERVATION)
        observation: Observation = info_observation if info_observation is not None else game.observation(seat)
        legal = observation.legal_actions
        result: ObsDict = {
            "observation": self.encoder.encode(observation),
            "action_mask": self.actions.mask(legal) if legal else self._empty_mask.copy(),
        }
        self._seen = (step, agent, result)
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

    The wrappers are PettingZoo's own, each checking what it checks, with one difference of cost, none of
    behaviour: the attributes every step reads (:data:`STEP_STATE`), which a wrapper hands down to the
    environment one ``__getattr__`` at a time (some 60% of a step, through three wrappers), each wrapper reads
    from the environment itself, and the outermost still refuses them before ``reset()`` as PettingZoo's does
    (tests/test_env.py holds the wrapped environment to PettingZoo's ``api_test`` and step for step to
    PettingZoo's own wrappers, illegal moves, indices out of range and calls before reset included).
    """
    from pettingzoo.utils import wrappers

    environment: Any = _reading_through(wrappers.TerminateIllegalWrapper, raw)(
        raw, illegal_reward=ILLEGAL_ACTION_REWARD
    )
    environment = _reading_through(wrappers.AssertOutOfBoundsWrapper, raw)(environment)
    return _reading_through(wrappers.OrderEnforcingWrapper, raw)(environment)


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


def _reading_through(wrapper: type[Any], raw: BragEnv) -> type[Any]:
    """A subclass of PettingZoo's ``wrapper`` whose :data:`STEP_STATE` reads ``raw``'s attribute directly (the
    wrappers set none of them on themselves: they change the environment's own).

    Before ``reset()`` the environment has none of them: the property's AttributeError sends Python to the
    wrapper's own ``__getattr__``, so OrderEnforcingWrapper still refuses them in its own words."""

    def reads(name: str) -> property:
        return property(lambda self: getattr(raw, name))

    return type(wrapper.__name__, (wrapper,), {name: reads(name) for name in STEP_STATE})
