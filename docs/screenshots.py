"""Make the screenshots in docs/ (shown in the README): run the demo league, then photograph its pages.

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
    for name in ("leaderboard.png", "leaderboard-phone.png", "replay.png", "replay-phone.png"):
        print(f"docs/{name}: {(DOCS / name).stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
