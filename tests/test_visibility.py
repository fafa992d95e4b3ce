"""The one owner of *when*: what of a league's games may be shown, and when (referee.records.visibility), in memory.

Each rule on its own, on a clock the test moves: a hand's frames wait for every other game on their deals to
pass that hand, a finished game for every one of them to end, both for the spectator delay after; the rule is
never absent while a run holds a game back (made from the schedule and the results as the run starts, and an
earlier run's times carried over); the file is written off the event loop, and the games are told as shown only
once the file says so. The proof across real leagues, over HTTP, is tests/test_nothing_early.py.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

from referee.engine.games import GAMES
from referee.publish.spectators import SpectatorFeeds
from referee.records import visibility
from referee.records.visibility import VISIBILITY_FILE, DealsInPlay, Shown


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def results(folder: Path, *game_ids: str) -> int:
    """A games.jsonl with these games' records; its length."""
    lines = "".join(
        json.dumps({"index": n, "game_id": game, "seats": ["a", "b"]}) + "\n" for n, game in enumerate(game_ids)
    )
    (folder / "games.jsonl").write_text(lines)
    return len(lines.encode())


def shown_ids(folder: Path, at: float) -> list[str]:
    return [record["game_id"] for record in Shown.read(folder, at=at).records(folder)]


# ----- a hand's frames ----------------------------------------------------------------------------------------


def test_a_hands_frames_wait_for_every_other_game_on_its_deals_to_pass_that_hand(tmp_path: Path) -> None:
    clock = Clock()
    deals = DealsInPlay(tmp_path, 0.0, clock=clock)
    deals.deal(["s0", "s1", "s2"])
    s0 = deals.progress("s0")
    assert s0.hand_due(1, clock.now) is None  # s1 and s2 have not started: their hand 1 is this one's
    clock.now = 1010.0
    deals.hand_passed("s1", 1)
    assert s0.hand_due(1, 1001.0) is None  # s2 still to pass it
    clock.now = 1020.0
    deals.hand_passed("s2", 2)  # two hands at once (seen late): both passed now
    assert s0.hand_due(1, 1001.0) == 1020.0
    assert s0.hand_due(2, 1001.0) is None  # s1 is in hand 2
    assert s0.hand_due(1, 1030.0) == 1030.0  # never before the frame was seen
    deals.ended("s1", 0)  # s1 ended: past every hand from its end on
    assert s0.hand_due(2, 1001.0) == 1020.0 and s0.hand_due(9, 1001.0) is None  # s2 is in hand 3


def test_the_spectator_delay_counts_from_the_last_game_passing_the_hand(tmp_path: Path) -> None:
    clock = Clock()
    deals = DealsInPlay(tmp_path, 8.0, clock=clock)
    deals.deal(["a", "b"])
    clock.now = 1005.0
    deals.hand_passed("b", 1)
    assert deals.progress("a").hand_due(1, 1001.0) == 1013.0
    assert deals.progress("a").hand_due(1, 1009.0) == 1017.0


def test_a_game_no_deal_knows_is_never_shown(tmp_path: Path) -> None:
    deals = DealsInPlay(tmp_path, 0.0)
    assert deals.progress("unknown").hand_due(1, 0.0) is None


def test_a_stopped_game_starts_again_from_nothing(tmp_path: Path) -> None:
    clock = Clock()
    deals = DealsInPlay(tmp_path, 0.0, clock=clock)
    deals.deal(["a", "b"])
    deals.hand_passed("b", 3)
    deals.stopped("b")  # played again: its hands 1 to 3 are still to come
    assert deals.progress("a").hand_due(1, clock.now) is None


# ----- a finished game -----------------------------------------------------------------------------------------


def test_a_finished_game_is_held_until_every_game_on_its_deals_ends_and_the_delay_after(tmp_path: Path) -> None:
    clock = Clock()
    deals = DealsInPlay(tmp_path, 8.0, clock=clock)
    deals.deal(["t1-s0", "t1-s1"])
    deals.deal(["t2-s0"])
    deals.write()
    assert json.loads((tmp_path / VISIBILITY_FILE).read_text()) == {"accounted": 0, "held": {}}
    size = results(tmp_path, "t1-s0")
    deals.ended("t1-s0", size)
    deals.write()
    assert deals.snapshot() == {"accounted": size, "held": {"t1-s0": None}}  # t1-s1 still to end
    assert shown_ids(tmp_path, 5000.0) == []
    clock.now = 1010.0
    size = results(tmp_path, "t1-s0", "t1-s1", "t2-s0")
    deals.ended("t1-s1", size - 20)  # its record is in; t2-s0's is written too, but not yet accounted for
    deals.write()
    assert deals.snapshot()["held"] == {"t1-s0": 1018.0, "t1-s1": 1018.0}
    assert shown_ids(tmp_path, 1017.9) == [] and shown_ids(tmp_path, 1018.0) == ["t1-s0", "t1-s1"]
    assert Shown.read(tmp_path, at=1017.0).due("t1-s1") == 1018.0
    clock.now = 1018.0
    assert deals.snapshot()["held"] == {}  # shown by their time: they leave the file


def test_a_folder_without_the_file_holds_nothing_back_and_a_damaged_one_everything(tmp_path: Path) -> None:
    results(tmp_path, "g1", "g2")
    assert shown_ids(tmp_path, 0.0) == ["g1", "g2"]  # a league played to its end before the file was written
    (tmp_path / "held_back.json").write_text(json.dumps({"games": ["g1"]}))  # what an older referee wrote
    assert shown_ids(tmp_path, 0.0) == ["g2"]
    for damaged in ("{", '{"accounted": -1, "held": {}}', '{"held": []}', "[]", '{"accounted": true, "held": {}}'):
        (tmp_path / VISIBILITY_FILE).write_text(damaged)
        assert shown_ids(tmp_path, 0.0) == [], damaged
        assert not Shown.read(tmp_path).game("g1")


def test_a_run_starts_from_the_schedule_and_the_results_never_from_nothing(tmp_path: Path) -> None:
    # A run stopped with table 1 half played, table 2 done: as it starts again, before any game, its file holds
    # table 1's finished game back, shows table 2's, and an unplayed game (its bot plays no more) is over.
    size = results(tmp_path, "t1-s0", "t2-s0", "t2-s1", "t3-s0")
    deals = DealsInPlay(tmp_path, 0.0, accounted=size)
    deals.deal(["t1-s0", "t1-s1"], finished=["t1-s0"])
    deals.deal(["t2-s0", "t2-s1"], finished=["t2-s0", "t2-s1"])
    deals.deal(["t3-s0", "t3-s1"], finished=["t3-s0"], unplayed=["t3-s1"])
    deals.write()
    assert shown_ids(tmp_path, 5000.0) == ["t2-s0", "t2-s1", "t3-s0"]


def test_an_earlier_runs_times_are_kept_by_the_next(tmp_path: Path) -> None:
    clock = Clock()
    size = results(tmp_path, "a", "b", "c", "d")
    # The run before was stopped within the delay after deal (a, b) ended, and after c ended but before its file
    # said so (c's deal, with d, done only now): each is still held, a and b until their time, c and d a delay on.
    (tmp_path / VISIBILITY_FILE).write_text(
        json.dumps({"accounted": size, "held": {"a": 1004.0, "b": 1004.0, "c": None}})
    )
    deals = DealsInPlay(tmp_path, 8.0, accounted=size, clock=clock)
    deals.deal(["a", "b"], finished=["a", "b"])
    deals.deal(["c", "d"], finished=["c", "d"])
    deals.write()
    assert deals.snapshot()["held"] == {"a": 1004.0, "b": 1004.0, "c": 1008.0, "d": 1008.0}
    assert shown_ids(tmp_path, 1003.0) == [] and shown_ids(tmp_path, 1004.0) == ["a", "b"]


def test_a_deal_whose_last_game_will_never_be_played_is_done(tmp_path: Path) -> None:
    clock = Clock()
    deals = DealsInPlay(tmp_path, 0.0, clock=clock)
    deals.deal(["a", "b"])
    size = results(tmp_path, "a")
    deals.ended("a", size)
    assert deals.held() == ["a"]
    deals.unplayed(["b"])  # b seats a version disqualified meanwhile
    assert deals.held() == []


# ----- the file, off the event loop, and the games told as shown ----------------------------------------------------


def test_the_file_is_written_off_the_event_loop_and_a_game_told_as_shown_only_once_the_file_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers: list[int] = []
    written = visibility._write_file

    def write(path: Path, snapshot: dict) -> None:
        writers.append(threading.get_ident())
        written(path, snapshot)

    monkeypatch.setattr(visibility, "_write_file", write)
    told: list[tuple[list[str], list[str]]] = []

    async def main() -> None:
        deals = DealsInPlay(tmp_path, 0.3)
        deals.on_shown = lambda games: told.append((games, shown_ids(tmp_path, deals.clock())))
        deals.deal(["a", "b"])
        task = asyncio.get_running_loop().create_task(deals.run())
        deals.ended("a", results(tmp_path, "a"))
        await asyncio.sleep(0.05)
        deals.ended("b", results(tmp_path, "a", "b"))
        await asyncio.sleep(0.1)
        assert told == []  # within the delay
        await deals.settle()
        task.cancel()
        assert threading.get_ident() not in writers and writers

    asyncio.run(main())
    assert told == [(["a", "b"], ["a", "b"])]  # told once, when a reader of the file sees them shown


def test_a_game_whose_deal_closes_while_the_file_is_being_written_is_told_only_after_the_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file is written by a task of its own: a deal that closes while a write is under way is not in that
    # write. Its games must be told as shown only once a write that says so is on disk, never by the clock alone.
    written = visibility._write_file

    def slow(path: Path, snapshot: dict) -> None:
        time.sleep(0.3)
        written(path, snapshot)

    monkeypatch.setattr(visibility, "_write_file", slow)
    told: list[list[str]] = []

    async def main() -> None:
        deals = DealsInPlay(tmp_path, 0.0)
        deals.on_shown = lambda games: told.append(shown_ids(tmp_path, deals.clock()))
        deals.deal(["a"])
        deals.deal(["b", "c"])
        task = asyncio.get_running_loop().create_task(deals.run())
        deals.ended("b", results(tmp_path, "b"))  # a write starts, holding b back (c still plays)
        await asyncio.sleep(0.1)
        deals.ended("a", results(tmp_path, "b", "a"))  # a's deal closes while that write is under way
        await deals.settle()
        task.cancel()

    asyncio.run(main())
    assert told == [["a"]]  # told once the file says so: a write that started after its deal closed


# ----- the feeds: what SpectatorFeeds writes, and when --------------------------------------------------------------


def play_hand(game) -> None:
    hand = game.hand_number
    while not game.is_over and game.hand_number == hand:
        game.apply(game.legal_actions()[0])


def test_a_feed_is_not_there_until_its_first_frame_is_due_and_shows_a_hand_once_its_sibling_passed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr("referee.publish.spectators.time.time", clock)
    deals = DealsInPlay(tmp_path, 0.0, clock=clock)
    deals.deal(["r0", "r1"])
    feeds = SpectatorFeeds(tmp_path, deals)
    first, second = GAMES["stop_the_bus"](3, seed=5), GAMES["stop_the_bus"](3, seed=5)
    feeds.started("r0", first, ["a", "b", "c"])
    play_hand(first)
    clock.now += 1
    feeds.poll()
    feed = tmp_path / "live" / "r0.jsonl"
    assert not feed.exists()  # r1, dealt alike, has not started: hand 1's cards are still to come there
    feeds.started("r1", second, ["b", "c", "a"])
    clock.now += 1
    feeds.poll()
    assert not feed.exists()
    play_hand(second)
    clock.now += 1
    feeds.poll()  # r1 passed hand 1: r0's hand 1 goes out, not hand 2's deal (r1 is in hand 2)
    told = [json.loads(line) for line in feed.read_text().splitlines()]
    assert "start" in told[0] and {frame["view"]["hand"] for frame in told[1:]} == {1}
    assert (tmp_path / "live" / "r1.jsonl").exists()  # r1's hand 1: r0 passed it long ago


def test_a_stopped_games_feed_goes_and_nothing_waiting_is_written_on_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr("referee.publish.spectators.time.time", clock)
    deals = DealsInPlay(tmp_path, 30.0, clock=clock)
    deals.deal(["stopped"])
    deals.deal(["finished"])
    feeds = SpectatorFeeds(tmp_path, deals)
    stopped, finished = GAMES["stop_the_bus"](3, seed=1), GAMES["stop_the_bus"](3, seed=2)
    feeds.started("stopped", stopped, ["a", "b", "c"])
    feeds.started("finished", finished, ["a", "b", "c"])
    play_hand(stopped)
    clock.now += 40
    feeds.poll()
    assert (tmp_path / "live" / "stopped.jsonl").exists()  # its first hand, 30 s on
    while not finished.is_over:
        finished.apply(finished.legal_actions()[0])
    feeds.finished("finished")
    feeds.stopped("stopped")  # the run is stopping: played again on resume, with a feed of its own
    assert not (tmp_path / "live" / "stopped.jsonl").exists()
    feeds.close()  # the finished game's last lines are not due for 30 s: not written early, its feed removed
    assert not (tmp_path / "live" / "finished.jsonl").exists()
