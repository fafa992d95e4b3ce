"""Everything a ``referee serve`` gives out while games are played, recorded, and checked against the games' logs.

:class:`Recorder` asks a running server, again and again, for every page, record, log, replay, feed and
author's page it might give (and the same paths spelled other ways: ``/games.jsonl/``, ``//games.jsonl``,
``/replays/../games.jsonl`` ...), with raw HTTP requests sent as written, and keeps every answer with the time
it arrived, each feed's chunks as they arrived. :func:`early` then checks every answer against the truth the
league's folder holds once it is over (:class:`Truth`: each game's seed, each hand's and each game's end as
its log timed them, which games were dealt alike), by the rule of :mod:`referee.records.visibility`:

- a seed (any game's, or the league's) only once every game on its deals has ended, and the delay after;
- a finished game named by a record, a log, a replay, the league's page or leaderboards, an author's page or
  its bots' output: likewise; and never more games counted than were shown by then;
- a feed's line for hand ``h``: once every other game on its deals has passed hand ``h`` (its showdown) or
  ended, and the delay after, and never a card before its own game has shown it (tests/test_spectating.py's
  ``leaks``); a game listed in play, or its live page, once its first line may be.

The arrival time is after the server sent the answer, so an answer that arrived in time was sent in time.
"""

from __future__ import annotations

import contextlib
import gzip
import http.client
import io
import json
import re
import tarfile
import threading
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

from referee.publish.league_page import page_data_of as league_page_data
from referee.publish.replay_page import page_data_of as replay_page_data
from referee.records.gamelog import log_path, log_text

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # the first bytes of a Zstandard frame

# Paths no route names, each spelled as an attacker would: each must be 404, and none may hold a seed.
VARIANTS = (
    "/games.jsonl/", "//games.jsonl", "/./games.jsonl", "/replays/../games.jsonl", "/live/../games.jsonl",
    "/games.jsonl%2F", "/%67ames.jsonl", "/games%2Ejsonl", "/games.jsonl;x", "/GAMES.JSONL", "/games.jsonl/.",
    "/leaderboard.html/../games.jsonl", "/league.json", "//league.json", "/league.json/", "/visibility.json",
    "/held_back.json", "/tables.jsonl", "/register.jsonl", "/authors.json", "/replays/", "/games/", "/logs/",
    "/live/x/../../games.jsonl", "/./league.json", "/games/../league.json", "/%2e/games.jsonl",
    "/games.tar.gz/", "//games.tar.gz", "/pairs/", "/pairs/x/../../games.jsonl", "/notes/", "/notes/../games.jsonl",
)  # fmt: skip


VARIANTS_EVERY = 4  # rounds: the paths spelled other ways are asked for in one round of this many


def game_variants(game_id: str) -> list[str]:
    """A game's log, replay and feed file, each spelled another way."""
    return [f"/games/{game_id}.jsonl/", f"//games/{game_id}.jsonl", f"/games/./{game_id}.jsonl",
            f"/replays/{game_id}.html/", f"/replays//{game_id}.html", f"/live/{game_id}.jsonl",
            f"/games/{game_id}%2Ejsonl", f"/live/{game_id}/../../games/{game_id}.jsonl",
            f"/notes/{game_id}.jsonl.zst", f"/games/../notes/{game_id}.jsonl.zst"]  # fmt: skip


@dataclass
class Answer:
    """One answer, whole, or one chunk of a feed's stream (``feed`` its game), and when it arrived."""

    at: float
    path: str
    status: int
    body: bytes
    feed: str | None = None
    asker: str | None = None  # the author whose token it was asked with (None: a visitor)


@dataclass
class Recorder:
    """Asks a server on loopback for everything, in threads, until :meth:`stop`; keeps every answer."""

    port: int
    game_ids: Sequence[str]  # every game the league will play: the recorder asks for each from the start
    authors: dict[str, str] = field(default_factory=dict)  # author -> token: their pages and their bots' output
    answers: list[Answer] = field(default_factory=list)
    rounds: int = 0

    def __post_init__(self) -> None:
        self._pairs: set[str] = set()  # the head-to-head pages the league's figures name (pairs/A/B.html)
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._streaming: set[str] = set()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        thread = threading.Thread(target=self._crawl, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> list[Answer]:
        """One last round (everything now over), then stop; the answers, in the order they arrived."""
        time.sleep(0.3)
        self._done.set()
        for thread in list(self._threads):
            thread.join(timeout=30)
        self._round(self._connection())
        return sorted(self.answers, key=lambda answer: answer.at)

    def _connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def _get(self, connection: http.client.HTTPConnection, path: str, token: str | None = None) -> Answer | None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            connection.request("GET", path, headers=headers)  # the path as written: no client tidies it
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException):
            connection.close()
            return None
        asker = next((author for author, given in self.authors.items() if given == token), None) if token else None
        answer = Answer(time.time(), path, response.status, body, asker=asker)
        with self._lock:
            self.answers.append(answer)
        return answer

    def _crawl(self) -> None:
        connection = self._connection()
        while not self._done.is_set():
            variants = self.rounds % VARIANTS_EVERY == 0
            self._round(connection, variants=variants, archive=not variants and self.rounds % 2 == 1)
            self.rounds += 1

    def _round(self, connection: http.client.HTTPConnection, variants: bool = True, archive: bool = True) -> None:
        """Ask for everything once; the paths spelled other ways only when ``variants`` (every few rounds, so that a
        round is short on a loaded machine, and the pages that change as games end are asked for often), the archive
        of every game shown and each two bots' page only when ``archive`` (every other round, those of no variants)."""
        for path in ("/", "/leaderboard.html", "/leaderboard.json", "/leaderboard.md", "/leaderboard.csv",
                     "/games.jsonl", *(("/games.tar.gz",) if archive else ()), "/live/", "/live/games.json",
                     *(VARIANTS if variants else ())):  # fmt: skip
            answer = self._get(connection, path)
            if answer is not None and path == "/live/games.json" and answer.status == 200:
                for game in json.loads(answer.body):
                    self._follow(game["game_id"])
            if answer is not None and path == "/leaderboard.json" and answer.status == 200:
                self._pairs.update(_pair_pages(answer.body))
        for path in sorted(self._pairs) if archive else ():
            self._get(connection, path)
        for game_id in self.game_ids:
            for path in (f"/games/{game_id}.jsonl", f"/replays/{game_id}.html", f"/live/{game_id}",
                         *(game_variants(game_id) if variants else ())):  # fmt: skip
                self._get(connection, path)
            for author, token in self.authors.items():
                self._get(connection, f"/authors/{author}/games/{game_id}.txt", token)
                for owner in self.authors:  # each author's private replay, asked for by them and by the others
                    self._get(connection, f"/authors/{owner}/games/{game_id}.html", token)
        for author, token in self.authors.items():
            self._get(connection, f"/authors/{author}/", token)
            self._get(connection, "/api/submissions", token)

    def _follow(self, game_id: str) -> None:
        """Open the game's feed, once, in a thread of its own, recording each chunk as it arrives."""
        if game_id in self._streaming or self._done.is_set():
            return
        self._streaming.add(game_id)

        def stream() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            path = f"/live/{game_id}/feed"
            try:
                connection.request("GET", path)
                response = connection.getresponse()
                while chunk := response.read1(65536):
                    with self._lock:
                        self.answers.append(Answer(time.time(), path, response.status, chunk, feed=game_id))
            except (OSError, http.client.HTTPException):
                pass
            finally:
                connection.close()

        thread = threading.Thread(target=stream, daemon=True)
        thread.start()
        self._threads.append(thread)


def _pair_pages(board: bytes) -> set[str]:
    """The head-to-head page of each two bots of a leaderboard.json (whether the pair shared a game yet or not)."""
    try:
        bots = sorted(json.loads(board)["head_to_head"])
    except (ValueError, KeyError, TypeError):
        return set()
    return {f"/pairs/{a}/{b}.html" for i, a in enumerate(bots) for b in bots[i + 1 :]}


# ----- the truth, from the league's folder once it is over ------------------------------------------------------


class Truth:
    """What each game was, from its folder's records and logs: its seed, its hands' and its end's times."""

    def __init__(self, output: Path, delay_s: float) -> None:
        self.delay_s = delay_s
        records = [json.loads(line) for line in (output / "games.jsonl").read_text().splitlines()]
        self.seed = {record["game_id"]: str(record["seed"]) for record in records}
        self.logs: dict[str, list[dict[str, Any]]] = {}
        self.hand_at: dict[str, dict[int, float]] = {}
        self.end: dict[str, float] = {}
        for game_id in self.seed:
            log = [json.loads(line) for line in log_text(log_path(output / "games", game_id)).splitlines()]
            self.logs[game_id] = log
            self.hand_at[game_id] = {record["hand"]: record["at"] for record in log if record["type"] == "hand"}
            self.end[game_id] = next(record["at"] for record in log if record["type"] == "game_end")
        self.dealt_alike: dict[str, list[str]] = {}
        for game_id, seed in self.seed.items():
            self.dealt_alike.setdefault(seed, []).append(game_id)
        league = json.loads((output / "league.json").read_text())
        self.league_seed = str(league["settings"]["seed"]) if "settings" in league else None
        self.id_pattern = re.compile("|".join(sorted(map(re.escape, self.seed), key=len, reverse=True)))

    def passed(self, game_id: str, hand: int) -> float:
        """When game ``game_id`` passed hand ``hand``: its showdown, or its end if it never played that hand."""
        return self.hand_at[game_id].get(hand, self.end[game_id])

    def hand_due(self, game_id: str, hand: int) -> float:
        """The earliest a line of ``game_id``'s feed showing hand ``hand`` may be sent."""
        others = [self.passed(other, hand) for other in self.dealt_alike[self.seed[game_id]] if other != game_id]
        return max(others, default=-1e18) + self.delay_s

    def shown_at(self, game_id: str) -> float:
        """The earliest anything of finished game ``game_id`` (its record, seed, log, replay, output) may be sent."""
        return max(self.end[other] for other in self.dealt_alike[self.seed[game_id]]) + self.delay_s

    def last_hand(self, game_id: str) -> int:
        return max(self.hand_at[game_id], default=1)


def early(answers: Iterable[Answer], truth: Truth) -> list[str]:
    """Every answer that showed something before the rule allows, said as: when, what, how early (empty: none)."""
    found: list[str] = []
    feeds: dict[str, list[tuple[float, str]]] = {}
    last_public = max(truth.shown_at(game_id) for game_id in truth.seed)

    def require(at: float, due: float, what: str) -> None:
        if at < due:
            found.append(f"{what}: {due - at:.3f} s early")

    for answer in answers:
        if answer.feed is not None:
            feeds.setdefault(answer.feed, []).append((answer.at, answer.body.decode("utf-8")))
            continue
        text = readable(answer.body)
        where = f"{answer.path} ({answer.status})"
        for seed, games in truth.dealt_alike.items():
            if seed in text:
                require(answer.at, truth.shown_at(games[0]), f"{where} holds the seed of {', '.join(games)}")
        if truth.league_seed and truth.league_seed in text:
            require(answer.at, last_public, f"{where} holds the league's seed")
        if answer.status != 200:
            continue
        live = answer.path.startswith("/live/")
        for game_id in set(truth.id_pattern.findall(text)) | set(truth.id_pattern.findall(answer.path)):
            if live:  # a game in play, listed or its page: once its feed's first line may be sent
                require(answer.at, truth.hand_due(game_id, 1), f"{where} names {game_id} in play")
            else:
                require(answer.at, truth.shown_at(game_id), f"{where} shows finished game {game_id}")
        if answer.path == "/live/games.json":
            for game in json.loads(answer.body):
                if game["over"]:
                    game_id = game["game_id"]
                    due = max(truth.hand_due(game_id, truth.last_hand(game_id)), truth.end[game_id] + truth.delay_s)
                    require(answer.at, due, f"{where} says {game_id} is over")
        counted = _games_counted(answer.path, text)
        if answer.path == "/games.tar.gz":
            counted = sum(
                len(text.splitlines()) for name, text in _archived(answer.body) if name.endswith("/games.jsonl")
            )
        if counted is not None:
            shown = sum(truth.shown_at(game_id) <= answer.at for game_id in truth.seed)
            if counted > shown:
                found.append(f"{where} counts {counted} games when {shown} could be shown")
    for game_id, chunks in feeds.items():
        found.extend(_feed_early(game_id, chunks, truth))
    return found


def notes_seen(answers: Iterable[Answer], marks: dict[str, str]) -> list[str]:
    """Every answer that showed a bot's private note to anyone but its author: ``marks`` holds, by author, a text
    each note of their bots holds (empty: none did)."""
    found = []
    for answer in answers:
        text = readable(answer.body)
        for author, mark in marks.items():
            if mark in text and answer.asker != author:
                who = f"{answer.asker}, another author," if answer.asker else "a visitor"
                found.append(f"{answer.path} ({answer.status}) showed {who} a note of {author}'s bot")
    return found


def _feed_early(game_id: str, chunks: list[tuple[float, str]], truth: Truth) -> list[str]:
    found = []
    lines: list[str] = []
    partial = ""
    for at, chunk in chunks:
        *whole, partial = (partial + chunk).split("\n")
        for line in whole:
            if not line.startswith("data: "):
                continue
            data = line[len("data: ") :]
            if data == "{}":
                continue  # "gone"
            lines.append(data)
            record = json.loads(data)
            where = f"/live/{game_id}/feed"
            if "start" in record:
                due = truth.hand_due(game_id, 1)
                what = "who plays"
            elif "end" in record:
                last = truth.last_hand(game_id)
                due = max(truth.hand_due(game_id, last), truth.end[game_id] + truth.delay_s)
                what = "the end"
            else:
                hands = {record["view"]["hand"], *(event["hand"] for event in record["events"])}
                due = max([*(truth.hand_due(game_id, hand) for hand in hands), record["time"] + truth.delay_s])
                what = f"frame {record['n']} (hands {sorted(hands)})"
            if at < due:
                found.append(f"{where}: {what}: {due - at:.3f} s early")
    from .test_spectating import leaks  # here: that module imports test_serve, which imports this one

    found.extend(f"/live/{game_id}/feed: {leak}" for leak in leaks(lines, truth.logs[game_id]))
    return found


def readable(body: bytes) -> str:
    """An answer's text, with the data a page packs (gzipped, in base64) unpacked beside it; an archive's, each of
    its files' (games.tar.gz)."""
    if body[:2] == b"\x1f\x8b":
        return "\n".join(text for _, text in _archived(body))
    if body[:4] == ZSTD_MAGIC:  # a file served as it is stored (a log, or notes): unpacked where it can be
        with contextlib.suppress(zstandard.ZstdError):
            body = zstandard.ZstdDecompressor().decompressobj().decompress(body)
    text = body.decode("utf-8", errors="replace")
    if "<html" in text[:200].lower():
        for unpack in (replay_page_data, league_page_data):
            try:
                text += json.dumps(unpack(text))
            except (ValueError, KeyError, EOFError, OSError, gzip.BadGzipFile, TypeError):
                continue
    return text


def _archived(body: bytes) -> list[tuple[str, str]]:
    """The files of an archive (games.tar.gz), each as its name and text; of one that is not whole, all of it that
    unpacks, as one text named "" (whatever it holds is still checked)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as archive:
            return [
                (member.name, archive.extractfile(member).read().decode("utf-8", errors="replace"))  # type: ignore[union-attr]
                for member in archive.getmembers()
                if member.isfile()
            ]
    except (tarfile.TarError, OSError, EOFError):
        unpacked = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body)
        return [("", unpacked.decode("utf-8", errors="replace"))]


def _games_counted(path: str, text: str) -> int | None:
    """How many finished games an answer counts, where it counts them."""
    try:
        if path == "/leaderboard.json":
            return int(json.loads(text)["games"])
        if path == "/games.jsonl":
            return len(text.splitlines())
    except (ValueError, KeyError, TypeError):
        return None
    return None
