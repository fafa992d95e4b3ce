"""Make the screenshots in docs/ (shown in the README): run the demo league, then photograph its pages; then a game
watched live on `referee serve` (three search bots, which think) and a person's seat of `referee play --browser`.

    make screenshots                                             # the league `make demo` plays
    .venv/bin/python docs/screenshots.py tournaments/demo.yaml   # the same, by hand

Needs Playwright and Debian's Chromium (`make browser-deps`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def main() -> None:
    league = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tournaments" / "demo_python.yaml"
    with tempfile.TemporaryDirectory() as temporary:
        output = Path(temporary) / "demo"
        subprocess.run([sys.executable, "-m", "referee.cli", "run", str(league), "--output", str(output),
                        "--no-progress"], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        games = [json.loads(line) for line in (output / "games.jsonl").read_text().splitlines()]
        game_id = max(games, key=lambda game: game["decisions"])["game_id"]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto((output / "leaderboard.html").as_uri())
            page.wait_for_selector("body[data-ready='1']")
            page.screenshot(path=DOCS / "leaderboard.png")
            phone_board = browser.new_page(viewport={"width": 390, "height": 760}, device_scale_factor=1)
            phone_board.goto((output / "leaderboard.html").as_uri())
            phone_board.wait_for_selector("body[data-ready='1']")
            phone_board.screenshot(path=DOCS / "leaderboard-phone.png")
            page.set_viewport_size({"width": 1280, "height": 640})
            page.goto((output / "replays" / f"{game_id}.html").as_uri() + "#step=12")
            page.wait_for_selector("body[data-ready='1']")
            page.screenshot(path=DOCS / "replay.png")
            phone = browser.new_page(viewport={"width": 390, "height": 760}, device_scale_factor=1)
            phone.goto((output / "replays" / f"{game_id}.html").as_uri() + "#step=12&seat=0")
            phone.wait_for_selector("body[data-ready='1']")
            phone.screenshot(path=DOCS / "replay-phone.png")
            browser.close()
    live_and_play()
    for name in PICTURES:
        print(f"docs/{name}: {(DOCS / name).stat().st_size / 1024:.0f} KiB")


PICTURES = ("leaderboard.png", "leaderboard-phone.png", "replay.png", "replay-phone.png", "live.png", "live-phone.png",
            "play.png", "play-phone.png")  # fmt: skip
SEARCH_BOT = ROOT / "sample_bots" / "python" / "search_bot.py"
RANDOM_BOT = ROOT / "sample_bots" / "python" / "random_bot.py"
HEURISTIC_BOT = ROOT / "sample_bots" / "python" / "heuristic_bot.py"


def live_and_play() -> None:
    """A game in play as a spectator sees it, and a person's seat in the browser, at a desktop's and a phone's width."""
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        league = folder / "live.yaml"
        bots = "".join(f"  - {{name: {name}, command: python {SEARCH_BOT}}}\n" for name in ("ada", "bea", "cyd"))
        league.write_text(f"name: live\ngame: stop_the_bus\nseed: 28\ntable_size: 3\nbots:\n{bots}")
        output = folder / "out"
        output.mkdir()
        server = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", str(output), "--port", "8765"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        running = subprocess.Popen([sys.executable, "-m", "referee.cli", "run", str(league), "--output", str(output),
                                    "--no-progress"], stdout=subprocess.DEVNULL)  # fmt: skip
        human = subprocess.Popen([sys.executable, "-m", "referee.cli", "play", "--game", "bastard_brag", "--human", "0", "--browser",
                                  "--seed", "4", "--bot", f"python {RANDOM_BOT}", "--bot", f"python {HEURISTIC_BOT}"],
                                 stdout=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert human.stdout is not None
            address = human.stdout.readline().split("open ", 1)[1].split(" in a browser")[0]
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                for width, height, suffix in ((1280, 700, ""), (390, 760, "-phone")):
                    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
                    page.goto("http://127.0.0.1:8765/live/")
                    page.locator("#games a").first.click(timeout=60_000)
                    page.locator("#moves li").nth(12).wait_for(timeout=60_000)  # a dozen moves in
                    page.screenshot(path=DOCS / f"live{suffix}.png")
                    page.goto(address)
                    page.wait_for_selector("#choices button[data-choice]")
                    page.screenshot(path=DOCS / f"play{suffix}.png", full_page=True)
                browser.close()
        finally:
            for process in (human, running, server):
                process.terminate()
                process.wait()


if __name__ == "__main__":
    main()
