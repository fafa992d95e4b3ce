"""The organiser's orders to a running ladder: a version withdrawn, disqualified or reinstated while the games go on.

A running ladder holds its output folder (:func:`referee.apps.league.output_folder`),
so ``referee ladder LADDER.yaml --withdraw NAME`` cannot change its records
itself. It leaves an *order* instead, ``OUTPUT/orders/ID.json``, and waits.
The running ladder looks for orders every ``poll_s`` seconds: it *takes* one
by renaming it to ``ID.taken`` (so the order is the ladder's or the
command's, never both), applies it as the command would have, and answers in
``ID.done.json`` (``{"ok": ..., "said": ...}``), which the command reads,
prints and removes. A command whose ladder stops before taking its order
takes it back (removing ``ID.json``) and applies it itself under the folder's
lock; one whose ladder stopped after taking it, without answering, does the
same with ``ID.taken``. Applying an order twice changes nothing the second
time: a version already in the status asked is left as it is.

A command that cannot wait any longer (Ctrl-C, or :data:`WAIT_S` past the
ladder's ``poll_s``) takes its order back if the ladder has not taken it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from referee.apps.ladder.entries import ladder_league, now, write_ladder_league, write_reports
from referee.apps.ladder.file import Ladder
from referee.apps.ladder.history import Register, StatusChange, Tables
from referee.apps.league import output_folder, publish_standings
from referee.common.atomic import replace_json
from referee.common.errors import LeagueError, OutputError
from referee.protocol.standing import ACTIVE, DISQUALIFIED, WITHDRAWN, BotStatus
from referee.records.results import ACCEPTED

ORDERS_DIR = "orders"
WAIT_S = 30.0  # past the ladder's poll_s: how long a command waits for the running ladder to take its order up
ACTIONS: dict[str, BotStatus] = {"withdraw": WITHDRAWN, "disqualify": DISQUALIFIED, "reinstate": ACTIVE}


@dataclass(frozen=True)
class Order:
    """What the organiser asked of a version: ``action`` (withdraw, disqualify, reinstate), why, and when."""

    id: str
    action: str
    bot: str
    reason: str = ""
    at: str = ""

    @property
    def status(self) -> BotStatus:
        return ACTIONS[self.action]


@dataclass(frozen=True)
class Answer:
    """What came of an order: applied (or found done already), or refused, in one sentence."""

    ok: bool
    said: str


def new_order(action: str, bot: str, reason: str, at: str) -> Order:
    if action not in ACTIONS:
        raise ValueError(f"no order is called {action!r}; the orders are: {', '.join(ACTIONS)}")
    return Order(f"{time.time_ns()}-{secrets.token_hex(4)}", action, bot, reason, at)


def held_by_a_run(output: Path) -> bool:
    """Whether a referee (a running ladder) holds ``output`` now: its lock is taken."""
    try:
        handle = os.open(output, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(handle)  # and with it the lock, if this took it
    return False


def decide(register: Register, output: Path, order: Order, tables_drawn: int) -> StatusChange | None:
    """The change ``order`` makes to the register (None: the version is in that status already); a
    :class:`LeagueError` saying why when it may not be made."""
    accepted = [judged for judged in register.judged() if judged.verdict == ACCEPTED]
    version = next((judged for judged in accepted if judged.bot == order.bot), None)
    if version is None:
        names = ", ".join(judged.bot for judged in accepted) or "none yet"
        raise LeagueError(f"{output}: {order.bot!r} is no version accepted on this ladder; the versions are: {names}")
    status = register.statuses().get(order.bot)
    if status == order.status:
        return None
    if order.status == ACTIVE:
        latest = [judged.bot for judged in accepted if judged.author == version.author][-1]
        if latest != order.bot:
            raise LeagueError(
                f"{output}: {order.bot} is not {version.author}'s latest version ({latest} is): only an author's "
                f"latest accepted version plays; reinstate {latest} if it is not active"
            )
    return StatusChange(order.bot, order.status, order.reason, order.at, tables_drawn)


def said(change: StatusChange | None, order: Order) -> str:
    """The sentence for an order applied (``change``), or found done already (None)."""
    words = {WITHDRAWN: "withdrawn", DISQUALIFIED: "disqualified", ACTIVE: "reinstated: it plays again"}
    if change is None:
        return f"{order.bot}: {order.status} already; nothing changed"
    return f"{order.bot}: {words[change.status]}" + (f" ({change.reason})" if change.reason else "")


# ----- the command's side ----------------------------------------------------------------------------------


def _folder(output: Path) -> Path:
    return output / ORDERS_DIR


def post(output: Path, order: Order) -> None:
    """Leave ``order`` for the running ladder (written whole, in one step)."""
    folder = _folder(output)
    folder.mkdir(exist_ok=True)
    replace_json(folder / f"{order.id}.json", asdict(order))


def answered(output: Path, order: Order) -> Answer | None:
    """The running ladder's answer to ``order``, read and removed; None while there is none."""
    path = _folder(output) / f"{order.id}.done.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    path.unlink(missing_ok=True)
    return Answer(bool(data.get("ok")), str(data.get("said", "")))


def take_back(output: Path, order: Order, *, taken_too: bool = False) -> bool:
    """Remove ``order`` before the ladder takes it (with ``taken_too``: or after it took it and stopped without an
    answer, the folder's lock held by the caller); whether it was there to remove."""
    names = [f"{order.id}.json", *([f"{order.id}.taken"] if taken_too else [])]
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            (_folder(output) / name).unlink()
            return True
    return False


# ----- the running ladder's side ---------------------------------------------------------------------------


def take(output: Path) -> Iterator[Order]:
    """The orders left for the ladder, oldest first, each taken (renamed ``ID.taken``) as it is handed over; taken
    ones a run stopped before it answered them come first. An order that cannot be read is answered so and dropped."""
    folder = _folder(output)
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return
    for name in sorted(names, key=lambda name: (not name.endswith(".taken"), name)):
        if name.endswith(".taken"):
            taken = folder / name
        elif name.endswith(".json") and not name.endswith(".done.json"):
            taken = folder / (name.removesuffix(".json") + ".taken")
            try:
                os.rename(folder / name, taken)
            except FileNotFoundError:
                continue  # taken back by its command meanwhile
        else:
            continue
        order = _read(taken)
        if order is None:
            answer(output, taken.name.removesuffix(".taken"), Answer(False, f"{taken}: not an order; dropped"))
            continue
        yield order


def _read(path: Path) -> Order | None:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        order = Order(**{key: str(data[key]) for key in Order.__dataclass_fields__ if key in data})
    except (OSError, ValueError, TypeError):
        return None
    return order if order.action in ACTIONS else None


def answer(output: Path, order_id: str, outcome: Answer) -> None:
    """Answer order ``order_id`` (its command waits for this) and let go of it."""
    folder = _folder(output)
    replace_json(folder / f"{order_id}.done.json", asdict(outcome))
    (folder / f"{order_id}.taken").unlink(missing_ok=True)


# ----- the organiser's command -------------------------------------------------------------------------------


def change_status(ladder: Ladder, bot: str, status: BotStatus, reason: str) -> StatusChange | None:
    """Withdraw, disqualify or reinstate accepted version ``bot`` while no ladder runs: record it in
    ``register.jsonl`` and rewrite the records (None: it had that status already, nothing changed)."""
    action = next(action for action, becomes in ACTIONS.items() if becomes == status)
    return _apply_here(ladder, new_order(action, bot, reason, now()))


def _apply_here(ladder: Ladder, order: Order) -> StatusChange | None:
    output = ladder.output
    output.mkdir(parents=True, exist_ok=True)
    with output_folder(output):
        register = Register(output)
        tables = Tables(output)
        try:
            change = decide(register, output, order, len(tables.drawn))
            if change is not None:
                register.add(change)
                write_ladder_league(ladder, register, ladder_league(ladder, register))
                write_reports(ladder, register)
        finally:
            tables.close()
            register.close()
        publish_standings(output)
    return change


def give(ladder: Ladder, action: str, bot: str, reason: str, say: Callable[[str], None]) -> Answer:
    """The organiser's order, applied here when no ladder runs, else left for the running ladder and its answer
    awaited (``say`` hears that it waits). Ctrl-C while waiting takes the order back if the ladder has not taken it."""
    order = new_order(action, bot, reason, now())
    output = ladder.output
    while True:
        if not held_by_a_run(output):
            try:
                return Answer(True, said(_apply_here(ladder, order), order) + " (no ladder was running)")
            except LeagueError as refusal:
                return Answer(False, str(refusal))
            except OutputError:
                if not held_by_a_run(output):
                    raise
                continue  # a ladder started meanwhile: it takes the order
        post(output, order)
        say(f"{output}: the ladder is running: the order is left for it (it looks every {ladder.poll_s:g} s)")
        try:
            return _awaited(ladder, order)
        except BaseException:
            take_back(output, order)
            raise


def _awaited(ladder: Ladder, order: Order) -> Answer:
    """The running ladder's answer to ``order``; applied here if the ladder stops before it answers."""
    output = ladder.output
    deadline = time.monotonic() + ladder.poll_s + WAIT_S
    while True:
        outcome = answered(output, order)
        if outcome is not None:
            return outcome
        if not held_by_a_run(output):
            with output_folder(output):
                outcome = answered(output, order)  # answered as the ladder stopped
                if outcome is not None:
                    return outcome
                if not take_back(output, order, taken_too=True):
                    raise OutputError(f"{output}: order {order.id} is gone without an answer; look at the register")
            try:
                return Answer(True, said(_apply_here(ladder, order), order) + " (the ladder had stopped)")
            except LeagueError as refusal:
                return Answer(False, str(refusal))
        if time.monotonic() > deadline and take_back(output, order):
            return Answer(
                False,
                f"{output}: the running ladder did not take the order up within {ladder.poll_s + WAIT_S:g} s; nothing "
                "was changed (is it stuck in a long build? try again)",
            )
        time.sleep(0.1)
