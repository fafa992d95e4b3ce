"""Each request tells the bot what its previous decision was charged (DecisionRequest.last_charged_ms).

The seat's clock keeps the last charge (:meth:`TimeControl.spend`), the codec writes it, and a real bot
process reads in each request what the game's log records as its previous decision's charge: 0 for its first.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from referee.engine.games import GAMES, Action, Observation
from referee.engine.games.stop_the_bus import StopTheBus
from referee.play.kit import BotServicer, MoveClock
from referee.protocol.clock import TimeControl, Timing
from referee.v2 import bot_pb2 as pb
from tests.conftest import Bots, play, read_log, read_recording
from tests.reference_encoder import decision_request_to_pb

BOT_SEAT = 1


def test_the_clock_keeps_the_last_charge_to_the_nearest_millisecond() -> None:
    clock = TimeControl.of(Timing(move_time_ms=100, time_bank_ms=1000, grace_ms=50))
    assert clock.last_charged_ms == 0
    clock.spend(42.6)
    assert (clock.last_charged_ms, clock.bank_ms) == (43, 1000)
    clock.spend(250.2)  # 150.2 ms over the move time come out of the bank
    assert (clock.last_charged_ms, clock.bank_ms) == (250, 849)


def test_a_bot_is_told_what_its_previous_decision_was_charged(bots: Bots, tmp_path: Path) -> None:
    recording = tmp_path / "slow.jsonl"
    # 120 ms on every second decision of its own, so that charges differ: some near the sleep, some near 0,
    # and some over the move time (100 ms), out of the bank.
    timing = Timing(move_time_ms=100, time_bank_ms=30_000, grace_ms=500, startup_timeout_ms=20_000)
    slow = bots.bad(
        "slow.py", "--at", ",".join(map(str, range(2, 40, 2))), "--sleep-ms", "120", "--record", str(recording)
    )
    specs = [bots.sample(name="random-a"), slow, bots.sample(name="random-b")]
    log_path = tmp_path / "game.jsonl"
    result = play("stop_the_bus", specs, seed=3, timing=timing, log_path=log_path, bot_log_dir=tmp_path)

    assert result.forfeits == {}
    charged = [
        record["ms"] for record in read_log(log_path) if record["type"] == "decision" and record["seat"] == BOT_SEAT
    ]
    _, requests = read_recording(recording)
    told = [request.last_charged_ms for _, request in requests]
    assert len(told) == len(charged) > 10
    assert told[0] == 0, "nothing was charged before the first decision"
    for number, (previous, said) in enumerate(zip(charged, told[1:], strict=False), start=2):
        assert abs(said - previous) <= 1, f"decision {number}: told {said} ms, the log charged {previous} ms before"
    assert max(told) >= 100, "a sleep of 120 ms was charged and told"
    banks = [request.time_bank_ms for _, request in requests]
    assert banks[-1] < banks[0], "what was charged beyond the move time came out of the bank"


def test_the_search_bot_thinks_by_the_move_time_the_bank_and_the_last_charge() -> None:
    from tests.test_heuristic_bot import load_bot

    search = load_bot("search_bot")

    def think_ms(move_time_ms: int, time_bank_ms: int, last_charged_ms: int = 0, measured_ms: float = 0.0) -> float:
        search.measured_ms[0] = measured_ms
        clock = MoveClock(move_time_ms, time_bank_ms, time.perf_counter(), last_charged_ms)
        return search.think_seconds(clock, 0) * 1000

    share, spread = search.THINK_SHARE, search.BANK_DECISIONS
    # A share of the move time, or where it is more, of the bank spread over the decisions to come.
    assert think_ms(1000, 0) == pytest.approx(share * 1000, abs=5)
    assert think_ms(100, 30_000) == pytest.approx(30_000 / spread, abs=5)
    assert think_ms(100, 30_000) > 100, "a short move time beside a big bank: the bank is spent"
    # At the default clock, a share of the move time under the half check-bot calls slow; the bank is kept.
    assert think_ms(1000, 10_000) == pytest.approx(share * 1000, abs=5)
    # Charged what it measured: nothing hidden, nothing taken off.
    assert think_ms(1000, 0, last_charged_ms=390, measured_ms=390.4) == pytest.approx(share * 1000, abs=5)
    # Charged 150 ms more than it measured (a slow machine, the stream): it thinks 150 ms less.
    assert think_ms(1000, 0, last_charged_ms=550, measured_ms=400) == pytest.approx(share * 1000 - 150, abs=5)
    # However slow the machine, never a negative time.
    assert think_ms(100, 0, last_charged_ms=5000, measured_ms=10) == 0
    # A seat's own measure counts, not another seat's (one module may play several seats in process).
    search.measured_ms[1] = 5000.0
    assert think_ms(1000, 0, last_charged_ms=400, measured_ms=400) == pytest.approx(share * 1000, abs=5)


def test_the_python_kit_gives_decide_the_clock_it_was_told() -> None:
    told: list[MoveClock] = []

    def decide(obs: Observation, clock: MoveClock) -> Action:
        told.append(clock)
        return obs.legal_actions[0]

    servicer = BotServicer(decide, "clock", "1.0", tuple(GAMES), timed=True)
    game = StopTheBus(2, seed=1)
    servicer.start_game(pb.GameStart(game_id="clock", game=pb.GAME_STOP_THE_BUS, num_players=2, seat=game.current_seat))
    reply = servicer.answer(decision_request_to_pb(game, "clock", 1, 0, 1000, 9876, last_charged_ms=37))
    assert reply.decision.decision_number == 1
    (clock,) = told
    assert (clock.move_time_ms, clock.time_bank_ms, clock.last_charged_ms) == (1000, 9876, 37)
