"""Whole games between real bot processes over real gRPC: logs that replay, repeatable seeds, transports, privacy."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from referee.engine.cards import DECK
from referee.engine.games import game_class
from referee.engine.games.game import Action
from referee.play.sandbox import DEFAULT_LIMITS
from referee.play.session import BotSession
from referee.protocol.clock import Timing
from referee.protocol.setup import GameSetup
from referee.records.gamelog import verify_log
from referee.v2 import bot_pb2 as pb
from tests.conftest import PYTHON, Bots, play, read_log, read_recording
from tests.reference_encoder import fill_events, fill_observation

# Good bots reply in a few milliseconds; roomy limits keep a busy machine from causing faults.
ROOMY = Timing(move_time_ms=2000, time_bank_ms=5000, grace_ms=200, startup_timeout_ms=5000)


def play_logged(bots: Bots, tmp_path: Path, game: str, specs, *, seed: int, name: str = "game.jsonl", **options):
    log = tmp_path / name
    result = play(game, specs, seed=seed, timing=ROOMY, log_path=log, **options)
    return result, log


def random_bots(bots: Bots, players: int, **options) -> list:
    return [bots.sample(name=f"random-{seat}", **options) for seat in range(players)]


# ----- full games ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "players"), [("stop_the_bus", 2), ("stop_the_bus", 4), ("bastard_brag", 3), ("bastard_brag", 5)]
)
def test_sample_bots_play_a_full_game_and_its_log_replays_exactly(
    bots: Bots, tmp_path: Path, game: str, players: int
) -> None:
    result, log_path = play_logged(bots, tmp_path, game, random_bots(bots, players), seed=11)
    log = read_log(log_path)

    assert sorted(result.placements) == list(range(players))
    assert result.faults == [Counter()] * players and result.forfeits == {}
    start, end = log[0], log[-1]
    assert (start["type"], start["game"], start["num_players"], start["seed"]) == ("game_start", game, players, 11)
    assert json.loads(log_path.read_text().splitlines()[0])["seed"] == "11", "the file holds it as a string"
    assert start["players"] == result.players == [f"random-{seat}" for seat in range(players)]
    assert (end["type"], end["placements"], end["hands_played"]) == ("game_end", result.placements, result.hands_played)
    decisions = [record for record in log if record["type"] == "decision"]
    assert [record["n"] for record in decisions] == list(range(1, result.decisions + 1))
    assert all(record["action"] in record["legal"] for record in decisions)
    assert sum(len(latencies) for latencies in result.latencies_ms) == result.decisions
    hands = [record for record in log if record["type"] == "hand"]
    assert len(hands) == result.hands_played == len(result.hand_results) >= 3  # three lives: at least three hands
    assert verify_log(log_path) == []


def test_a_tampered_log_is_caught(bots: Bots, tmp_path: Path) -> None:
    _, log_path = play_logged(bots, tmp_path, "stop_the_bus", random_bots(bots, 3), seed=5)
    lines = log_path.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert verify_log(log_path) == []

    def tampered(index: int, change) -> list[str]:
        """The problems found in a copy of the log with record ``index`` changed, each without the copy's path."""
        record = dict(records[index])
        change(record)
        copy = tmp_path / f"tampered-{index}.jsonl"
        copy.write_text("\n".join([*lines[:index], json.dumps(record), *lines[index + 1 :]]) + "\n")
        problems = verify_log(copy)
        assert all(problem.startswith(str(copy)) for problem in problems), problems
        return [problem.removeprefix(str(copy)) for problem in problems]

    def line_of(problem: str) -> int:
        return int(re.match(r":(\d+): ", problem)[1])

    # Another legal action than the one played: the record itself replays, and the first record after it that
    # the other action changes is caught (the seat's next cards, what it may do, what it drew, the hand's end).
    choice = next(i for i, record in enumerate(records) if record["type"] == "decision" and len(record["legal"]) > 1)
    other = next(act for act in records[choice]["legal"] if act != records[choice]["action"])
    first, *_ = tampered(choice, lambda record: record.update(action=other))
    assert line_of(first) > choice + 1, first
    assert re.match(r":\d+: (legal actions logged|seat \d held|the log says \S+ was drawn|hand result differs)", first)
    # An action that is not legal at all: caught at its own line, with the reason, and the replay goes no further.
    seat = records[choice]["seat"]
    assert tampered(choice, lambda record: record.update(action="knock")) == [
        f":{choice + 1}: cannot replay this decision record: seat {seat}: illegal action 'knock': 'knock' is not an "
        "action of Stop the Bus; allowed: draw, take, discard CARD, stop, pass",
        ": the log ends before the game does",
    ]
    # A hand result with another loser: that record alone.
    hand = next(i for i, record in enumerate(records) if record["type"] == "hand")
    innocent = next(seat for seat in range(3) if seat != records[hand]["loser"])
    (problem,) = tampered(hand, lambda r: r.update(loser=innocent))
    assert problem.startswith(f":{hand + 1}: hand result differs: logged "), problem
    assert f"'loser': {innocent}" in problem.split("engine gives")[0]
    assert f"'loser': {records[hand]['loser']}" in problem.split("engine gives")[1]
    # The revealed cards of a hand (a new dict: the records are shared by the tamperings): that record alone,
    # the false cards logged and the true ones the engine's.
    seat, cards = next(iter(records[hand]["hands"].items()))
    swapped = "2C 3D 4H" if cards != "2C 3D 4H" else "2D 3D 4H"
    (problem,) = tampered(hand, lambda record: record.update(hands={**record["hands"], seat: swapped}))
    assert problem.startswith(f":{hand + 1}: hand result differs: logged "), problem
    logged, engine = problem.split("engine gives")
    assert f"'{seat}': '{swapped}'" in logged and f"'{seat}': '{cards}'" in engine, problem
    # A deal with other cards than the seed deals: that record, and the play goes on from the true deal.
    deal = next(i for i, record in enumerate(records) if record["type"] == "deal")
    first_seat = next(iter(records[deal]["hands"]))
    (problem,) = tampered(deal, lambda r: r.update(hands={**r["hands"], first_seat: swapped}))
    assert problem.startswith(f":{deal + 1}: deal differs: logged "), problem
    # A drawn card other than the stock's top: that record alone.
    draw = next(i for i, record in enumerate(records) if record["type"] == "decision" and "drew" in record)
    wrong_card = "2C" if records[draw]["drew"] != "2C" else "2D"
    drawn = records[draw]["drew"]
    assert tampered(draw, lambda r: r.update(drew=wrong_card)) == [
        f":{draw + 1}: the log says {wrong_card} was drawn; the engine drew {drawn}"
    ]
    # The final placements: the last record alone.
    reordered = list(reversed(records[-1]["placements"]))
    end = len(records) - 1
    assert tampered(end, lambda r: r.update(placements=reordered)) == [
        f":{end + 1}: placements logged {reordered}, engine gives {records[-1]['placements']}"
    ]

    # A log cut short, a line that is not JSON, a record without a field: reported, not raised.
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    assert verify_log(cut) == [f"{cut}: the log ends before the game does"]
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([*lines[:choice], '{"type": "decision", ', *lines[choice + 1 :]]) + "\n")
    assert verify_log(broken)[0] == (
        f'{broken}:{choice + 1}: not a log record (a JSON object with a type): \'{{"type": "decision",\''
    )
    missing = tampered(choice, lambda record: record.pop("action"))
    assert missing[0] == f":{choice + 1}: cannot replay this decision record: missing field 'action'", missing

    # `referee verify` says the same, with its exit status.
    verify = [PYTHON, "-m", "referee.cli", "verify"]
    good = subprocess.run([*verify, str(log_path)], capture_output=True, text=True)
    assert good.returncode == 0 and "replays exactly" in good.stdout
    bad = subprocess.run([*verify, str(tmp_path / f"tampered-{hand}.jsonl")], capture_output=True, text=True)
    assert bad.returncode == 1 and "hand result differs" in bad.stdout


def without_latencies(records: list[dict]) -> list[dict]:
    return [{key: value for key, value in record.items() if key not in ("ms", "wall_ms", "at")} for record in records]


def test_the_same_seed_twice_gives_the_same_game(bots: Bots, tmp_path: Path) -> None:
    first, first_log = play_logged(bots, tmp_path, "bastard_brag", random_bots(bots, 4), seed=21, name="a.jsonl")
    second, second_log = play_logged(bots, tmp_path, "bastard_brag", random_bots(bots, 4), seed=21, name="b.jsonl")
    assert first.placements == second.placements
    assert without_latencies(read_log(first_log)) == without_latencies(read_log(second_log))
    # A different seed deals differently (the deck order shows in the first hand's result).
    _, third_log = play_logged(bots, tmp_path, "bastard_brag", random_bots(bots, 4), seed=22, name="c.jsonl")
    assert without_latencies(read_log(third_log)) != without_latencies(read_log(first_log))


# ----- transports and the private socket directory -------------------------------------------


def test_bots_can_listen_on_tcp(bots: Bots, tmp_path: Path) -> None:
    recording = tmp_path / "recorder.jsonl"
    specs = [
        bots.bad("recorder.py", "--record", str(recording), name="recorder", transport="tcp"),
        bots.sample(name="random", transport="tcp"),
    ]
    result, log_path = play_logged(bots, tmp_path, "stop_the_bus", specs, seed=9)
    start, requests = read_recording(recording)
    assert re.fullmatch(r"127\.0\.0\.1:\d+", start["address"])
    assert start["dir_mode"] is None
    assert requests and result.faults == [Counter(), Counter()]
    assert len(result.latencies_ms[0]) == len(requests)
    assert verify_log(log_path) == []
    assert list(bots.socket_root.iterdir()) == []  # no private directory for a TCP bot


def test_a_sandboxed_bots_socket_folder_is_a_small_file_system_of_its_sandbox_and_goes_with_it(
    bots: Bots, tmp_path: Path
) -> None:
    recording = tmp_path / "recorder.jsonl"

    async def inspect_running_bot() -> tuple[str, list[str], int, list[str]]:
        bot = BotSession(bots.bad("recorder.py", "--record", str(recording), name="recorder"))
        await bot.start(GameSetup("stop_the_bus", 2, ROOMY))
        try:
            directory = Path(bot.process.address.removeprefix("unix:")).parent
            size = os.statvfs(directory)
            return (
                str(directory),
                sorted(os.listdir(directory)),
                size.f_blocks * size.f_frsize,
                os.listdir(bots.socket_root),
            )
        finally:
            await bot.stop()

    directory, contents, size, on_the_host = asyncio.run(inspect_running_bot())
    # The referee reaches it through the sandbox's root; nothing of it is on the host's disk.
    assert re.fullmatch(r"/proc/\d+/root/run/referee", directory) and contents == ["bot.sock"]
    assert size == DEFAULT_LIMITS.output_bytes and on_the_host == []
    assert not Path(directory).exists()  # gone with the sandbox
    start, _ = read_recording(recording)
    assert start["address"] == "unix:/run/referee/bot.sock"
    assert start["dir_mode"] == "1777"  # none but the bot's own processes are in its sandbox


# ----- what a bot is told ------------------------------------------------------------------------


def cards_in(request: pb.DecisionRequest) -> set:
    """Every card a DecisionRequest mentions, anywhere."""
    cards = set()

    def add(message: pb.Card) -> None:
        if message.rank:
            cards.add(DECK[(message.rank - 2) * 4 + message.suit - 1])

    obs = request.observation
    for card in obs.hand:
        add(card)
    view = obs.stop_the_bus
    add(view.discard_top)
    add(view.drawn_card)
    for slot in obs.bastard_brag.centre:
        add(slot.card)
    for event in request.events:
        add(event.card)
        add(event.taken)
    for act in [*request.legal_actions, request.default_action]:
        add(act.card)
    return cards


@pytest.mark.parametrize(("game", "players", "seat"), [("stop_the_bus", 3, 1), ("bastard_brag", 4, 2)])
def test_a_decision_request_shows_only_what_the_seat_may_know(
    bots: Bots, tmp_path: Path, game: str, players: int, seat: int
) -> None:
    recording = tmp_path / "recorder.jsonl"
    specs = random_bots(bots, players)
    specs[seat] = bots.bad("recorder.py", "--record", str(recording), name="recorder")
    _, log_path = play_logged(bots, tmp_path, game, specs, seed=13)
    _, requests = read_recording(recording)
    asked = {request.decision_number: request for _, request in requests}
    log = read_log(log_path)
    start = log[0]

    # Replay the game and compare each request with the engine's state at that moment.
    engine = game_class(game)(
        players, start["seed"], first_dealer=start["first_dealer"], turn_limit=start["turn_limit"]
    )
    events_sent = 0
    checked = 0
    for record in log[1:]:
        if record["type"] == "forfeit":
            engine.forfeit(record["seat"], record["reason"])
        if record["type"] != "decision":
            continue
        if record["seat"] == seat:
            request = asked.pop(record["n"])
            assert request.seat == request.observation.seat == seat
            expected = pb.Observation()
            fill_observation(expected, engine.observation(seat))
            assert request.observation == expected
            expected_events = pb.DecisionRequest().events
            fill_events(expected_events, engine, events_sent)
            assert list(request.events) == list(expected_events)  # the public events since its last decision
            events_sent = len(engine.events)
            # No card another seat holds shows, unless public events revealed it (a take, a face-up exchange).
            revealed = {card for event in engine.events for card in (event.card, event.taken) if card is not None}
            hidden = {card for other in range(players) if other != seat for card in engine.hands[other]} - revealed
            assert not cards_in(request) & hidden
            assert set(engine.hands[seat]) <= cards_in(request)
            checked += 1
        engine.apply(Action.parse(record["action"]))
    assert checked >= 3 and asked == {}  # every request the bot received was a decision of the game


def test_a_task_cancelled_while_it_stops_a_bot_ends_cancelled_once_the_bot_is_stopped(bots: Bots) -> None:
    # Ctrl-C reaches a ladder's or league's games as a cancellation; one that arrives while a game's bot is being
    # stopped (waiting for a bot that lingers to end its stream) must end the task, not be taken for the bot's.
    async def cancelled_while_stopping() -> tuple[bool, list[str], bool]:
        bot = BotSession(bots.bad("lingering.py", name="lingering"))
        await bot.start(GameSetup("stop_the_bus", 2, ROOMY))
        went_on: list[str] = []

        async def stop_then_go_on() -> None:
            await bot.stop()
            went_on.append("went on after the stop")

        task = asyncio.create_task(stop_then_go_on())
        await asyncio.sleep(0.3)  # within the bot's grace to end its side of the stream
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return True, went_on, bot.has_exited()
        return False, went_on, bot.has_exited()

    cancelled, went_on, stopped = asyncio.run(cancelled_while_stopping())
    assert (cancelled, went_on, stopped) == (True, [], True)
