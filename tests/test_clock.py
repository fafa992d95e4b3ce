"""The honest clock: what a decision is charged, the grace, and fairness on a machine under load.

The pure parts (the charge, the loop's lateness) are checked directly; the
fairness targets with real bot processes: on an overloaded machine bots that
think a few milliseconds are charged no timeout while one that always
overruns is charged in every game (bench/fairness.py has the longer run and
the figures). The deadline itself, the grace and what a session charges are
played on a fake clock by test_session_races.py.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from referee.protocol.clock import LagMonitor, TimeControl, Timing, charged_seconds
from tests.conftest import Bots

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
