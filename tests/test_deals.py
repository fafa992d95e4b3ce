"""Duplicate deals leak nothing: no bot process plays two games on one seed, and a remembering bot guesses at chance.

The games of a table share a seed, so a process that played one of them, and
remembered it, would know the cards of the others. tests/bad_bots/rememberer.py
remembers every card it is shown (in memory, and with ``--memory-dir`` in a
shared folder too) and guesses opponents' dealt hands and its next stock card
from that memory; its guesses are scored here against the game logs.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from referee.apps.checkbot import CheckSettings, check_bot
from referee.apps.league import GAME_LOG_DIR, RESULTS_FILE, run_league
from referee.leaguefile.config import load_league
from referee.leaguefile.lanes import lane_copy
from referee.leaguefile.schedule import GauntletSchedule, RoundRobinSchedule, SampledSchedule, SprtSchedule
from referee.play.match import Match
from referee.play.processes import BotSpec
from referee.play.session import BotSession
from referee.protocol.clock import Timing
from referee.protocol.setup import GameSetup
from referee.records.gamelog import log_files
from referee.records.results import read_records

from .conftest import PYTHON, Bots, read_log
from .test_ray_backend import ray_here  # noqa: F401 - a fixture, asked for by name

REMEMBERER = "rememberer.py"
TIMING = Timing(move_time_ms=2000, time_bank_ms=5000, startup_timeout_ms=10000)
# Chance: an opponent's card guessed among the 48 cards a seat has not seen is right 1 time in 16, a stock card
# about 1 in 40. A bot that remembers the deal guesses nearly all of them (the last test).
AT_CHANCE = 0.2


@dataclass
class Guesses:
    """A run's guesses scored against its game logs, and the games each process played."""

    hand_cards: int = 0
    hand_hits: int = 0
    stock_cards: int = 0
    stock_hits: int = 0
    remembered: int = 0  # guesses made from a remembered deal
    remembered_hits: int = 0
    games_of: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # process -> game ids

    @property
    def hand_rate(self) -> float:
        return self.hand_hits / self.hand_cards

    @property
    def stock_rate(self) -> float:
        return self.stock_hits / self.stock_cards


def score(bot_logs: list[Path], game_logs: list[Path], bot: str | None = None) -> Guesses:
    """Score every ``REMEMBER`` guess in ``bot_logs`` (those of processes of ``bot``, if given)."""
    dealt: dict[tuple[str, int, int], set[str]] = {}  # (game, hand, seat) -> cards dealt
    drawn: dict[tuple[str, int], str] = {}  # (game, decision) -> card drawn from the stock
    for path in game_logs:
        log = read_log(path)
        game = log[0]["game_id"]
        for record in log:
            if record["type"] == "deal":
                for seat, cards in record["hands"].items():
                    dealt[(game, record["hand"], int(seat))] = set(cards.split())
            elif record["type"] == "decision" and "drew" in record:
                drawn[(game, record["n"])] = record["drew"]
    guesses = Guesses()
    for path in bot_logs:
        if bot is not None and not path.name.startswith(f"{bot}-"):
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.startswith("REMEMBER "):
                continue
            entry = json.loads(line.removeprefix("REMEMBER "))
            if "process" in entry:
                guesses.games_of[entry["process"]].append(entry["game"])
                continue
            if entry["guess"] == "hand":
                hits = len(set(entry["cards"]) & dealt[(entry["game"], entry["hand"], entry["seat"])])
                guesses.hand_cards += 3
                guesses.hand_hits += hits
                cards = 3
            else:
                hits = int(drawn.get((entry["game"], entry["n"])) == entry["card"])
                guesses.stock_cards += 1
                guesses.stock_hits += hits
                cards = 1
            if entry["memory"]:
                guesses.remembered += cards
                guesses.remembered_hits += hits
    return guesses


def check_no_seed_twice(guesses: Guesses, seeds: dict[str, int]) -> None:
    for process, game_ids in guesses.games_of.items():
        played = [seeds[game_id] for game_id in game_ids]
        assert len(played) == len(set(played)), f"process {process} played two games on one seed: {game_ids}"


# ----- lanes in every format -------------------------------------------------------------------


@pytest.mark.parametrize(
    "games",
    [
        RoundRobinSchedule("abcde", 3, 2, 1),
        SampledSchedule(list("abcdefghij"), 6, 3, 9, rotations=3),
        SampledSchedule(list("abcdefgh"), 4, 2, 9, rotations=4),
        GauntletSchedule("abcdef", ["a", "b"], 3, 2, 5),
        GauntletSchedule("abcdefgh", ["a", "b", "c"], 4, 1, 5, drawn_tables=4),
        SprtSchedule("abcde", ["a", "b"], 4, 5, 3),
    ],
    ids=lambda games: games.format,
)
def test_a_bots_games_on_one_seed_are_in_different_lanes_in_every_format(games) -> None:
    lanes: dict[tuple[str, int], list[int]] = defaultdict(list)  # (bot, seed) -> the lanes of its games there
    for game in games:
        for bot in game.seats:
            assert 0 <= game.lane(bot) < games.lanes(bot)
            lanes[(bot, game.seed)].append(game.lane(bot))
    for (bot, _), used in lanes.items():
        assert len(used) == len(set(used)), f"{bot} plays two games on one seed in one lane"
    # Every lane a bot has is used, so a bot keeps no process it does not need.
    for bot in {bot for bot, _ in lanes}:
        assert {lane for (name, _), used in lanes.items() if name == bot for lane in used} == set(
            range(games.lanes(bot))
        )


# ----- a league ------------------------------------------------------------------------------------


def write_gauntlet(folder: Path, bots: Bots) -> Path:
    """Two candidates and two field bots at tables of 2, all rememberers; field-a keeps its memory in a
    shared folder. Each field table's seed is played by both candidates' tables: 4 games for a field bot."""
    memory = folder / "field-a-memory"
    memory.mkdir()
    lines = [
        "name: deals",
        "game: stop_the_bus",
        "seed: 8061",
        "table_size: 2",
        "format: {type: gauntlet, candidates: [cand-a, cand-b]}",
        "move_time_ms: 2000",
        "time_bank_ms: 5000",
        "startup_timeout_ms: 10000",
        "output: results",
        "bots:",
    ]
    for name in ("cand-a", "cand-b", "field-a", "field-b"):
        extra = ("--memory-dir", str(memory)) if name == "field-a" else ()
        lines += [
            f"  - name: {name}",
            f"    command: {json.dumps(bots.command(REMEMBERER, *extra))}",
            f"    env: {{REFEREE_TEST_MARKER: {bots.marker}}}",
        ]
        if name == "field-a":
            lines.append(f"    shared: [{json.dumps(str(memory))}]")
    path = folder / "league.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_remembering_bot_guesses_at_chance_in_a_league_at_any_concurrency_and_on_resume(
    tmp_path: Path, bots: Bots
) -> None:
    league = load_league(write_gauntlet(tmp_path, bots))
    output = tmp_path / "results"
    games = league.schedule()
    assert len(games) == 8  # 2 field tables x 2 candidates x 2 rotations

    def three_done() -> bool:
        return sum(1 for _ in read_records(output / RESULTS_FILE)) >= 3

    first = asyncio.run(run_league(league, output=output, concurrency=2, stop=three_done))
    assert 3 <= first.played < 8
    first_logs = tmp_path / "first-logs"
    shutil.move(output / "logs", first_logs)  # the resumed run's processes would write logs of the same names
    resumed = asyncio.run(run_league(league, output=output, concurrency=1))
    assert resumed.played + first.played == 8 and not resumed.disabled

    bot_logs = sorted(first_logs.glob("*.log")) + sorted((output / "logs").glob("*.log"))
    guesses = score(bot_logs, log_files(output / GAME_LOG_DIR))
    lanes = {(game.game_id, name): game.lane(name) for game in games for name in game.seats}
    assert sum(map(len, guesses.games_of.values())) == 16  # every seat of every game, once
    check_no_seed_twice(guesses, {game.game_id: game.seed for game in games})
    assert guesses.hand_cards >= 60 and guesses.stock_cards >= 100
    assert guesses.hand_rate < AT_CHANCE and guesses.stock_rate < AT_CHANCE, guesses

    # field-a's shared folder: lane 0 wrote the folder itself, lanes 1 to 3 their own copies, made before its
    # first game; each holds only what processes of its own lane wrote.
    lane_of_process = {}
    for process, game_ids in guesses.games_of.items():
        used = {lanes[(game_id, "field-a")] for game_id in game_ids if (game_id, "field-a") in lanes}
        if used:
            assert len(used) == 1, f"process {process} of field-a played in lanes {used}"
            lane_of_process[process] = used.pop()
    folders = [tmp_path / "field-a-memory"] + [
        lane_copy(output, "field-a", lane, 0, str(tmp_path / "field-a-memory")) for lane in (1, 2, 3)
    ]
    for lane, folder in enumerate(folders):
        writers = {path.stem.removeprefix("memory-") for path in folder.glob("memory-*.json")}
        assert writers and {lane_of_process[process] for process in writers} == {lane}, (lane, writers)


@pytest.mark.usefixtures("ray_here")
def test_on_a_local_ray_too_no_process_plays_a_seed_twice(tmp_path: Path, bots: Bots) -> None:
    league_path = write_gauntlet(tmp_path, bots)
    output = tmp_path / "ray"
    ray = subprocess.run(
        [
            PYTHON,
            "-m",
            "referee",
            "run",
            str(league_path),
            "--output",
            str(output),
            "--backend",
            "ray",
            "--concurrency",
            "2",
            "--no-progress",
        ],
        env=bots.subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ray.returncode == 0, ray.stderr
    games = load_league(league_path).schedule()
    guesses = score(sorted((output / "logs").glob("*.log")), log_files(output / GAME_LOG_DIR))
    assert sum(map(len, guesses.games_of.values())) == 16
    check_no_seed_twice(guesses, {game.game_id: game.seed for game in games})
    assert guesses.hand_rate < AT_CHANCE and guesses.stock_rate < AT_CHANCE, guesses


def test_check_bot_plays_each_game_of_a_process_on_deals_of_its_own(tmp_path: Path, bots: Bots) -> None:
    candidate = BotSpec.from_command(
        bots.command(REMEMBERER), name="rememberer", env={"REFEREE_TEST_MARKER": bots.marker}
    )
    settings = CheckSettings(games_per_size=4, timing=TIMING, games=("stop_the_bus",), seats=(2, 3))
    assert asyncio.run(check_bot(candidate, settings, tmp_path)) == 0
    game_logs = sorted(tmp_path.glob("check-*.jsonl"))
    guesses = score(sorted(tmp_path.glob("stop_the_bus-*.log")), game_logs)
    assert len(guesses.games_of) == 2 and all(len(games) == 4 for games in guesses.games_of.values())
    check_no_seed_twice(guesses, {read_log(path)[0]["game_id"]: read_log(path)[0]["seed"] for path in game_logs})
    assert guesses.hand_cards >= 30 and guesses.hand_rate < AT_CHANCE, guesses


# ----- what the test would see from a bot that kept its memory ----------------------------------------


async def play_remembered_rotations(bots: Bots, folder: Path) -> tuple[Guesses, Guesses]:
    """The old way: one process per seat plays both rotations of a seed; then a new process of one bot reads
    what the first left in its memory folder and plays the seed again. Returns both runs' guesses."""
    memory = folder / "memory"
    memory.mkdir()
    setup = GameSetup("stop_the_bus", 2, TIMING)

    def session(name: str, *extra: str) -> BotSession:
        spec = BotSpec.from_command(
            bots.command(REMEMBERER, *extra), name=name, shared=(str(memory),), env={"REFEREE_TEST_MARKER": bots.marker}
        )
        return BotSession(spec, folder / f"{name}-{len(list(folder.glob(name + '-*.log'))) + 1}.log")

    keeper, other = session("keeper", "--memory-dir", str(memory)), session("other")
    sessions = [keeper, other]
    try:
        await asyncio.gather(*(bot.start(setup) for bot in sessions))
        for rotation, seats in enumerate(([keeper, other], [other, keeper])):
            await Match(
                "stop_the_bus",
                seats,
                seed=77,
                game_id=f"r1-t001-s{rotation}",
                timing=TIMING,
                log_path=folder / f"r1-t001-s{rotation}.jsonl",
            ).play()
        await keeper.stop()
        sessions.append(reader := session("keeper", "--memory-dir", str(memory)))
        await reader.start(setup)
        await Match(
            "stop_the_bus",
            [reader, other],
            seed=77,
            game_id="r2-t001-s0",
            timing=TIMING,
            log_path=folder / "r2-t001-s0.jsonl",
        ).play()
    finally:
        await asyncio.gather(*(bot.stop() for bot in sessions))
    game_logs = sorted(folder.glob("r*.jsonl"))
    first_processes = score([folder / "keeper-1.log", folder / "other-1.log"], game_logs)
    return first_processes, score([folder / "keeper-2.log"], game_logs)


def test_a_process_that_plays_a_seed_twice_or_reads_a_memory_of_it_guesses_nearly_everything(
    tmp_path: Path, bots: Bots
) -> None:
    in_memory, from_files = asyncio.run(play_remembered_rotations(bots, tmp_path))
    for guesses in (in_memory, from_files):  # the second run's process played nothing before: it read the files
        assert guesses.remembered >= 20 and guesses.remembered_hits / guesses.remembered > 0.9, guesses
