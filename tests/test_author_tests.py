"""An author's own A/B test on a running ladder (referee.apps.ladder.author_tests), everything real.

A ladder of four authors runs; ann submits a second version (the heuristic, where her first plays at random). She
asks for a test of ann-v2 against ann-v1 by curl with her token: the running ladder plays it between its rated
games, and it reaches a verdict while they go on; nothing of it is in the ladder's records, its standings or any
public page, nor on another author's page. Then she asks for another from her page, by clicks in Chromium (a phone
and a desktop), and opens one of its games: her private replay, with her bot's notes.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import PYTHON, Bots
from tests.served import readable
from tests.test_author_pages_in_browser import DESKTOP, PHONE, reads_on_screen
from tests.test_ladder import ladder_file, lines
from tests.test_ladder_suspension import Running
from tests.test_serve import free_port, wait_until_serving
from tests.test_site import add_author

WAIT_S = 240.0


def wait_for(what: str, ready, running: Running | None = None, timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = ready()
        if found:
            return found
        if running is not None and running.process.poll() is not None:
            raise AssertionError(f"the ladder ended before {what}: {running.text()[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout} s" + (f": {running.text()[-3000:]}" if running else ""))
        time.sleep(0.2)


@pytest.fixture
def season(tmp_path: Path, bots: Bots):
    """A running ladder of ann (two versions), bob, cat and dan, served on loopback; ann's and bob's tokens."""
    path = ladder_file(tmp_path, bots, {"ann": "random", "bob": "random", "cat": "random", "dan": "random"})
    with path.open("a") as ladder:
        ladder.write("author_tests: {every: 2, in_flight: 3, max_games: 300}\n")
    tokens = {name: add_author(path, name) for name in ("ann", "bob")}
    output = tmp_path / "out"
    running = Running(path, bots)
    port = free_port()
    server = subprocess.Popen([PYTHON, "-m", "referee", "serve", str(path), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        wait_for("ann-v1 accepted", lambda: "ann-v1: accepted" in running.text(), running)
        # ann's second version: the heuristic (its notes say what it held and chose).
        run = json.dumps(["python", "heuristic_bot.py", "--marker", bots.marker])
        (tmp_path / "submissions" / "ann" / "bot.yaml").write_text(f"name: ann\nversion: '2'\nrun: {run}\n")
        wait_for("ann-v2 playing", lambda: any("ann-v2" in game["seats"] for game in lines(output / "games.jsonl")),
                 running)  # fmt: skip
        base = f"http://127.0.0.1:{port}/"
        wait_until_serving(base, "leaderboard.html")
        yield base, tokens, output, running
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
        running.stop()


def test_an_authors_tests_by_curl_and_by_clicks_reach_her_alone_while_rated_games_go_on(
    season, request: pytest.FixtureRequest
) -> None:
    base, tokens, output, running = season
    ann = {"Authorization": f"Bearer {tokens['ann']}"}
    refused = httpx.post(base + "api/tests", json={"a": "bob-v1", "b": "ann-v1"}, headers=ann)
    assert refused.status_code == 400 and "one of your accepted versions" in refused.json()["error"]
    assert httpx.post(base + "api/tests", json={"a": "ann-v2", "b": "ann-v1"}).status_code in (401, 403)  # no token
    asked = httpx.post(base + "api/tests", json={"a": "ann-v2", "b": "ann-v1", "elo0": 0, "elo1": 300}, headers=ann)
    assert asked.status_code == 202, asked.text
    again = httpx.post(base + "api/tests", json={"a": "ann-v2", "b": "ann-v1"}, headers=ann)
    assert again.status_code == 409 and "one at a time" in again.json()["error"]
    rated_before = len(lines(output / "games.jsonl"))

    def decided() -> dict | None:
        tests = httpx.get(base + "api/tests", headers=ann).json()["tests"]
        return tests[0] if tests and tests[0].get("status") == "decided" else None

    test = wait_for("the test's verdict", decided, running)
    assert test["id"] == "t1" and test["outcome"] == "H1", test  # the heuristic is far stronger than random play
    assert test["curve"] and test["games"] >= 3 and "ann-v2 is stronger than ann-v1" in test["headline"]
    assert "test t1 of ann: ann-v2 against ann-v1: H1 accepted" in running.text()
    # Rated games went on meanwhile, and none of the test's is among them.
    rated = lines(output / "games.jsonl")
    assert len(rated) > rated_before and not any(game["game_id"].startswith("t1-") for game in rated)
    test_games = lines(output / "author_tests" / "t1" / "games.jsonl")
    assert len(test_games) >= test["games"] and all(game["game_id"].startswith("t1-r1-t") for game in test_games)
    assert {"ann-v2", "ann-v1"} <= set(test_games[0]["seats"])
    # Nothing public, and nothing on another author's page, names the test or its games.
    bob = {"Authorization": f"Bearer {tokens['bob']}"}
    public = [httpx.get(base + path) for path in ("leaderboard.html", "leaderboard.json", "leaderboard.md",
                                                  "games.jsonl", "live/games.json", "games.tar.gz")]  # fmt: skip
    others = [httpx.get(base + "authors/bob/", headers=bob), httpx.get(base + "api/tests", headers=bob),
              httpx.get(base + "authors/ann/", headers=bob), httpx.get(base + "author_tests/t1/test.json"),
              httpx.get(base + f"authors/ann/tests/t1/{test_games[0]['game_id']}.html", headers=bob)]  # fmt: skip
    for answer in public + others:
        text = readable(answer.content)  # an archive's files, each read, and a page's packed data unpacked
        assert "t1-r1" not in text and "ann-v2 against" not in text, answer.url
    assert json.loads(others[1].text) == {"tests": []}
    assert [answer.status_code for answer in others[2:]] == [403, 404, 403]
    # ann's page shows it: the verdict, the curve, its games, each a private replay once its deal is over.
    page = httpx.get(base + "authors/ann/", headers=ann).text
    assert "Test t1: ann-v2 against ann-v1" in page and "<polyline" in page and "tests/t1/t1-r1-t" in page
    # The same ladder, the test decided: she asks for the next one from her page (one ladder for both: its start
    # and her two versions' judging cost more than either test).
    asks_from_her_page_and_opens_a_games_replay_with_her_notes(
        base, tokens, running, request.getfixturevalue("chromium")
    )


def asks_from_her_page_and_opens_a_games_replay_with_her_notes(
    base: str, tokens: dict[str, str], running: Running, chromium: Any
) -> None:
    """By clicks on a phone: a test of ann-v2 against ann-v1; on the phone and a desktop, one of its games' private
    replay, with her bot's notes."""
    for width, device in ((390, PHONE), (1280, DESKTOP)):
        context = chromium.new_context(**device)
        page = context.new_page()
        try:
            page.goto(base + "authors/ann/")
            page.fill("#token", tokens["ann"])
            page.click("button[type=submit]")
            page.wait_for_url(base + "authors/ann/")
            reads_on_screen(page, width)
            if width == 390:  # asked once, by clicks on the phone; the desktop follows the same test (t2)
                page.select_option("#test-a", "ann-v2")
                page.select_option("#test-b", "ann-v1")
                page.fill("#test-elo1", "300")
                with page.expect_navigation():
                    page.click("#test-form button[type=submit]")
                assert page.url.endswith("/authors/ann/#tests")
                text = page.locator("#tests").inner_text()  # asked, or taken up by the ladder already
                assert "Asked: ann-v2 against ann-v1" in text or "Test t2: ann-v2 against ann-v1" in text, text

            def a_game_shown(page: Any = page) -> bool:
                page.reload()
                return page.locator("#tests a[href^='tests/t2/']").count() > 0

            wait_for("a test game shown", a_game_shown, running)
            reads_on_screen(page, width)
            with page.expect_navigation():
                page.locator("#tests a[href^='tests/t2/']").first.click()
            page.wait_for_selector("body[data-ready='1']", timeout=10_000)
            assert "notes of ann-v2" in page.locator("#private").inner_text()  # her heuristic's notes, hers alone
            assert page.locator("#moves li .note").count() > 0
            reads_on_screen(page, width)
        finally:
            context.close()
