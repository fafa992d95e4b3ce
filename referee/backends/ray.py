"""The Ray backend: a league's games played on a Ray cluster (docs/scaling.md).

Each game played at once has a *slot*: a Ray actor (:class:`GameSlot`) that
needs one CPU, placed by Ray on a node with one free (spread over the
nodes). It plays one game at a time with the same code as the local backend
(the match, the sandbox, the clock), keeps a :class:`BotPool` on its node,
so a bot's process starts on the node that plays its game and is kept for
its next game there, and writes the bots' output to ``OUTPUT/logs/``
(``NAME-wSLOT-N.log``). Each game's record and log text go back to this
process, the driver, which alone writes ``games.jsonl`` and
``OUTPUT/games/``: the output, resume and leaderboards are those of the
local backend.

Every node sees the league's folder, its submissions, its output folder and
the referee's installation at the same paths (a shared folder, or the same
image): submissions are built once, by the driver, into ``OUTPUT/builds/``,
and every node runs the bots from there. A slot checks on its start that it
sees the output folder and runs the driver's version of the referee.

A node lost in the middle of a league (its actor died, or the reply with
its result was lost) loses no game: the game is played again on another
slot, and a new slot replaces the lost one wherever Ray finds a free CPU.
A game lost :data:`MAX_LOSSES` times stops the run.

Without ``address``, Ray is started for the run on this machine, which must
be in a private network namespace with only loopback up
(:mod:`referee.backends.netns`), and stopped at its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee import __version__
from referee.backends.backend import NOTES_DIR, Backend, FinishedGame, auto_concurrency, first_error
from referee.backends.netns import loopback_only
from referee.backends.pool import BotPool, Restarts, play_scheduled
from referee.common.errors import RefereeError
from referee.records.gamelog import store_log
from referee.records.notes import notes_path

if TYPE_CHECKING:
    from referee.leaguefile.config import League
    from referee.leaguefile.schedule import ScheduledGame

INSTALL = "pip install 'brag-referee[ray]'"
MAX_LOSSES = 3  # times one game may be lost with its node before the run stops
RESTART_PAUSE_S = 1.0  # between attempts to start a slot whose actor died as it started
CLOSE_TIMEOUT_S = 10.0  # for a slot to stop its bots at the end
CONNECT_TIMEOUT_S = 10.0  # for the cluster's address to answer
LOCAL_OBJECT_STORE_BYTES = 256 * 1024 * 1024  # game logs and records are small


def prepare_local_ray() -> None:
    """Set the environment of a Ray started for the run; before Ray is imported, which reads it then.

    No usage statistics; the node's address is loopback's, without looking
    for the machine's external one (Ray's single-machine mode); and token
    authentication with a token made for the run, kept in the environment of
    the referee and Ray's processes (a sandboxed bot's is its own) rather
    than in ``~/.ray/auth_token``. Variables already set are kept.
    """
    for name, value in (
        ("RAY_USAGE_STATS_ENABLED", "0"),
        ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0"),
        ("RAY_AUTH_MODE", "token"),
    ):
        os.environ.setdefault(name, value)
    if os.environ["RAY_AUTH_MODE"] == "token" and not os.environ.get("RAY_AUTH_TOKEN_PATH"):
        os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))


class RayUnavailable(RefereeError):
    """Ray is not installed (or cannot be imported) where ``--backend ray`` was asked for."""


class RayBackendError(RefereeError):
    """The Ray backend cannot go on: a node does not see the output, a game keeps being lost, a local Ray refused."""


def import_ray() -> Any:
    """The ``ray`` module; a :class:`RayUnavailable` saying how to install it when it cannot be imported."""
    try:
        import ray
    except ModuleNotFoundError as error:
        if (error.name or "ray").partition(".")[0] != "ray":
            raise RayUnavailable(
                f"--backend ray needs Ray, which cannot be imported ({error}): reinstall it with {INSTALL}"
            ) from None
        raise RayUnavailable(f"--backend ray needs Ray, which is not installed here: {INSTALL}") from None
    except ImportError as error:
        raise RayUnavailable(
            f"--backend ray needs Ray, which cannot be imported ({error}): reinstall it with {INSTALL}"
        ) from None
    return ray


# ----- on a node: the slot actor -------------------------------------------------------


class _ReportedRestarts(Restarts):
    """A slot's count of bot failures, each also kept to report to the driver, which counts over the league."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self._unreported: list[tuple[str, str, str | None]] = []

    def failed(self, name: str, detail: str, log_path: Path | None) -> None:
        super().failed(name, detail, log_path)
        self._unreported.append((name, detail, None if log_path is None else str(log_path)))

    def report(self) -> list[tuple[str, str, str | None]]:
        reported, self._unreported = self._unreported, []
        return reported


class GameSlot:
    """A Ray actor: plays one game at a time on its node, with bot processes kept between its games."""

    def __init__(self, league: League, output: str, log_dir: str, tag: str) -> None:
        self._league = league
        self._output = Path(output)
        self._log_dir = Path(log_dir)
        self._restarts = _ReportedRestarts(league.max_restarts)
        self._pool = BotPool(league, self._log_dir, self._restarts, tag)
        self._scratch = Path(tempfile.mkdtemp(prefix="referee-slot-"))  # each game's log, until it is sent back

    async def ready(self, driver_version: str) -> str:
        """Check this node can play the league's games; return where it runs (``host (node id)``)."""
        import ray

        host = os.uname().nodename
        node = ray.get_runtime_context().get_node_id()
        if driver_version != __version__:
            raise RayBackendError(
                f"node {host} ({node[:12]}) runs referee {__version__}, the driver {driver_version}: "
                "install the same referee on every node"
            )
        if not (self._log_dir.is_dir() and os.access(self._log_dir, os.W_OK)):
            raise RayBackendError(
                f"node {host} ({node[:12]}) does not see the league's output folder {self._output} (or cannot write "
                f"its logs/): every node needs the league's folder and output at the same paths, in a shared folder "
                "(docs/scaling.md)"
            )
        return f"{host} ({node[:12]})"

    async def play(
        self, game: ScheduledGame, disabled: dict[str, str]
    ) -> tuple[dict[str, Any], str, list[tuple[str, str, str | None]]]:
        """Play ``game``; return its record, its log's text and the bot failures it saw.

        ``disabled``: the bots the driver counts as past their restart limit.
        """
        for name, reason in disabled.items():
            self._restarts.disabled.setdefault(name, reason)
        log_path = self._scratch / f"{game.game_id}.jsonl"
        try:
            # The notes are written where the driver reads them: every node sees the league's output folder.
            folder = self._output / game.folder if game.folder is not None else self._output
            notes = notes_path(folder / NOTES_DIR, game.game_id)
            record = await play_scheduled(self._league, self._pool, game, log_path, notes_path=notes)
            text = log_path.read_text(encoding="utf-8")
        finally:
            log_path.unlink(missing_ok=True)
        return record, text, self._restarts.report()

    async def renew(self, league: League) -> None:
        """Play the next games with ``league``'s bots (a ladder's field changed since this slot started)."""
        self._league = league
        await self._pool.renew(league)

    async def close(self) -> None:
        """Stop every bot process of this slot."""
        await self._pool.close()
        shutil.rmtree(self._scratch, ignore_errors=True)


# ----- the driver ---------------------------------------------------------------------


class _Games:
    """The games to play, shared by the slots; a game lost with its node comes back here to be played first."""

    def __init__(self, games: Iterable[ScheduledGame], stop: Callable[[], bool]) -> None:
        self._games: Iterator[ScheduledGame] = iter(games)
        self._again: deque[ScheduledGame] = deque()
        self._stop = stop
        self._running = 0
        self._changed = asyncio.Condition()
        self.over = asyncio.Event()  # no game left to play or to come back: slots still starting give up

    async def take(self) -> ScheduledGame | None:
        """The next game to play; None once none is left, nor running (a running game may come back)."""
        async with self._changed:
            while True:
                game = None if self._stop() else self._again.popleft() if self._again else next(self._games, None)
                if game is not None:
                    self._running += 1
                    return game
                if self._running == 0 or self._stop():
                    self.over.set()
                    self._changed.notify_all()
                    return None
                await self._changed.wait()

    async def done(self) -> None:
        async with self._changed:
            self._running -= 1
            self._changed.notify_all()

    async def again(self, game: ScheduledGame) -> None:
        async with self._changed:
            self._running -= 1
            self._again.append(game)
            self._changed.notify_all()


class RayBackend(Backend):
    """Games on a Ray cluster (``address``), or on a Ray started for the run on this machine (no address)."""

    name = "ray"

    def __init__(self, league: League, output: Path, concurrency: int | None, *, address: str | None = None) -> None:
        super().__init__(league, output, concurrency)
        self.address = address
        self.replayed: list[str] = []  # game ids played again after their node was lost
        self._ray: Any = None
        self._owns_ray = False
        self._temp_dir: str | None = None
        self._slot_numbers = itertools.count(1)
        self._actors: set[Any] = set()
        self._losses: dict[str, int] = {}
        self._renewals = 0  # times the league's bots changed (a ladder's field): each slot catches up before a game

    # ----- connecting ----------------------------------------------------------------

    async def open(self) -> None:
        if self.address is None and "ray" not in sys.modules:
            prepare_local_ray()
        ray = self._ray = import_ray()
        if ray.is_initialized():
            pass  # the caller's Ray: used as it is, and left running
        elif self.address is None:
            self._start_local(ray, self.asked_concurrency or auto_concurrency())
        else:
            _check_reachable(self.address)
            self._owns_ray = True
            self._connect(lambda: ray.init(address=self.address, logging_level=logging.WARNING, log_to_driver=False))
        # auto: one game per CPU of the cluster (as it is now), as the local backend plays one per CPU here
        self.concurrency = self.asked_concurrency or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._slot_class = ray.remote(GameSlot).options(
            num_cpus=1, scheduling_strategy="SPREAD", max_restarts=0, max_task_retries=0
        )

    def _start_local(self, ray: Any, cpus: int) -> None:
        """Start a Ray of ``cpus`` CPUs on this machine, bound to 127.0.0.1, in a folder of its own."""
        if not loopback_only():
            raise RayBackendError(
                "a Ray started for this run must be in a private network namespace with only loopback up "
                "(unshare --net, then ip link set lo up), where it binds 127.0.0.1: `referee run --backend ray` "
                "makes one itself; or give --address of a Ray cluster"
            )
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        self._temp_dir = tempfile.mkdtemp(prefix="ray-")  # short: Ray's sockets are made under it
        self._owns_ray = True  # from here on: shut it down at the end, even if it did not start
        self._connect(
            lambda: ray.init(
                address="local",
                num_cpus=cpus,
                include_dashboard=False,
                _temp_dir=self._temp_dir,
                object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                logging_level=logging.ERROR,
                log_to_driver=False,
            )
        )
        address = ray.util.get_node_ip_address()
        if not address.startswith("127."):
            raise RayBackendError(f"the Ray started for this run took the address {address}, not a loopback one")

    def _connect(self, connect: Callable[[], object]) -> None:
        """``connect()`` (``ray.init``), then give SIGTERM back to the run (``ray.init`` takes it, to exit at once).

        Ray's refusals (a connection error is an ``OSError``, which the run
        would take for its output folder's) become a :class:`RayBackendError`.
        """
        main = threading.current_thread() is threading.main_thread()
        previous = signal.getsignal(signal.SIGTERM) if main else None
        try:
            connect()
        except Exception as error:  # noqa: BLE001 - ray.init raises anything from ValueError to its own errors
            where = f"the Ray cluster at {self.address}" if self.address else "a Ray for this run"
            raise RayBackendError(f"cannot start or join {where}: {_first_line(error)}") from None
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)

    # ----- playing -------------------------------------------------------------------

    async def play(
        self,
        games: Iterable[ScheduledGame],
        finished: Callable[[FinishedGame], None],
        stop: Callable[[], bool],
    ) -> None:
        work = _Games(games, stop)
        try:
            async with asyncio.TaskGroup() as slots:
                for _ in range(self.concurrency):
                    slots.create_task(self._slot(work, finished))
        except BaseExceptionGroup as group:
            raise first_error(group) from None

    async def _slot(self, work: _Games, finished: Callable[[FinishedGame], None]) -> None:
        """Play games on one actor, replacing it when its node is lost, until no game is left."""
        ray = self._ray
        lost = (
            ray.exceptions.RayActorError,
            ray.exceptions.ObjectLostError,
            ray.exceptions.NodeDiedError,
            ray.exceptions.WorkerCrashedError,
        )
        actor = None
        renewals = 0  # the league's bots as the slot's actor knows them
        try:
            while True:
                if actor is None:
                    renewals = self._renewals  # a new actor starts with the league as it is now
                    actor = await self._start_slot(work, lost)
                    if actor is None:
                        return
                game = await work.take()
                if game is None:
                    return
                try:
                    if renewals != self._renewals:
                        renewals = self._renewals
                        await actor.renew.remote(self.league)
                    record, log_text, failures = await actor.play.remote(game, dict(self.restarts.disabled))
                except lost as error:
                    self._lost(game, error)
                    await work.again(game)
                    self._kill(actor)
                    actor = None
                    continue
                except ray.exceptions.RayTaskError as error:
                    raise _cause(error) from None
                store_log(self.game_paths(game)[0], log_text.encode("utf-8"))
                for name, detail, log_path in failures:
                    self.restarts.failed(name, detail, None if log_path is None else Path(log_path))
                self.ended(finished, FinishedGame(game, record))
                await work.done()
        finally:
            if actor is not None:
                await self._stop_slot(actor)

    async def _start_slot(self, work: _Games, lost: tuple[type[BaseException], ...]) -> Any:
        """A new slot actor, once Ray has placed and started it; None if no game is left before it is."""
        ray = self._ray
        for attempt in itertools.count(1):
            slot = next(self._slot_numbers)
            actor = self._slot_class.remote(self.league, str(self.output), str(self.bot_log_dir), f"w{slot}-")
            self._actors.add(actor)
            ready = asyncio.ensure_future(_awaited(actor.ready.remote(__version__)))
            over = asyncio.ensure_future(work.over.wait())
            try:
                await asyncio.wait({ready, over}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                over.cancel()
                if not ready.done():
                    ready.cancel()
                    self._kill(actor)
            if not ready.done():
                return None  # no game is left for it
            error = ready.exception()
            if error is None:
                return actor
            self._kill(actor)
            if isinstance(error, ray.exceptions.RayTaskError):
                raise _cause(error) from None
            if not isinstance(error, lost):
                raise error
            if attempt >= MAX_LOSSES:  # not a node lost now and then: the actor cannot start
                raise RayBackendError(
                    f"a game slot's Ray actor died as it started, {attempt} times in a row (last: {_first_line(error)})"
                )
            if work.over.is_set():
                return None
            await asyncio.sleep(RESTART_PAUSE_S)  # its node died as it started: try again, wherever Ray can
        return None  # not reached: the attempts are counted without end

    async def renew(self, league: League) -> None:
        await super().renew(league)
        self._renewals += 1

    def _lost(self, game: ScheduledGame, error: BaseException) -> None:
        """Count a game lost with its node; say so; stop the run when the same game is lost too often."""
        losses = self._losses[game.game_id] = self._losses.get(game.game_id, 0) + 1
        reason = _first_line(error)
        if losses >= MAX_LOSSES:
            raise RayBackendError(
                f"game {game.game_id} was lost with its Ray node {losses} times (last: {reason}); "
                "the games finished so far are kept: run the same command again to resume"
            )
        self.replayed.append(game.game_id)
        print(
            f"ray: game {game.game_id} was lost with its node ({reason}); it is played again on another",
            file=sys.stderr,
            flush=True,
        )

    async def _stop_slot(self, actor: Any) -> None:
        """Have a slot stop its bots, then end its actor."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await _awaited(actor.close.remote())
        self._kill(actor)

    def _kill(self, actor: Any) -> None:
        self._actors.discard(actor)
        with contextlib.suppress(Exception):
            self._ray.kill(actor, no_restart=True)

    # ----- closing -------------------------------------------------------------------

    async def close(self) -> None:
        for actor in list(self._actors):
            self._kill(actor)
        if self._owns_ray:
            self._ray.shutdown()
            self._owns_ray = False
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None


def _check_reachable(address: str) -> None:
    """Refuse at once a cluster address (``host:port``) where nothing listens: Ray would retry for minutes."""
    host, colon, port = address.rpartition(":")
    if "://" in address or not colon or not port.isdigit():
        return  # auto, a Ray Client address or a form Ray checks itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise RayBackendError(
            f"--address {address}: no Ray cluster answers there ({reason}); start Ray on the "
            "cluster's head (ray start --head) and give its address (docs/scaling.md)"
        ) from None


async def _awaited(ref: Any) -> Any:
    return await ref


def _cause(error: BaseException) -> BaseException:
    """The exception a Ray task raised on its node, as it was raised there (for a one-line message)."""
    cause = getattr(error, "cause", None)
    return cause if isinstance(cause, BaseException) else RayBackendError(_first_line(error))


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
