"""Each two bots' page (``pairs/A/B.html``): their figures and the games they shared that may be shown, written with
the league's page, reached from its head to head, read from disk and on ``referee serve``, on a phone and a desktop.

A real league (tests/published.py), one of whose deals is held back as a run holds it while a game dealt alike is
still in play: no page names its games, and the figures are those of the games shown.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from referee.publish.files import write_leaderboards
from referee.publish.head_to_head import pair_data_of
from referee.publish.league_page import page_data_of
from referee.records.standings import folder_standings

from .published import copy_of, hold, play_league, records, rewrite_pages, served, table_games


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play_league(tmp_path_factory.mktemp("head_to_head"))


def pair_pages(output: Path) -> dict[tuple[str, str], Path]:
    return {(path.parent.name, path.stem): path for path in sorted((output / "pairs").glob("*/*.html"))}


def test_each_two_bots_have_a_page_of_their_figures_and_the_games_they_shared_that_may_be_shown(
    league: Path, tmp_path: Path
) -> None:
    output = copy_of(league, tmp_path)
    held = table_games(output, 1)  # its three rotations, dealt alike: as if one were still being played
    hold(output, held)
    rewrite_pages(output)
    board = json.loads((output / "leaderboard.json").read_text())
    shown = [record for record in records(output) if record["game_id"] not in held]
    assert board["games"] == len(shown) == 9
    bots = sorted(board["head_to_head"])
    pages = pair_pages(output)
    assert set(pages) == {(a, b) for i, a in enumerate(bots) for b in bots[i + 1 :]}  # every two of the four
    for (a, b), path in pages.items():
        text = path.read_text()
        data = pair_data_of(text)
        assert data["bots"] == [a, b]
        assert data["figures"] == {a: board["head_to_head"][a][b], b: board["head_to_head"][b][a]}
        shared = sorted((r for r in shown if a in r["seats"] and b in r["seats"]), key=lambda r: -r["index"])
        assert shared, (a, b)
        assert [game[1] for game in data["games"]] == [record["game_id"] for record in shared], "newest first"
        assert data["shared"] == data["figures"][a]["games"] == len(shared)
        for game, record in zip(data["games"], shared, strict=True):
            seats, finish_order = game[2], game[3]
            assert [seats[seat] for seat in finish_order] == [record["seats"][s] for s in record["finish_order"]]
            assert game[8] == 2 and (output / "replays" / f"{game[1]}.html").is_file()  # its replay, beside it
        assert not any(game_id in text for game_id in held), f"{path} names a game held back"
    league_page = page_data_of((output / "leaderboard.html").read_text())
    assert league_page["league"]["pair_pages"] is True


def test_a_pairs_page_is_written_again_only_when_what_it_shows_has_changed(league: Path, tmp_path: Path) -> None:
    output = copy_of(league, tmp_path)
    held = table_games(output, 1)
    hold(output, held)

    def write() -> dict[tuple[str, str], int]:
        standings, recorded = folder_standings(output)
        write_leaderboards(standings, output, recorded.name)
        return {pair: path.stat().st_ino for pair, path in pair_pages(output).items()}  # a page replaced: a new file

    first = write()
    assert write() == first, "nothing changed: no page written again"
    (output / "visibility.json").unlink()  # the deal is over: its games are shown
    then = write()
    at_the_table = set(next(r for r in records(output) if r["game_id"] == held[0])["seats"])
    rewritten = {pair for pair in then if then[pair] != first[pair]}
    assert rewritten == {pair for pair in then if set(pair) <= at_the_table}, "the pairs of the games shown alone"
    assert len(rewritten) == 3


@pytest.mark.parametrize("width", [390, 1280])
def test_the_league_pages_head_to_head_leads_to_each_pair_which_reads_on_a_phone_and_a_desktop(
    chromium, league: Path, width: int
) -> None:
    board = json.loads((league / "leaderboard.json").read_text())
    row, column = board["rows"][0]["bot"], board["rows"][1]["bot"]
    a, b = sorted((row, column))
    context = chromium.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto((league / "leaderboard.html").as_uri())
        page.wait_for_selector("body[data-ready='1']")
        links = page.locator("#pairs a.pair")
        assert links.count() == 12, "every cell of the four bots' table leads to its pair's page"
        # The cell of the first row's bot against the second column's: the pair's page from the row's bot's side.
        cell = page.locator("#pairs tbody tr").nth(0).locator("td").nth(1).locator("a")
        assert cell.get_attribute("href") == f"pairs/{a}/{b}.html#{row}"
        cell.click()
        page.wait_for_selector(f"body[data-ready='1'][data-side='{row}']")
        assert page.text_content("h1") == f"{row} and {column}, head to head"
        pair = board["head_to_head"][row][column]
        assert page.text_content("#figures tr[data-key='above'] td") == f"{pair['above']} of {pair['games']}"
        assert page.text_content("#figures tr[data-key='below'] td") == (
            f"{pair['games'] - pair['above'] - pair['ties']} of {pair['games']}"
        )
        assert page.text_content("#figures tr[data-key='los'] td") == f"{100 * pair['los']:.1f}%"
        rows = page.locator("#games tbody tr")
        assert rows.count() == pair["games"]
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the pair's page is {overflow} px wider than {width} px"
        # Every cell whole and on the screen: none cut, none to be scrolled to.
        cells = page.eval_on_selector_all(
            "#games td, #figures td, #figures th",
            """nodes => nodes.map(node => { const box = node.getBoundingClientRect();
                return {text: node.textContent, left: box.left, right: box.right, cut: node.scrollWidth > node.clientWidth}; })""",
        )
        for cell in cells:
            assert cell["left"] >= 0 and cell["right"] <= width and not cell["cut"], f"{cell['text']!r} at {width} px"
        # From the other side: the same figures, swapped.
        page.click("#swap")
        page.wait_for_selector(f"body[data-side='{column}']")
        assert page.text_content("#figures tr[data-key='above'] td") == (
            f"{board['head_to_head'][column][row]['above']} of {pair['games']}"
        )
        # Each game leads to its replay.
        game = rows.first.get_attribute("data-game")
        rows.first.locator("td a").first.click()
        page.wait_for_selector("body[data-ready='1']")
        assert page.text_content("h1").startswith(game)
    finally:
        context.close()
    assert not errors, errors


def test_referee_serve_serves_each_pairs_page_as_written_at_an_exact_path_and_no_game_held(
    chromium, league: Path, tmp_path: Path
) -> None:
    output = copy_of(league, tmp_path)
    held = table_games(output, 2)
    hold(output, held)
    rewrite_pages(output)
    pages = pair_pages(output)
    with served(output) as base:
        for (a, b), path in pages.items():
            answer = httpx.get(f"{base}/pairs/{a}/{b}.html")
            assert answer.status_code == 200 and answer.content == path.read_bytes()
            assert answer.headers["cache-control"] == "no-store"
            assert not any(game_id in answer.text for game_id in held)
            for other in (f"/pairs/{b}/{a}.html", f"/pairs/{a}/{b}.html/", f"/pairs/{a}/{b}", f"/pairs/{a}.html"):
                assert httpx.get(base + other).status_code == 404, other
        assert httpx.get(f"{base}/pairs/nobody/zed.html").status_code == 404
        # The league's page as served leads to them as from disk.
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        try:
            page = context.new_page()
            page.goto(f"{base}/leaderboard.html")
            page.wait_for_selector("body[data-ready='1']")
            first = page.locator("#pairs a.pair").first
            href = first.get_attribute("href")
            first.click()
            page.wait_for_selector("body[data-ready='1']")
            assert page.url == f"{base}/{href}"
            assert page.locator("#games tbody tr td a").count() > 0, "served: each game leads to its replay"
        finally:
            context.close()
