"""A running league's pages, kept current: the leaderboard every few seconds, the games in play for spectators.

What may be shown, and when, is the run's :class:`referee.records.visibility.DealsInPlay`'s
to say: a finished game only once every game on its deals has ended and the
spectator delay after it; it calls :meth:`LiveSite.shown` with the games
that may be shown from then on. That only queues them. A task of its own
hands the work to a helper process: with ``static_replays``, each game's
replay page (``replays/GAME_ID.html``; without, ``referee serve`` makes it
from the game's log when it is asked for, which costs the league nothing),
and, at most once every ``interval_s`` seconds, the first one interval
after the run starts (and never more often than ten times the time a
rewrite takes, so a big league spends little on it), the leaderboard files
of the games shown, with a page that refreshes itself. The helper keeps each
league's standings between rewrites (:class:`referee.records.standings.FolderStandings`),
so a rewrite reads only the games finished since and costs about the same
after a million games as after ten thousand (``bench/standings_scale.py``). The helper is a separate Python process
at low priority (``nice`` 10), started as ``python -m referee.publish.live``,
so neither its CPU time nor Python's global lock ever delays the event loop
that talks to the bots and times them. It takes one job per line on its standard input
and answers each with a line. Every file is replaced in one step, so a
reader (a browser, ``referee serve``) never sees half of one.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.publish.league_page import REPLAY_DIR
from referee.publish.replay_page import write_replay_of_log
from referee.publish.spectators import SpectatorFeeds
from referee.records.gamelog import find_log
from referee.records.visibility import DealsInPlay, Shown

if TYPE_CHECKING:
    from referee.records.standings import FolderStandings

DEFAULT_INTERVAL_S = 3.0
HELPER_NICENESS = 10
BACK_LINK = "../leaderboard.html"  # from a replay page to the league's page
_STOP = object()
_REFRESH = object()  # the league's records changed with no game finished (a ladder's new version): rewrite the page


def write_replay_for(output: Path, game_id: str) -> Path:
    """Write the replay page of league game ``game_id`` from its log in ``output``; return the page's path.

    Only for a game that may be shown (:mod:`referee.records.visibility`, whose runner's face asks for it): a replay page
    is public wherever the folder is.
    """
    page = output / REPLAY_DIR / f"{game_id}.html"
    log = find_log(output / "games", game_id)
    if (
        log is not None
    ):  # else no longer kept (keep_logs, referee.records.retention): the game is shown without a replay
        write_replay_of_log(log, page, back=BACK_LINK)
    return page


# The standings of each folder this helper writes pages of, kept between rewrites: each reads only the records
# that came since (referee.records.standings.FolderStandings), so a rewrite costs the same after a million games.
_FOLDERS: dict[Path, FolderStandings] = {}


def write_live_leaderboard(output: Path, scheduled: int | None) -> None:
    """Write the leaderboard files of a running league from its results (a page that refreshes itself)."""
    from referee.publish.files import write_leaderboards
    from referee.records.standings import FolderStandings

    folder = _FOLDERS.get(output) or _FOLDERS.setdefault(output, FolderStandings(output))
    shown = Shown.read(output)
    standings, league = folder.update(shown)
    write_leaderboards(standings, output, league.name, live=True, scheduled=scheduled, shown=shown)


def replay_is_whole(page: Path) -> bool:
    """Whether a replay page is there and whole: its end written, and its data unpacking (gzip's check) to a game."""
    from referee.publish.replay_page import page_data_of

    try:
        text = page.read_text(encoding="utf-8")
        return text.rstrip().endswith("</html>") and "frames" in page_data_of(text)
    except (OSError, ValueError, EOFError, KeyError):
        return False


def missing_replays(output: Path, game_ids: Sequence[str]) -> list[str]:
    """The games of ``game_ids`` whose log is there but whose replay page is missing or damaged."""
    return [
        game_id
        for game_id in game_ids
        if find_log(output / "games", game_id) is not None
        and not replay_is_whole(output / REPLAY_DIR / f"{game_id}.html")
    ]


def rebuild_replays(output: Path, game_ids: Sequence[str]) -> list[str]:
    """Write the replay page of each game of ``game_ids`` that lacks a whole one and may be shown; return those
    written."""
    shown = {record["game_id"] for record in Shown.read(output).records(output)}
    rebuilt = missing_replays(output, [game_id for game_id in game_ids if game_id in shown])
    for game_id in rebuilt:
        write_replay_for(output, game_id)
    return rebuilt


# A full or read-only disk: the league's own results file reports it, in one line.
_DISK_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})


class LiveSite:
    """Writes a running league's replay pages and leaderboard as games finish (see the module's doc)."""

    def __init__(
        self,
        output: Path,
        scheduled: int | None,
        *,
        deals: DealsInPlay,
        interval_s: float = DEFAULT_INTERVAL_S,
        static_replays: bool = False,
    ) -> None:
        """``deals``: the run's, which says when each game and each feed's frame may be shown (it calls
        :meth:`shown`)."""
        self.output = Path(output)
        self.static_replays = static_replays  # else no replay page is written: referee serve makes each when asked
        self.spectators = SpectatorFeeds(self.output, deals)  # the games in play, for referee serve
        self._spectating: asyncio.Task[None] | None = None
        self._leaderboard: dict[str, Any] = {"job": "leaderboard", "output": str(self.output), "scheduled": scheduled}
        self.interval_s = interval_s
        self._helper: asyncio.subprocess.Process | None = None
        # A game id, the ids to rebuild, _REFRESH or _STOP.
        self._queue: asyncio.Queue[str | list[str] | object] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        # The first rewrite one interval after the run starts, not at its first game: a run shorter than that
        # starts no helper for its leaderboard (the runner writes the last one itself, at the end).
        self._next_write = time.monotonic() + interval_s
        self._warned = False
        self.replays_written = 0
        self.leaderboard_written_at: list[float] = []  # time.monotonic() as each rewrite ended

    def watch(self) -> SpectatorFeeds:
        """The spectators' feeds, written from now until :meth:`close`: give them to the backend as its watcher."""
        if self._spectating is None:
            self._spectating = asyncio.get_running_loop().create_task(self.spectators.run())
        return self.spectators

    def shown(self, game_ids: Sequence[str]) -> None:
        """Queue finished games that may be shown from now on (their deals done, the delay over); returns at once."""
        for game_id in game_ids if self.static_replays else ():
            self._put(game_id)
        self._put(_REFRESH)

    def refresh(self) -> None:
        """Queue a rewrite of the leaderboard (``league.json`` changed: a ladder judged a version); returns at once."""
        self._put(_REFRESH)

    def rebuild(self, game_ids: Sequence[str]) -> None:
        """Queue the games finished before this run: the helper rewrites any replay page missing or damaged (with
        static replays)."""
        if game_ids and self.static_replays:
            self._put(list(game_ids))

    def _put(self, item: str | list[str] | object) -> None:
        """Queue ``item`` for the writer task, started with the first."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        self._queue.put_nowait(item)

    async def close(self) -> None:
        """Write every queued replay, then stop the helper (the runner writes the final leaderboard itself); the
        spectators' feeds end."""
        spectating, self._spectating = self._spectating, None
        if spectating is not None:
            spectating.cancel()
            await asyncio.gather(spectating, return_exceptions=True)
        self.spectators.close()
        if self._task is None:
            return
        self._queue.put_nowait(_STOP)
        try:
            await self._task
        finally:
            self._task = None
            await self._stop_helper()

    async def _run(self) -> None:
        dirty = False
        while True:
            timeout = max(0.0, self._next_write - time.monotonic()) if dirty else None
            try:
                async with asyncio.timeout(timeout):
                    item = await self._queue.get()
            except TimeoutError:
                item = None
            if item is _STOP:
                return
            if isinstance(item, list):
                await self._job({"job": "rebuild", "output": str(self.output), "game_ids": item})
            elif item is _REFRESH:
                dirty = True
            elif item is not None:
                if await self._job({"job": "replay", "output": str(self.output), "game_id": item}):
                    self.replays_written += 1
                dirty = True
            if dirty and time.monotonic() >= self._next_write:
                started = time.monotonic()
                if await self._job(self._leaderboard):
                    self.leaderboard_written_at.append(time.monotonic())
                took = time.monotonic() - started
                self._next_write = time.monotonic() + max(self.interval_s, 10 * took)
                dirty = False

    # ----- the helper process ----------------------------------------------------------------

    async def _job(self, job: dict[str, Any]) -> bool:
        """Have the helper do ``job``; a failure is told once and never stops the league."""
        try:
            if self._helper is None or self._helper.returncode is not None:
                self._helper = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "referee.publish.live",
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    start_new_session=True,  # Ctrl-C is for the referee
                )
            stdin, stdout = self._helper.stdin, self._helper.stdout
            assert stdin is not None and stdout is not None  # both are pipes
            stdin.write(json.dumps(job).encode() + b"\n")
            await stdin.drain()
            line = await stdout.readline()
            if not line:
                raise OSError(f"the page writer stopped ({await self._helper.wait()})")
            answer = json.loads(line)
            if not answer.get("ok"):
                if answer.get("errno") in _DISK_ERRORS:
                    return False  # the results file meets the same disk: the run says so itself, once
                raise RuntimeError(answer.get("error", "unknown error"))
            return True
        except (OSError, ValueError, RuntimeError) as error:
            if isinstance(error, OSError) and error.errno in _DISK_ERRORS:
                return False
            if not self._warned:
                self._warned = True
                print(
                    f"warning: a page of {self.output} could not be written ({error}); the games go on", file=sys.stderr
                )
            return False

    async def _stop_helper(self) -> None:
        helper, self._helper = self._helper, None
        if helper is None or helper.returncode is not None:
            return
        assert helper.stdin is not None  # a pipe
        helper.stdin.close()  # the helper ends at the end of its input
        try:
            async with asyncio.timeout(10):
                await helper.wait()
        except TimeoutError:
            helper.kill()
            await helper.wait()


def _serve_jobs() -> None:
    """The helper: do each job read from standard input, answering each with one JSON line."""
    os.nice(HELPER_NICENESS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for line in sys.stdin:
        try:
            job = json.loads(line)
            output = Path(job["output"])
            if job["job"] == "replay":
                write_replay_for(output, job["game_id"])
            elif job["job"] == "rebuild":
                rebuild_replays(output, job["game_ids"])
            else:
                write_live_leaderboard(output, job["scheduled"])
            answer: dict[str, Any] = {"ok": True}
        except Exception as error:  # noqa: BLE001 - told to the runner, which tells the organiser once
            answer = {"ok": False, "error": f"{type(error).__name__}: {error}", "errno": getattr(error, "errno", None)}
        try:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:  # the runner is gone (killed, even with SIGKILL): nobody waits for the answer
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return


if __name__ == "__main__":
    _serve_jobs()
