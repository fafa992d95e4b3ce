"""`referee play --human SEAT --browser`: a person plays a whole game in Chromium, by clicking the buttons.

The seat is the terminal's (`tests/test_human.py`), its screen and answers carried by a server on 127.0.0.1;
Playwright plays as a person would, one click a turn, at a desktop's width and a phone's, and the game's log
shows every click as the seat's move.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import SAMPLE_BOTS, Bots, read_log
from .test_serve import free_port, wait_until_serving

ENDERS = ("stop the bus", "knock")


def start_play(bots: Bots, tmp_path: Path, game: str, *options: str) -> tuple[subprocess.Popen, str]:
    commands = [shlex.join(bots.command(SAMPLE_BOTS / f"{name}_bot.py")) for name in ("random", "heuristic")]
    play = subprocess.Popen(
        [
            sys.executable, "-m", "referee.cli", "play", "--human", "1", "--browser", "--game", game,
            "--seed", "8", "--turn-limit", "24", "--bot", commands[0], "--bot", commands[1],
            "--log", str(tmp_path / "game.jsonl"), *options,
        ],
        env=bots.subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert play.stdout is not None
    line = play.stdout.readline()
    address = re.search(r"open (http://127\.0\.0\.1:\d+/\?token=\S+) in a browser", line)
    assert address, line + (play.stderr.read() if play.poll() is not None and play.stderr else "")
    return play, address[1]


def click_to_the_end(page: Any, on_turn: Callable[[list[str]], None] = lambda labels: None) -> list[str]:
    """Play the page's seat to the game's end as a person in a hurry would: the first button, or, once a few turns
    have passed, the one that ends the hand; each turn's button labels go to ``on_turn`` first. The labels
    clicked, in order."""
    clicked: list[str] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        page.wait_for_selector("#choices button[data-choice], body[data-over='1']", timeout=30_000)
        if page.get_attribute("body", "data-over") == "1":
            break
        screen = page.get_attribute("body", "data-screen")
        buttons = page.locator("#choices button[data-choice]")
        labels = buttons.all_inner_texts()
        on_turn(labels)
        ender = next((i for i, label in enumerate(labels) if label in ENDERS and len(clicked) > 3), 0)
        clicked.append(labels[ender])
        buttons.nth(ender).click()
        page.wait_for_selector(f"body:not([data-screen='{screen}'])")  # (the site's policy forbids eval)
    return clicked


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("game", ["stop_the_bus", "bastard_brag"])
def test_a_person_plays_a_whole_game_in_the_browser_by_clicking(
    bots: Bots, tmp_path: Path, chromium: Any, game: str, width: int
) -> None:
    play, address = start_play(bots, tmp_path, game)

    def each_turn(labels: list[str]) -> None:
        # A discard's button names the hand it leaves, and that hand's rank.
        assert all(re.search(r", keep (\S+ ){3}\S", label) for label in labels if label.startswith("discard"))
        table = page.locator("#table-lines").inner_text()
        assert "Your hand:" in table and "you" in table
        cards_drawn_as_the_screen_says(page)

    try:
        page = chromium.new_page(viewport={"width": width, "height": 860})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(address)
        clicked = click_to_the_end(page, each_turn)
        assert page.get_attribute("body", "data-over") == "1"
        assert "Placings:" in page.locator("#result").inner_text() and page.locator("#move").is_hidden()
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # a phone reads it all
        assert not errors, errors
        page.close()
        assert play.wait(timeout=30) == 0, play.stderr.read() if play.stderr else ""
    finally:
        if play.poll() is None:
            play.kill()
            play.wait()
    log = read_log(tmp_path / "game.jsonl")
    mine = [
        record for record in log if record["type"] == "decision" and record["seat"] == 1 and len(record["legal"]) > 1
    ]
    assert len(mine) == len(clicked) >= 3  # every click, and nothing else, played the seat's moves
    assert log[-1]["type"] == "game_end"


PRETTY_CARD = re.compile(r"(?:10|[2-9JQKA])[\u2663\u2666\u2665\u2660]")


def cards_drawn_as_the_screen_says(page: Any) -> None:
    """The hand and the table's face-up cards are drawn as cards (as the replays draw them), the cards the screen's
    words name, in its order, each readable and on the screen."""
    lines = page.locator("#table-lines").inner_text().splitlines()
    (hand,) = [line for line in lines if line.startswith("Your hand: ")]
    named = PRETTY_CARD.findall(hand.split("   ")[0])  # its cards (and the one just drawn), not its rank's words
    piles = [line for line in lines if line.startswith(("Discard pile: ", "Centre: "))]
    named = PRETTY_CARD.findall(piles[0].split(" (")[0]) + named if piles else named
    faces = page.eval_on_selector_all("#table-cards .card[data-card]", "cards => cards.map(c => c.title)")
    assert faces == named, (faces, lines)
    width = page.viewport_size["width"]
    for box in (card.bounding_box() for card in page.locator("#table-cards .card").all()):
        assert box and box["width"] >= 30 and box["x"] >= 0 and box["x"] + box["width"] <= width


@pytest.mark.parametrize("width", [390, 1280])
def test_play_human_browser_alone_plays_the_sample_bots_draws_the_cards_and_says_when_you_left(
    bots: Bots, chromium: Any, width: int
) -> None:
    """`referee play --human 0 --browser` and nothing more: a game of the default game against the sample bots,
    whose page draws the cards and, once the person leaves, says so in place of the moves."""
    play = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "play", "--human", "0", "--browser"],
        env=bots.subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert play.stdout is not None
    line = play.stdout.readline()
    address = re.search(r"open (http://127\.0\.0\.1:\d+/\?token=\S+) in a browser", line)
    try:
        assert address, line + (play.stderr.read() if play.poll() is not None and play.stderr else "")
        page = chromium.new_page(viewport={"width": width, "height": 844 if width == 390 else 800})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(address[1])
        page.wait_for_selector("#choices button[data-choice]", timeout=30_000)
        assert "Stop the Bus" in page.locator("#title").inner_text()
        # The sample bots, by default: the heuristic and the random bot.
        assert "seat 0 (you), seat 1 heuristic_bot#1, seat 2 random_bot#2" in page.locator("#since-lines").inner_text()
        cards_drawn_as_the_screen_says(page)
        page.locator("#choices button.leave").click()
        page.wait_for_selector("body[data-over='1']")
        assert page.locator("#move").is_hidden(), "no empty box for a move that will not come"
        assert (
            page.locator("#result").inner_text().endswith("You left the game: it ended there, and counts for no one.")
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not errors, errors
        page.close()
        assert play.wait(timeout=30) == 1 and "you left the game" in (play.stderr.read() if play.stderr else "")
    finally:
        if play.poll() is None:
            play.kill()
            play.wait()


def test_a_sample_bots_name_is_that_sample_bot(bots: Bots) -> None:
    """As check-bot's --opponent takes it: `--bot heuristic` is the sample bot, not a program called heuristic."""
    run = subprocess.run(
        [sys.executable, "-m", "referee.cli", "play", "--game", "bastard_brag", "--quiet", "--bot", "heuristic",
         "--bot", "random", "--bot", "heuristic"],
        env=bots.subprocess_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "heuristic_bot#0" in run.stdout and "random_bot#1" in run.stdout and "faults" not in run.stdout


def test_the_page_answers_only_with_its_token_and_takes_only_a_buttons_click(bots: Bots, tmp_path: Path) -> None:
    play, address = start_play(bots, tmp_path, "stop_the_bus")
    base, token = address.split("/?token=")
    try:
        assert httpx.get(base + "/", timeout=5).status_code == 403
        # The last character changed to one it is not (a token may itself end in "x").
        wrong_token = token[:-1] + ("y" if token.endswith("x") else "x")
        assert httpx.get(base + "/?token=" + wrong_token, timeout=5).status_code == 403
        assert httpx.get(base + "/screen", timeout=5).status_code == 403
        headers = {"X-Token": token}
        deadline = time.monotonic() + 30
        screen = httpx.get(base + "/screen", headers=headers, timeout=5).json()
        while not screen["choices"] and time.monotonic() < deadline:
            time.sleep(0.1)
            screen = httpx.get(base + "/screen", headers=headers, timeout=5).json()
        for hostile in (
            {"n": screen["n"], "choice": len(screen["choices"])},
            {"n": screen["n"], "choice": -1},
            {"n": screen["n"], "choice": True},
            {"n": screen["n"] - 1, "choice": 0},
            {"n": screen["n"], "choice": "0"},
            ["n", 0],
        ):
            answer = httpx.post(base + "/choose", headers=headers, content=json.dumps(hostile), timeout=5)
            assert answer.status_code == 409, hostile
        assert httpx.post(base + "/choose", headers=headers, content=b"{not json", timeout=5).status_code == 409
        assert (
            httpx.post(base + "/choose", content=json.dumps({"n": screen["n"], "choice": 0}), timeout=5).status_code
            == 403
        )
        assert httpx.get(base + "/screen", headers=headers, timeout=5).json()["n"] == screen["n"]  # nothing was played
        left = httpx.post(base + "/choose", headers=headers, content=json.dumps({"n": screen["n"], "choice": "leave"}))
        assert left.status_code == 200
        while not httpx.get(base + "/screen", headers=headers, timeout=5).json()["over"]:  # the page reads the end
            time.sleep(0.05)
        assert play.wait(timeout=30) == 1  # "you left the game"
    finally:
        if play.poll() is None:
            play.kill()
            play.wait()


def test_on_the_bots_clock_a_person_who_does_not_move_in_time_is_played_for_by_the_fault_policy(
    bots: Bots, tmp_path: Path, chromium: Any
) -> None:
    play, address = start_play(
        bots, tmp_path, "stop_the_bus", "--human-clock", "--move-time-ms", "1500", "--time-bank-ms", "0",
        "--policy", "default_action", "--max-faults", "50",
    )  # fmt: skip
    try:
        page = chromium.new_page(viewport={"width": 390, "height": 800})
        page.goto(address)
        page.wait_for_selector("#choices button[data-choice]")
        left = float(page.get_attribute("#status", "data-seconds-left") or "nan")
        assert 0 < left <= 1.5  # the page counts down this move's time
        # No click: the time runs out, the referee plays for the seat, and the next move says so.
        page.wait_for_selector("#status:has-text('Time ran out')", timeout=10_000)
        click_to_the_end(page)  # then in time, to the game's end
        page.close()
        play.wait(timeout=30)
    finally:
        if play.poll() is None:
            play.kill()
            play.wait()
    log = read_log(tmp_path / "game.jsonl")
    faults = [record for record in log if record["type"] == "fault" and record["seat"] == 1]
    assert [fault["kind"] for fault in faults[:1]] == ["timeout"]
    mine = [record for record in log if record["type"] == "decision" and record["seat"] == 1]
    assert mine[0].get("default") is True and any(not record.get("default") for record in mine[1:])


def test_an_organiser_offers_play_against_the_bots_on_the_leagues_site(tmp_path: Path, chromium: Any) -> None:
    # A league as organisers write one: its bot beside it, no output key (results/NAME).
    shutil.copy(SAMPLE_BOTS / "random_bot.py", tmp_path / "random_bot.py")
    bots = "\n".join(f"  - {{name: {name}, command: python random_bot.py}}" for name in "abc")
    league = tmp_path / "league.yaml"
    league.write_text(f"name: offer\ngame: stop_the_bus\nseed: 6\ntable_size: 3\nsandbox: none\nbots:\n{bots}\n")
    subprocess.run([sys.executable, "-m", "referee.cli", "run", str(league), "--no-progress"], check=True)
    output = tmp_path / "results" / "offer"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", str(output), "--port", str(port), "--offer-play"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_serving(base, "/play/")
        page = chromium.new_page(viewport={"width": 390, "height": 800})
        page.goto(base + "/play/")
        page.get_by_role("button", name="Start a game").click()
        page.wait_for_selector("#choices button[data-choice], body[data-over='1']")
        assert "Stop the Bus" in page.locator("#title").inner_text()
        click_to_the_end(page)
        assert page.get_attribute("body", "data-over") == "1" and "Placings:" in page.locator("main").inner_text()
        # The game over, its table is given back: the same visitor starts another from the offer.
        page.goto(base + "/play/")
        page.get_by_role("button", name="Start a game").click()
        page.wait_for_selector("#choices button[data-choice], body[data-over='1']")
        page.close()
        # A POST from no page of this site takes no table (tests/test_play_tables.py has the caps).
        assert httpx.post(base + "/play/new", timeout=5).status_code == 403
        assert httpx.post(base + "/play/new", headers={"Origin": "http://elsewhere.example"}).status_code == 403
        assert httpx.get(base + "/play/0123456789abcdef/screen", timeout=5).status_code == 404
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)
    # These games are not the league's: its folder holds its own three games and nothing more.
    assert len(list((output / "games").iterdir())) == 3
    assert len((output / "games.jsonl").read_text().splitlines()) == 3


def test_play_is_offered_only_when_the_organiser_asks(tmp_path: Path) -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from referee.apps.site.app import create_app

    (tmp_path / "leaderboard.html").write_text("<html></html>")

    async def visit() -> int:
        transport = httpx.ASGITransport(app=create_app(tmp_path))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return (await client.get("/play/")).status_code

    with ThreadPoolExecutor(1) as thread:  # a loop of its own: Chromium's holds this thread's in this module
        assert thread.submit(asyncio.run, visit()).result() == 404
