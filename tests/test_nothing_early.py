"""Nothing published early: every byte `referee serve` gives out while rotations dealt alike play at once.

Real leagues of both games (and a ladder, with its authors' pages), whose seat rotations are dealt alike and
played two at a time by bots that think; a real `referee serve` on loopback, started before them; a recorder
asking it for everything, again and again, each path also spelled as an attacker would (tests/served.py). Every
answer is then checked against every game's log and its times: no seed, record, log, replay, page, author's
output, or feed line before every game dealt alike has passed that point and the spectator delay after it
(referee.records.visibility). The same check is shown to catch each leak planted in a running referee
(tests/plants/sitecustomize.py): a seed served at a path spelled another way, a sibling's showdown early, a
record before its delay, an author's output early.

The ladder's bots also write private notes (referee.records.notes): every answer, to a visitor and to each of two
signed-in authors, is checked for them too: a bot's notes reach its author's private replays, and nobody else
(shown to catch a planted leak: an author's replay with every bot's notes).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from referee.publish.replay_page import page_data_of as replay_page_data
from tests.conftest import PYTHON, Bots
from tests.served import Recorder, Truth, early, notes_seen
from tests.test_ladder import author, ladder_file
from tests.test_serve import free_port, wait_until_serving
from tests.test_site import add_author
from tests.test_spectating import THINKER

PLANTS = Path(__file__).resolve().parent / "plants"
BOTS = ("ann", "bob", "cyd")


def environment(plant: str | None) -> dict[str, str]:
    """The environment of the referee's processes: with a plant, the plants' folder first on PYTHONPATH."""
    env = dict(os.environ)
    env.pop("REFEREE_PLANT", None)
    if plant is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLANTS), env.get("PYTHONPATH")]))
        env["REFEREE_PLANT"] = plant
    return env


def league_file(folder: Path, game: str, delay_s: float, rounds: int, sleep_ms: int = 20) -> Path:
    """Three bots that think, at one table of three: its three rotations dealt alike, two at a time, ``rounds``
    times (a round's last rotation beside the next round's first)."""
    for script in ("thinker.py", "_common.py"):
        shutil.copy(THINKER.with_name(script), folder / script)
    bots = "\n".join(f"  - {{name: {name}, command: python thinker.py --sleep-ms {sleep_ms}}}" for name in BOTS)
    path = folder / "league.yaml"
    path.write_text(
        f"name: early\ngame: {game}\nseed: 4711\ntable_size: 3\nrounds: {rounds}\nsandbox: none\nconcurrency: 2\n"
        f"spectator_delay_s: {delay_s}\noutput: out\nbots:\n{bots}\n",
        encoding="utf-8",
    )
    return path


@contextmanager
def served(target: Path, env: dict[str, str]) -> Iterator[int]:
    """``referee serve TARGET`` on loopback (a league's folder, or a ladder file); its port."""
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "referee", "serve", str(target), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_until_serving(f"http://127.0.0.1:{port}", "/leaderboard.html")
    try:
        yield port
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=20)


def schedule(league: Path) -> list[str]:
    run = subprocess.run([PYTHON, "-m", "referee", "schedule", str(league), "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return [json.loads(line)["game_id"] for line in run.stdout.splitlines()]


def recorded_league(folder: Path, game: str, delay_s: float, rounds: int, plant: str | None = None) -> list[str]:
    """Play the league served and recorded; what was shown early (empty: nothing)."""
    league = league_file(folder, game, delay_s, rounds)
    output = folder / "out"
    output.mkdir()
    env = environment(plant)
    with served(output, env) as port:
        recorder = Recorder(port, schedule(league))
        recorder.start()
        run = subprocess.run(
            [PYTHON, "-m", "referee", "run", str(league), "--no-progress"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr
        answers = recorder.stop()
    assert recorder.rounds > 10  # asked again and again while the games were played
    truth = Truth(output, delay_s)
    feeds = {answer.feed for answer in answers if answer.feed}
    assert feeds == set(truth.seed)  # every game was watched
    assert any(answer.path == "/games.jsonl" and answer.status == 200 and answer.body for answer in answers)
    # The archive of every game shown, and each two bots' page, were asked for too, and given.
    assert any(answer.path == "/games.tar.gz" and answer.status == 200 for answer in answers)
    assert any(answer.path.startswith("/pairs/") and answer.status == 200 for answer in answers)
    return early(answers, truth)


@pytest.mark.parametrize(("game", "delay_s"), [("stop_the_bus", 0.0), ("bastard_brag", 1.5)])
def test_nothing_a_visitor_can_fetch_shows_a_deal_before_every_game_dealt_alike_has_passed_it(
    tmp_path: Path, game: str, delay_s: float
) -> None:
    assert recorded_league(tmp_path, game, delay_s, rounds=2) == []


@pytest.mark.parametrize(
    ("plant", "game", "delay_s", "caught"),
    [
        ("seed-variant", "stop_the_bus", 0.0, "holds the seed"),
        ("sibling-showdown-early", "stop_the_bus", 0.0, "/feed: frame"),
        ("record-before-its-delay", "bastard_brag", 2.0, "shows finished game"),
    ],
)
def test_the_check_catches_each_leak_planted_in_a_running_referee(
    tmp_path: Path, plant: str, game: str, delay_s: float, caught: str
) -> None:
    found = recorded_league(tmp_path, game, delay_s, rounds=1, plant=plant)
    assert any(caught in line for line in found), found


def test_a_league_stopped_mid_game_leaves_no_feed_of_the_game_it_cut_short(tmp_path: Path) -> None:
    # Stopped (Ctrl-C) while its games are in play and watched: each game cut short is played again from its start
    # on resume, so its feed goes with it; nothing is left in live/ that does not end with the game's end.
    league = league_file(tmp_path, "stop_the_bus", 0.0, rounds=1, sleep_ms=40)
    league.write_text(league.read_text().replace("concurrency: 2", "concurrency: 3"))  # every rotation at once
    output = tmp_path / "out"
    run = subprocess.Popen(
        [PYTHON, "-m", "referee", "run", str(league), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    live = output / "live"
    while not any(live.glob("*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(live.glob("*.jsonl")), "no feed appeared"
    assert not (output / "games.jsonl").exists() or not (output / "games.jsonl").read_text()  # all still in play
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=60) == 130, run.stderr.read() if run.stderr else ""
    left = {path.stem: path.read_text().splitlines() for path in live.glob("*.jsonl")}
    assert all(lines and lines[-1].startswith('{"end"') for lines in left.values()), left


# ----- a ladder: the authors' pages and their bots' output ------------------------------------------------------------


THINKING_AUTHOR = """
import random
import sys
import time

from referee.botkit import note, run_bot


def decide(obs):
    print("thinking about", obs.hand, file=sys.stderr, flush=True)  # its cards, in its author's output
    note("private-note-of-AUTHOR: " + " ".join(str(card) for card in obs.hand))  # for its author alone
    time.sleep(0.03)
    return random.Random(repr((obs.seat, obs.hand_number, obs.turns_this_hand))).choice(obs.legal_actions)


if __name__ == "__main__":
    run_bot(decide, name="thinking", version="1")
"""


def note_mark(name: str) -> str:
    """What every note of author ``name``'s bot holds."""
    return f"private-note-of-{name}: "


def recorded_ladder(folder: Path, bots: Bots, plant: str | None = None) -> tuple[list[str], list[str]]:
    """A ladder of three authors whose bots think, print their cards and note them, two games at a time, served
    and recorded (ann and bob signed in with their tokens); what was shown early, and the notes shown to anyone
    but their author."""
    path = ladder_file(folder, bots, {}, concurrency=2)
    for name in BOTS:
        submission = author(folder / "submissions", name, bots)
        (submission / "thinking_bot.py").write_text(
            THINKING_AUTHOR.replace("private-note-of-AUTHOR: ", note_mark(name))
        )
        (submission / "bot.yaml").write_text(f"name: {name}\nversion: '1'\nrun: [python, thinking_bot.py]\n")
    with path.open("a") as ladder:
        ladder.write("spectator_delay_s: 0.5\n")
    tokens = {name: add_author(path, name) for name in ("ann", "bob")}
    env = {**environment(plant), **bots.subprocess_env()}
    tables = 3
    games = [f"r1-t{table:03d}-s{rotation}" for table in range(1, tables + 1) for rotation in range(3)]
    with served(path, env) as port:
        recorder = Recorder(port, games, tokens)
        recorder.start()
        ladder = subprocess.Popen(
            [PYTHON, "-m", "referee", "ladder", str(path), "--games", str(len(games))],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = ladder.communicate(timeout=300)
        assert ladder.returncode == 0, err
        answers = recorder.stop()
    truth = Truth(folder / "out", 0.5)
    assert set(truth.seed) == set(games)
    outputs = [a for a in answers if a.path.startswith("/authors/ann/games/") and a.path.endswith(".txt")]
    outputs = [answer for answer in outputs if answer.status == 200]
    assert outputs and all(b"thinking about" in answer.body for answer in outputs)  # her bot's output, once shown
    # Her private replays, once shown, with her bot's notes beside its decisions.
    replays = [a for a in answers if a.path.startswith("/authors/ann/games/") and a.path.endswith(".html")]
    replays = [answer for answer in replays if answer.status == 200 and answer.asker == "ann"]
    assert replays and all(note_mark("ann") in str(replay_page_data(a.body.decode())) for a in replays)
    return early(answers, truth), notes_seen(answers, {name: note_mark(name) for name in BOTS})


def test_an_authors_page_her_bots_output_and_notes_wait_for_the_deals_and_reach_her_alone(
    tmp_path: Path, bots: Bots
) -> None:
    assert recorded_ladder(tmp_path, bots) == ([], [])


def test_the_check_catches_an_authors_output_shown_early_and_her_notes_shown_to_another(
    tmp_path: Path, bots: Bots
) -> None:
    found, notes = recorded_ladder(tmp_path, bots, plant="author-output-early,notes-of-every-seat")
    assert any(line.startswith("/authors/ann/games/") for line in found), found
    # ann's private replays showed her bob's and cyd's notes, and bob's showed him ann's.
    assert any("showed ann, another author, a note of bob's bot" in line for line in notes), notes
    assert any("showed bob, another author, a note of ann's bot" in line for line in notes), notes
