"""`referee serve DIR --offer-play`: the play tables a stranger can take, and how they are always given back.

Each test runs the real `referee serve` on 127.0.0.1 and sends it what a hostile client would: POSTs with no
Origin or a foreign one, a chunked body of 1 MB on a raw socket, a Content-Length that says 1 MB, one client
starting game after game (its address lying with X-Forwarded-For). Clients come from several addresses of the
loopback network (127.0.0.2, 127.0.0.3 ...), each a visitor of its own to the server. A game that fails is made
to fail for real: the server's process has `Match()`, then `Match.play`, raise for its first games. Chromium
playing a whole game from the site's own pages is tests/test_play_in_browser.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from referee.apps.human.browser import MOST_BODY_BYTES
from referee.apps.site.offered import MOST_GAMES, MOST_GAMES_PER_CLIENT, MOST_KEPT, NoTable, OfferedGames

from .conftest import SAMPLE_BOTS
from .test_serve import free_port, wait_until_serving

CLIENTS = [f"127.0.0.{last}" for last in range(2, 2 + MOST_GAMES + 2)]  # more visitors than tables
MB = 1024 * 1024
# The server of test_a_table_is_given_back_whatever_fails_in_a_game: `referee serve`, whose first MOST_GAMES
# games fail in Match() and whose next MOST_GAMES fail in Match.play, as a bug of either would.
FAILING_SERVE = textwrap.dedent(
    """
    import sys
    import referee.apps.site.offered as offered
    from referee.cli import main

    real = offered.Match
    planted = {"Match()": int(sys.argv[1]), "Match.play": int(sys.argv[1])}

    def failing(*args, **kwargs):
        if planted["Match()"]:
            planted["Match()"] -= 1
            raise RuntimeError("planted: Match() fails")
        match = real(*args, **kwargs)
        if planted["Match.play"]:
            planted["Match.play"] -= 1

            async def play():
                raise RuntimeError("planted: Match.play fails")

            match.play = play
        return match

    offered.Match = failing
    sys.exit(main(sys.argv[2:]))
    """
)


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished league's folder: Stop the Bus at tables of three (the game a visitor is offered)."""
    folder = tmp_path_factory.mktemp("offer")
    (folder / "random_bot.py").write_bytes((SAMPLE_BOTS / "random_bot.py").read_bytes())
    bots = "\n".join(f"  - {{name: {name}, command: python random_bot.py}}" for name in "abc")
    (folder / "league.yaml").write_text(
        f"name: offer\ngame: stop_the_bus\nseed: 6\ntable_size: 3\nsandbox: none\nbots:\n{bots}\n"
    )
    run = [sys.executable, "-m", "referee.cli", "run", str(folder / "league.yaml"), "--no-progress"]
    subprocess.run(run, check=True, capture_output=True)
    return folder / "results" / "offer"


class Site:
    """A running `referee serve --offer-play`, and what its log said (:meth:`said`)."""

    def __init__(self, base: str, log: Path) -> None:
        self.base = base
        self.origin = {"Origin": base}
        self.log = log

    def post_new(self, client: str, **headers: str | None) -> httpx.Response:
        """``POST /play/new`` from ``client`` (an address of the loopback network), from the site's own page unless
        ``headers`` say otherwise (None: the header left out)."""
        sent = {name: value for name, value in {**self.origin, **headers}.items() if value is not None}
        with httpx.Client(transport=httpx.HTTPTransport(local_address=client), timeout=10) as http:
            return http.post(self.base + "/play/new", headers=sent)

    def game(self, answer: httpx.Response) -> tuple[str, str]:
        """The game and token a 303 from ``/play/new`` leads to."""
        assert answer.status_code == 303, (answer.status_code, answer.text)
        game, _, token = answer.headers["location"].partition("/?token=")
        return game, token

    def screen(self, game: str, token: str) -> dict:
        return httpx.get(f"{self.base}/play/{game}/screen", headers={"X-Token": token}, timeout=10).json()

    def wait_over(self, game: str, token: str) -> dict:
        """The game's last screen, once its page shows it over (its table given back)."""
        deadline = time.monotonic() + 20
        while not (screen := self.screen(game, token))["over"]:
            assert time.monotonic() < deadline, screen
            time.sleep(0.05)
        return screen

    def wait_move(self, game: str, token: str) -> dict:
        """The game's screen once the person is asked a move."""
        deadline = time.monotonic() + 20
        while not (screen := self.screen(game, token))["choices"]:
            assert time.monotonic() < deadline and not screen["over"], screen
            time.sleep(0.05)
        return screen

    def said(self) -> str:
        return self.log.read_text()


@contextlib.contextmanager
def serving(league: Path, tmp_path: Path, *, failing: int = 0) -> Iterator[Site]:
    """`referee serve LEAGUE --offer-play` on a free port (with ``failing``, its first games fail as
    :data:`FAILING_SERVE` makes them)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = ["serve", str(league), "--port", str(port), "--offer-play"]
    argv = [sys.executable, "-c", FAILING_SERVE, str(failing), *command] if failing else [
        sys.executable, "-m", "referee.cli", *command]  # fmt: skip
    log = tmp_path / "serve.log"
    with open(log, "wb") as err:
        server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_until_serving(base, "/play/")
        yield Site(base, log)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def raw_post(port: int, path: str, head: str, body: bytes = b"", *, client: str = "127.0.0.2") -> socket.socket:
    """A connection that has sent ``POST path`` with the header lines ``head`` and then ``body``, as written."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(client, 0))
    origin = f"http://127.0.0.1:{port}"
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\n{head}\r\n".encode())
    sock.sendall(body)
    return sock


def answer_of(sock: socket.socket) -> tuple[bytes, bool]:
    """What the server answered on ``sock``, read until it closes the connection (or 10 s of silence), and whether
    it closed it."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except TimeoutError:
        return received, False
    except ConnectionResetError:
        pass
    return received, True


def chunked(size: int, piece: int = 16 * 1024) -> bytes:
    """A chunked body's chunks for ``size`` bytes, without the last (empty) chunk."""
    return b"".join(b"%x\r\n%s\r\n" % (piece, b"x" * piece) for _ in range(size // piece))


# ----- where a POST comes from -------------------------------------------------------------------------------


def test_a_post_not_from_the_sites_own_pages_is_refused_and_takes_no_table(league: Path, tmp_path: Path) -> None:
    with serving(league, tmp_path) as site:
        # What took every table before: POSTs with no Origin, as any script sends them.
        for _ in range(MOST_GAMES):
            refused = site.post_new(CLIENTS[0], Origin=None)
            assert refused.status_code == 403 and "neither by Origin nor Referer" in refused.text, refused.text
        for foreign in ("http://elsewhere.example", "null", f"{site.base}.elsewhere.example", "https://127.0.0.1"):
            refused = site.post_new(CLIENTS[0], Origin=foreign)
            assert refused.status_code == 403 and repr(foreign) in refused.text, (foreign, refused.text)
        refused = site.post_new(CLIENTS[0], Origin=None, Referer="http://elsewhere.example/play/")
        assert refused.status_code == 403 and "elsewhere.example" in refused.text
        # The site's own page: by its Origin, or (a browser that sends none) by its Referer.
        game, token = site.game(site.post_new(CLIENTS[0], Origin=None, Referer=site.base + "/play/"))
        games = [site.game(site.post_new(client)) for client in CLIENTS[1:MOST_GAMES]]
        assert len(games) == MOST_GAMES - 1  # every table was free: the refused took none
        # A click needs the site's origin too, besides the game's token.
        screen = site.wait_move(game, token)
        click = json.dumps({"n": screen["n"], "choice": 0})
        url = f"{site.base}/play/{game}/choose"
        for headers in ({}, {"Origin": "http://elsewhere.example"}):
            refused = httpx.post(url, headers={"X-Token": token, **headers}, content=click, timeout=10)
            assert refused.status_code == 403, headers
        assert site.screen(game, token)["n"] == screen["n"]  # nothing was played
        taken = httpx.post(url, headers={"X-Token": token, **site.origin}, content=click, timeout=10)
        assert taken.status_code == 200, taken.text


# ----- one client's share ------------------------------------------------------------------------------------


def test_one_client_plays_at_most_its_share_of_the_tables_at_once(league: Path, tmp_path: Path) -> None:
    assert MOST_GAMES_PER_CLIENT < MOST_GAMES
    with serving(league, tmp_path) as site:
        mine = [site.game(site.post_new(CLIENTS[0])) for _ in range(MOST_GAMES_PER_CLIENT)]
        refused = site.post_new(CLIENTS[0])
        assert refused.status_code == 429 and CLIENTS[0] in refused.text, refused.text
        # Its address is its own: a proxy's header from a client that is no proxy of the server's changes nothing.
        assert site.post_new(CLIENTS[0], **{"X-Forwarded-For": "10.1.2.3"}).status_code == 429
        others = [site.game(site.post_new(client)) for client in CLIENTS[1 : 1 + MOST_GAMES - len(mine)]]
        assert len(mine) + len(others) == MOST_GAMES
        assert site.post_new(CLIENTS[-1]).status_code == 503  # every table taken
        # Leaving gives the table back: the client may start another.
        game, token = mine[0]
        screen = site.wait_move(game, token)
        left = httpx.post(
            f"{site.base}/play/{game}/choose",
            headers={"X-Token": token, **site.origin},
            content=json.dumps({"n": screen["n"], "choice": "leave"}),
            timeout=10,
        )
        assert left.status_code == 200
        site.wait_over(game, token)
        site.game(site.post_new(CLIENTS[0]))


# ----- the size of a POST's body -----------------------------------------------------------------------------


def test_a_body_over_the_cap_is_refused_as_it_arrives_whatever_it_declares(league: Path, tmp_path: Path) -> None:
    with serving(league, tmp_path) as site:
        port = int(site.base.rsplit(":", 1)[1])
        # 1 MB declared, nothing sent: refused by what it declares, without waiting for a byte of it.
        sock = raw_post(port, "/play/new", f"Content-Length: {MB}\r\n")
        answer, closed = answer_of(sock)
        assert answer.startswith(b"HTTP/1.1 413") and closed, answer
        # Chunked, no length declared, a body that never ends: refused once it passes the cap (the server waits
        # for none of the rest, and closes the connection rather than read it).
        for path in ("/play/new", "/play/0123456789abcdef/choose"):
            sock = raw_post(port, path, "Transfer-Encoding: chunked\r\n", chunked(MOST_BODY_BYTES + 16 * 1024))
            answer, closed = answer_of(sock)
            assert answer.startswith(b"HTTP/1.1 413") and b"refused unread" in answer and closed, (path, answer)
        # The whole 1 MB, chunked, sent as fast as the connection takes it.
        sock = raw_post(port, "/play/new", "Transfer-Encoding: chunked\r\n")

        def flood() -> None:
            with contextlib.suppress(OSError):
                sock.sendall(chunked(MB) + b"0\r\n\r\n")

        sender = threading.Thread(target=flood, daemon=True)
        sender.start()
        answer, closed = answer_of(sock)
        with contextlib.suppress(OSError):  # (the server may have reset the connection already)
            sock.shutdown(socket.SHUT_RDWR)  # lets the sender go, should it still be sending
        sock.close()
        sender.join(10)
        assert answer.startswith(b"HTTP/1.1 413") and closed, answer
        # A click's body under the cap is read and judged: this game does not exist.
        sock = raw_post(port, "/play/0123456789abcdef/choose", "Content-Length: 2\r\nConnection: close\r\n", b"{}")
        answer, _ = answer_of(sock)
        assert answer.startswith(b"HTTP/1.1 404"), answer
        # A body of exactly the cap is taken, and the server goes on serving.
        whole = b"x" * MOST_BODY_BYTES
        sock = raw_post(port, "/play/new", f"Content-Length: {len(whole)}\r\nConnection: close\r\n", whole)
        answer, _ = answer_of(sock)
        assert answer.startswith(b"HTTP/1.1 303"), answer


# ----- a table is always given back --------------------------------------------------------------------------


def test_a_table_is_given_back_whatever_fails_in_a_game(league: Path, tmp_path: Path) -> None:
    with serving(league, tmp_path, failing=MOST_GAMES) as site:
        for failure in ("Match()", "Match.play"):
            failed = [site.game(site.post_new(client)) for client in CLIENTS[:MOST_GAMES]]
            for game, token in failed:
                assert site.wait_over(game, token)["choices"] == []
            assert site.said().count(f"planted: {failure} fails") == MOST_GAMES, site.said()
        # Every table given back: MOST_GAMES more games start, played for real, and the cap still holds.
        games = [site.game(site.post_new(client)) for client in CLIENTS[:MOST_GAMES]]
        for game, token in games:
            assert site.wait_move(game, token)["choices"]
        assert site.post_new(CLIENTS[MOST_GAMES]).status_code == 503
        assert site.said().count("its table is free again") == 2 * MOST_GAMES


def test_a_game_cancelled_even_before_it_starts_gives_its_table_back_and_lets_its_seat_go() -> None:
    async def main() -> None:
        offered = OfferedGames("stop_the_bus", 3)
        game, table = offered.start("127.0.0.2")
        assert offered.playing == 1
        with pytest.raises(NoTable) as refused:
            offered.start("127.0.0.2")
        assert refused.value.status == 429 and "127.0.0.2" in str(refused.value)
        (task,) = games_in(asyncio.all_tasks())
        task.cancel()  # before its first step: no line of the game's coroutine runs
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert offered.playing == 0 and table.screen()["over"]
        # Cancelled while the person's seat waits for a click in its thread: the thread is let go.
        game, table = offered.start("127.0.0.2")
        deadline = time.monotonic() + 10
        while not table.screen()["choices"]:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        waiting = [thread for thread in threading.enumerate() if thread.name == "human-seat"]
        assert waiting
        (task,) = games_in(asyncio.all_tasks())
        task.cancel()
        for _ in range(MOST_GAMES):
            await asyncio.sleep(0)
        assert offered.playing == 0
        for thread in waiting:
            thread.join(5)
            assert not thread.is_alive()
        offered.start("127.0.0.2")  # its share given back
        for task in games_in(asyncio.all_tasks()):
            task.cancel()
        await asyncio.sleep(0)

    asyncio.run(main())


def test_the_finished_games_pages_kept_are_bounded_however_fast_games_are_started_and_ended() -> None:
    async def main() -> None:
        offered = OfferedGames("stop_the_bus", 3)
        for _ in range(MOST_KEPT + 10):  # as a script that starts a game and leaves it, again and again
            game, _ = offered.start("127.0.0.2")
            (task,) = games_in(asyncio.all_tasks())
            task.cancel()
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        assert offered.playing == 0 and len(offered.tables) == MOST_KEPT and game in offered.tables

    asyncio.run(main())


def games_in(tasks: set[asyncio.Task]) -> list[asyncio.Task]:
    """The offered games' tasks among ``tasks`` (not the test's own)."""
    return [task for task in tasks if task is not asyncio.current_task()]
