"""Spectators: games in play shown move by move by `referee serve`, and never a card before its hand shows it.

The proof (issue: live spectating): a real league of bots that think, a real `referee serve` on loopback, and
a spectator that records every byte the server sends it (the live pages, the list of games, each game's feed).
Each recorded feed is then checked against the game's log, by rules read from the log alone: a card may
appear only once it is public in its hand (the first face-up card of the deal, each discard, a card given
face up in Bastard Brag) or once its hand's showdown showed it. The same check is shown to catch a leak.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import threading
import time
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from referee.engine.cards import format_cards
from referee.engine.games import GAMES, Game
from referee.engine.games.game import Action
from referee.publish.spectators import LIVE_DIR, SpectatorFeeds, event_json, view_json
from referee.records.gamelog import find_log, log_files, log_game_id, new_game, read_log
from referee.records.visibility import DealsInPlay

from .conftest import PYTHON
from .test_serve import free_port, wait_until_serving

ROOT = Path(__file__).resolve().parent.parent
THINKER = ROOT / "tests" / "bad_bots" / "thinker.py"
CARD = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][CDHS])(?![A-Za-z0-9])")
DECISION_KINDS = {"draw", "take", "discard", "stop", "pass", "exchange", "exchange-all", "knock"}


# ----- the check: every card a spectator received was public in its hand by then -------------------------------


class PublicCards:
    """From a game's log alone: which cards are public in each hand after each decision, and at its showdown."""

    def __init__(self, log: list[dict]) -> None:
        self.made_public: list[tuple[int, int, set[str]]] = []  # (decisions before, hand, cards made public then)
        decisions = 0
        for record in log:
            kind = record["type"]
            if kind == "deal":
                first_face_up = record["discard"] if "discard" in record else record["centre"].split()[2]
                self.made_public.append((decisions, record["hand"], set(first_face_up.split())))
            elif kind == "decision":
                decisions += 1
                parts = record["action"].split()
                shown = set()
                if parts[0] in ("discard", "exchange-all") or (parts[0] == "exchange" and parts[2] == "2"):
                    shown.add(parts[1])
                self.made_public.append((decisions, record["hand"], shown))
            elif kind == "hand":
                revealed = {card for cards in record["hands"].values() for card in cards.split()}
                self.made_public.append((decisions, record["hand"], revealed))

    def public(self, hands: set[int], decisions: int) -> set[str]:
        """The cards public in any of ``hands`` once ``decisions`` decisions were made (and the showdown after)."""
        return {
            card
            for made_at, hand, cards in self.made_public
            if hand in hands and made_at <= decisions
            for card in cards
        }


def leaks(feed_lines: list[str], log: list[dict]) -> list[str]:
    """Each card in a feed line that was not public in the line's hands when it was sent (empty: no leak)."""
    public = PublicCards(log)
    found = []
    decisions = 0
    for line in feed_lines:
        data = json.loads(line)
        events = data.get("events", [])
        decisions += sum(event["kind"] in DECISION_KINDS for event in events)
        hands = {event["hand"] for event in events}
        if "view" in data:
            hands.add(data["view"]["hand"])
        allowed = public.public(hands, decisions)
        for card in CARD.findall(line):
            if card not in allowed:
                found.append(f"{card} after {decisions} decisions, hands {sorted(hands)}: {line[:160]}")
    return found


def passed(logs: dict[str, list[dict]], game_id: str, hand: int) -> float:
    """When every other game on ``game_id``'s deals (the other rotations: one table) had passed ``hand``."""
    times = []
    for other, log in logs.items():
        if other != game_id:
            at = {record["hand"]: record["at"] for record in log if record["type"] == "hand"}
            times.append(at.get(hand, next(record["at"] for record in log if record["type"] == "game_end")))
    return max(times, default=0.0)


def _ended_at(record: dict) -> float:
    """When a game ended, from its record: its start and its wall time."""
    return datetime.fromisoformat(record["timing"]["started"]).timestamp() + record["timing"]["wall_s"]


def sse_lines(stream: bytes) -> list[str]:
    """The data lines of a recorded server-sent event stream."""
    return [line[len("data: ") :] for line in stream.decode("utf-8").splitlines() if line.startswith("data: ")]


# ----- in memory: the spectator's view and events, at every step of random games ---------------------------------


def hidden_now(game: Game) -> set[str]:
    """Cards no spectator may see now: every hand in play, the stock, the face-down centre, minus what was shown."""
    hidden = {str(card) for seat in range(game.num_players) if game.in_hand[seat] for card in game.hands[seat]}
    hidden |= {str(card) for card in getattr(game, "stock", [])}
    centre = getattr(game, "centre", None)
    if centre:
        hidden |= {str(card) for card in centre[:2]}  # the face-up card (slot 2) is anyone's to see
    shown = set()
    for event in game.hand_events:
        shown |= {str(card) for card in (event.card, event.taken) if card is not None}
    return hidden - shown


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_a_spectators_view_and_events_hold_no_hidden_card_at_any_step(game_name: str) -> None:
    rng = random.Random(28)
    cls = GAMES[game_name]
    steps = 0
    for seed in range(12):
        game = cls(rng.randint(cls.min_players, cls.max_players), seed=seed)
        told = 0
        while not game.is_over:
            results = {result.hand_number: result for result in game.hand_results}
            events = [event_json(event, results) for event in game.events[told:]]
            told = len(game.events)
            # A showdown shows its hand's cards: what it may show is checked against the logs by the league test.
            now = [event for event in events if event["hand"] == game.hand_number and event["kind"] != "showdown"]
            sent = json.dumps({"events": now, "view": view_json(game.spectator_view())})
            assert not set(CARD.findall(sent)) & hidden_now(game), sent
            game.apply(rng.choice(game.legal_actions()))
            steps += 1
    assert steps > 1000


def test_a_spectators_view_is_the_view_of_a_seat_with_no_cards() -> None:
    game = GAMES["bastard_brag"](4, seed=3)
    while not game.is_over and len(game.hand_events) < 6:  # past a few exchanges, face-down slots known to their seat
        game.apply(game.legal_actions()[0])
    view = game.spectator_view()
    assert view.hand == () and view.legal_actions == ()
    assert view.centre[:2] == (None, None)  # type: ignore[attr-defined]
    seat_view = game.observation(game.current_seat)  # type: ignore[arg-type]
    assert view.hand_events == seat_view.hand_events and view.lives == seat_view.lives
    with pytest.raises(ValueError, match="holds no cards"):
        view_json(seat_view)


# ----- a real league, a real server, a spectator recording every byte --------------------------------------------


class Spectator:
    """Watches ``base``/live/ while a league plays: opens every game that appears and records all it receives."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.feeds: dict[str, bytearray] = {}
        self.arrivals: dict[str, list[tuple[float, bytes]]] = {}
        self.pages: list[bytes] = []
        # Every answer about finished games, as received: (when, path, status, body).
        self.finished: list[tuple[float, str, int, bytes]] = []
        self.published: set[str] = set()  # the games whose replay and log were served
        self.threads: list[threading.Thread] = []
        self.done = threading.Event()

    def get(self, path: str) -> httpx.Response:
        answer = httpx.get(self.base + path, timeout=5)
        self.finished.append((time.time(), path, answer.status_code, answer.content))
        return answer

    def read_finished_games(self) -> None:
        """The league's records and, for each finished game not yet published, its replay and its log."""
        records = self.get("/games.jsonl")
        for line in records.text.splitlines() if records.status_code == 200 else ():
            game_id = json.loads(line)["game_id"]
            if game_id not in self.published:
                replay, log = self.get(f"/replays/{game_id}.html"), self.get(f"/games/{game_id}.jsonl")
                if replay.status_code == log.status_code == 200:
                    self.published.add(game_id)

    def watch(self) -> None:
        while not self.done.is_set():
            try:
                self.pages.append(httpx.get(self.base + "/live/", timeout=5).content)
                listing = httpx.get(self.base + "/live/games.json", timeout=5)
            except httpx.TransportError:
                time.sleep(0.1)
                continue
            self.pages.append(listing.content)
            for game in listing.json():
                game_id = game["game_id"]
                if game_id not in self.feeds:
                    self.feeds[game_id] = bytearray()
                    self.arrivals[game_id] = []
                    self.pages.append(httpx.get(f"{self.base}/live/{game_id}", timeout=5).content)
                    thread = threading.Thread(target=self.record, args=(game_id,), daemon=True)
                    thread.start()
                    self.threads.append(thread)
            self.read_finished_games()
            time.sleep(0.1)

    def record(self, game_id: str) -> None:
        with httpx.stream("GET", f"{self.base}/live/{game_id}/feed", timeout=30) as answer:
            for chunk in answer.iter_bytes():
                self.feeds[game_id] += chunk
                self.arrivals[game_id].append((time.time(), chunk))


LEAGUE_NAME = "live"


def _league(folder: Path, game: str, sleep_ms: int = 15, concurrency: int = 2, rounds: int = 1) -> Path:
    """A league file as organisers write one, its bots beside it, no output key (results/NAME): three bots that
    think (``sleep_ms`` a decision) at one table of three, its three seat rotations ``concurrency`` at once (two:
    a finished game is asked for while a game on its deals is still in play), ``rounds`` times."""
    names = ("ann", "bob", "cyd")
    for script in ("thinker.py", "_common.py"):
        shutil.copy(THINKER.with_name(script), folder / script)
    bots = "\n".join(f"  - {{name: {name}, command: python thinker.py --sleep-ms {sleep_ms}}}" for name in names)
    path = folder / "league.yaml"
    path.write_text(
        f"name: {LEAGUE_NAME}\ngame: {game}\nseed: 2805\ntable_size: 3\nsandbox: none\nconcurrency: {concurrency}\n"
        f"rounds: {rounds}\nbots:\n{bots}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def served(tmp_path: Path):
    """``referee serve`` on loopback, started before the league, on the folder the league will write."""
    output = tmp_path / "results" / LEAGUE_NAME
    output.mkdir(parents=True)
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "referee.cli", "serve", str(output), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    wait_until_serving(base, "/live/games.json")
    try:
        yield output, base
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)


def _watch_league(tmp_path: Path, output: Path, base: str, game: str) -> Spectator:
    spectator = Spectator(base)
    watching = threading.Thread(target=spectator.watch, daemon=True)
    watching.start()
    run = subprocess.run(
        [PYTHON, "-m", "referee.cli", "run", str(_league(tmp_path, game)), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    for thread in spectator.threads:
        thread.join(timeout=30)
    spectator.done.set()
    watching.join(timeout=10)
    spectator.read_finished_games()  # once more, the league over
    return spectator


@pytest.mark.parametrize("game", ["stop_the_bus", "bastard_brag"])
def test_a_spectator_sees_each_game_move_by_move_and_no_card_before_its_showdown(tmp_path: Path, served, game) -> None:
    output, base = served
    spectator = _watch_league(tmp_path, output, base, game)
    logs = {log_game_id(path): read_log(path) for path in log_files(output / "games")}
    assert set(spectator.feeds) == set(logs)  # every game was in play long enough to be found, and watched
    lags = []
    for game_id, stream in spectator.feeds.items():
        lines = sse_lines(bytes(stream))
        log = logs[game_id]
        assert json.loads(lines[0])["start"]["players"] == log[0]["players"]
        end = next(record for record in log if record["type"] == "game_end")
        assert json.loads(lines[-1]) == {"end": {"placements": end["placements"]}}
        frames = [json.loads(line) for line in lines[1:-1]]
        told = [event for frame in frames for event in frame["events"]]
        assert sum(event["kind"] in DECISION_KINDS for event in told) == end["decisions"]  # every move, in order
        assert len(frames) > end["hands_played"]  # move by move, not a hand at a time
        assert leaks(lines, log) == []
        for arrived, chunk in spectator.arrivals[game_id]:
            for line in sse_lines(chunk):
                if '"time"' in line:
                    frame = json.loads(line)
                    hands = {frame["view"]["hand"], *(event["hand"] for event in frame["events"])}
                    # Due once the other rotations have passed its hands (tests/test_nothing_early.py): the lag is
                    # counted from then, or from when the referee saw the move.
                    due = max([frame["time"], *(passed(logs, game_id, hand) for hand in hands)])
                    lags.append(arrived - due)
    assert sorted(lags)[len(lags) // 2] < 1.0  # shown within a second of the moment it may be
    for page in spectator.pages:
        assert CARD.findall(page.decode("utf-8")) == []  # the live pages hold no game's cards: only the feeds do
    # A finished game's replay, log and seed (its every hand as dealt) are served only once every game on its deals
    # (its table's other seat rotations) has ended: before, they would show the cards of a game in play.
    records = [json.loads(line) for line in (output / "games.jsonl").read_text().splitlines()]
    ended = {record["game_id"]: _ended_at(record) for record in records}
    deals_done = {
        record["seed"]: max(ended[other["game_id"]] for other in records if other["seed"] == record["seed"])
        for record in records
    }
    seed_of = {record["game_id"]: record["seed"] for record in records}
    # games.jsonl lists a game once it may be shown, so the spectator asks for its replay and log only then (asked
    # for every game all along, as tests/test_nothing_early.py asks, they are 404 until then).
    for received, path, status, body in spectator.finished:
        if path == "/games.jsonl":
            for line in body.decode().splitlines() if status == 200 else ():
                shown = json.loads(line)
                assert "seed" not in shown or deals_done[shown["seed"]] <= received, shown["game_id"]
        elif status == 200:
            assert deals_done[seed_of[path.split("/")[-1].split(".")[0]]] <= received, path
        else:
            assert status == 404 and b"still being played" in body, (path, status)
    assert spectator.published == set(ended)  # and every one was published once they were done
    # Each feed was removed a moment after its end was written, those watching it having read it all (above): the
    # league's end leaves none behind.
    assert list((output / "live").glob("*.jsonl")) == []


def test_the_check_catches_a_hidden_card_leaked_on_purpose(tmp_path: Path) -> None:
    """The check above, on a feed made to leak: each hand's cards, put into a frame before its showdown."""
    game = GAMES["stop_the_bus"](3, seed=9)
    log = [{"type": "game_start"}]
    feed = []
    told = 0
    rng = random.Random(1)
    decisions = 0
    log.append({"type": "deal", "hand": 1, "discard": str(game.discard_pile[-1]), "hands": {}})
    while game.hand_number == 1 and not game.is_over:
        act = rng.choice(game.legal_actions())
        game.apply(act)
        decisions += 1
        log.append({"type": "decision", "n": decisions, "hand": 1, "action": str(act)})
        results = {result.hand_number: result for result in game.hand_results}
        frame = {
            "events": [event_json(event, results) for event in game.events[told:]],
            "view": view_json(game.spectator_view()),
        }
        told = len(game.events)
        feed.append(json.dumps(frame))
    result = game.hand_results[0]
    log.append(
        {"type": "hand", "hand": 1, "hands": {str(seat): format_cards(cards) for seat, cards in result.hands.items()}}
    )
    assert leaks(feed, log) == []  # the real frames are clean
    secret = format_cards(game.hand_results[0].hands[0])
    leaked = json.loads(feed[2])
    leaked["view"]["note"] = secret  # seat 0's cards, shown two moves in
    feed[2] = json.dumps(leaked)
    found = leaks(feed, log)
    assert found and all(card in secret for card in (entry.split()[0] for entry in found))


def test_a_delay_holds_every_line_back_until_its_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr("referee.publish.spectators.time.time", lambda: now[0])
    deals = DealsInPlay(tmp_path, 30.0, clock=lambda: now[0])
    deals.deal(["g1"])  # a game no other is dealt alike with: the delay alone holds it back
    feeds = SpectatorFeeds(tmp_path, deals)
    game = GAMES["stop_the_bus"](3, seed=4)
    feeds.started("g1", game, ["a", "b", "c"])
    feed = tmp_path / "live" / "g1.jsonl"
    for _ in range(5):
        game.apply(game.legal_actions()[0])
        now[0] += 1.0
        feeds.poll()
    assert not feed.exists()  # 5 s in: nothing yet, not even who plays (nor a feed to list)
    now[0] = 1030.5
    feeds.poll()
    told = [json.loads(line) for line in feed.read_text().splitlines()]
    assert "start" in told[0] and [frame["time"] for frame in told[1:]] == [1000.0]  # the deal, seen 30 s ago
    now[0] = 1040.0
    feeds.poll()
    told = [json.loads(line) for line in feed.read_text().splitlines()]
    assert [frame["time"] for frame in told[1:]] == [1000.0, 1001.0, 1002.0, 1003.0, 1004.0, 1005.0]


# ----- in Chromium: the live pages as a spectator sees them ----------------------------------------------------


# The moves listed; whether a hand is in play (its deal listed after the last showdown); the card faces on seats.
SHOWN_NOW = """() => {
  const kinds = [...document.querySelectorAll("#moves li")].map((item) => item.dataset.kind);
  const inPlay = kinds.lastIndexOf("deal") > kinds.lastIndexOf("showdown");
  return [kinds.length, inPlay, document.querySelectorAll(".seat .card[data-card]").length];
}"""


DESKTOP, PHONE = 1280, 390


def test_a_spectators_page_shows_the_game_move_by_move_with_every_seats_cards_face_down(
    chromium, tmp_path: Path, served
) -> None:
    # One game watched, first on a desktop's width, then, a dozen moves in, on a phone's: at both, only the backs
    # of the cards in play, and nothing wider than the window.
    output, base = served
    league = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "referee.cli",
            "run",
            # The three rotations of a table at once: a hand is shown once all three have played it, so as they
            # play; four rounds, so that games are in play once the league's page leads to them (its first
            # round's games shown, all three over).
            str(_league(tmp_path, "stop_the_bus", sleep_ms=50, concurrency=3, rounds=4)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    width = DESKTOP
    context = chromium.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(base + "/leaderboard.html")  # the league's page, once its first game is in, leads to the games
        page.locator("#live a", has_text="watch the games in play").click(timeout=60_000)
        page.locator("#games li:not(:has(.status)) a").last.click()  # a game in play, the newest, not one finished
        page.wait_for_selector("#moves li")
        seen_counts, faces_in_play = [], []
        page_widths: dict[int, list[int]] = {DESKTOP: [], PHONE: []}  # the page's width, seen while a hand is played
        scrolled: dict[int, list[float]] = {DESKTOP: [], PHONE: []}  # how far the page scrolled itself, meanwhile
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and page.locator("#state").inner_text() != "finished":
            moves, in_play, faces = page.evaluate(SHOWN_NOW)
            seen_counts.append(moves)
            if in_play:
                faces_in_play.append(faces)
                page_widths[width].append(page.evaluate("document.documentElement.scrollWidth"))
                scrolled[width].append(page.evaluate("window.scrollY"))
                if width == DESKTOP and len(set(seen_counts)) > 12:
                    width = PHONE
                    page.set_viewport_size({"width": width, "height": 900})
            time.sleep(0.05)
        assert page.locator("#state").inner_text() == "finished"
        assert len(set(seen_counts)) > 10  # the list grew move by move while the page was open
        assert faces_in_play and set(faces_in_play) == {0}  # while a hand is played, only the backs of its cards
        # The replay, one click away once it may be shown (the other rotations over: tests below).
        assert page.locator("#note a").get_attribute("href", timeout=60_000).startswith("../replays/")
        # Nothing runs off the screen, on a desktop or a phone, in play or finished; the page never scrolls itself
        # (the list of moves scrolls in its own box), so the game's title stays in view.
        assert page_widths[DESKTOP] and max(page_widths[DESKTOP]) <= DESKTOP
        assert page_widths[PHONE] and max(page_widths[PHONE]) <= PHONE
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE
        assert scrolled[PHONE] and max(scrolled[DESKTOP] + scrolled[PHONE]) == 0, scrolled
        assert page.locator("#moves").evaluate("(list) => list.parentElement.scrollTop") > 0  # its newest move shown
        assert page.locator("#title").bounding_box()["y"] >= 0
    finally:
        context.close()
        league.send_signal(signal.SIGINT)  # one game watched is enough: the league stops as an organiser stops it
        league.wait(timeout=60)
    assert not errors, errors


# ----- in Chromium: the list of games in play, and a finished game's replay held back --------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished league's folder (one table of three, its rotations at once), as `referee run` leaves it."""
    folder = tmp_path_factory.mktemp("played")
    run = subprocess.run(
        [PYTHON, "-m", "referee.cli", "run", str(_league(folder, "stop_the_bus", sleep_ms=0, concurrency=3))],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
    )
    assert run.returncode == 0, run.stderr
    return folder / "results" / LEAGUE_NAME


def write_feed(output: Path, game_id: str, decisions: int | None = None) -> None:
    """``live/GAME_ID.jsonl`` as the league's own writer (SpectatorFeeds) writes it while ``game_id`` is played, made
    again from its log: its first ``decisions`` moves, or the whole game to its end."""
    records = read_log(find_log(output / "games", game_id))
    # The feeds written before, kept as they are: a writer starting removes those it finds (a stopped run's).
    kept = {path: (path.read_bytes(), path.stat().st_mtime) for path in (output / LIVE_DIR).glob("*.jsonl")}
    deals = DealsInPlay(output)
    deals.deal([game_id])  # a deal of its own: each frame due at once
    feeds = SpectatorFeeds(output, deals)
    game = new_game(records[0])
    feeds.started(game_id, game, records[0]["players"])
    played_decisions = 0
    for record in records[1:]:
        if record["type"] == "decision":
            if decisions is not None and played_decisions == decisions:
                break
            game.apply(Action.parse(record["action"]))
            played_decisions += 1
            feeds.poll()
    if decisions is None:
        feeds.finished(game_id)
    feeds.poll()
    for path, (data, modified) in kept.items():
        path.write_bytes(data)
        os.utime(path, (modified, modified))


def serve_folder(output: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "referee.cli", "serve", str(output), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    wait_until_serving(base, "/live/games.json")
    return server, base


def hold(output: Path, game_ids: list[str]) -> None:
    """``visibility.json`` as a run writes it while ``game_ids`` wait for a game on their deals still in play."""
    accounted = (output / "games.jsonl").stat().st_size
    (output / "visibility.json").write_text(json.dumps({"accounted": accounted, "held": dict.fromkeys(game_ids)}))


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_the_list_counts_the_games_in_play_apart_from_those_just_finished_and_lists_them_first(
    chromium, played: Path, tmp_path: Path, width: int
) -> None:
    output = tmp_path / "out"
    shutil.copytree(played, output)
    games = sorted(log_game_id(path) for path in log_files(output / "games"))
    for game_id in games[1:]:  # two games just finished ...
        write_feed(output, game_id)
        # ... and listed a while yet (a finished game is listed a second after its end: long enough to be seen).
        ahead = time.time() + 300
        os.utime(output / "live" / f"{game_id}.jsonl", (ahead, ahead))
    write_feed(output, games[0], decisions=6)  # and one in play, first by name
    server, base = serve_folder(output)
    context = chromium.new_context(viewport={"width": width, "height": 844 if width == PHONE else 800})
    page = context.new_page()
    try:
        page.goto(base + "/live/")
        page.wait_for_selector("#games li")
        assert page.locator("#state").inner_text() == "1 in play"
        assert page.locator("#note").inner_text() == "2 just finished"
        listed = page.eval_on_selector_all("#games li", "items => items.map(item => item.textContent)")
        assert listed[0].startswith(games[0]) and "just finished" not in listed[0], listed
        assert all("(just finished)" in item for item in listed[1:]), listed
        # The list alone: nothing of a game's view (its caption, its table, its moves), no empty box.
        assert page.locator("#game-view").bounding_box() is None
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.locator("#games li").first.bounding_box()["y"] < 150  # the list right under the heading
    finally:
        context.close()
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_a_finished_games_replay_is_linked_once_its_deals_are_over_and_until_then_the_page_says_when(
    chromium, played: Path, tmp_path: Path, width: int
) -> None:
    output = tmp_path / "out"
    shutil.copytree(played, output)
    game_id = sorted(log_game_id(path) for path in log_files(output / "games"))[0]
    hold(output, [game_id])  # a game on its deals still in play: its replay would show that game's cards
    write_feed(output, game_id)
    server, base = serve_folder(output)
    context = chromium.new_context(viewport={"width": width, "height": 844 if width == PHONE else 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        assert httpx.get(f"{base}/replays/{game_id}.html", timeout=5).status_code == 404
        page.goto(f"{base}/live/{game_id}")
        page.wait_for_selector("#state:text('finished')")
        note = page.locator("#note")
        note.locator(".waiting").wait_for()
        assert "its replay is published once every game dealt alike with it" in note.inner_text()
        assert note.locator("a").count() == 0, "no link to a page that is not there yet"
        hold(output, [])  # the last game on its deals over, and the delay: shown
        link = note.locator("a")
        link.wait_for(timeout=20_000)  # the page asks again by itself
        assert link.inner_text() == "the replay" and note.locator(".waiting").count() == 0
        with page.expect_navigation():
            link.click()
        page.wait_for_selector("body[data-ready='1']")
        assert page.text_content("h1").startswith(game_id)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        context.close()
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)
    assert not errors, errors
