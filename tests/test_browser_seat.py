"""The browser's seat on a clock: each decision is settled once, by a click or by its deadline, never by another's.

The races of a click and a deadline are played in memory, in order, on the fake clock
(:class:`referee.play.fakes.FakeClock`): a real game of Stop the Bus (the seat and two sample bots, in process),
whose person is the test, clicking through the table as the page does. The game's log then says, for each of
the seat's decisions, whether the person's click was played or the seat timed out; the test knows which it
should be. The page's real server and Chromium are in tests/test_play_in_browser.py.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

from referee.apps.human.browser import BrowserTable
from referee.play.fakes import FakeClock
from referee.play.inprocess import sample_opponents
from referee.play.match import Match
from referee.protocol.clock import Timing
from referee.protocol.faults import FaultPolicy, PolicyMode

TIMING = Timing(move_time_ms=1000, time_bank_ms=0, grace_ms=50)
LIMIT_S = 1.05  # the move time and the grace: a decision's deadline
SEED = 20  # a deal on which the seat's first move is a draw or a take, and the game lasts a few of its turns
WAITED_S = 10.0  # real time for the seat's thread to draw its next screen


class Game:
    """A game with the browser's seat at seat 0, on the fake clock, played as a task of the test's event loop;
    :attr:`expected` holds what each of the seat's decisions should be: a button's index, or None for a timeout."""

    def __init__(self, tmp_path: Path) -> None:
        self.clock = FakeClock()
        self.table = BrowserTable(on_clock=True, deadlines=self.clock)
        self.log = tmp_path / "game.jsonl"
        self.match = Match(
            "stop_the_bus",
            [self.table.seat, *sample_opponents(2)],
            seed=SEED,
            game_id="browser-seat",
            timing=TIMING,
            turn_limit=40,
            policy=FaultPolicy(PolicyMode.DEFAULT_ACTION, max_faults=100),  # a timeout plays on, as a bot's does
            log_path=self.log,
        )
        self.task = asyncio.get_running_loop().create_task(self.match.play())
        self.expected: dict[int, int | None] = {}

    async def turn(self) -> dict[str, Any] | None:
        """The seat's next screen with buttons (its thread draws it in real time), or None once the game is over."""
        deadline = time.monotonic() + WAITED_S
        while not (screen := self.table.screen())["choices"]:
            if self.task.done():
                return None
            assert time.monotonic() < deadline, f"no move asked in {WAITED_S} s: {screen}"
            await asyncio.sleep(0.002)
        return screen

    def click(self, screen: dict[str, Any], button: int) -> str | None:
        """Click ``button`` on ``screen``, expecting it to be played for the screen's decision if taken."""
        problem = self.table.choose(screen["n"], button)
        if problem is None:
            self.expected[decision_of(screen)] = button
        return problem

    async def unmoved(self, screen: dict[str, Any], seconds: float = 0.2) -> None:
        """``seconds`` of real time pass with no click and the fake clock still: the decision on ``screen`` waits."""
        await asyncio.sleep(seconds)
        assert self.table.screen()["n"] == screen["n"] and self.table.screen()["choices"] == screen["choices"]
        assert not self.task.done()

    async def play_out(self) -> None:
        """Click the last button of each turn, in time, to the game's end."""
        while (screen := await self.turn()) is not None:
            assert self.click(screen, len(screen["choices"]) - 1) is None
        await self.task

    def check(self) -> None:
        """The log's decisions of the seat are the clicks and timeouts expected, each once, and no other."""
        records = [json.loads(line) for line in self.log.read_text().splitlines()]
        mine = {record["n"]: record for record in records if record["type"] == "decision" and record["seat"] == 0}
        timeouts = {record["n"] for record in records if record["type"] == "fault" and record["seat"] == 0}
        assert set(mine) == set(self.expected), (sorted(mine), sorted(self.expected))
        for number, button in self.expected.items():
            record = mine[number]
            if button is None:
                assert record.get("default") and number in timeouts, record
            else:
                assert not record.get("default") and number not in timeouts, record
                assert record["action"] == record["legal"][button], (button, record)


def decision_of(screen: dict[str, Any]) -> int:
    return int(re.search(r"- decision (\d+) -", screen["lines"][0])[1])


def run(test: Any, tmp_path: Path) -> None:
    async def main() -> None:
        game = Game(tmp_path)
        try:
            await test(game)
            await game.play_out()
        finally:
            game.table.ended()  # lets the seat's thread go, should the test fail with a decision waiting
            game.task.cancel()
        game.check()

    asyncio.run(main())


def test_a_click_exactly_at_the_deadline_is_the_move_and_the_deadline_then_does_nothing(tmp_path: Path) -> None:
    async def race(game: Game) -> None:
        screen = await game.turn()
        assert screen is not None and screen["seconds_left"] == round(LIMIT_S, 1)
        game.clock.advance(LIMIT_S, fire=False)  # the deadline's time, its timer not yet run (the click came first)
        assert game.click(screen, len(screen["choices"]) - 1) is None
        game.clock.advance(0)  # the deadline's timer runs: the decision is settled already
        following = await game.turn()
        assert following is not None and "time_up" not in following
        await game.unmoved(following)  # and nothing of the click or the deadline is taken as this move

    run(race, tmp_path)


def test_a_click_after_the_deadline_is_refused_and_the_decision_is_a_timeout(tmp_path: Path) -> None:
    async def late(game: Game) -> None:
        screen = await game.turn()
        assert screen is not None
        game.clock.advance(LIMIT_S - 0.001)
        assert game.table.screen()["seconds_left"] == 0.0 and game.table.screen()["choices"]
        game.clock.advance(0.001)  # the deadline: a timeout, the buttons gone
        game.expected[decision_of(screen)] = None
        assert game.table.screen()["choices"] == [] and game.table.screen()["time_up"]
        problem = game.click(screen, len(screen["choices"]) - 1)
        assert problem is not None and f"screen {screen['n']} is not the one waiting" in problem
        following = await game.turn()
        assert following is not None and following["time_up"]  # the next move says the last one ran out
        await game.unmoved(following)

    run(late, tmp_path)


def test_after_a_timeout_the_next_decision_waits_for_its_own_click(tmp_path: Path) -> None:
    async def timeout_then_next(game: Game) -> None:
        screen = await game.turn()
        assert screen is not None
        game.clock.advance(LIMIT_S)
        game.expected[decision_of(screen)] = None
        following = await game.turn()
        assert following is not None and decision_of(following) > decision_of(screen)
        await game.unmoved(following)  # not played by what the timeout left behind
        assert game.click(following, len(following["choices"]) - 1) is None
        # The race of the old queue: a click and the deadline in one turn of the loop, the click first.
        third = await game.turn()
        assert third is not None
        game.clock.advance(LIMIT_S, fire=False)
        assert game.click(third, len(third["choices"]) - 1) is None
        game.clock.advance(0)
        fourth = await game.turn()
        assert fourth is not None
        await game.unmoved(fourth)

    run(timeout_then_next, tmp_path)


def test_a_double_click_plays_one_move_and_the_next_decision_waits_for_its_own(tmp_path: Path) -> None:
    async def double(game: Game) -> None:
        screen = await game.turn()
        assert screen is not None
        assert game.click(screen, len(screen["choices"]) - 1) is None
        again = game.table.choose(screen["n"], len(screen["choices"]) - 1)
        assert again is not None and "is not the one waiting" in again
        following = await game.turn()
        assert following is not None
        await game.unmoved(following)
        late_twin = game.table.choose(screen["n"], 0)  # the second click, arriving once the next move is asked
        assert late_twin is not None
        await game.unmoved(following)

    run(double, tmp_path)
