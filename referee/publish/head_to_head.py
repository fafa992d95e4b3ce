"""The head-to-head pages: one page for each two bots of a league or season, ``pairs/A/B.html``.

A pair's page shows what the league's figures say of the two (``leaderboard.json``'s ``head_to_head``: the games
and deals they shared, how often each finished above the other, the score difference with its interval, the Elo
difference and the likelihood of superiority, from either side) and their newest :data:`PAIR_GAMES` shared games,
each linked to its replay. Its games are those that may be shown (:class:`referee.records.visibility.Shown`, the
rule the league's page is written by): a game held back is on no page until it is shown.

The pages are written with the league's page (:func:`referee.publish.files.write_leaderboards`), into the league's
folder, each self-contained (its script, style and data inline), so that they open from disk (``file://``) as the
league's page does, and ``referee serve`` serves them as they are. ``A`` is the first of the two names in sorted
order; the page shows the pair from the side its address names after ``#`` (``pairs/alpha/bravo.html#bravo``),
else from ``A``'s.

A page is written again only when what it shows changed: the pair's figures or its games. Each folder's pairs are
kept between rewrites (:class:`PairGames`), reading only the records ``games.jsonl`` gained, so a rewrite costs the
same after a million games as after ten thousand. A pair of bots whose names are no plain file name (see
:data:`PAGE_NAME`) gets no page.
"""

from __future__ import annotations

import collections
import functools
import html
import json
import os
import re
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from referee.common.atomic import replace_file
from referee.publish.league_page import ASSETS, game_row, script_json
from referee.records.results import RESULTS_FILE, GameRecord, games_after
from referee.records.visibility import Shown

PAIRS_DIR = "pairs"
PAIR_GAMES = 100  # the newest shared games a pair's page lists (the figures count every one)
# A name that may name a file and a path of referee serve (leaderboard.js's PAGE_NAME says the same).
PAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
_CHUNK = 1 << 22  # bytes of games.jsonl read at a time

Pair = tuple[str, str]


def has_page(bot: str) -> bool:
    """Whether ``bot``'s name can name a pair's page (a plain file name, no ``..``)."""
    return bool(PAGE_NAME.match(bot)) and ".." not in bot


def pair_page(first: str, second: str) -> str:
    """The page of two bots, relative to the league's folder: ``pairs/A/B.html``, ``A`` first in sorted order."""
    a, b = sorted((first, second))
    return f"{PAIRS_DIR}/{a}/{b}.html"


class PairGames:
    """Each pair of bots' shared games that may be shown, read from ``games.jsonl`` as it grows: how many, and the
    newest :data:`PAIR_GAMES`.

    A record past what the rule accounts for is not read yet; a record held is kept aside and counted once shown.
    The reading starts again from nothing when the file is replaced or cut (a grown league renumbers it).
    """

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / RESULTS_FILE
        self._start(None)

    def _start(self, identity: tuple[int, int] | None) -> None:
        self._identity = identity
        self.offset = 0
        self.counts: collections.Counter[Pair] = collections.Counter()
        self.newest: dict[Pair, collections.deque[GameRecord]] = {}
        self.pending: dict[str, GameRecord] = {}
        self.written: dict[Pair, str] = {}  # what each pair's page was last written from, in this process

    def update(self, shown: Shown) -> None:
        """Count the games ``shown`` lets be shown, reading only what the file gained since."""
        try:
            status = self.path.stat()
        except FileNotFoundError:
            self._start(None)
            return
        identity = (status.st_dev, status.st_ino)
        if identity != self._identity or status.st_size < self.offset:
            self._start(identity)
        for game_id in [game_id for game_id in self.pending if shown.game(game_id)]:
            self._add(self.pending.pop(game_id))
        end = status.st_size if shown.accounted is None else min(shown.accounted, status.st_size)
        while self.offset < end:
            games, offset = games_after(self.path, self.offset, min(end, self.offset + _CHUNK))
            if offset == self.offset:  # a line longer than a chunk: read to the end
                games, offset = games_after(self.path, self.offset, end)
                if offset == self.offset:
                    break  # a line still being written
            self.offset = offset
            for game in games:
                if shown.game(game.game_id):
                    self._add(game)
                else:
                    self.pending[game.game_id] = game

    def _add(self, game: GameRecord) -> None:
        bots = sorted(set(game.seats))
        for i, a in enumerate(bots):
            for b in bots[i + 1 :]:
                self.counts[a, b] += 1
                self.newest.setdefault((a, b), collections.deque(maxlen=PAIR_GAMES)).append(game)

    def games(self, pair: Pair) -> list[GameRecord]:
        """The pair's newest shared games listed, the schedule's latest first."""
        return sorted(self.newest.get(pair, ()), key=lambda game: -game.index)


# The pairs of each folder this process writes pages of, kept between rewrites (the live helper's, a long-lived
# process: see referee.publish.live).
_FOLDERS: dict[Path, PairGames] = {}


def pairs_of(board: Mapping[str, Any], games: PairGames) -> dict[Pair, tuple[dict[str, Any], dict[str, Any]]]:
    """The pairs that get a page: two bots of the standings that shared a game (or a deal), each with its figures
    from either side."""
    bots = sorted(row["bot"] for row in board["rows"] if has_page(row["bot"]))
    table = board.get("head_to_head") or {}
    pairs = {}
    for i, a in enumerate(bots):
        for b in bots[i + 1 :]:
            ab, ba = table.get(a, {}).get(b), table.get(b, {}).get(a)
            if ab is None or ba is None:
                continue
            if ab.get("games") or games.counts.get((a, b)):
                pairs[a, b] = (ab, ba)
    return pairs


def write_pair_pages(directory: Path, board: Mapping[str, Any], league: Mapping[str, Any], shown: Shown) -> list[Path]:
    """Write the page of every pair of ``board``'s bots that shared a game, where what it shows changed; remove the
    pages of pairs no longer in the standings. Returns the pages written.

    ``league``: what the pages say of the league (``name``, ``game``); ``shown``: the rule the league's page is
    written by.
    """
    directory = Path(directory)
    games = _FOLDERS.get(directory) or _FOLDERS.setdefault(directory, PairGames(directory))
    games.update(shown)
    pairs = pairs_of(board, games)
    written = []
    rows: dict[str, list[Any]] = {}  # each game's row, made once for each of its pairs (its replay looked for once)

    def row_of(game: GameRecord) -> list[Any]:
        return rows.get(game.game_id) or rows.setdefault(game.game_id, game_row(game, directory))

    for (a, b), (ab, ba) in pairs.items():
        # What the page shows: the league, the figures, and its games (a pair's games change only as it gains one).
        what = json.dumps([league, ab, ba, games.counts.get((a, b), 0)], sort_keys=True)
        path = directory / pair_page(a, b)
        if games.written.get((a, b)) == what and path.is_file():
            continue
        listed = [row_of(game) for game in games.games((a, b))]
        page = render_pair(pair_data(league, a, b, ab, ba, games.counts.get((a, b), 0), listed))
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _holds(path, page):
            replace_file(path, page)
            written.append(path)
        games.written[a, b] = what
    _remove_others(directory / PAIRS_DIR, {pair_page(a, b) for a, b in pairs})
    return written


def pair_data(
    league: Mapping[str, Any],
    a: str,
    b: str,
    ab: Mapping[str, Any],
    ba: Mapping[str, Any],
    shared: int,
    listed: list[list[Any]],
) -> dict[str, Any]:
    """A pair's page's data: the league, the two bots, the figures from each side, the games listed (each as the
    league's page lists a game: :func:`referee.publish.league_page.game_row`)."""
    return {
        "league": dict(league),
        "bots": [a, b],
        "figures": {a: dict(ab), b: dict(ba)},
        "shared": shared,  # games shown that both sat in (the figures' games leave out void ones)
        "games": listed,
        "listed": len(listed),
    }


def render_pair(data: Mapping[str, Any]) -> str:
    """A pair's page: the template with its style, script and data inline."""
    a, b = data["bots"]
    title = f"{a} and {b}, head to head \u2014 {data['league'].get('name', '')}"
    head, tail = _template()
    return head.replace("{{title}}", html.escape(title)) + script_json(dict(data)) + tail


@functools.cache
def _template() -> tuple[str, str]:
    """The page's template with its style and script inline, read once: what comes before its data, and after."""
    template = (
        (ASSETS / "pair.html")
        .read_text(encoding="utf-8")
        .replace("/*{{style}}*/", (ASSETS / "pair.css").read_text(encoding="utf-8"))
        .replace("/*{{script}}*/", (ASSETS / "pair.js").read_text(encoding="utf-8"))
    )
    head, tail = template.split("{{data}}")
    return head, tail


def pair_data_of(html_text: str) -> dict[str, Any]:
    """The data inside a pair's page (for tests and tools)."""
    start = html_text.index('<script id="pair"')
    start = html_text.index(">", start) + 1
    data: dict[str, Any] = json.loads(html_text[start : html_text.index("</script>", start)])
    return data


def _holds(path: Path, page: str) -> bool:
    """Whether ``path`` holds ``page`` already (a page written again by another process: left as it is)."""
    try:
        return path.read_text(encoding="utf-8") == page
    except (OSError, UnicodeDecodeError):
        return False


def _remove_others(folder: Path, kept: set[str]) -> None:
    """Remove the pages of ``folder`` (``pairs/``) that are not ``kept`` (paths relative to the league's folder),
    and the folders they leave empty."""
    try:
        firsts = list(os.scandir(folder))
    except FileNotFoundError:
        return
    for first in firsts:
        if not first.is_dir(follow_symlinks=False):
            continue
        for entry in os.scandir(first.path):
            if entry.name.endswith(".html") and f"{PAIRS_DIR}/{first.name}/{entry.name}" not in kept:
                Path(entry.path).unlink(missing_ok=True)
        with suppress(OSError):
            os.rmdir(first.path)  # only if empty
