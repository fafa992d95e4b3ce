"""Every decision of a league's games as training data: ``referee export DIR --trajectories OUT``.

Each game's log (``DIR/games/GAME_ID.jsonl.zst``, or a plain ``.jsonl``) is replayed through the engine;
at each decision the deciding seat's observation is encoded as the
environments encode it (:mod:`referee.env.encoding`), with the legal mask
and the index of the action played (:mod:`referee.env.action_index`), and, once
the game is over, the seat's final reward (the placement score the
environments give, first 1, last 0). Void games (which rate nobody) are left
out. Only numpy is needed, a dependency of the referee.

Two formats, by ``OUT``'s name:

- JSON lines (any name but ``*.npz``): one object a decision, in game then
  decision order: ``game_id``, ``game``, ``num_players``, ``seat``, ``bot``
  (the seat's player), ``step`` (the decision's number in the game, from 1),
  ``hand`` (the hand's number), ``observation`` (the vector, sparse:
  ``{"size": N, "index": [...], "value": [...]}``, every position not listed
  is 0), ``legal`` (the indices of the legal actions: the mask's ones),
  ``action`` (the index played), ``action_text``, ``default`` (true where the
  fault policy played for the seat) and ``reward``;
- ``.npz`` (numpy's archive): the arrays ``observation`` (decisions x size,
  float32), ``action_mask`` (decisions x actions, int8), ``action``, ``seat``,
  ``step``, ``hand`` (int64), ``reward`` (float32), ``default`` (bool),
  ``game`` (each decision's game, an index into ``game_ids``) and
  ``game_ids``, ``bots`` (each decision's player), and ``game_name``.

:func:`read_trajectories` reads either back as those arrays.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from referee.common.errors import ExportError, RefereeError
from referee.engine.games import Action
from referee.env.action_index import action_index
from referee.env.encoding import ObservationEncoder, Vector
from referee.env.episodes import placement_reward
from referee.records.gamelog import log_files, new_game, read_game_log


@dataclass
class Decision:
    """One seat's decision in a game, as exported."""

    game_id: str
    game: str
    num_players: int
    seat: int
    bot: str
    step: int
    hand: int
    observation: Vector
    legal: list[int]
    action: int
    action_text: str
    default: bool
    reward: float = 0.0

    def to_json(self) -> dict[str, Any]:
        nonzero = np.flatnonzero(self.observation)
        return {
            "game_id": self.game_id,
            "game": self.game,
            "num_players": self.num_players,
            "seat": self.seat,
            "bot": self.bot,
            "step": self.step,
            "hand": self.hand,
            "observation": {
                "size": int(self.observation.size),
                "index": nonzero.tolist(),
                "value": [round(float(value), 6) for value in self.observation[nonzero]],
            },
            "legal": self.legal,
            "action": self.action,
            "action_text": self.action_text,
            "default": self.default,
            "reward": self.reward,
        }


def game_decisions(log: Path) -> list[Decision]:
    """Every decision of the game logged in ``log``, replayed through the engine, with the final rewards."""
    records = read_game_log(log)
    if not records or records[0].get("type") != "game_start":
        raise ExportError(f"{log}: not a game log (it does not start with game_start)")
    start = records[0]
    end = records[-1]
    if end.get("type") != "game_end":
        raise ExportError(f"{log}: the log ends before the game does (no game_end record)")
    if end.get("void"):
        return []
    try:
        game = new_game(start)
        players = [str(name) for name in start.get("players", [])]
        encoder = ObservationEncoder(game.name)
        index = action_index(game.name)
        decisions: list[Decision] = []
        for record in records[1:]:
            kind = record["type"]
            if kind == "decision":
                seat = record["seat"]
                observation = game.observation(seat)
                played = Action.parse(record["action"])
                decisions.append(
                    Decision(
                        game_id=str(start["game_id"]),
                        game=game.name,
                        num_players=game.num_players,
                        seat=seat,
                        bot=players[seat] if seat < len(players) else f"seat {seat}",
                        step=record["n"],
                        hand=game.hand_number,
                        observation=encoder.encode(observation),
                        legal=index.indices(observation.legal_actions),
                        action=index.index(played),
                        action_text=str(played),
                        default=bool(record.get("default", False)),
                    )
                )
                game.apply(played)
            elif kind == "forfeit":
                game.forfeit(record["seat"], record.get("reason", ""))
        result = game.result()
    except (KeyError, TypeError, ValueError, RefereeError) as error:
        raise ExportError(f"{log}: cannot replay the game: {error}") from None
    for decision in decisions:
        decision.reward = placement_reward(result.place_of(decision.seat), game.num_players)
    return decisions


def league_logs(directory: Path) -> list[Path]:
    """The game logs of the league whose output folder is ``directory``, in the order of their games' ids."""
    if not directory.is_dir():
        what = "is a file" if directory.exists() else "does not exist"
        raise ExportError(f"{directory}: {what}; give a league's output folder (the one holding games/)")
    games = directory / "games"
    logs = log_files(games)
    if not logs:
        raise ExportError(f"{directory}: no game logs in {games}; give a league's output folder after its run")
    return logs


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote."""

    decisions: int
    games: int
    path: Path


def export_trajectories(directory: Path, out: Path) -> ExportSummary:
    """Write every decision of the league in ``directory`` to ``out`` (``.npz``: numpy arrays; else JSON lines)."""
    logs = league_logs(directory)
    temporary = out.with_name(f".{out.name}.part")
    decisions = 0
    games = 0
    try:
        if out.suffix == ".npz":
            collected = [decision for log in logs for decision in game_decisions(log)]
            games = len({decision.game_id for decision in collected})
            _write_npz(collected, temporary)
            decisions = len(collected)
        else:
            with open(temporary, "w", encoding="utf-8") as lines:
                for log in logs:
                    game = game_decisions(log)
                    games += bool(game)
                    lines.writelines(json.dumps(decision.to_json(), separators=(",", ":")) + "\n" for decision in game)
                    decisions += len(game)
        os.replace(temporary, out)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return ExportSummary(decisions, games, out)


def _write_npz(decisions: list[Decision], path: Path) -> None:
    if not decisions:
        raise ExportError("no decisions to export: every game is void")
    game_name = decisions[0].game
    index = action_index(game_name)
    game_ids = sorted({decision.game_id for decision in decisions})
    number = {game_id: position for position, game_id in enumerate(game_ids)}
    masks = np.zeros((len(decisions), index.size), dtype=np.int8)
    for row, decision in enumerate(decisions):
        masks[row, decision.legal] = 1
    with open(path, "wb") as file:
        np.savez_compressed(
            file,
            observation=np.stack([decision.observation for decision in decisions]),
            action_mask=masks,
            action=np.array([decision.action for decision in decisions], dtype=np.int64),
            seat=np.array([decision.seat for decision in decisions], dtype=np.int64),
            step=np.array([decision.step for decision in decisions], dtype=np.int64),
            hand=np.array([decision.hand for decision in decisions], dtype=np.int64),
            reward=np.array([decision.reward for decision in decisions], dtype=np.float32),
            default=np.array([decision.default for decision in decisions], dtype=bool),
            game=np.array([number[decision.game_id] for decision in decisions], dtype=np.int64),
            game_ids=np.array(game_ids),
            bots=np.array([decision.bot for decision in decisions]),
            game_name=np.array(game_name),
        )


def read_trajectories(path: Path) -> dict[str, np.ndarray]:
    """Read an export back as the arrays of the ``.npz`` form (from either format)."""
    if path.suffix == ".npz":
        with np.load(path) as archive:
            return {name: archive[name] for name in archive.files}
    rows = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                rows.append(json.loads(line))
            except ValueError as error:
                raise ExportError(f"{path}:{number}: not a line of JSON: {error}") from None
    if not rows:
        raise ExportError(f"{path}: no decisions")
    game_name = rows[0]["game"]
    size = rows[0]["observation"]["size"]
    observations = np.zeros((len(rows), size), dtype=np.float32)
    masks = np.zeros((len(rows), action_index(game_name).size), dtype=np.int8)
    for row, record in enumerate(rows):
        observations[row, record["observation"]["index"]] = record["observation"]["value"]
        masks[row, record["legal"]] = 1
    game_ids = sorted({record["game_id"] for record in rows})
    game_number = {game_id: position for position, game_id in enumerate(game_ids)}
    return {
        "observation": observations,
        "action_mask": masks,
        "action": np.array([record["action"] for record in rows], dtype=np.int64),
        "seat": np.array([record["seat"] for record in rows], dtype=np.int64),
        "step": np.array([record["step"] for record in rows], dtype=np.int64),
        "hand": np.array([record["hand"] for record in rows], dtype=np.int64),
        "reward": np.array([record["reward"] for record in rows], dtype=np.float32),
        "default": np.array([record["default"] for record in rows], dtype=bool),
        "game": np.array([game_number[record["game_id"]] for record in rows], dtype=np.int64),
        "game_ids": np.array(game_ids),
        "bots": np.array([record["bot"] for record in rows]),
        "game_name": np.array(game_name),
    }
