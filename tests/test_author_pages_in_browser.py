"""An author's own pages as the author reads them in Chromium, on a phone (390x844) and a desktop (1280x800).

Everything real: a ``referee ladder`` run of three authors' bots, a ``referee serve`` of its ladder file on
loopback, the author signing in with the page's form. Each game on the author's page opens the author's private
replay (not a download of its log), with the notes their bot wrote beside its decisions, wrapped to the screen;
and each page of their bot's output (in a game, in a check game, its build's) is a page that reads on a phone:
wrapped to the screen, at the phone's width, with the way back to the author's page.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import PYTHON, Bots
from tests.test_ladder import ladder_file
from tests.test_ladder_suspension import ladder
from tests.test_serve import free_port, wait_until_serving
from tests.test_site import add_author

WORD = "ann-thinks-" + "x" * 240  # one unbroken word, longer than a phone is wide
NOTE_WORD = "ann-believes-" + "z" * 240  # the same, in the bot's private notes
TALKATIVE_BOT = f"""
import random
import sys

from referee.botkit import note, run_bot


def decide(obs):
    print("{WORD}", obs.hand_number, file=sys.stderr, flush=True)
    chosen = random.Random(repr((obs.seat, obs.hand_number, obs.turns_this_hand))).choice(obs.legal_actions)
    note("{NOTE_WORD}")
    note(f"chose {{chosen}} in hand {{obs.hand_number}}")
    return chosen


if __name__ == "__main__":
    run_bot(decide, name="talkative", version="1")
"""
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 3}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}


@pytest.fixture
def season(tmp_path: Path, bots: Bots):
    """A ladder whose three games are played and shown, served on loopback: ann (a bot that talks, and a build that
    says so) has a token."""
    path = ladder_file(tmp_path, bots, {"ann": "random", "bob": "random", "cat": "random"}, concurrency=1)
    ann = path.parent / "submissions" / "ann"
    (ann / "talkative_bot.py").write_text(TALKATIVE_BOT)
    run = json.dumps(["python", "talkative_bot.py", "--marker", bots.marker])
    build = json.dumps("python -c \"print('ann builds ' + 'y' * 300)\"")
    (ann / "bot.yaml").write_text(f"name: ann\nversion: '1'\nbuild: {build}\nrun: {run}\n")
    token = add_author(path, "ann")
    played = ladder(path, bots, "--games", "3")
    assert played.returncode == 0, played.stderr
    port = free_port()
    server = subprocess.Popen([PYTHON, "-m", "referee", "serve", str(path), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    base = f"http://127.0.0.1:{port}/"
    wait_until_serving(base, "leaderboard.html")
    try:
        yield base, token
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)


def reads_on_screen(page: Any, width: int) -> None:
    """The page is laid out at the screen's width (a phone does not shrink it to a desktop's), nothing wider."""
    assert page.evaluate("window.innerWidth") == width
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def read_output(page: Any, width: int, title: str) -> None:
    """A page of a bot's output: a heading, the lines wrapped in a readable size, the way back to the author."""
    page.wait_for_selector("#back")
    assert title in page.locator("h1").inner_text()
    reads_on_screen(page, width)
    shown = page.locator("pre.output").first
    style = shown.evaluate("(pre) => [getComputedStyle(pre).whiteSpace, parseFloat(getComputedStyle(pre).fontSize)]")
    assert style[0] == "pre-wrap" and style[1] >= 13, style
    box = shown.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width


def test_an_authors_games_open_their_replays_and_their_bots_output_reads_on_a_phone(season, chromium) -> None:
    base, token = season
    page_url = base + "authors/ann/"
    for width, device in ((390, PHONE), (1280, DESKTOP)):
        context = chromium.new_context(**device)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
        downloads: list[str] = []
        page.on("download", lambda download, downloads=downloads: downloads.append(download.url))
        try:
            page.goto(page_url)
            page.fill("#token", token)
            page.click("button[type=submit]")  # the browser's own form: from this site's page
            page.wait_for_url(page_url)
            reads_on_screen(page, width)
            # A game of the version opens its replay, drawn, and no file to download.
            game = page.locator("section#ann-v1 table.games tbody tr").first
            link = game.locator("td").first.locator("a")
            game_id = link.inner_text()
            assert link.get_attribute("href") == f"games/{game_id}.html", "the private replay, not the game's log"
            with page.expect_navigation():
                link.click()
            page.wait_for_selector("body[data-ready='1']", timeout=10_000)
            assert page.text_content("h1").startswith(game_id)
            # The bot's notes, beside its decisions in the list of moves and under the caption at its step.
            assert "notes of ann-v1" in page.locator("#private").inner_text()
            noted = page.locator("#moves li .note")
            assert noted.count() > 0
            assert NOTE_WORD in noted.first.inner_text() and "chose " in noted.first.inner_text()
            noted.first.click()
            assert page.locator("#note").is_visible()
            assert NOTE_WORD in page.locator("#note").inner_text()
            assert "note of ann-v1" in page.locator("#note").inner_text()
            box = page.locator("#note").bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, box
            reads_on_screen(page, width)
            page.go_back()
            # Its output in that game: a page, wrapped to the screen, with the way back.
            with page.expect_navigation():
                page.locator("section#ann-v1 table.games tbody tr").first.get_by_text("output").click()
            read_output(page, width, f"Your bot's output in {game_id}")
            assert WORD in page.locator("pre.output").first.inner_text()
            assert page.get_by_role("link", name="your replay of the game").get_attribute("href") == f"{game_id}.html"
            with page.expect_navigation():
                page.click("#back")
            assert page.url == page_url
            # The output of its check game and of its build, the same.
            with page.expect_navigation():
                page.locator("section#ann-v1 ul.links").get_by_text("your bot's output").first.click()
            read_output(page, width, "ann-v1's output in its check game")
            assert WORD in page.locator("pre.output").first.inner_text()
            with page.expect_navigation():
                page.click("#back")
            assert page.url == page_url
            with page.expect_navigation():
                page.locator("section#ann-v1 ul.links").get_by_text("the build's output").click()
            read_output(page, width, "The build of ann-v1")
            assert "ann builds yyy" in page.locator("pre.output").inner_text()
            with page.expect_navigation():
                page.click("#back")
            assert page.url == page_url
            assert not downloads and not errors, (downloads, errors)
        finally:
            context.close()
    # A script with the token still reads the output as plain text.
    answer = httpx.get(f"{base}authors/ann/builds/ann-v1.log", headers={"Authorization": f"Bearer {token}"})
    assert answer.headers["content-type"].startswith("text/plain") and "ann builds yyy" in answer.text
