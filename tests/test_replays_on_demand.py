"""Replay pages cost a league nothing: `referee serve` makes each from its game's log when it is asked for.

A league writes replay pages as files only with ``static_replays: true`` (or afterwards, with `referee
leaderboard DIR --write`); without, every replay is still one click away on `referee serve`, the same page
`referee replay` writes from the log, as published.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import httpx

from referee.publish.redaction import public_log
from referee.publish.replay_page import page_data, page_data_of
from referee.records.gamelog import log_files, log_game_id
from referee.records.transcript import read_game

from .conftest import CHROMIUM, CHROMIUM_ARGS, PYTHON, SAMPLE_BOTS, sync_playwright
from .test_serve import free_port, wait_until_serving


def test_a_league_writes_no_replay_page_and_serve_makes_each_from_its_log(tmp_path: Path) -> None:
    bots = "\n".join(f"  - {{name: {name}, command: [{PYTHON}, {SAMPLE_BOTS / 'random_bot.py'}]}}" for name in "abc")
    league = tmp_path / "league.yaml"
    league.write_text(
        f"name: ondemand\ngame: bastard_brag\nseed: 5\ntable_size: 3\nsandbox: none\nbots:\n{bots}\n", encoding="utf-8"
    )
    output = tmp_path / "out"
    subprocess.run(
        [PYTHON, "-m", "referee.cli", "run", str(league), "--output", str(output), "--no-progress"], check=True
    )
    logs = log_files(output / "games")
    assert len(logs) == 3 and not (output / "replays").exists()

    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "referee.cli", "serve", str(output), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, "/leaderboard.html")
        for log in logs:
            answer = httpx.get(f"{base}/replays/{log_game_id(log)}.html", timeout=10)
            assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
            start, steps = read_game(log, public_log)
            assert page_data_of(answer.text) == page_data(start, steps, "../leaderboard.html")
        for hostile in ("nothing", "..%2fleague", ".hidden", "r1-t001-s0.jsonl%00"):
            assert httpx.get(f"{base}/replays/{hostile}.html", timeout=10).status_code == 404
        if sync_playwright is not None and CHROMIUM.exists():
            one_click_from_the_league_page(base, log_game_id(logs[0]))
        assert not (output / "replays").exists()  # made for the asking, never written
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)


def one_click_from_the_league_page(base: str, game_id: str) -> None:
    """In Chromium: the served league's page links each game to its replay, which opens and draws."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(base + "/leaderboard.html")
            page.locator(f'tr[data-game="{game_id}"] a', has_text="replay").click()
            page.wait_for_selector("#table .seat")
            assert page.url.split("#")[0].endswith(f"/replays/{game_id}.html")
        finally:
            browser.close()
