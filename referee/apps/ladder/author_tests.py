"""An author's own A/B test on a running ladder: one of their versions against another of theirs or any active version,
played as a duel on the ladder's spare capacity, for their eyes alone.

An author asks on their page (a form) or by ``POST /api/tests`` with their token; the site leaves a *request*,
``OUTPUT/author_tests/requests/ID.json`` (:func:`post_request`), which the running ladder takes up within its
``poll_s`` (:meth:`AuthorTests.take_requests`) as test ``tN``, in ``OUTPUT/author_tests/tN/``:

- ``test.json``: who asked what, the field, the status (``running``, ``decided`` or ``refused``), the verdict and
  its curve (the log-likelihood ratio after each deal), rewritten after each game;
- ``games.jsonl``, ``games/`` and ``notes/``: the test's game records, logs and its bots' notes, as a league's.

The test is a duel (:mod:`referee.leaguefile.schedule.sprt`): deals of A, B and ``table_size - 2`` other active
versions (its *field*, fixed when it starts), each deal played in every seat rotation on one seed of the test's own
(never a rated table's), stopped by the sequential test on the deal scores less the luck of the cards. Its games
are the ladder's: the same sandbox, limits and clock, the same processes' lanes (so no process sees a deal twice).

**Rated games keep priority.** One test game may start after every ``every`` rated games (the ladder file's
``author_tests:``); when the ladder rests or waits for versions, test games take every slot. An author has at most
``in_flight`` test games at once and ``per_day`` in any 24 hours, and one test open at a time.

**Unrated and private.** A test's games are never in ``games.jsonl``, the standings, the league's pages, the live
feed or an export, and no page but its author's says a test ran: its folder is under ``author_tests/``, which
``referee serve`` never publishes; the author's page reads it (:func:`tests_of`), and their private replay of a
test game is shown once every game of its deal has ended.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from referee.apps.ladder.file import TestLimits
from referee.common.atomic import replace_json
from referee.engine.seeding import derive_seed
from referee.leaguefile.config import League
from referee.leaguefile.duel_state import DuelState
from referee.leaguefile.schedule import ScheduledGame
from referee.leaguefile.schedule.sprt import Sprt, SprtSchedule
from referee.protocol.standing import ACTIVE
from referee.records.results import RESULTS_FILE, GameRecord, read_records
from referee.records.sequential import Measure
from referee.records.standings import folder_luck

TESTS_DIR = "author_tests"  # OUTPUT/author_tests/: every author's tests, private (see the module's text)
REQUESTS_DIR = "requests"
TEST_FILE = "test.json"
DAY_S = 86_400.0
TEST_ID = re.compile(r"t[1-9][0-9]{0,8}")  # tN: a test's id, its folder's name and its games' ids' start
DEFAULT_ELO0, DEFAULT_ELO1 = 0.0, 50.0  # the hypotheses a request names none of: is A 50 Elo stronger than B?
ELO_LIMIT = 1000.0


@dataclass(frozen=True)
class TestRequest:
    """What an author asked: a test of version ``a`` against ``b``, H0 ``elo0`` and H1 ``elo1`` (A's advantage)."""

    id: str
    author: str
    a: str
    b: str
    elo0: float = DEFAULT_ELO0
    elo1: float = DEFAULT_ELO1
    at: float = 0.0


def request_problem(a: str, b: str, elo0: float, elo1: float, mine: Sequence[str]) -> str | None:
    """What is wrong with a request of an author whose accepted versions are ``mine``, in words; None if nothing
    the site can tell (whether ``b`` is an active version is the running ladder's to say)."""
    if a not in mine:
        return f"version A must be one of your accepted versions ({', '.join(mine) or 'none yet'}), not {a!r}"
    if not b or b == a:
        return "version B must be another version: one of yours, or any active version of the ladder"
    if not (-ELO_LIMIT <= elo0 < elo1 <= ELO_LIMIT):
        return f"elo0 must be below elo1, both from {-ELO_LIMIT:g} to {ELO_LIMIT:g} (got {elo0:g} and {elo1:g})"
    return None


def post_request(output: Path, author: str, a: str, b: str, elo0: float, elo1: float) -> TestRequest:
    """Leave a request for the running ladder (the site's part); return it."""
    request = TestRequest(f"{time.time_ns()}-{secrets.token_hex(4)}", author, a, b, elo0, elo1, time.time())
    folder = Path(output) / TESTS_DIR / REQUESTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    replace_json(folder / f"{request.id}.json", dataclasses.asdict(request))
    return request


def tests_of(output: Path, author: str) -> list[dict[str, Any]]:
    """``author``'s tests, newest first: each ``test.json``, and the requests the ladder has not taken up yet."""
    root = Path(output) / TESTS_DIR
    found: list[dict[str, Any]] = [
        {**dataclasses.asdict(request), "status": "asked", "said": "waiting for the ladder"}
        for request in _requests(root)
        if request.author == author
    ]
    tests = [path for path in root.glob("t*/" + TEST_FILE) if TEST_ID.fullmatch(path.parent.name)]
    for path in sorted(tests, key=lambda path: int(path.parent.name[1:]), reverse=True):
        test = _read_json(path)
        if test is not None and test.get("author") == author:
            found.append(test)
    return found


def test_folder(output: Path, test_id: str) -> Path | None:
    """The folder of test ``test_id`` (a name safe in a path), or None for a name that is not a test's."""
    return Path(output) / TESTS_DIR / test_id if TEST_ID.fullmatch(test_id) else None


def read_test(folder: Path) -> dict[str, Any] | None:
    """A test's ``test.json``; None if it cannot be read."""
    return _read_json(folder / TEST_FILE)


def open_tests(output: Path, author: str) -> int:
    """How many of ``author``'s tests are asked or running (an author has one open at a time)."""
    return sum(test.get("status") in ("asked", "running") for test in tests_of(output, author))


# ----- the running ladder's part ------------------------------------------------------------------------------


class AuthorTest:
    """One test: its request, its field and schedule, its sequential test fed by its games, its games in play."""

    def __init__(self, folder: Path, data: dict[str, Any], league: League, limits: TestLimits) -> None:
        self.folder = folder
        self.data = data
        self.id: str = data["id"]
        self.author: str = data["author"]
        self.sprt = Sprt(
            (data["a"], data["b"]),
            Measure.ELO,
            float(data["elo0"]),
            float(data["elo1"]),
            max_games=limits.max_games,
            adjust_for_luck=True,
        )
        seed = derive_seed(league.seed, "author-test", int(self.id[1:]))
        names = [data["a"], data["b"], *data["field"]]
        self.schedule = SprtSchedule(names, self.sprt.candidates, league.table_size, self.sprt.deals(league.table_size),
                                     seed, self.sprt)  # fmt: skip
        self.state = DuelState(self.sprt, league.table_size, folder_luck(folder))
        self.curve: list[tuple[int, float]] = []
        self.finished: set[str] = set()
        self.in_play: set[str] = set()
        self.started: deque[float] = deque()  # when each game of the last 24 hours started
        for record in read_records(folder / RESULTS_FILE) if (folder / RESULTS_FILE).is_file() else ():
            self._count(record, read_back=True)

    @property
    def open(self) -> bool:
        return bool(self.data["status"] == "running")

    def _count(self, record: Mapping[str, Any], read_back: bool = False) -> None:
        self.finished.add(str(record["game_id"]))
        if read_back:  # a game of an earlier run: counted in its author's last 24 hours as it started
            try:
                started = datetime.fromisoformat(record["timing"]["started"]).timestamp()
            except (KeyError, TypeError, ValueError):
                started = None
            if started is not None and started > time.time() - DAY_S:
                self.started.append(started)
        deals = self.state.deals
        self.state.add(GameRecord.of(record, latencies=False))
        if self.state.deals != deals:
            self.curve.append((self.state.deals, round(self.state.test.llr, 4)))

    def next_game(self) -> ScheduledGame | None:
        """The test's next game not finished nor in play, as the ladder plays it (its id and folder the test's)."""
        if not self.open:
            return None
        for game in self.schedule:
            game_id = f"{self.id}-{game.game_id}"
            if game_id not in self.finished and game_id not in self.in_play:
                return dataclasses.replace(game, game_id=game_id, folder=f"{TESTS_DIR}/{self.id}")
        return None

    def ended(self, record: dict[str, Any]) -> str | None:
        """Take a finished game's record; what to tell the organiser once the test is decided, else None."""
        with (self.folder / RESULTS_FILE).open("a", encoding="utf-8") as results:
            results.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.in_play.discard(str(record["game_id"]))
        self._count(record)
        outcome = self.state.outcome
        if outcome is not None and self.open:
            self.data["status"] = "decided"
            self.write()
            return f"test {self.id} of {self.author}: {self.sprt.candidates[0]} against {self.sprt.candidates[1]}: " + (
                self.state.headline()
            )
        self.write()
        return None

    def write(self) -> None:
        lower, upper = self.state.test.bounds
        self.data.update(
            outcome=self.state.outcome,
            headline=self.state.headline(),
            llr=round(self.state.test.llr, 4),
            bounds=[round(lower, 4), round(upper, 4)],
            deals=self.state.deals,
            games=len(self.finished),
            curve=self.curve,
        )
        replace_json(self.folder / TEST_FILE, self.data)


class AuthorTests:
    """Every test of a running ladder: requests taken up, games handed out under the limits, records taken back."""

    def __init__(self, output: Path, limits: TestLimits, say: Callable[[str], None]) -> None:
        self.root = Path(output) / TESTS_DIR
        self.limits = limits
        self.say = say
        self.tests: dict[str, AuthorTest] = {}
        self._league: League | None = None

    def load(self, league: League) -> None:
        """Read the tests of earlier runs (each running one goes on where it stopped)."""
        self._league = league
        folders = [path.parent for path in self.root.glob("t*/" + TEST_FILE) if TEST_ID.fullmatch(path.parent.name)]
        for folder in sorted(folders, key=lambda path: int(path.name[1:])):
            data = _read_json(folder / TEST_FILE)
            if data is not None and data.get("status") in ("running", "decided"):
                self.tests[folder.name] = AuthorTest(folder, data, league, self.limits)

    def renew(self, league: League) -> None:
        self._league = league

    def take_requests(self) -> bool:
        """Take up the requests the site left; whether a test started."""
        league = self._league
        if league is None:
            return False
        started = False
        for request in _requests(self.root):
            (self.root / REQUESTS_DIR / f"{request.id}.json").unlink(missing_ok=True)
            number = 1 + max((int(path.name[1:]) for path in self.root.glob("t*") if TEST_ID.fullmatch(path.name)),
                             default=0)  # fmt: skip
            folder = self.root / f"t{number}"
            folder.mkdir(parents=True)
            data: dict[str, Any] = {**dataclasses.asdict(request), "id": folder.name, "request": request.id}
            refusal = self._refusal(request, league)
            if refusal is not None:
                replace_json(folder / TEST_FILE, {**data, "status": "refused", "said": refusal})
                self.say(f"test {folder.name} of {request.author} refused: {refusal}")
                continue
            active = [
                bot.name for bot in league.bots if bot.status == ACTIVE and bot.name not in (request.a, request.b)
            ]
            data.update(status="running", field=active, said="")
            test = AuthorTest(folder, data, league, self.limits)
            test.write()
            self.tests[folder.name] = test
            self.say(
                f"test {folder.name} of {request.author}: {request.a} against {request.b}, {test.schedule.summary()}"
            )
            started = True
        return started

    def _refusal(self, request: TestRequest, league: League) -> str | None:
        names = {bot.name: bot for bot in league.bots}
        if request.a not in names or not request.a.startswith(f"{request.author}-v"):
            return f"{request.a} is not an accepted version of {request.author}"
        other = names.get(request.b)
        if other is None or not (other.status == ACTIVE or request.b.startswith(f"{request.author}-v")):
            return f"{request.b} is neither another version of {request.author} nor an active version of the ladder"
        if any(test.open and test.author == request.author for test in self.tests.values()):
            return f"{request.author} has a test running: one at a time"
        field = [bot.name for bot in league.bots if bot.status == ACTIVE and bot.name not in (request.a, request.b)]
        if len(field) < league.table_size - 2:
            return (
                f"a test's table seats both versions and {league.table_size - 2} other active versions; "
                f"the ladder has {len(field)}"
            )
        return None

    def next_game(self) -> ScheduledGame | None:
        """The next test game the limits allow (the oldest test first), marked in play; None if none may start."""
        now = time.time()
        for test in self.tests.values():
            if not test.open or self._in_flight(test.author) >= self.limits.in_flight:
                continue
            if self._started_today(test.author, now) >= self.limits.per_day:
                continue
            game = test.next_game()
            if game is not None:
                test.in_play.add(game.game_id)
                test.started.append(now)
                return game
        return None

    def has_games(self) -> bool:
        """Whether a test could start a game now (the ladder wakes for it when it rests or waits)."""
        now = time.time()
        return any(
            test.open
            and self._in_flight(test.author) < self.limits.in_flight
            and self._started_today(test.author, now) < self.limits.per_day
            and test.next_game() is not None
            for test in self.tests.values()
        )

    def owns(self, game: ScheduledGame) -> bool:
        return game.folder is not None and game.folder.startswith(f"{TESTS_DIR}/")

    def ended(self, game: ScheduledGame, record: dict[str, Any]) -> None:
        """A test game finished: its record goes to its test, never to the ladder's."""
        test = self.tests.get(game.game_id.split("-", 1)[0])
        if test is not None:
            said = test.ended(record)
            if said is not None:
                self.say(said)

    def interleaved(self, rated: Iterator[ScheduledGame]) -> Iterator[ScheduledGame]:
        """``rated`` with a test game after every ``every`` of them, and test games alone once ``rated`` ends."""
        for count, game in enumerate(rated, 1):
            yield game
            if count % self.limits.every == 0:
                extra = self.next_game()
                if extra is not None:
                    yield extra
        while (extra := self.next_game()) is not None:
            yield extra

    def _in_flight(self, author: str) -> int:
        return sum(len(test.in_play) for test in self.tests.values() if test.author == author)

    def _started_today(self, author: str, now: float) -> int:
        count = 0
        for test in self.tests.values():
            if test.author == author:
                while test.started and test.started[0] < now - DAY_S:
                    test.started.popleft()
                count += len(test.started)
        return count


def _requests(root: Path) -> Iterator[TestRequest]:
    folder = root / REQUESTS_DIR
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.json")):
        data = _read_json(path)
        if data is None:
            continue
        try:
            yield TestRequest(**{key: data[key] for key in ("id", "author", "a", "b", "elo0", "elo1", "at")})
        except (KeyError, TypeError):
            path.unlink(missing_ok=True)  # not a request the site wrote


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
