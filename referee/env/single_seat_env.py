"""A Gymnasium environment of one seat: the learner plays ``seat``, decide functions play the others.

    from referee.env import single_seat

    env = single_seat("stop_the_bus", players=4, seat=0, opponents="heuristic")
    observation, info = env.reset(seed=7)
    while True:
        action = policy(observation["observation"], observation["action_mask"])
        observation, reward, terminated, truncated, info = env.step(action)
        if terminated:
            break

The observation and action spaces, the action index and the rewards are the
AEC environment's (:mod:`referee.env.aec`): the episode ends when the
learner's seat leaves the game or the game ends, with the reward of its place.
An opponent is a decide function, ``Observation -> Action`` (a Python bot's
own function, :mod:`referee.play.kit`), or the name of a sample bot shipped
with the referee (``random``, ``heuristic``), played in process.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from referee.env.extra import unavailable

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as error:
    raise unavailable(error) from None

from referee.common.errors import EnvArgumentError
from referee.common.resources import SAMPLE_BOT_NAMES
from referee.engine.games import Action, Game, Observation, game_class
from referee.engine.games.game import DEFAULT_TURN_LIMIT
from referee.env.action_index import ActionIndex, action_index
from referee.env.encoding import ObservationEncoder
from referee.env.episodes import INFO_OBSERVATION, GameSeeds, placement_reward

Decide = Callable[[Observation], Action]
Opponent = str | Decide


def opponent_decide(opponent: Opponent) -> Decide:
    """The decide function of ``opponent``: itself, or the sample bot it names."""
    if isinstance(opponent, str):
        if opponent not in SAMPLE_BOT_NAMES:
            raise EnvArgumentError(
                f"opponents: no sample bot {opponent!r}; name one of {', '.join(SAMPLE_BOT_NAMES)}, "
                "or give a decide function (Observation -> Action)"
            )
        from referee.play.inprocess import sample_decide

        return sample_decide(opponent)
    if not callable(opponent):
        raise EnvArgumentError(
            f"opponents: {opponent!r} ({type(opponent).__name__}) is neither a decide function "
            f"(Observation -> Action) nor a sample bot's name ({', '.join(SAMPLE_BOT_NAMES)})"
        )
    return opponent


class SingleSeatEnv(gymnasium.Env[dict[str, Any], np.int64]):
    """One seat of ``game`` at a table of ``players``; the other seats played by ``opponents`` (see the module).

    ``opponents`` is one opponent for every other seat, or a sequence of
    ``players - 1``, for the other seats in seat order.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 - Gymnasium names it so; never changed in place

    def __init__(
        self,
        game: str,
        players: int,
        seat: int = 0,
        opponents: Opponent | Sequence[Opponent] = "random",
        *,
        seed: int | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
    ) -> None:
        self._game_class: type[Game] = game_class(game)
        cls = self._game_class
        if players.__class__ is not int or not cls.min_players <= players <= cls.max_players:
            raise EnvArgumentError(
                f"players: {game} is played by {cls.min_players} to {cls.max_players} players, got {players!r}"
            )
        if seat.__class__ is not int or not 0 <= seat < players:
            raise EnvArgumentError(f"seat must be a seat of the table, 0..{players - 1}, got {seat!r}")
        if turn_limit.__class__ is not int or turn_limit < 1:
            raise EnvArgumentError(
                f"turn_limit must be an int, at least 1 (normal turns in a hand), got {turn_limit!r}"
            )
        if isinstance(opponents, str) or callable(opponents):
            chosen: list[Opponent] = [opponents] * (players - 1)
        elif isinstance(opponents, Sequence):
            chosen = list(opponents)
            if len(chosen) != players - 1:
                raise EnvArgumentError(
                    f"opponents: a table of {players} has {players - 1} other seats; give one opponent for all "
                    f"or {players - 1} in seat order, got {len(chosen)}"
                )
        else:
            raise EnvArgumentError(
                f"opponents must be a decide function, a sample bot's name ({', '.join(SAMPLE_BOT_NAMES)}) "
                f"or a sequence of them, got {type(opponents).__name__}"
            )
        deciders = [opponent_decide(opponent) for opponent in chosen]
        self.opponents: dict[int, Decide] = dict(zip([s for s in range(players) if s != seat], deciders, strict=True))
        self.game_name = game
        self.num_players = players
        self.seat = seat
        self.turn_limit = turn_limit
        self.actions: ActionIndex = action_index(game)
        self.encoder = ObservationEncoder(game)
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, shape=(self.encoder.size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(self.actions.size,), dtype=np.int8),
            }
        )
        self.action_space = spaces.Discrete(self.actions.size)
        self._seeds = GameSeeds(seed)
        self.game: Game | None = None
        self.game_seed: int | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Deal a new game (the one a league deals with ``seed``) and play the opponents up to the learner's turn."""
        super().reset(seed=seed)
        self.game_seed = self._seeds.next(seed)
        self.game = self._game_class(self.num_players, self.game_seed, turn_limit=self.turn_limit)
        self.encoder.reset()
        self._play_opponents()
        observation, info, _ = self._outcome()
        return observation, info

    def step(self, action: int | np.int64) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Play ``action`` (an index) for the learner, then the opponents until it is the learner's turn again."""
        game = self.game
        if game is None:
            raise EnvArgumentError("step: no game yet; call reset() first")
        if game.is_over or not game.in_game[self.seat]:
            raise EnvArgumentError("step: the episode is over; call reset() for another game")
        act = self.actions.action(action)
        if not game.is_legal(act):
            legal = self.actions.indices(game.legal_actions())
            raise EnvArgumentError(
                f"seat {self.seat}: action {action} ({act}) is not legal now: {game.why_illegal(act)}; the legal "
                "actions are " + ", ".join(f"{index} ({self.actions.describe(index)})" for index in legal)
            )
        game.apply(act)
        self._play_opponents()
        observation, info, place = self._outcome()
        if place is None:
            return observation, 0.0, False, False, info
        return observation, placement_reward(place, self.num_players), True, False, info

    def _play_opponents(self) -> None:
        game = self.game
        assert game is not None
        seat = self.seat
        while not game.is_over and game.in_game[seat] and game.current_seat != seat:
            current = game.current_seat
            assert current is not None  # the game is on
            decide = self.opponents[current]
            act = decide(game.observation(current))  # an opponent's own error is its author's to see, as raised
            if not isinstance(act, Action) or not game.is_legal(act):
                reason = game.why_illegal(act) if isinstance(act, Action) else "not an Action"
                raise EnvArgumentError(
                    f"opponent in seat {current} ({getattr(decide, '__name__', decide)}) chose {act!r}, "
                    f"which is not legal now: {reason}"
                )
            game.apply(act)

    def _outcome(self) -> tuple[dict[str, Any], dict[str, Any], int | None]:
        """The learner's observation and info, and its place once its episode is over (else ``None``)."""
        game = self.game
        assert game is not None
        observation = game.observation(self.seat)
        legal = observation.legal_actions
        numbers = {
            "observation": self.encoder.encode(observation),
            "action_mask": self.actions.mask(legal) if legal else np.zeros(self.actions.size, dtype=np.int8),
        }
        info: dict[str, Any] = {INFO_OBSERVATION: observation}
        place: int | None = None
        if game.is_over:
            place = game.result().place_of(self.seat)
        elif not game.in_game[self.seat]:
            place = self.num_players - game.eliminations.index(self.seat)
        if place is not None:
            info["place"] = place
        return numbers, info, place


def single_seat(
    game: str,
    players: int,
    seat: int = 0,
    opponents: Opponent | Sequence[Opponent] = "random",
    *,
    seed: int | None = None,
    turn_limit: int = DEFAULT_TURN_LIMIT,
) -> SingleSeatEnv:
    """A Gymnasium environment of ``seat`` of ``game`` at a table of ``players`` (see :class:`SingleSeatEnv`)."""
    return SingleSeatEnv(game, players, seat, opponents, seed=seed, turn_limit=turn_limit)
