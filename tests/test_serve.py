"""`referee serve`: a league's folder over HTTP on 127.0.0.1, and an event to open pages when the page changes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest

from .conftest import PYTHON
from .served import VARIANTS, game_variants


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_serving(base: str, path: str = "/", seconds: float = 20.0) -> None:
    """Wait until a server just started answers at ``base + path`` (any status), for up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(base + path, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)


def listening_addresses(port: int) -> set[str]:
    """The local addresses with a TCP socket listening on ``port`` (from /proc/net/tcp, IPv4)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if int(hex_port, 16) == port and state == "0A":  # LISTEN
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


# A finished game's record in games.jsonl: its replay and log are served only once it is there.
RECORD = (
    '{"index":0,"game_id":"r1-t001-s0","round":1,"table":1,"rotation":0,"seed":"1","seats":["a","b"],'
    '"game":"stop_the_bus","finish_order":[0,1],"hands_played":1,"decisions":1,"faults":[{},{}],"forfeits":{}}\n'
)


# Beside the served folder, files under the names the site publishes: served, if a path could climb out of it.
OUTSIDE = {"leaderboard.md": "outside the folder\n", "leaderboard.json": '{"outside": true}\n'}


@pytest.fixture
def site(tmp_path: Path):
    folder = tmp_path / "league"
    (folder / "replays").mkdir(parents=True)
    (folder / "games.jsonl").write_text(RECORD.replace("r1-t001-s0", "g1"), encoding="utf-8")
    (folder / "leaderboard.html").write_text("<html>first</html>", encoding="utf-8")
    (folder / "leaderboard.md").write_text("inside the folder\n", encoding="utf-8")
    (folder / "replays" / "g1.html").write_text("<html>replay</html>", encoding="utf-8")
    for name, text in OUTSIDE.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "referee.cli", "serve", str(folder), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    wait_until_serving(base, "/replays/g1.html")
    try:
        yield folder, base, port, server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=10)


def raw_get(port: int, target: str) -> tuple[int, str]:
    """GET ``target`` exactly as written, byte for byte: no client between, to take out a ``..`` or decode a ``%2e``."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body.decode("utf-8", "replace")


# Paths that climb out of the served folder to a file named as a published one, raw and percent-encoded.
CLIMBING = [
    "/../{name}",
    "/%2e%2e/{name}",
    "/%2E%2E/{name}",
    "/.%2e/{name}",
    "/..%2f{name}",
    "/%2e%2e%2f{name}",
    "/replays/../../{name}",
    "/replays/%2e%2e/%2e%2e/{name}",
    "/games/..%2f..%2f{name}",
    "//../{name}",
]


def test_serves_the_folder_on_loopback_only(site) -> None:
    folder, base, port, server = site
    assert listening_addresses(port) == {"127.0.0.1"}
    home = httpx.get(base + "/", timeout=5, follow_redirects=True)
    assert home.status_code == 200 and home.text == "<html>first</html>"  # redirected to the league's page
    assert httpx.get(base + "/replays/g1.html", timeout=5).text == "<html>replay</html>"
    # The raw requests reach the server, and a published name is served from inside the folder, at its exact
    # route alone: the same name spelled another way is no route (however it climbs, it is 404) ...
    assert raw_get(port, "/leaderboard.md") == (200, "inside the folder\n")
    assert raw_get(port, "/replays/../leaderboard.md")[0] == 404
    # ... and nothing is ever served from outside the folder, however the climb is written.
    for pattern in CLIMBING:
        for name, outside in OUTSIDE.items():
            status, body = raw_get(port, pattern.format(name=name))
            assert status == 404 and body != outside and "outside" not in body, (pattern, name, status, body)
    server.send_signal(signal.SIGINT)
    assert server.wait(timeout=10) == 0
    assert f"at http://127.0.0.1:{port}/leaderboard.html" in server.stdout.read()


def test_a_path_spelled_another_way_is_no_route(site) -> None:
    # Exact routes only: the published names spelled any other way (as tests/served.py's recorder asks for them
    # while leagues play) are 404, never the folder's file, whose raw records would give the seeds of games in play.
    folder, _, port, _ = site
    (folder / "league.json").write_text('{"settings": {"seed": "5551212"}}', encoding="utf-8")
    records = raw_get(port, "/games.jsonl")
    assert records[0] == 200
    for path in (*VARIANTS, *game_variants("g1")):
        status, body = raw_get(port, path)
        if unquote(path) == "/games.jsonl":  # the route itself, a letter percent-encoded: the same records
            assert (status, body) == records, path
        else:
            assert status == 404 and "5551212" not in body and '"seed"' not in body, (path, status, body)


def test_an_open_page_is_told_when_the_league_page_changes(site) -> None:
    folder, base, _, _ = site
    events: list[str] = []

    def listen() -> None:
        with httpx.stream("GET", base + "/events", timeout=10) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            for line in stream.iter_lines():
                events.append(line)
                if line.startswith("data:"):
                    return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    time.sleep(1.0)
    assert not any(line.startswith("data:") for line in events), "no event before the page changes"
    replacement = folder / ".leaderboard.html.tmp"
    replacement.write_text("<html>second</html>", encoding="utf-8")
    os.replace(replacement, folder / "leaderboard.html")  # as the league runner rewrites it
    listener.join(timeout=5)
    assert any(line.startswith("data:") for line in events), events
    assert httpx.get(base + "/leaderboard.html", timeout=5).text == "<html>second</html>"


def test_a_port_in_use_or_a_missing_folder_is_told_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run(
            [PYTHON, "-m", "referee.cli", "serve", str(tmp_path), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert run.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in run.stderr and "--port" in run.stderr
    assert "Traceback" not in run.stderr
    run = subprocess.run(
        [PYTHON, "-m", "referee.cli", "serve", str(tmp_path / "nope")], capture_output=True, text=True, timeout=30
    )
    assert run.returncode == 1 and "no such directory" in run.stderr


def test_an_empty_folder_is_served_a_page_that_waits_for_the_league(tmp_path: Path) -> None:
    import asyncio

    from referee.apps.site.app import create_app

    async def visit() -> None:
        transport = httpx.ASGITransport(app=create_app(tmp_path))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            waiting = await client.get("/leaderboard.html")
            assert waiting.status_code == 200 and 'data-waiting="1"' in waiting.text
            assert (
                "x-referee-page" in waiting.text and "EventSource" not in waiting.text
            )  # it asks; no stream held open
            assert (await client.head("/leaderboard.html")).headers["x-referee-page"] == "waiting"
            (tmp_path / "leaderboard.html").write_text("<html>league</html>", encoding="utf-8")
            assert (await client.get("/leaderboard.html")).text == "<html>league</html>"
            assert (await client.head("/leaderboard.html")).headers["x-referee-page"] == "league"

    asyncio.run(visit())


def test_only_the_pages_and_what_they_link_to_are_published(tmp_path: Path) -> None:
    import asyncio

    from referee.apps.site.app import create_app

    published = [
        "leaderboard.html", "leaderboard.md", "leaderboard.json", "leaderboard.csv", "games.jsonl",
        "replays/r1-t001-s0.html", "games/r1-t001-s0.jsonl",
    ]  # fmt: skip
    secret = [
        "league.json",  # the seed, hence every deal, while the league runs
        "builds/eve-v1/bot.py",  # an author's code
        "builds/eve-v1.json",
        "logs/alpha-1.log",  # a bot's output: its author's alone (on their page)
        "logs/build-eve-v1.log",
        "checks/eve-v1.json",
        "checks/eve-v1/check-stop_the_bus-3-1.jsonl",
        "reports/eve.json",
        "lanes/alpha/1/0/notes.txt",
        "register.jsonl",
        "tables.jsonl",
        "authors.json",
        "uploads.jsonl",
        "results.txt",
    ]

    def content(name: str) -> str:  # JSON lines are served record by record
        if name == "games.jsonl":  # a game's replay and log are served once its record is there
            return RECORD
        return f'{{"name":"{name}"}}\n' if name.endswith(".jsonl") else f"{name}\n"

    for name in published + secret:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content(name), encoding="utf-8")
    (tmp_path / "authors.json").write_text('{"ladder": null, "authors": []}\n', encoding="utf-8")  # read by the site

    async def visit() -> None:
        transport = httpx.ASGITransport(app=create_app(tmp_path))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            for name in published:
                answer = await client.get("/" + name)
                assert (answer.status_code, answer.text) == (200, content(name)), name
            for name in [*secret, "builds/", "replays/../league.json", "games/%2e%2e/league.json"]:
                answer = await client.get("/" + name)
                assert answer.status_code == 404 and "never league.json" in answer.text, name

    asyncio.run(visit())
