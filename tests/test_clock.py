"""The honest clock: what a decision is charged, the grace, and fairness on a machine under load.

The pure parts (the charge, the loop's lateness) are checked directly; the
grace and the fairness targets with real bot processes: a bot that sleeps
past move time + bank is a timeout exactly when the grace does not cover it,
and on an overloaded machine bots that think a few milliseconds are charged
no timeout while one that always overruns is charged in every game
(bench/fairness.py has the longer run and the figures).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from referee.clock import LagMonitor, TimeControl, Timing, charged_seconds
from tests.conftest import Bots, play, read_log

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))


# ----- a seat's time control ------------------------------------------------------------------------


def test_a_seat_spends_its_bank_only_beyond_the_move_time_and_never_below_zero() -> None:
    clock = TimeControl.of(Timing(move_time_ms=200, time_bank_ms=500, grace_ms=50))
    assert clock.limit_ms == 750
    clock.spend(199.9)  # within the move time: the bank is untouched
    assert (clock.bank_ms, clock.limit_ms) == (500, 750)
    clock.spend(350.5)  # 150.5 ms over
    assert (clock.bank_ms, clock.limit_ms) == (349, 599)
    clock.spend(10_000)
    assert (clock.bank_ms, clock.limit_ms) == (0, 250)


# ----- the charge ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wall", "cpu", "stall", "lag", "charged"),
    [
        (0.200, None, None, 0.0, 0.200),  # nothing known: the wall time
        (0.200, None, None, 0.050, 0.150),  # the referee's lag is not charged
        (0.200, 0.003, 0.180, 0.0, 0.020),  # waiting for a CPU is not charged
        (0.200, 0.150, 0.180, 0.0, 0.150),  # ... but the CPU time used always is
        (0.200, 0.500, 0.0, 0.0, 0.200),  # never more than the wall time (threads in parallel)
        (0.200, 0.0, 0.0, 0.0, 0.200),  # sleeping is charged: the bot chose to wait
        (0.010, None, 0.020, 0.0, 0.0),  # never below zero
    ],
)
def test_a_decision_is_charged_its_wall_time_less_what_was_not_the_bots_doing(
    wall: float, cpu: float | None, stall: float | None, lag: float, charged: float
) -> None:
    assert charged_seconds(wall, cpu, stall, lag) == pytest.approx(charged)


def test_the_lag_monitor_sees_the_loop_blocked_just_before_a_reply_but_not_long_before() -> None:
    async def scenario() -> tuple[float, float, float]:
        monitor = LagMonitor(tick_seconds=0.002)
        monitor.start()
        try:
            started = time.perf_counter()
            await asyncio.sleep(0.02)
            time.sleep(0.08)  # the loop is blocked: a reply read now waited about this long
            just_after = monitor.lag_before(time.perf_counter(), started)
            await asyncio.sleep(0.05)  # the loop runs on time again
            later = monitor.lag_before(time.perf_counter(), started)
            before_the_decision = monitor.lag_before(time.perf_counter(), time.perf_counter())
            return just_after, later, before_the_decision
        finally:
            monitor.stop()

    just_after, later, before_the_decision = asyncio.run(scenario())
    assert 0.06 <= just_after <= 0.2
    assert later < 0.02  # that delay ended long before: no reply read now waited through it
    assert before_the_decision == 0.0


# ----- the grace ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("grace_ms", "timeout"), [(0, True), (250, False)])
def test_grace_is_the_only_allowance_past_move_time_and_bank(
    bots: Bots, tmp_path: Path, grace_ms: int, timeout: bool
) -> None:
    # 300 ms of sleep against 200 ms move time + 50 ms bank: late by 50 ms, which only a grace covers.
    timing = Timing(move_time_ms=200, time_bank_ms=50, grace_ms=grace_ms, startup_timeout_ms=5000)
    slow = bots.bad("slow.py", "--at", "1", "--sleep-ms", "300")
    log = tmp_path / "game.jsonl"
    result = play("stop_the_bus", [bots.sample(name="random"), slow], seed=4, timing=timing, log_path=log)
    faults = [record for record in read_log(log) if record["type"] == "fault"]
    if timeout:
        assert result.faults[1] == Counter({"timeout": 1})
        assert "(limit 250 ms;" in faults[0]["detail"]
    else:
        assert result.faults == [Counter(), Counter()] and faults == []
        first = next(record for record in read_log(log) if record["type"] == "decision" and record["seat"] == 1)
        assert 280 <= first["ms"] <= first["wall_ms"]  # sleeping is charged


# ----- fairness under load ---------------------------------------------------------------------------


SMALL_MACHINE_CPUS = 4  # the fairness league is sized by the CPUs it may use: on a bigger machine, it uses these


def test_under_load_prompt_bots_are_never_timed_out_and_a_slow_one_always_is(bots: Bots, tmp_path: Path) -> None:
    import fairness

    # A small machine on any machine: this process, the league's bots and the spinning load (which inherit it)
    # run on at most SMALL_MACHINE_CPUS of the CPUs, which the league then keeps busy.
    every_cpu = os.sched_getaffinity(0)
    os.sched_setaffinity(0, sorted(every_cpu)[:SMALL_MACHINE_CPUS])
    try:
        assert len(os.sched_getaffinity(0)) <= SMALL_MACHINE_CPUS
        result = fairness.run_fairness_league(tmp_path, thinkers=3, marker=bots.marker)
    finally:
        os.sched_setaffinity(0, every_cpu)
    assert result.thinker_decisions > 300
    assert result.thinker_timeouts == 0
    assert result.overtimer_games == result.overtimer_games_charged > 0
