"""Benchmark `referee serve` under load: a new visitor's wait while connections are held, and memory under huge bodies.

A real `referee serve` of a small league folder on loopback, its open-file
limit set to the common 1,024 (soft and hard, before it starts), is attacked
through real sockets, each attack from loopback addresses of its own
(127.0.x.y) and each held while new visitors (from addresses of their own,
each on a new connection) ask for `/leaderboard.html`:

- idle: 1,100 connections that send half a request and wait;
- streams: 1,100 `/events` streams, 25 from an address;
- both at once.

For each: the visitors' time to a whole answer (median and slowest of
ten, three with ``--quick``; a visitor not answered in 10 s counts as 10 s, "no answer"),
and what the server did with the attack (connections it closed, streams it
refused). Then huge bodies: 1 GiB streamed to `POST /api/submissions`
with a token that is no author's, and 1 GiB to the sign-in form, each
with the server's resident memory (RSS) before, after, and its peak
(VmHWM). Last, a replay page made on demand (a game of four random bots
played once, with `referee play`): the first visitor's wait, while it is
made, and the median of the next ten (kept once made).

    .venv/bin/python bench/serve_load.py             # about 25 s
    .venv/bin/python bench/serve_load.py --quick     # 3 visits, 128 MiB bodies: 15 s
    .venv/bin/python bench/serve_load.py --before DIR    # the server of another tree (git archive REV | tar -x -C DIR)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPEN_FILES = 1024
ATTACKERS = 1100
GIVE_UP_S = 10.0
MIB = 2**20
GAME_ID = "r1-t001-s0"
RECORD = {
    "index": 0, "game_id": GAME_ID, "round": 1, "table": 1, "rotation": 0, "seed": "9", "seats": ["a", "b", "c", "d"],
    "game": "bastard_brag", "finish_order": [0, 1, 2, 3], "hands_played": 1, "decisions": 1, "faults": [{}] * 4,
    "forfeits": {},
}  # fmt: skip


# The server's command after this: its open-file limit set, then the server itself in the same process.
LIMITED = [
    sys.executable,
    "-c",
    "import os, resource, sys; "
    f"resource.setrlimit(resource.RLIMIT_NOFILE, ({OPEN_FILES}, {OPEN_FILES})); os.execv(sys.argv[1], sys.argv[1:])",
]


@contextlib.contextmanager
def server(folder: Path, tree: Path | None) -> Iterator[tuple[int, int]]:
    """`referee serve` of ``folder`` (from ``tree``, if given) limited to 1,024 open files: its port and pid."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {**os.environ, "PYTHONPATH": str(tree)} if tree else None
    log = open(folder.parent / "serve.err", "w")  # noqa: SIM115  (a file, not a pipe that could fill and block it)
    process = subprocess.Popen(
        [*LIMITED, sys.executable, "-m", "referee.cli", "serve", str(folder), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env=environment,
        cwd=tree,  # python -m looks in its working folder first
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            break
        time.sleep(0.1)
    try:
        yield port, process.pid
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def attacker(index: int, per_address: int) -> str:
    number = index // per_address + 2
    return f"127.0.{number // 250}.{number % 250 + 2}"


def visit(port: int, number: int, path: str = "/leaderboard.html") -> float:
    """One new visitor's time to the whole of ``path``, on a new connection (GIVE_UP_S: no answer)."""
    started = time.perf_counter()
    try:
        with socket.create_connection(
            ("127.0.0.1", port), timeout=GIVE_UP_S, source_address=(f"127.1.{number // 250}.{number % 250 + 2}", 0)
        ) as connection:
            connection.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
    except OSError:
        return GIVE_UP_S
    if not answer.startswith(b"HTTP/1.1 200"):
        return GIVE_UP_S
    return time.perf_counter() - started


def visits(port: int, count: int, first: int) -> list[float]:
    times = []
    for number in range(first, first + count):
        times.append(visit(port, number))
        time.sleep(0.2)
    return times


def hold_idle(port: int, count: int) -> list[socket.socket]:
    held = []
    for index in range(count):
        try:
            connection = socket.create_connection(
                ("127.0.0.1", port), timeout=5, source_address=(attacker(index, 55), 0)
            )
            connection.sendall(b"GET /leaderboard.html HTTP/1.1\r\nHost: bench\r\nUser-Agent: slo")
        except OSError:
            continue
        held.append(connection)
    return held


def hold_streams(port: int, count: int, offset: int) -> tuple[list[socket.socket], int, int]:
    """``count`` /events streams, 25 from an address: the connections, and how many were opened and refused."""
    held, opened, refused = [], 0, 0
    for index in range(count):
        try:
            connection = socket.create_connection(
                ("127.0.0.1", port), timeout=5, source_address=(attacker(offset + index, 25), 0)
            )
            connection.sendall(b"GET /events HTTP/1.1\r\nHost: bench\r\n\r\n")
            head = connection.recv(4096)
        except OSError:
            continue
        held.append(connection)
        if head.startswith(b"HTTP/1.1 200"):
            opened += 1
        else:
            refused += 1
    return held, opened, refused


def closed_of(held: list[socket.socket]) -> int:
    """How many of ``held`` the server has closed."""
    closed = 0
    for connection in held:
        connection.setblocking(False)
        try:
            while True:
                data = connection.recv(65536)
                if not data:
                    closed += 1
                    break
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return closed


def memory_of(pid: int) -> dict[str, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return {name: int(fields[name].split()[0]) // 1024 for name in ("VmRSS", "VmHWM")}  # MiB


def huge_body(port: int, head: bytes, size: int) -> str:
    """Stream ``size`` bytes after ``head``; the server's answer's status line (or how it ended)."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(head)
        chunk = b"a" * MIB
        sent = 0
        with contextlib.suppress(OSError):
            while sent < size:
                sent += connection.send(chunk[: size - sent])
        try:
            answer = connection.recv(4096)
        except OSError as error:
            return f"{type(error).__name__} after {sent // MIB} MiB"
    return answer.split(b"\r\n", 1)[0].decode() + f" ({sent // MIB} MiB sent)"


def play_a_game(folder: Path) -> None:
    """A finished game in ``folder``: its log (four random bots, played now) and its record."""
    (folder / "games").mkdir()
    random_bot = f"{sys.executable} {ROOT / 'sample_bots' / 'python' / 'random_bot.py'}"
    command = [sys.executable, "-m", "referee.cli", "play", "--game", "bastard_brag", "--seed", "9", "--quiet"]
    command += ["--no-sandbox", "--log", str(folder / "games" / f"{GAME_ID}.jsonl")]
    bots = [f"--bot={random_bot}" for _ in range(4)]
    subprocess.run([*command, *bots], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (folder / "games.jsonl").write_text(json.dumps(RECORD) + "\n", encoding="utf-8")


def summary(times: list[float]) -> str:
    unanswered = sum(1 for value in times if value >= GIVE_UP_S)
    text = f"median {statistics.median(times) * 1000:.0f} ms, slowest {max(times) * 1000:.0f} ms"
    return text + (f", {unanswered} of {len(times)} no answer in {GIVE_UP_S:.0f} s" if unanswered else "")


def main(quick: bool, tree: Path | None) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 3 * (2 * ATTACKERS + 100)), hard))
    count = 3 if quick else 10
    body = 128 * MIB if quick else 1024 * MIB
    with tempfile.TemporaryDirectory(prefix="serve-load-") as scratch:
        folder = Path(scratch) / "league"
        folder.mkdir()
        (folder / "leaderboard.html").write_text("<html>" + "the league " * 2000 + "</html>", encoding="utf-8")
        play_a_game(folder)
        print(f"referee serve of {'tree ' + str(tree) if tree else 'this tree'}, open files limited to {OPEN_FILES}")
        with server(folder, tree) as (port, pid):
            print(f"  no attack: visitors {summary(visits(port, count, 0))}")
            held = hold_idle(port, ATTACKERS)
            time.sleep(0.5)
            times = visits(port, count, 100)
            print(f"  {len(held)} idle (half-sent) connections held: visitors {summary(times)}; the server closed "
                  f"{closed_of(held)} of them")  # fmt: skip
            for connection in held:
                connection.close()
            time.sleep(1)
            streams, opened, refused = hold_streams(port, ATTACKERS, 0)
            times = visits(port, count, 200)
            print(f"  {ATTACKERS} /events streams asked for: {opened} open, {refused} refused (503); visitors "
                  f"{summary(times)}")  # fmt: skip
            held = hold_idle(port, ATTACKERS)
            time.sleep(0.5)
            times = visits(port, count, 300)
            print(f"  and {len(held)} idle connections besides: visitors {summary(times)}")
            for connection in streams + held:
                connection.close()
            time.sleep(1)
            uploads = {
                "POST /api/submissions, a token that is no author's": (
                    b"POST /api/submissions HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer not-a-token\r\n"
                    b"Content-Type: application/gzip\r\nContent-Length: %d\r\n\r\n" % body
                ),
                "POST /signin, a form": (
                    b"POST /signin HTTP/1.1\r\nHost: bench\r\nOrigin: http://bench\r\n"
                    b"Content-Type: application/x-www-form-urlencoded\r\n"
                    b"Content-Length: %d\r\n\r\ntoken=" % (body + 6)
                ),
            }
            for what, head in uploads.items():
                before = memory_of(pid)
                started = time.perf_counter()
                answer = huge_body(port, head, body)
                took = time.perf_counter() - started
                after = memory_of(pid)
                print(f"  {body // MIB} MiB to {what}: {answer} in {took:.1f} s; RSS {before['VmRSS']} MiB before, "
                      f"{after['VmRSS']} MiB after, peak {after['VmHWM']} MiB")  # fmt: skip
            print(f"  and after: visitors {summary(visits(port, count, 400))}")
            replay = f"/replays/{GAME_ID}.html"
            first = visit(port, 500, replay)
            kept = [visit(port, 501 + number, replay) for number in range(count)]
            print(f"  a replay page made on demand ({(folder / 'games' / f'{GAME_ID}.jsonl').stat().st_size // 1024} KiB "
                  f"of log): {first * 1000:.0f} ms to the first visitor, then {summary(kept)}")  # fmt: skip
        said = (Path(scratch) / "serve.err").read_text()
        print(f"  the server said: {json.dumps(said[-600:]) if said else 'nothing'}")


if __name__ == "__main__":
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--quick", action="store_true", help="3 visits a phase, 128 MiB bodies")
    options.add_argument("--before", type=Path, help="serve from this tree (another version, to compare)")
    arguments = options.parse_args()
    main(arguments.quick, arguments.before)
