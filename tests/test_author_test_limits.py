"""An author's A/B tests on the ladder, in memory: what the running ladder takes up, refuses and hands out between
its rated games (referee.apps.ladder.author_tests); the real ladder and site are tests/test_author_tests.py."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

from referee.apps.ladder.author_tests import AuthorTests, post_request
from referee.apps.ladder.author_tests import tests_of as asked_by
from referee.apps.ladder.file import TestLimits as Limits
from referee.leaguefile.config import load_league
from referee.leaguefile.schedule import ScheduledGame
from referee.protocol.standing import ACTIVE, WITHDRAWN

VERSIONS = ("ann-v1", "ann-v2", "bob-v1", "cat-v1", "dan-v1")


def league(tmp_path: Path):
    """A league of tables of three whose bots are the ladder's versions: ann-v1 withdrawn (her v2 replaced it)."""
    bots = "\n".join(f"  - {{name: {name}, command: python x.py}}" for name in VERSIONS)
    (tmp_path / "x.py").write_text("")
    path = tmp_path / "league.yaml"
    path.write_text(
        f"name: season\ngame: stop_the_bus\nseed: 99\ntable_size: 3\nrounds: 1\noutput: out\nbots:\n{bots}\n"
    )
    loaded = load_league(path)
    statuses = {"ann-v1": WITHDRAWN}
    return dataclasses.replace(
        loaded, bots=tuple(dataclasses.replace(bot, status=statuses.get(bot.name, ACTIVE)) for bot in loaded.bots)
    )


def rated(count: int) -> list[ScheduledGame]:
    return [ScheduledGame(index, f"r1-t{index:03d}-s0", 1, index + 1, 0, ("bob-v1", "cat-v1", "dan-v1"), index)
            for index in range(count)]  # fmt: skip


def ladder_tests(tmp_path: Path, limits: Limits) -> tuple[AuthorTests, list[str]]:
    said: list[str] = []
    author_tests = AuthorTests(tmp_path / "out", limits, said.append)
    author_tests.load(league(tmp_path))
    return author_tests, said


def test_a_test_game_goes_after_every_few_rated_games_and_alone_when_none_are_left(tmp_path: Path) -> None:
    author_tests, said = ladder_tests(tmp_path, Limits(every=3, in_flight=2, per_day=1000))
    post_request(tmp_path / "out", "ann", "ann-v2", "ann-v1", 0.0, 50.0)
    assert author_tests.take_requests() and said[0].startswith("test t1 of ann: ann-v2 against ann-v1")
    order = [game.game_id for game in author_tests.interleaved(iter(rated(7)))]
    # After the 3rd and the 6th rated game one test game each; then, the rated games done, none: in_flight is 2.
    assert [game_id[:2] for game_id in order] == ["r1"] * 3 + ["t1"] + ["r1"] * 3 + ["t1"] + ["r1"]
    test_games = [game_id for game_id in order if game_id.startswith("t1-")]
    assert test_games == ["t1-r1-t001-s0", "t1-r1-t001-s1"]  # the deal's rotations, in the test's own folder
    assert not author_tests.has_games()  # both in flight: the author's limit
    game = author_tests.tests["t1"].schedule.game(0)
    record = {**dataclasses.replace(game, game_id="t1-r1-t001-s0").record(), "finish_order": [0, 1, 2],
              "timing": {"started": "2026-12-07T00:00:00+00:00"}}  # fmt: skip
    author_tests.ended(dataclasses.replace(game, game_id="t1-r1-t001-s0", folder="author_tests/t1"), record)
    assert [game.game_id for game in author_tests.interleaved(iter(()))] == ["t1-r1-t001-s2"]  # alone, one freed
    assert asked_by(tmp_path / "out", "ann")[0]["games"] == 1 and asked_by(tmp_path / "out", "bob") == []


def test_an_authors_test_games_stop_at_their_daily_limit(tmp_path: Path) -> None:
    author_tests, _ = ladder_tests(tmp_path, Limits(every=1, in_flight=100, per_day=4))
    post_request(tmp_path / "out", "ann", "ann-v2", "bob-v1", 0.0, 50.0)
    author_tests.take_requests()
    handed = [game for game in itertools.islice(author_tests.interleaved(iter(rated(20))), 40) if game.folder]
    assert len(handed) == 4 and not author_tests.has_games()


def test_the_ladder_refuses_a_test_it_cannot_play_and_says_why(tmp_path: Path) -> None:
    author_tests, said = ladder_tests(tmp_path, Limits())
    post_request(tmp_path / "out", "ann", "ann-v2", "nobody-v1", 0.0, 50.0)  # no such version
    post_request(tmp_path / "out", "bob", "ann-v2", "bob-v1", 0.0, 50.0)  # not bob's to test
    post_request(tmp_path / "out", "ann", "ann-v2", "bob-v1", 0.0, 50.0)
    post_request(tmp_path / "out", "ann", "ann-v2", "cat-v1", 0.0, 50.0)  # a second open test of ann
    author_tests.take_requests()
    found = {test["id"]: test for test in asked_by(tmp_path / "out", "ann") + asked_by(tmp_path / "out", "bob")}
    statuses = [found[f"t{n}"]["status"] for n in range(1, 5)]
    assert statuses == ["refused", "refused", "running", "refused"], found
    assert "nobody-v1 is neither another version of ann nor an active version" in found["t1"]["said"]
    assert "ann-v2 is not an accepted version of bob" in found["t2"]["said"]
    assert "one at a time" in found["t4"]["said"]
    assert sum("refused" in line for line in said) == 3
