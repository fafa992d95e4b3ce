"""A replay asked for while its deals are held back, in Chromium on a phone (390 x 844) and a desktop: a styled page
that says what it waits for, names no time, and looks again by itself until the replay may be shown."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Error as PlaywrightError

from .published import copy_of, hold, play_league, served, table_games


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play_league(tmp_path_factory.mktemp("held_back_replay"))


@pytest.fixture
def held(league: Path, tmp_path: Path) -> Iterator[tuple[Path, str, str]]:
    output = copy_of(league, tmp_path)
    game = table_games(output, 1)[0]
    hold(output, table_games(output, 1))
    with served(output) as base:
        yield output, base, game


@pytest.mark.parametrize("width", [390, 1280])
def test_a_held_back_replay_waits_on_a_page_that_reloads_itself_into_the_replay(
    chromium, held: tuple[Path, str, str], width: int
) -> None:
    output, base, game = held
    assert httpx.get(f"{base}/replays/{game}.html").status_code == 404  # a script is told in plain text
    context = chromium.new_context(viewport={"width": width, "height": 844})
    try:
        page = context.new_page()
        answer = page.goto(f"{base}/replays/{game}.html")
        assert answer is not None and answer.status == 404
        assert "is not ready yet" in page.inner_text("h1")
        assert "looks again every 5 seconds" in page.inner_text("main")
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing off a phone's screen
        font = page.evaluate("parseFloat(getComputedStyle(document.querySelector('main p')).fontSize)")
        assert font >= 14  # styled, readable
        # Every game on the deals has passed: the page, looking again, becomes the replay.
        accounted = (output / "games.jsonl").stat().st_size
        (output / "visibility.json").write_text(json.dumps({"accounted": accounted, "held": {}}), encoding="utf-8")
        deadline, content = time.monotonic() + 20, ""
        while time.monotonic() < deadline:
            page.wait_for_timeout(250)
            try:  # the page reloads itself: read it between two loads
                content = page.content()
            except PlaywrightError:
                continue
            if "is not ready yet" not in content:
                break
        assert "is not ready yet" not in content and game in content
    finally:
        context.close()
