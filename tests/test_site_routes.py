"""The site's routes as a whole: every route in the order Starlette matches them, and the header that keeps what
changes out of every cache, shared by every application that answers with it.

Each group of routes is built by its own module (referee/apps/site/app.py lists them); this pins down the whole,
so that moving a route between modules cannot change what is served, or in what order it is matched.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from referee.apps.site.app import create_app
from referee.apps.site.streams import STREAM_HEADERS
from referee.common.http_headers import NO_STORE

ROUTES = [
    ("/events", {"GET", "HEAD"}),
    ("/live", {"GET", "HEAD"}),
    ("/live/", {"GET", "HEAD"}),
    ("/live/games.json", {"GET", "HEAD"}),
    ("/live/{game}", {"GET", "HEAD"}),
    ("/live/{game}/feed", {"GET", "HEAD"}),
    ("/play/", {"GET", "HEAD"}),
    ("/play/new", {"POST"}),
    ("/play/{game}/", {"GET", "HEAD"}),
    ("/play/{game}/screen", {"GET", "HEAD"}),
    ("/play/{game}/choose", {"POST"}),
    ("/", {"GET", "HEAD"}),
    ("/leaderboard.html", {"GET", "HEAD"}),
    ("/leaderboard.md", {"GET", "HEAD"}),
    ("/leaderboard.json", {"GET", "HEAD"}),
    ("/leaderboard.csv", {"GET", "HEAD"}),
    ("/pairs/{first}/{second}.html", {"GET", "HEAD"}),
    ("/games.jsonl", {"GET", "HEAD"}),
    ("/games.tar.gz", {"GET", "HEAD"}),
    ("/replays/{game}.html", {"GET", "HEAD"}),
    ("/games/{game}.jsonl", {"GET", "HEAD"}),
    ("/signin", {"GET", "HEAD"}),
    ("/signin", {"POST"}),
    ("/signout", {"POST"}),
    ("/api/submissions", {"POST"}),
    ("/api/submissions", {"GET", "HEAD"}),
    ("/api/tests", {"POST"}),
    ("/api/tests", {"GET", "HEAD"}),
    ("/authors/{author}/tests/{test}/{game}.html", {"GET", "HEAD"}),
    ("/authors/{author}", {"GET", "HEAD"}),
    ("/authors/{author}/", {"GET", "HEAD"}),
    ("/authors/{author}/builds/{bot}.log", {"GET", "HEAD"}),
    ("/authors/{author}/checks/{bot}/{game}.html", {"GET", "HEAD"}),
    ("/authors/{author}/checks/{bot}/{game}.txt", {"GET", "HEAD"}),
    ("/authors/{author}/games/{game}.txt", {"GET", "HEAD"}),
    ("/authors/{author}/games/{game}.html", {"GET", "HEAD"}),
]


@pytest.fixture
def league(tmp_path: Path) -> Path:
    """A league's folder before its first game has finished: its record names the game, for ``--offer-play``."""
    record = {"name": "league", "league": {"rules": {"game": "stop_the_bus", "table_size": 3}}}
    (tmp_path / "league.json").write_text(json.dumps(record), encoding="utf-8")
    return tmp_path


def test_the_site_matches_its_routes_in_one_order_whichever_module_builds_them(league: Path) -> None:
    routes = create_app(league, offer_play=True).router.routes
    assert [(route.path, route.methods) for route in routes] == ROUTES
    without_play = [route.path for route in create_app(league).router.routes]
    assert without_play == [path for path, _ in ROUTES if not path.startswith("/play/")]


def test_what_changes_is_kept_by_no_cache_and_no_answer_can_change_the_shared_header(league: Path) -> None:
    (league / "leaderboard.md").write_text("# standings\n", encoding="utf-8")

    async def visit() -> dict[str, httpx.Response]:
        transport = httpx.ASGITransport(app=create_app(league, offer_play=True))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
            paths = ["/leaderboard.html", "/leaderboard.md", "/live/", "/live/games.json", "/play/", "/signin"]
            paths += ["/authors/ann/"]
            return {path: await http.get(path) for path in paths}

    for path, answer in asyncio.run(visit()).items():
        assert answer.headers["cache-control"] == "no-store", path
    with pytest.raises(TypeError):
        NO_STORE["Cache-Control"] = "max-age=3600"  # a route that wants more makes its own: {**NO_STORE, ...}
    assert dict(NO_STORE) == {"Cache-Control": "no-store"}
    assert STREAM_HEADERS == {**NO_STORE, "X-Accel-Buffering": "no"}
