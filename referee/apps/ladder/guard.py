"""What keeps a version that cannot play from being seated: its failures and its forfeits in a row, across runs.

A version is *suspended* (:data:`referee.protocol.standing.SUSPENDED`) the moment

- its processes have failed (crashed, or could not start) more often than
  the ladder's ``max_restarts`` allows: the backend's restart count
  (:class:`referee.backends.pool.Restarts`) tells the ladder of each failure
  as it is counted, and the ladder records each in its register, so a ladder
  started again goes on counting where it stopped;
- or it has forfeited ``forfeits_in_a_row`` games in a row (at start, or
  later), counted from the games' records as they finish; a ladder started
  again counts the forfeits at the end of ``games.jsonl`` again
  (:func:`forfeit_streaks`).

Either count starts afresh when the version enters play again (reinstated by
the organiser; a new upload is a new version). The ladder's runner does the
suspending (:mod:`referee.apps.ladder.run`); this module counts and words it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.apps.ladder.history import FAILURES_DIR
from referee.common.atomic import replace_file
from referee.publish.redaction import public_text
from referee.records.results import GameRecord, games_after

STARTING = "could not start: "  # a failure before any game, in the register's words (its output holds no game's)
KEPT_BYTES = 64 * 2**10  # of a failed start's output, the last: where its error is
TAIL_BYTES = 2**20  # of games.jsonl read first for the forfeits in a row, four times more each time it is short
TAIL_MOST_BYTES = 2**28  # and never more: a streak that began further back than this is counted from there
_OUTPUT_IS_IN = re.compile(r"\s*\(its output is in [^)]*\)")
_ADDRESS = re.compile(r"on (?:unix:|tcp:)?\S+ \(its REFEREE_BOT_ADDRESS\)")


def plain_detail(detail: str, output: Path | None = None) -> str:
    """A fault's or failure's detail as its author reads it: no path of the machine, nor where its output is (the
    author's page shows the output itself), nor the socket it was given."""
    text = public_text(detail, output)
    text = _OUTPUT_IS_IN.sub("", text)
    return _ADDRESS.sub("on the address it was given", text).strip()


def keep_start_output(output: Path, bot: str, log: Path) -> str:
    """Keep the output of ``bot``'s process that failed to start (``log``; its last :data:`KEPT_BYTES`) in
    ``OUTPUT/failures``, for its author's page; the name it is kept under ("" when it cannot be read).

    The process played no game, so its output tells no deal. Its own log is written anew by the process of the same
    number in the next run of the ladder: what went wrong first would be lost.
    """
    try:
        with open(log, "rb") as source:
            source.seek(max(0, os.fstat(source.fileno()).st_size - KEPT_BYTES))
            data = source.read(KEPT_BYTES)
    except OSError:
        return ""
    name = f"{bot}-{time.time_ns()}.log"
    (output / FAILURES_DIR).mkdir(exist_ok=True)
    replace_file(output / FAILURES_DIR / name, data)
    return name


@dataclass
class _Streak:
    forfeits: int = 0
    kinds: dict[str, int] = field(default_factory=dict)  # fault kind -> games forfeited for it in the streak

    def add(self, kind: str) -> None:
        self.forfeits += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1


class Guard:
    """Counts each active version's failures and forfeits in a row; calls ``suspend(bot, reason)`` when one has
    too many (once: the ladder then stops counting it until it enters play again, :meth:`entered`)."""

    def __init__(
        self,
        max_restarts: int,
        forfeits_in_a_row: int,
        suspend: Callable[[str, str], None],
        failures: Mapping[str, list[str]] | None = None,
    ) -> None:
        """``failures``: each version's failures' details since it entered play, as the register holds them."""
        self.max_restarts = max_restarts
        self.in_a_row = forfeits_in_a_row
        self.suspend = suspend
        self.failures: dict[str, list[str]] = {bot: list(details) for bot, details in (failures or {}).items()}
        self.streaks: dict[str, _Streak] = {}
        self.suspended: set[str] = set()

    def carry(self, streaks: Mapping[str, tuple[int, Mapping[str, int]]]) -> None:
        """Take each version's forfeits in a row as a run before this one left them (:func:`forfeit_streaks`), and
        suspend each version that run left past a limit (it stopped before it could)."""
        for bot, (count, kinds) in streaks.items():
            self.streaks[bot] = _Streak(count, dict(kinds))
        for bot in list(self.failures):
            self._check_failures(bot)
        for bot in list(self.streaks):
            self._check_streak(bot)

    def entered(self, bot: str) -> None:
        """``bot`` plays again (reinstated): its counts start afresh."""
        self.failures.pop(bot, None)
        self.streaks.pop(bot, None)
        self.suspended.discard(bot)

    def failed(self, bot: str, detail: str, disabled: bool = False) -> None:
        """A process of ``bot`` failed (``detail``, in plain words); ``disabled``: it reached the restart limit."""
        self.failures.setdefault(bot, []).append(detail)
        self._check_failures(bot, disabled)

    def finished(self, record: Mapping[str, Any]) -> None:
        """A game ended (its ``games.jsonl`` record): each of its versions' forfeits in a row go on or start again."""
        if record.get("void"):
            return  # it counts for no one, nor against anyone
        forfeits = record.get("forfeits") or {}
        for seat, bot in enumerate(record.get("seats") or ()):
            kind = forfeits.get(str(seat))
            if kind is None:
                self.streaks.pop(bot, None)
                continue
            self.streaks.setdefault(bot, _Streak()).add(str(kind))
            self._check_streak(bot)

    def _check_failures(self, bot: str, disabled: bool = False) -> None:
        details = self.failures.get(bot, [])
        if disabled or len(details) > self.max_restarts:
            first = f"; the first: {details[0]}" if len(details) > 1 else ""
            self._suspend(
                bot,
                f"it failed {len(details)} times (crashed, or could not start), more than the ladder's restart limit "
                f"({self.max_restarts}, max_restarts) allows{first}; the last: {details[-1]}",
            )

    def _check_streak(self, bot: str) -> None:
        streak = self.streaks[bot]
        if streak.forfeits >= self.in_a_row:
            kinds = ", ".join(f"{kind} {count}" for kind, count in streak.kinds.items())
            self._suspend(
                bot,
                f"it forfeited {streak.forfeits} games in a row (for: {kinds}), the most the ladder allows "
                "(forfeits_in_a_row)",
            )

    def _suspend(self, bot: str, reason: str) -> None:
        if bot in self.suspended:
            return
        self.suspended.add(bot)
        self.suspend(bot, reason)


def forfeit_streaks(path: Path, entered: Mapping[str, int], most: int) -> dict[str, tuple[int, dict[str, int]]]:
    """Each of ``entered``'s versions' forfeits in a row at the end of ``games.jsonl`` (``path``), with the kinds of
    fault they were for; only the games of tables drawn after the version entered play (``entered``: the tables
    drawn then) count, and no streak is counted past ``most``.

    Only the end of the file is read: the last :data:`TAIL_BYTES`, four times more while a version's streak
    reaches further back, up to :data:`TAIL_MOST_BYTES`.
    """
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        return {}
    window = TAIL_BYTES
    while True:
        start = max(0, size - window)
        games, _ = games_after(path, start)
        if start > 0 and games:
            games = games[1:]  # the window may begin inside this game's line: read whole with the next window
        streaks, open_ended = _streaks_from_end(games, entered, most)
        if not open_ended or start == 0 or window >= TAIL_MOST_BYTES:
            return {bot: streak for bot, streak in streaks.items() if streak[0]}
        window *= 4


def _streaks_from_end(
    games: list[GameRecord], entered: Mapping[str, int], most: int
) -> tuple[dict[str, tuple[int, dict[str, int]]], bool]:
    """The streaks at the end of ``games`` and whether one may reach further back than ``games`` go."""
    counts: dict[str, _Streak] = {bot: _Streak() for bot in entered}
    pending = set(entered)
    for game in reversed(games):
        if not pending:
            break
        if game.void:
            continue
        for seat, bot in enumerate(game.seats):
            if bot not in pending:
                continue
            if game.table is not None and game.table <= entered[bot]:
                pending.discard(bot)  # a game from before it entered play: its streak starts after it
                continue
            kind = game.forfeits.get(seat)
            if kind is None:
                pending.discard(bot)
                continue
            counts[bot].add(kind)
            if counts[bot].forfeits >= most:
                pending.discard(bot)
    return {bot: (streak.forfeits, streak.kinds) for bot, streak in counts.items()}, bool(pending)
