"""`referee serve` under load: idle, half-sent, streaming and unread connections never starve a new visitor.

Each test starts a real server on loopback with its open-file limit set to the common 1,024 (in the child, before
it starts), and attacks it through real sockets. Loopback addresses other than 127.0.0.1 (127.0.0.2, 127.0.1.3,
...) stand for other clients. The timings asserted are generous: what is asserted is that a visitor IS answered,
or that a connection IS closed; how fast is bench/serve_load.py's to measure.
"""

from __future__ import annotations

import contextlib
import json
import re
import resource
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from referee.apps.site import ServeError
from referee.apps.site.connections import HEADER_BYTES, MAX_OPEN_FILES, ServeLimits
from referee.apps.site.page_cache import PageCache

from .conftest import PYTHON
from .game_logs import logged_game
from .test_live_feeds import read_by
from .test_serve import RECORD, free_port, wait_until_serving

OPEN_FILES = 1024
ATTACKERS = 1100
# The server, with the limits given as JSON (tests shorten the deadlines they wait for).
LAUNCH = (
    "import json, sys; from pathlib import Path; from referee.apps.site import serve; "
    "from referee.apps.site.connections import ServeLimits; "
    "serve(Path(sys.argv[1]), port=int(sys.argv[2]), limits=ServeLimits.for_this_process(**json.loads(sys.argv[3])))"
)
LEAGUE_PAGE = "<html>the league</html>"


def limited(soft: int, hard: int) -> list[str]:
    """The start of a command that sets its open-file limit, then runs the rest of it in the same process."""
    setting = f"resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard}))"
    return [PYTHON, "-c", f"import os, resource, sys; {setting}; os.execv(sys.argv[1], sys.argv[1:])"]


@pytest.fixture(autouse=True)
def room_for_the_attack() -> None:
    """This process holds the attack's sockets: its own open-file limit must let it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 3 * ATTACKERS
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"the tests' open-file limit ({hard}) cannot hold {needed} sockets: raise ulimit -Hn")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


@contextlib.contextmanager
def server(
    folder: Path, limits: dict[str, float] | None = None, open_files: tuple[int, int] = (OPEN_FILES, OPEN_FILES)
) -> Iterator[tuple[str, int, int]]:
    """A server of ``folder`` limited to 1,024 open files (or ``open_files``, soft and hard): ``referee serve``
    itself, or with ``limits`` changed; its address, port and process id."""
    port = free_port()
    if limits is None:
        command = [PYTHON, "-m", "referee.cli", "serve", str(folder), "--port", str(port)]
    else:
        command = [PYTHON, "-c", LAUNCH, str(folder), str(port), json.dumps(limits)]
    said = folder.parent / f"serve-{port}.err"  # a file, not a pipe: a server blocked on a full pipe would not answer
    with said.open("w") as stderr:
        process = subprocess.Popen([*limited(*open_files), *command], stdout=subprocess.DEVNULL, stderr=stderr)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, "/leaderboard.html")
        yield base, port, process.pid
        assert process.poll() is None, said.read_text()
        assert "Traceback" not in said.read_text(), said.read_text()
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    league = tmp_path / "league"
    league.mkdir()
    (league / "leaderboard.html").write_text(LEAGUE_PAGE, encoding="utf-8")
    return league


def client_address(index: int, per_address: int) -> str:
    """The loopback address of attacker ``index``, ``per_address`` to an address, none of them 127.0.0.1."""
    number = index // per_address + 2
    return f"127.0.{number // 250}.{number % 250 + 2}"


def connect(port: int, source: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))


def visit(base: str, source: str = "127.1.0.1") -> httpx.Response:
    """A new visitor's request for the league's page, from an address of its own, on a new connection."""
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=10) as client:
        return client.get(base + "/leaderboard.html")


def closed_by_server(connection: socket.socket, wait: float) -> bool:
    """Whether the server closes ``connection`` (an end of file, or a reset) within ``wait`` seconds."""
    connection.settimeout(wait)
    try:
        while connection.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def still_open(connections: list[socket.socket]) -> bool:
    """Whether the server has closed none of ``connections`` (each waiting for its answer)."""
    time.sleep(0.3)
    for connection in connections:
        connection.setblocking(False)
        try:
            if not connection.recv(1):
                return False
        except BlockingIOError:
            continue
        except OSError:
            return False
    return True


def status_of(connection: socket.socket) -> tuple[int, bytes]:
    """The status of the answer to the request sent on ``connection``, and what was read of it (its head, and
    maybe more)."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = connection.recv(4096)
        if not chunk:
            break
        head += chunk
    return int(head.split(b" ", 2)[1]), head


def test_a_visitor_is_answered_while_1100_half_sent_requests_are_held(folder: Path) -> None:
    # Deadlines far off: only the cap on connections, shedding the longest waiting, can let the visitor in.
    with server(folder, {"header_timeout_s": 120, "keep_alive_s": 120}) as (base, port, _):
        held = []
        for index in range(ATTACKERS):  # 55 to an address: under the cap per client
            connection = connect(port, client_address(index, 55))
            connection.sendall(b"GET /leaderboard.html HTTP/1.1\r\nHost: x\r\nUser-Agent: slow")
            held.append(connection)
        answer = visit(base)
        assert answer.status_code == 200 and answer.text == LEAGUE_PAGE
        # What was shed to make room: the connections that had waited longest; the latest still held.
        cap = ServeLimits.for_open_files(OPEN_FILES).connections
        assert closed_by_server(held[0], 5) and closed_by_server(held[ATTACKERS - cap - 1], 5)
        assert not closed_by_server(held[-1], 0.5)
        for connection in held:
            connection.close()


def test_a_visitor_is_answered_while_1100_streams_are_held_and_streams_over_the_caps_are_refused(
    folder: Path,
) -> None:
    limits = ServeLimits.for_open_files(OPEN_FILES)
    with server(folder) as (base, port, _):
        opened, refused = [], []
        for index in range(ATTACKERS):  # 25 to an address: under the cap per client, over the cap in all
            connection = connect(port, client_address(index, 25))
            connection.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            status, head = status_of(connection)
            (opened if status == 200 else refused).append((connection, head))
        assert len(opened) == limits.streams
        assert all(head.startswith(b"HTTP/1.1 503") and b"retry-after: 30" in head.lower() for _, head in refused)
        answer = visit(base)
        assert answer.status_code == 200 and answer.text == LEAGUE_PAGE
        assert visit(base, "127.1.0.2").status_code == 200  # and the next
        for connection, _ in opened + refused:
            connection.close()


def test_a_client_over_its_cap_of_streams_is_refused_at_once_and_let_in_when_one_closes(folder: Path) -> None:
    limits = ServeLimits.for_open_files(OPEN_FILES)
    with server(folder) as (base, port, _):
        streams = []
        for _ in range(limits.streams_per_client):
            connection = connect(port, "127.0.5.5")
            connection.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            assert status_of(connection)[0] == 200
            streams.append(connection)
        over = connect(port, "127.0.5.5")
        over.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        status, head = status_of(over)
        assert status == 503 and b"retry-after: 30" in head.lower()
        assert b"connection: close" in head.lower() and closed_by_server(over, 5)  # it holds no connection either
        other = connect(port, "127.0.5.6")  # another client is not refused for this one
        other.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status_of(other)[0] == 200
        streams.pop().close()
        deadline = time.monotonic() + 10
        while True:  # the closed stream's place is given back once the server sees it closed
            again = connect(port, "127.0.5.5")
            again.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            status, received = status_of(again)
            if status == 200 or time.monotonic() > deadline:
                break
            again.close()
            time.sleep(0.1)
        assert status == 200
        while b"retry: 2000\n\n" not in received and (chunk := again.recv(4096)):  # a stream, as any other
            received += chunk
        assert b"retry: 2000\n\n" in received
        for connection in [*streams, other, again]:
            connection.close()


def test_a_request_whose_headers_or_body_do_not_come_in_time_is_closed(folder: Path) -> None:
    with server(folder, {"header_timeout_s": 1, "body_timeout_s": 1}) as (base, port, _):
        silent = connect(port, "127.0.6.1")  # connects and sends nothing
        half = connect(port, "127.0.6.2")
        half.sendall(b"GET /leaderboard.html HTTP/1.1\r\nHost: x\r\n")
        trickle = connect(port, "127.0.6.3")  # a byte at a time, each well within the deadline
        body = connect(port, "127.0.6.4")
        body.sendall(b"POST /signin HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n")
        body.sendall(b"Content-Type: application/x-www-form-urlencoded\r\n\r\ntoken=")
        started = time.monotonic()
        closed = False
        with contextlib.suppress(OSError):
            for byte in b"GET /leaderboard.html HTTP/1.1\r\nHost: x\r\n":
                trickle.sendall(bytes([byte]))
                time.sleep(0.2)
        closed = closed_by_server(trickle, 5)
        assert closed and time.monotonic() - started < 8
        for connection in (silent, half, body):
            assert closed_by_server(connection, 5)
        assert visit(base).status_code == 200  # while a visitor who sends a request is answered
        for connection in (silent, half, trickle, body):
            connection.close()


def test_headers_too_long_are_refused_and_a_connection_idle_after_its_answer_is_closed(folder: Path) -> None:
    with server(folder, {"keep_alive_s": 1}) as (base, port, _):
        long = connect(port, "127.0.6.5")
        long.sendall(b"GET /leaderboard.html HTTP/1.1\r\nHost: x\r\nCookie: " + b"a" * 20_000)  # 16 KiB, and more
        time.sleep(0.2)
        with contextlib.suppress(OSError):  # refused already
            long.sendall(b"\r\n\r\n")
        assert status_of(long)[0] == 400 and closed_by_server(long, 5)
        idle = connect(port, "127.0.6.6")
        idle.sendall(b"GET /leaderboard.html HTTP/1.1\r\nHost: x\r\n\r\n")
        status, received = status_of(idle)
        assert status == 200
        started = time.monotonic()
        assert closed_by_server(idle, 10) and time.monotonic() - started < 5  # kept alive a second, no more
        long.close()
        idle.close()


def test_a_client_over_its_cap_of_connections_loses_its_longest_waiting_one_and_others_keep_theirs(
    folder: Path,
) -> None:
    per_client = ServeLimits.for_open_files(OPEN_FILES).connections_per_client
    with server(folder, {"header_timeout_s": 120}) as (base, port, _):
        others = [connect(port, "127.0.8.2") for _ in range(10)]
        mine = []
        for _ in range(per_client + 5):
            mine.append(connect(port, "127.0.8.1"))
            mine[-1].sendall(b"GET / HTTP/1.1\r\n")
            time.sleep(0.005)  # one after the other, as the server sees them
        assert all(closed_by_server(connection, 5) for connection in mine[:5])
        assert still_open(mine[5:] + others)
        for connection in mine + others:
            connection.close()


def test_the_open_file_limit_is_raised_to_the_hard_limit_before_the_caps_are_drawn_from_it(folder: Path) -> None:
    with server(folder, open_files=(1024, 4096)) as (_, _, pid):
        limits = Path(f"/proc/{pid}/limits").read_text()
        assert re.search(r"Max open files\s+4096\s+4096", limits), limits


def test_a_response_the_client_does_not_read_is_dropped(folder: Path) -> None:
    (folder / "leaderboard.csv").write_bytes(b"rank,bot\n" + b"1,a\n" * (12 * 2**20 // 4))  # 12 MiB
    with server(folder, {"write_timeout_s": 1}) as (base, port, _):
        reader = socket.socket()
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.bind(("127.0.7.1", 0))
        reader.connect(("127.0.0.1", port))
        reader.sendall(b"GET /leaderboard.csv HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(3)  # reading nothing, the server's buffers full
        received = 0
        reader.settimeout(10)
        with contextlib.suppress(ConnectionResetError):
            while chunk := reader.recv(1 << 20):
                received += len(chunk)
        assert received < 12 * 2**20  # cut short: the server dropped what it held for it
        assert visit(base).status_code == 200
        reader.close()


def test_a_popular_replay_is_made_once_and_made_again_when_its_log_is_written_again(tmp_path: Path) -> None:
    output = tmp_path / "league"
    (output / "games").mkdir(parents=True)
    (output / "games.jsonl").write_text(RECORD, encoding="utf-8")
    log = output / "games" / "r1-t001-s0.jsonl"
    log.write_bytes(logged_game("long").read_bytes())
    assert log.stat().st_size > 20_000  # a whole game's log (228 decisions), many times what a request reads else
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "referee.cli", "serve", str(output), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"

    def read_by_visitors(game: str = "r1-t001-s0") -> tuple[int, set[bytes]]:
        """What the server read from files while 40 visitors asked for a replay, 8 at a time; what they got."""
        before = read_by(server.pid)
        with ThreadPoolExecutor(8) as visitors:
            pages = list(visitors.map(lambda _: httpx.get(f"{base}/replays/{game}.html", timeout=30), range(40)))
        return read_by(server.pid) - before, {page.content for page in pages if page.status_code == 200}

    try:
        wait_until_serving(base, "/leaderboard.html")
        read_by_visitors("nothing")  # what a request loads, loaded
        besides, _ = read_by_visitors("nothing")  # what 40 requests read besides any replay (the records)
        made_once, pages = read_by_visitors()  # made while the first visitors wait, then kept
        assert len(pages) == 1 and made_once - besides < 2 * log.stat().st_size  # the log read once, not 40 times
        kept, pages_kept = read_by_visitors()
        assert pages_kept == pages and kept - besides < log.stat().st_size // 2  # kept: not read at all
        log.write_bytes(log.read_bytes())  # written again (as `referee leaderboard --write` may): a new version
        made_again, pages_again = read_by_visitors()
        assert pages_again == pages and made_again - besides > log.stat().st_size // 2  # read to be made again
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)


def peak_memory_mib(pid: int) -> int:
    """The most resident memory process ``pid`` has had (``VmHWM``), in MiB."""
    line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) // 1024


def send_body(port: int, head: bytes, size: int) -> int:
    """Stream ``size`` bytes after ``head`` and read the answer: its status."""
    with socket.create_connection(("127.0.0.1", port), timeout=60, source_address=("127.0.9.1", 0)) as connection:
        connection.sendall(head)
        chunk = b"a" * 2**20
        with contextlib.suppress(OSError):  # the server may close once it has answered
            for _ in range(size // len(chunk)):
                connection.sendall(chunk)
        return status_of(connection)[0]


def test_huge_bodies_that_are_refused_leave_the_servers_memory_flat(folder: Path) -> None:
    size = 256 * 2**20  # bench/serve_load.py sends 1 GiB
    with server(folder) as (base, port, pid):
        assert visit(base).status_code == 200
        before = peak_memory_mib(pid)
        upload = (
            b"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not-a-token\r\n"
            b"Content-Type: application/gzip\r\nContent-Length: %d\r\n\r\n" % size
        )
        assert send_body(port, upload, size) == 401
        signin = (  # from the site's own page (any other is refused unread: tests/test_site.py)
            b"POST /signin HTTP/1.1\r\nHost: x\r\nOrigin: http://x\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\ntoken=" % (size + 6)
        )
        assert send_body(port, signin, size) == 400
        assert peak_memory_mib(pid) - before < 32  # neither body was kept: read and let go as it came


def test_the_limits_are_those_the_docs_give_and_an_open_file_limit_too_low_is_refused_in_one_sentence() -> None:
    limits = ServeLimits.for_open_files(OPEN_FILES)  # docs/security.md, "referee serve under load"
    assert (limits.connections, limits.streams, limits.connections_per_client, limits.streams_per_client) == (
        768,
        384,
        64,
        32,
    )
    assert (limits.header_timeout_s, limits.keep_alive_s, limits.write_timeout_s) == (5, 5, 30)
    assert (limits.body_min_bytes, limits.body_timeout_s) == (1024, 10)
    assert (MAX_OPEN_FILES, HEADER_BYTES, PageCache().max_bytes) == (16_384, 16 * 1024, 64 * 2**20)
    with pytest.raises(ServeError, match=r"an open-file limit of 200 leaves .* raise it \(ulimit -n\) to at least"):
        ServeLimits.for_open_files(200)
