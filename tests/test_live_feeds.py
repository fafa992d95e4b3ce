"""`referee serve`'s side of the games in play: each feed read once for all its viewers, who get what they missed.

A real `referee serve` on loopback and feeds written as the league runner writes them (made with their first
lines, lines appended as they become due, an end line, removed once the game is done with, or written anew when a
stopped league plays the game again). Whether a feed holds only what may be shown is tests/test_spectating.py's.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from .conftest import PYTHON
from .test_serve import free_port, wait_until_serving


def sse_events(stream: bytes) -> list[dict[str, str]]:
    """The events of a recorded server-sent event stream, each its fields (``id``, ``event``, ``data``)."""
    events = []
    for block in stream.decode("utf-8").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
        if "event" in fields:
            events.append(fields)
    return events


class Viewer(threading.Thread):
    """A viewer of a game's feed (``Last-Event-ID``: ``after``), recording the stream until it ends."""

    def __init__(self, base: str, game: str, after: int | None = None) -> None:
        super().__init__(daemon=True)
        self.url = f"{base}/live/{game}/feed"
        self.headers = {} if after is None else {"Last-Event-ID": str(after)}
        self.received = bytearray()
        self.status = 0
        self.start()

    def run(self) -> None:
        try:
            with httpx.stream("GET", self.url, headers=self.headers, timeout=30) as answer:
                self.status = answer.status_code
                for chunk in answer.iter_bytes():
                    self.received += chunk
        except httpx.TransportError:
            return  # the server stopped under it (a test that failed): what it received is what it checks

    def ids(self) -> list[int]:
        return [int(event["id"]) for event in sse_events(bytes(self.received)) if "id" in event]

    def has(self, line: int) -> bool:
        return f"id: {line}\n".encode() in self.received


def wait_for(condition: Callable[[], bool], seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def read_by(pid: int) -> int:
    """The bytes process ``pid`` has read from files (``rchar``: what it reads from sockets is not counted)."""
    fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return int(fields["rchar"])


def feed_lines(game_id: str, frames: range, padding: int = 500) -> str:
    start = {"start": {"game_id": game_id, "game": "stop_the_bus", "players": ["ann", "bob"]}}
    lines = [json.dumps(start)] if frames.start == 0 else []
    lines += [json.dumps({"n": n, "time": 0, "events": [], "view": {"pad": "x" * padding}}) for n in frames]
    return "".join(line + "\n" for line in lines)


def listed(base: str) -> list[tuple[str, bool]]:
    return [(game["game_id"], game["over"]) for game in httpx.get(base + "/live/games.json", timeout=10).json()]


def test_each_feed_is_read_once_for_all_its_viewers_who_get_what_they_missed_and_when_it_goes(tmp_path: Path) -> None:
    output = tmp_path / "league"
    live = output / "live"
    live.mkdir(parents=True)
    (live / "g1.jsonl").write_text(feed_lines("g1", range(200)), encoding="utf-8")  # about 110 KB
    (live / "g2.jsonl").write_text(feed_lines("g2", range(2)), encoding="utf-8")
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "referee.cli", "serve", str(output), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, "/leaderboard.html")
        warm = Viewer(base, "g2")  # what a first stream and list load (modules) is read before counting
        assert wait_for(lambda: warm.has(3)) and listed(base) == [("g1", False), ("g2", False)]
        read_before = read_by(server.pid)
        viewers = [Viewer(base, "g1") for _ in range(20)]
        assert wait_for(lambda: all(viewer.has(201) for viewer in viewers))  # who plays, then 200 frames
        for _ in range(20):
            assert listed(base) == [("g1", False), ("g2", False)]
        # 20 viewers and 20 lists later, the feeds were read about once: not once a viewer, nor once a list.
        assert read_by(server.pid) - read_before < 2 * (live / "g1.jsonl").stat().st_size
        with (live / "g1.jsonl").open("a", encoding="utf-8") as feed:
            feed.write(feed_lines("g1", range(200, 205)) + '{"end": {"placements": [1, 0]}}\n')
        for viewer in viewers:
            viewer.join(timeout=15)
            assert not viewer.is_alive() and viewer.ids() == list(range(1, 208))  # every line, in order, then done
        end = {"id": "207", "event": "end", "data": '{"end": {"placements": [1, 0]}}'}
        assert sse_events(bytes(viewers[0].received))[-1] == end
        back = Viewer(base, "g1", after=204)  # a viewer reconnecting: what it missed, and no more
        back.join(timeout=15)
        assert back.ids() == [205, 206, 207] and bytes(back.received).startswith(b"retry: 2000\n\n")
        done = Viewer(base, "g1", after=207)  # it had everything: told so, and not to reconnect
        done.join(timeout=15)
        assert done.status == 204
        assert listed(base) == [("g2", False), ("g1", True)]  # the games in play first
        # A feed removed: its viewers are told the game is gone, and it is no longer listed.
        (live / "g2.jsonl").unlink()
        warm.join(timeout=15)
        assert not warm.is_alive() and sse_events(bytes(warm.received))[-1]["event"] == "gone"
        assert httpx.get(base + "/live/g2/feed", timeout=10).status_code == 404
        assert listed(base) == [("g1", True)]
        # A feed written anew (a stopped league plays its game again): the first one's viewers are told it is
        # gone, and a new viewer sees the new one from its start.
        (live / "g3.jsonl").write_text(feed_lines("g3", range(5)), encoding="utf-8")
        earlier = Viewer(base, "g3")
        assert wait_for(lambda: earlier.has(6))
        (live / ".g3.new").write_text(feed_lines("g3", range(0)), encoding="utf-8")
        (live / ".g3.new").replace(live / "g3.jsonl")  # in one step: never seen missing
        earlier.join(timeout=15)
        assert sse_events(bytes(earlier.received))[-1]["event"] == "gone"
        again = Viewer(base, "g3")
        assert wait_for(lambda: again.has(1)) and again.ids() == [1]
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)
