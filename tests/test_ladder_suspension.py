"""A ladder that runs for months unattended: a version that cannot play is suspended, and the organiser acts on the
running ladder.

Everything real: ``referee ladder`` processes (run, stopped, run again), the
organiser's commands beside a running ladder, bots in their sandbox. The
version that breaks is a real submission: it plays at random until the test
leaves a file named ``broken`` in its built copy (the folder it runs in), as
a bot breaks when a file it loads goes bad; then it fails as the file says:
``start`` (it exits as it starts, and at its next decision), ``illegal``
(it plays KNOCK, never legal in Stop the Bus, so it forfeits each game).
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from referee.records.visibility import Shown
from tests.conftest import PYTHON, Bots
from tests.test_ladder import author, ladder_file, lines, served_files
from tests.test_organiser import INTERRUPTIBLE_REFEREE
from tests.test_site import add_author

WAIT_S = 120.0
FRAGILE_BOT = '''
"""Plays at random until its folder holds a file named broken; then fails as that file says."""

import os
import random
import sys
import time

from referee.play.kit import run_bot
from referee.engine.games.actions import KNOCK


def broken():
    try:
        with open("broken") as told:
            return told.read().strip() or "start"
    except OSError:
        return None


def fail():
    print(f"fragile: cannot load my model (at {time.time_ns()})", file=sys.stderr, flush=True)
    os._exit(3)


def decide(obs):
    how = broken()
    if how == "illegal":
        return KNOCK
    if how is not None:
        fail()
    return random.Random(repr((obs.seat, obs.hand_number, obs.turns_this_hand))).choice(obs.legal_actions)


if __name__ == "__main__":
    if broken() not in (None, "illegal"):
        fail()
    run_bot(decide, name="fragile", version="1")
'''


def fragile_author(submissions: Path, name: str, bots: Bots) -> Path:
    folder = author(submissions, name, bots)
    (folder / "fragile_bot.py").write_text(FRAGILE_BOT)
    run = json.dumps(["python", "fragile_bot.py", "--marker", bots.marker])
    (folder / "bot.yaml").write_text(f"name: {name}\nversion: '1'\nrun: {run}\n")
    return folder


def season(tmp_path: Path, bots: Bots, others: tuple[str, ...], settings: str, concurrency: int = 1) -> Path:
    """A ladder of random bots named ``others`` and cat, the fragile one, with ``settings`` added to its file."""
    path = ladder_file(tmp_path, bots, dict.fromkeys(others, "random"), concurrency=concurrency)
    fragile_author(tmp_path / "submissions", "cat", bots)
    path.write_text(path.read_text() + settings)
    return path


def ladder(path: Path, bots: Bots, *options: str, timeout: float = WAIT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "referee", "ladder", str(path), *options], env=bots.subprocess_env(),
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


class Running:
    """A ``referee ladder`` process as a shell starts it, its output to a file read while it runs."""

    def __init__(self, path: Path, bots: Bots) -> None:
        self.said = path.parent / f"said-{time.monotonic_ns()}.txt"
        self._out = open(self.said, "w")  # noqa: SIM115 - closed by stop()
        self.process = subprocess.Popen([*INTERRUPTIBLE_REFEREE, "ladder", str(path)], env=bots.subprocess_env(),
                                        stdout=self._out, stderr=subprocess.STDOUT, text=True)  # fmt: skip

    def text(self) -> str:
        return self.said.read_text()

    def wait_for(self, what: str, ready) -> None:
        deadline = time.monotonic() + WAIT_S
        while not ready():
            if self.process.poll() is not None:
                raise AssertionError(f"the ladder ended before {what}: {self.text()}")
            if time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"no {what} within {WAIT_S} s: {self.text()[-3000:]}")
            time.sleep(0.05)

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=60)
        self._out.close()
        return self.text()


def games_of(output: Path, bot: str) -> list[dict]:
    return [game for game in lines(output / "games.jsonl") if bot in game["seats"]]


def forfeited(game: dict, bot: str) -> str | None:
    return game.get("forfeits", {}).get(str(game["seats"].index(bot)))


def statuses(output: Path, bot: str) -> list[dict]:
    return [
        record for record in lines(output / "register.jsonl") if record["kind"] == "status" and record["bot"] == bot
    ]


def author_page(output: Path, token: str, name: str) -> str:
    """``/authors/NAME/`` as ``referee serve`` answers it to the author's token."""
    return served_to(output, token, f"authors/{name}/")


def served_to(output: Path, token: str, path: str) -> str:
    """What ``referee serve`` answers for ``path`` to an author's token (its app, in this process)."""
    from referee.apps.site.app import create_app

    async def fetch() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(output))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.get("/" + path, headers={"Authorization": f"Bearer {token}"})

    answer = asyncio.run(fetch())
    assert answer.status_code == 200, answer.text
    return answer.text


@pytest.mark.parametrize(
    ("broken", "settings", "seated"),
    [
        ("start", "max_restarts: 1\nforfeits_in_a_row: 50\n", 2),  # the restart limit: 1 restart, 2 failures
        ("illegal", "max_restarts: 50\nforfeits_in_a_row: 2\n", 2),  # forfeits in a row
    ],
    ids=["restart-limit", "forfeits-in-a-row"],
)
def test_a_broken_version_is_seated_at_most_its_limits_worth_of_games_over_any_number_of_ladder_restarts(
    tmp_path: Path, bots: Bots, broken: str, settings: str, seated: int
) -> None:
    path = season(tmp_path, bots, ("ann", "bob"), settings)
    output = tmp_path / "out"
    token = add_author(path, "cat")
    first = ladder(path, bots, "--games", "3")  # cat-v1 is checked, accepted and plays its first table
    assert first.returncode == 0, first.stderr
    assert [forfeited(game, "cat-v1") for game in games_of(output, "cat-v1")] == [None] * 3
    (output / "builds" / "cat-v1" / "broken").write_text(broken)
    # Every table seats cat (three versions, tables of three). One game a run: each is its own ladder process, which
    # has never seen cat fail; the register it reads has.
    for run in range(1, seated + 1):
        again = ladder(path, bots, "--games", "1")
        assert again.returncode == 0, again.stderr
        warned = "warning: cat-v1 suspended" in again.stdout
        assert warned == (run == seated), f"run {run}: {again.stdout}"
    broken_games = games_of(output, "cat-v1")[3:]
    assert len(broken_games) == seated and all(forfeited(game, "cat-v1") for game in broken_games)
    (suspension,) = statuses(output, "cat-v1")
    assert suspension["status"] == "suspended"
    kind = "startup" if broken == "start" else "illegal"
    assert {forfeited(game, "cat-v1") for game in broken_games} == {kind}

    # Started again, the ladder remembers: cat-v1 is not seated, and two versions make no table.
    last = Running(path, bots)
    last.wait_for("the ladder waiting", lambda: "a table needs 3 active versions, the ladder has 2" in last.text())
    last.stop()
    assert len(games_of(output, "cat-v1")) == 3 + seated
    league = json.loads((output / "league.json").read_text())
    assert league["entries"]["cat-v1"]["status"] == "suspended"

    # Its author's page says so first, in plain words, with what went wrong first and its output; no machine path.
    page = author_page(output, token, "cat")
    assert 0 < page.index("cat-v1 is suspended") < page.index("Submit a new version"), page
    assert str(tmp_path) not in page and "its output is in" not in page
    if broken == "start":
        assert f"it failed {seated} times" in page and "restart limit (1, max_restarts)" in page
        failures = page.split("Its failures since it entered play", 1)[1].split("</ol>", 1)[0]
        assert failures.count("could not start: exited with exit code 3") == seated
        # Each start's own output, kept: every run's first process writes a log of the same name.
        assert len(set(re.findall(r"cannot load my model \(at (\d+)\)", failures))) == seated, failures
        faults = page.split("Its faults, by cause", 1)[1]
        assert "<strong>startup</strong>, 2 times" in faults and "fragile: cannot load my model" in faults
    else:
        assert "it forfeited 2 games in a row (for: illegal 2)" in page
        faults = page.split("Its faults, by cause", 1)[1]
        assert "<strong>illegal</strong>, 2 times" in faults

    # Nobody else reads its output: referee serve serves neither the failures kept nor the orders.
    served = served_files(output)
    assert any(name.startswith("failures/") for name in served) == (broken == "start")
    assert not [name for name, text in served.items() if text is not None and name.startswith(("failures/", "orders/"))]

    # Its table was closed: its game not played (the third rotation) never is, and its deal is over, so the games
    # played on it may be shown; even once the version plays again, reinstated.
    assert Shown.read(output).game("r1-t002-s0") and Shown.read(output).game("r1-t002-s1")
    (output / "builds" / "cat-v1" / "broken").unlink()
    back = ladder(path, bots, "--reinstate", "cat-v1")
    assert back.returncode == 0 and "cat-v1: reinstated: it plays again (no ladder was running)" in back.stdout
    more = ladder(path, bots, "--games", "3")
    assert more.returncode == 0, more.stderr
    games = lines(output / "games.jsonl")
    assert "r1-t002-s2" not in {game["game_id"] for game in games}
    assert [(game["table"], forfeited(game, "cat-v1")) for game in games[-3:]] == [(3, None)] * 3


def test_a_version_that_crashes_in_a_running_ladder_is_suspended_at_once_and_its_tables_dropped(
    tmp_path: Path, bots: Bots
) -> None:
    path = season(tmp_path, bots, ("ann", "bob", "dan"), "max_restarts: 1\n", concurrency=2)
    output = tmp_path / "out"
    running = Running(path, bots)
    try:
        running.wait_for("a game of cat-v1", lambda: games_of(output, "cat-v1"))
        (output / "builds" / "cat-v1" / "broken").write_text("start")
        running.wait_for("cat-v1 suspended", lambda: statuses(output, "cat-v1"))
        (suspension,) = statuses(output, "cat-v1")
        played = len(lines(output / "games.jsonl"))
        running.wait_for("more games", lambda: len(lines(output / "games.jsonl")) >= played + 6)

        # The organiser acts on the running ladder; a second run of it is told what to do.
        second = ladder(path, bots)
        assert second.returncode == 1 and "this ladder is running already" in second.stderr, second.stderr
        assert "--output" not in second.stderr
        (output / "builds" / "cat-v1" / "broken").unlink()
        before_reinstating = {game["game_id"] for game in lines(output / "games.jsonl")}
        reinstated = ladder(path, bots, "--reinstate", "cat-v1", "--reason", "its model file is fixed")
        assert reinstated.returncode == 0, reinstated.stderr
        assert "cat-v1: reinstated: it plays again (its model file is fixed)" in reinstated.stdout
        seated = len(games_of(output, "cat-v1"))
        running.wait_for("cat-v1 playing again", lambda: len(games_of(output, "cat-v1")) > seated)
    finally:
        said = running.stop()

    assert "warning: cat-v1 suspended: it failed 2 times (crashed, or could not start)" in said, said
    assert "order: cat-v1: reinstated" in said
    # At most its restart limit's worth of failures, and the games already under way (one at a time more).
    assert sum(1 for game in games_of(output, "cat-v1") if forfeited(game, "cat-v1")) <= 1 + 1 + 1
    tables = lines(output / "tables.jsonl")
    closed = [table for table in tables if table["table"] <= suspension["tables_drawn"] and "cat-v1" in table["bots"]]
    reinstatement = statuses(output, "cat-v1")[-1]
    assert reinstatement["status"] == "active"
    assert not any(
        "cat-v1" in table["bots"]
        for table in tables
        if suspension["tables_drawn"] < table["table"] <= reinstatement["tables_drawn"]
    ), "a table drawn while cat-v1 was suspended seats it"
    # The tables drawn with it were closed: what was not played never will be, so their deals are over and every
    # game of them that finished may be shown.
    finished = {game["game_id"]: game for game in lines(output / "games.jsonl")}
    shown = Shown.read(output)
    closed_games = [f"r1-t{table['table']:03d}-s{rotation}" for table in closed for rotation in range(3)]
    assert all(shown.game(game) for game in closed_games if game in finished)
    # and they stay closed when the version plays again: none of their games was played after.
    assert {game for game in closed_games if game in finished} <= before_reinstating


def test_the_organiser_withdraws_disqualifies_and_issues_tokens_on_a_running_ladder(tmp_path: Path, bots: Bots) -> None:
    path = season(tmp_path, bots, ("ann", "bob", "dan"), "")
    output = tmp_path / "out"
    running = Running(path, bots)
    try:
        running.wait_for("three games", lambda: len(lines(output / "games.jsonl")) >= 3)
        withdrawn = ladder(path, bots, "--withdraw", "dan-v1", "--reason", "asked by its author")
        assert withdrawn.returncode == 0, withdrawn.stderr
        assert "the ladder is running: the order is left for it" in withdrawn.stdout
        assert "dan-v1: withdrawn (asked by its author)" in withdrawn.stdout
        assert [record["status"] for record in statuses(output, "dan-v1")] == ["withdrawn"]
        again = ladder(path, bots, "--withdraw", "dan-v1")
        assert again.returncode == 0 and "dan-v1: withdrawn already; nothing changed" in again.stdout, again.stderr
        assert len(statuses(output, "dan-v1")) == 1
        typo = ladder(path, bots, "--disqualify", "dna-v1")
        assert typo.returncode == 1 and "'dna-v1' is no version accepted on this ladder" in typo.stderr
        disqualified = ladder(path, bots, "--disqualify", "cat-v1", "--reason", "read the other bots' files")
        assert disqualified.returncode == 0 and "cat-v1: disqualified" in disqualified.stdout, disqualified.stderr
        running.wait_for("the ladder waiting", lambda: "the ladder has 2" in running.text())
        issued = ladder(path, bots, "--add-author", "eve")
        assert issued.returncode == 0 and "author eve's token" in issued.stdout, issued.stderr
        revoked = ladder(path, bots, "--revoke-author", "eve")
        assert revoked.returncode == 0 and "author eve: token revoked" in revoked.stdout, revoked.stderr
        assert not list((output / "orders").glob("*")), "every order answered and its answer read"
    finally:
        said = running.stop()
    assert "order: dan-v1: withdrawn (asked by its author)" in said
    assert "order refused: " in said and "order: cat-v1: disqualified" in said
    league = json.loads((output / "league.json").read_text())["entries"]
    assert (league["dan-v1"]["status"], league["cat-v1"]["status"]) == ("withdrawn", "disqualified")
    # With no ladder running, the command applies the change itself.
    reinstated = ladder(path, bots, "--reinstate", "dan-v1")
    assert reinstated.returncode == 0 and "dan-v1: reinstated: it plays again (no ladder was running)" in (
        reinstated.stdout
    )


def test_an_order_left_for_a_ladder_that_stops_before_taking_it_is_applied_by_its_command(
    tmp_path: Path, bots: Bots
) -> None:
    path = season(tmp_path, bots, ("ann", "bob"), "")
    path.write_text(path.read_text().replace("poll_s: 0.3", "poll_s: 60"))  # it looks for orders as it starts only
    output = tmp_path / "out"
    running = Running(path, bots)
    command = None
    try:
        running.wait_for("a game", lambda: lines(output / "games.jsonl"))
        command = subprocess.Popen([PYTHON, "-m", "referee", "ladder", str(path), "--withdraw", "bob-v1"],
                                   env=bots.subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)  # fmt: skip
        running.wait_for("the order left", lambda: list((output / "orders").glob("*.json")))
    finally:
        said = running.stop()
        if command is not None:
            out, err = command.communicate(timeout=WAIT_S)
    assert "order: " not in said, said  # the ladder never took it
    assert command.returncode == 0, err
    assert "bob-v1: withdrawn (the ladder had stopped)" in out, out
    assert [record["status"] for record in statuses(output, "bob-v1")] == ["withdrawn"]
    assert not list((output / "orders").iterdir())
