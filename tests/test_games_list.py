"""The league's page's list of games in Chromium, on a phone (390 x 844) and a desktop: newest first, a hundred at a
time with a control for more, and every cell whole on the screen (a game's result is never cut, nor any cell left
to be scrolled to).

A season of 250 games at tables of four bots with long names (``games.jsonl`` and ``league.json`` as a league
writes them), its pages written as a league writes them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from referee.publish.files import write_leaderboards
from referee.records.standings import folder_standings

BOTS = ["heuristic_bot-v12", "newcomer-version-2", "random-bot.3", "search-bot_deep", "alpha"]
GAMES = 250


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("games_list")
    chooser = random.Random(5)
    lines = []
    for index in range(GAMES):
        seats = chooser.sample(BOTS, 4)
        order = chooser.sample(range(4), 4)
        faults = [{"illegal": 1} if seat == 0 and index % 7 == 0 else {} for seat in range(4)]
        record = {"index": index, "game_id": f"r{index // 10 + 1}-t{index % 10 + 1:03d}-s0", "seed": str(index),
                  "seats": seats, "finish_order": order, "hands_played": 9, "decisions": 120, "faults": faults}  # fmt: skip
        lines.append(json.dumps(record) + "\n")
    (folder / "games.jsonl").write_text("".join(lines))
    (folder / "league.json").write_text(json.dumps({"name": "a long season", "bots": BOTS, "game": "stop_the_bus"}))
    standings, recorded = folder_standings(folder)
    write_leaderboards(standings, folder, recorded.name)
    return folder


def shown_numbers(page) -> list[int]:
    return [
        int(text)
        for text in page.eval_on_selector_all("#games tbody tr td:first-child", "c => c.map(x => x.textContent)")
    ]


def cells_off_screen(page, width: int) -> list[str]:
    """Each cell of the games listed that is cut, or not wholly on the screen (to be scrolled to)."""
    return page.evaluate(
        """width => [...document.querySelectorAll('#games tbody td')].filter(td => td.textContent).flatMap(td => {
            const box = td.getBoundingClientRect();
            const cut = td.scrollWidth > td.clientWidth + 1 || box.left < 0 || box.right > width;
            return cut ? [td.closest('tr').dataset.game + ': ' + td.textContent] : [];
        })""",
        width,
    )


@pytest.mark.parametrize("width", [390, 1280])
def test_the_games_are_listed_newest_first_a_hundred_at_a_time_and_whole_on_a_phone_and_a_desktop(
    chromium, season: Path, width: int
) -> None:
    context = chromium.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto((season / "leaderboard.html").as_uri())
        page.wait_for_selector("body[data-ready='1']")
        assert shown_numbers(page) == list(range(GAMES, GAMES - 100, -1)), "the newest first, a hundred"
        more = page.locator("#games-more")
        assert more.is_visible() and more.text_content() == "show 100 more (150 not shown)"
        box = more.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= width
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
        assert cells_off_screen(page, width) == []
        # Each game's result is every bot, in finish order, each name whole with its place.
        results = page.eval_on_selector_all("#games td.players", "cells => cells.map(c => c.innerText)")
        assert all(len(result.split(", ")) == 4 for result in results), results[:3]
        more.click()
        assert shown_numbers(page) == list(range(GAMES, GAMES - 200, -1))
        assert more.text_content() == "show 50 more (50 not shown)"
        more.click()
        assert shown_numbers(page) == list(range(GAMES, 0, -1))
        assert more.is_hidden()
        assert cells_off_screen(page, width) == []
        # A bot's games, newest first, a hundred at a time again.
        page.select_option("#bot-filter", "alpha")
        numbers = shown_numbers(page)
        assert numbers == sorted(numbers, reverse=True) and len(numbers) == 100
        assert page.is_visible("#games-more")
    finally:
        context.close()
    assert not errors, errors
