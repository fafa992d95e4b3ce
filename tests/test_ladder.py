"""``referee ladder``: a folder of submissions judged as it changes, games played as it goes, resumed where it stopped.

Each author's folder is a copy of the Python sample bots with its own
``bot.yaml``; the ladder runs as a real ``referee ladder`` process, stopped
by SIGINT or by ``--games``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from referee.apps.ladder.entries import changed_submissions, judge
from referee.apps.ladder.file import Ladder, Rest, load_ladder
from referee.apps.ladder.history import Judged, Register, Tables
from referee.apps.ladder.redraw import redraw
from referee.apps.ladder.run import run_ladder
from referee.backends.local import LocalBackend
from referee.common.errors import LeagueError
from referee.leaguefile.schedule.scheduled_games import rotate
from tests.conftest import PYTHON, ROOT, SAMPLE_BOTS, Bots
from tests.test_organiser import INTERRUPTIBLE_REFEREE
from tests.test_ray_backend import ray_here  # noqa: F401 - the fixture: skip where Ray cannot run

WAIT_S = 120.0
SEED = 8157702950177155349  # the ladder's: secret while it runs
PLACEMENT_GAMES = 6


def author(submissions: Path, name: str, bots: Bots, kind: str = "random", manifest: str | None = None) -> Path:
    """An author's folder: the Python sample bots and a bot.yaml that runs the ``kind`` one with the test's marker."""
    folder = submissions / name
    shutil.copytree(SAMPLE_BOTS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    run = json.dumps(["python", f"{kind}_bot.py", "--marker", bots.marker])
    (folder / "bot.yaml").write_text(manifest or f"name: {name}\nversion: '1'\nrun: {run}\n")
    return folder


def ladder_file(folder: Path, bots: Bots, authors: dict[str, str], concurrency: int = 2) -> Path:
    submissions = folder / "submissions"
    submissions.mkdir()
    for name, kind in authors.items():
        author(submissions, name, bots, kind)
    path = folder / "ladder.yaml"
    path.write_text(
        f"name: season\ngame: stop_the_bus\nseed: {SEED}\ntable_size: 3\nsubmissions: submissions\n"
        f"output: out\nplacement_games: {PLACEMENT_GAMES}\npoll_s: 0.3\nconcurrency: {concurrency}\nmove_time_ms: 300\n"
        "time_bank_ms: 300\ngrace_ms: 300\nstartup_timeout_ms: 30000\n"  # roomy: a loaded machine must not fail a check game at start-up
    )
    return path


def start(path: Path, bots: Bots, *options: str) -> subprocess.Popen:
    """``referee ladder`` as a shell starts it, Ctrl-C not ignored (tests run in a shell's background inherit it so)."""
    return subprocess.Popen([*INTERRUPTIBLE_REFEREE, "ladder", str(path), *options], env=bots.subprocess_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def wait_for(what: str, ready, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + WAIT_S
    while not ready():
        if process.poll() is not None:
            raise AssertionError(f"the ladder ended before {what}: {process.communicate()}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"no {what} within {WAIT_S} s: {process.communicate()}")
        time.sleep(0.1)


def interrupted(process: subprocess.Popen, signal_number: int = signal.SIGINT) -> tuple[int, str]:
    process.send_signal(signal_number)
    out, err = process.communicate(timeout=60)
    return process.returncode, out + err


def check_records(output: Path) -> list[dict]:
    """Every game once; each one of a table drawn, seated as its rotation says, on the table's seed; every table
    drawn again from the records alone (the register as it stood then, the tables before it and the places it was
    drawn from) is the table recorded. Read once the ladder has stopped."""
    games = lines(output / "games.jsonl")
    repeated = [game_id for game_id, count in Counter(game["game_id"] for game in games).items() if count > 1]
    assert not repeated, f"games played twice: {repeated}"
    tables = {table["table"]: table for table in lines(output / "tables.jsonl")}
    for game in games:
        table = tables[game["table"]]
        assert game["seats"] == list(rotate(table["bots"], game["rotation"])) and str(game["seed"]) == table["seed"]
    register, drawn = Register(output), Tables(output)
    try:
        for redrawn in redraw(drawn.drawn, register, 3, PLACEMENT_GAMES, SEED):
            assert redrawn.same, f"table {redrawn.recorded} drawn again as {redrawn.bots}"
    finally:
        drawn.close()
        register.close()
    return games


def test_a_ladder_judges_new_submissions_as_it_plays_and_resumes_after_sigint(tmp_path: Path, bots: Bots) -> None:
    path = ladder_file(tmp_path, bots, {"ann": "heuristic", "bob": "random", "cat": "random"})
    output = tmp_path / "out"
    ladder = start(path, bots)
    wait_for("three games", lambda: len(lines(output / "games.jsonl")) >= 3, ladder)
    submissions = tmp_path / "submissions"
    author(submissions, "dan", bots, "heuristic")
    author(submissions, "eve", bots, manifest="name: eve\nversion: '1'\nbuild: make\n")  # no run
    wait_for("a game of dan-v1", lambda: any("dan-v1" in game["seats"] for game in lines(output / "games.jsonl")),
             ladder)  # fmt: skip
    status, said = interrupted(ladder)
    assert status == 130, said
    assert "interrupted (Ctrl-C)" in said

    judged = [(record["bot"], record["verdict"]) for record in lines(output / "register.jsonl")]
    assert judged[:3] == [("ann-v1", "accepted"), ("bob-v1", "accepted"), ("cat-v1", "accepted")]
    assert sorted(judged[3:]) == [("dan-v1", "accepted"), ("eve-v1", "rejected")]
    report = json.loads((output / "reports" / "eve.json").read_text())
    (version,) = report["versions"]
    assert version["verdict"] == "rejected" and "bot.yaml:1: run: missing" in version["reason"]
    assert not (output / "reports" / "eve.md").exists()  # the author's page is the site's (referee serve)
    assert not (output / "builds" / "eve-v1").exists()
    # league.json carries every verdict for the pages, in the referee's words; leaderboard.md lists the rejected
    # version with what rejected it.
    submissions = {entry["author"]: entry for entry in json.loads((output / "league.json").read_text())["submissions"]}
    assert [(entry["bot"], entry["verdict"]) for entry in submissions["eve"]["versions"]] == [("eve-v1", "rejected")]
    assert submissions["eve"]["versions"][0]["summary"] == "its bot.yaml is not valid"
    assert "reason" not in submissions["eve"]["versions"][0] and submissions["eve"]["page"] == "authors/eve/"
    assert "- eve-v1 (" in (output / "leaderboard.md").read_text()
    assert "its bot.yaml is not valid" in (output / "leaderboard.md").read_text()
    # Placement first: from the first table that seats dan-v1, every table seats it until it has 6 games.
    tables = lines(output / "tables.jsonl")
    first = next(index for index, table in enumerate(tables) if "dan-v1" in table["bots"])
    assert all("dan-v1" in table["bots"] for table in tables[first : first + 2])
    assert "dan-v1" in json.loads((output / "league.json").read_text())["bots"]
    before = check_records(output)

    again = subprocess.run([PYTHON, "-m", "referee", "ladder", str(path), "--games", "4"], env=bots.subprocess_env(),
                           capture_output=True, text=True, timeout=WAIT_S)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "judging" not in again.stdout  # nothing changed: nothing judged again
    table = again.stdout.split("games played;")[0]
    assert re.search(r"rank\s+bot\s+strength", table) and "dan-v1" in table  # it ends with the standings
    games = check_records(output)
    assert len(games) > len(before)
    finished = {game["game_id"] for game in games}
    for table in tables:  # a table half played when the ladder stopped was finished first
        assert {f"r1-t{table['table']:03d}-s{rotation}" for rotation in range(3)} <= finished
    board = json.loads((output / "leaderboard.json").read_text())
    assert {"ann-v1", "bob-v1", "cat-v1", "dan-v1"} <= {row["bot"] for row in board["rows"]}

    withdrawn = subprocess.run([PYTHON, "-m", "referee", "ladder", str(path), "--withdraw", "bob-v1", "--reason",
                                "asked by its author"], env=bots.subprocess_env(), capture_output=True, text=True)  # fmt: skip
    assert withdrawn.returncode == 0, withdrawn.stderr
    (change,) = [record for record in lines(output / "register.jsonl") if record["kind"] == "status"]
    assert (change["bot"], change["status"], change["reason"]) == ("bob-v1", "withdrawn", "asked by its author")
    assert json.loads((output / "reports" / "bob.json").read_text())["versions"][0]["status"] == "withdrawn"

    # Served to anyone, the ladder's folder shows its pages, never its seed, anyone's code, report or output.
    served = served_files(output)
    assert served["leaderboard.html"] is not None and "eve-v1" in served["leaderboard.html"]
    assert served["reports/eve.json"] is None and not any(served[name] for name in served if name.startswith("logs/"))
    assert served["league.json"] is None and served["builds/dan-v1/heuristic_bot.py"] is None
    assert [name for name, text in served.items() if text is not None and str(SEED) in text] == []


def served_files(output: Path) -> dict[str, str | None]:
    """Every file of ``output`` as ``referee serve`` answers for it: its text, or None when it is not served."""
    from referee.apps.site.app import create_app

    names = [str(path.relative_to(output)) for path in sorted(output.rglob("*")) if path.is_file()]

    async def fetch() -> dict[str, str | None]:
        transport = httpx.ASGITransport(app=create_app(output))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            answers = {name: await client.get("/" + name) for name in names}
        return {name: answer.text if answer.status_code == 200 else None for name, answer in answers.items()}

    return asyncio.run(fetch())


def zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True  # gone


def processes_of(folder: Path) -> list[int]:
    """The live processes working in ``folder`` (a version's built copy, which its bot runs and builds in)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            working = os.readlink(entry / "cwd")
        except OSError:
            continue
        if working == str(folder) and not zombie(int(entry.name)):
            found.append(int(entry.name))
    return found


def test_games_go_on_while_a_version_is_judged_and_the_new_version_plays_on_the_same_backend(
    tmp_path: Path, bots: Bots
) -> None:
    path = ladder_file(tmp_path, bots, {"ann": "heuristic", "bob": "random", "cat": "random"})
    ladder = load_ladder(path)
    output, submissions = ladder.output, tmp_path / "submissions"
    opened: list[LocalBackend] = []

    def backend(league, output, concurrency) -> LocalBackend:
        opened.append(LocalBackend(league, output, concurrency))
        return opened[-1]

    def games() -> list[dict]:
        return lines(output / "games.jsonl")

    async def until(what: str, ready, run: asyncio.Task) -> None:
        deadline = time.monotonic() + WAIT_S
        while not ready():
            if run.done():
                raise AssertionError(f"the ladder ended before {what}: {run.exception() or run.result()}")
            assert time.monotonic() < deadline, f"no {what} within {WAIT_S} s"
            await asyncio.sleep(0.05)

    async def season() -> None:
        run = asyncio.create_task(run_ladder(ladder, backend=backend))
        try:
            await until("three games", lambda: len(games()) >= 3, run)
            # dan's build waits until the test lets it end: the games must go on meanwhile.
            dan = author(submissions, "dan", bots, "heuristic")
            manifest = (dan / "bot.yaml").read_text()
            (dan / "bot.yaml").write_text(manifest + "build: 'while [ ! -e release ]; do sleep 0.05; done'\n")
            await until("dan-v1's build", (output / "logs" / "build-dan-v1.log").exists, run)
            during = len(games())
            await until("games while dan-v1 builds", lambda: len(games()) >= during + 2, run)
            assert not any("dan-v1" in game["seats"] for game in games())
            (output / "builds" / "dan-v1" / "release").touch()
            await until("a game of dan-v1", lambda: any("dan-v1" in game["seats"] for game in games()), run)

            # bob submits again: bob-v2 replaces bob-v1, whose processes end once its tables are played.
            (submissions / "bob" / "notes.txt").write_text("a second version\n")
            await until("a game of bob-v2", lambda: any("bob-v2" in game["seats"] for game in games()), run)
            bob_v1_games = {
                f"r1-t{table['table']:03d}-s{rotation}"
                for table in lines(output / "tables.jsonl")
                if "bob-v1" in table["bots"]
                for rotation in range(3)
            }
            await until("bob-v1's tables", lambda: bob_v1_games <= {game["game_id"] for game in games()}, run)
            await until("bob-v1's processes to end", lambda: not processes_of(output / "builds" / "bob-v1"), run)
            assert processes_of(output / "builds" / "ann-v1")  # kept between games: ann-v1 plays on
        finally:
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run

    asyncio.run(season())
    assert len(opened) == 1  # one backend for the whole run: a new version joins it
    check_records(output)
    judged = [(record["bot"], record["verdict"]) for record in lines(output / "register.jsonl")]
    assert judged[3:] == [("dan-v1", "accepted"), ("bob-v2", "accepted")]
    league = json.loads((output / "league.json").read_text())
    assert league["entries"]["bob-v1"]["status"] == "withdrawn" and "bob-v2" in league["bots"]
    tables = lines(output / "tables.jsonl")
    assert not any("bob-v1" in table["bots"] for table in tables[next(
        index for index, table in enumerate(tables) if "bob-v2" in table["bots"]):])  # fmt: skip
    # Once the standings were published, the tables were drawn where they are unsure (check_records drew each
    # table again from the records alone).
    assert any(table.get("draw") == "unsure" for table in tables)


@pytest.mark.parametrize("sandbox", ["bubblewrap", "none"])
def test_a_ladder_killed_while_it_plays_and_judges_resumes_with_no_game_twice(
    tmp_path: Path, bots: Bots, sandbox: str
) -> None:
    path = ladder_file(tmp_path, bots, {"ann": "heuristic", "bob": "random", "cat": "random"})
    path.write_text(path.read_text() + f"sandbox: {sandbox}\n")  # either way, the build dies with the ladder
    output = tmp_path / "out"
    dan = author(tmp_path / "submissions", "dan", bots, "heuristic")
    (dan / "bot.yaml").write_text(
        (dan / "bot.yaml").read_text() + "build: 'while [ ! -e release ]; do sleep 0.05; done'\n"
    )
    bots.leaves_socket_dirs = True  # a SIGKILLed referee cannot clean up after itself
    ladder = start(path, bots)
    wait_for("dan-v1's build and three games",
             lambda: (output / "logs" / "build-dan-v1.log").exists() and len(lines(output / "games.jsonl")) >= 3,
             ladder)  # fmt: skip
    building = processes_of(output / "builds" / "dan-v1")
    assert building, "dan-v1's build should be running"
    ladder.kill()
    ladder.communicate()
    assert not bots.leftovers(), "bots outlived a ladder killed with SIGKILL"
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{pid}").exists() and not zombie(pid) for pid in building) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in building if Path(f"/proc/{pid}").exists() and not zombie(pid)], (
        "dan-v1's build outlived a ladder killed with SIGKILL"
    )
    before = check_records(output)
    assert not any(record["bot"] == "dan-v1" for record in lines(output / "register.jsonl"))
    drawn = lines(output / "tables.jsonl")

    again = start(path, bots)  # dan-v1 is built afresh, while the tables half played are finished
    wait_for("dan-v1's build again", lambda: processes_of(output / "builds" / "dan-v1"), again)
    wait_for("the tables drawn before the kill",
             lambda: all(any(game["table"] == table["table"] and game["rotation"] == rotation
                             for game in lines(output / "games.jsonl")) for table in drawn for rotation in range(3)),
             again)  # fmt: skip
    (output / "builds" / "dan-v1" / "release").touch()
    wait_for("a game of dan-v1", lambda: any("dan-v1" in game["seats"] for game in lines(output / "games.jsonl")),
             again)  # fmt: skip
    status, said = interrupted(again)
    assert status == 130, said
    games = check_records(output)
    assert {game["game_id"] for game in before} < {game["game_id"] for game in games}
    assert [record["verdict"] for record in lines(output / "register.jsonl") if record["bot"] == "dan-v1"] == [
        "accepted"
    ]


def test_a_ladder_on_a_local_ray_places_a_new_author_stops_on_sigterm_and_continues_on_this_machine(
    tmp_path: Path,
    bots: Bots,
    ray_here: None,  # noqa: F811
) -> None:
    path = ladder_file(tmp_path, bots, {"ann": "heuristic", "bob": "random", "cat": "random"})
    output = tmp_path / "out"
    ladder = start(path, bots, "--backend", "ray")
    wait_for("two games", lambda: len(lines(output / "games.jsonl")) >= 2, ladder)
    author(tmp_path / "submissions", "dan", bots, "heuristic")  # judged while the slots play, then seated by them
    wait_for("a game of dan-v1", lambda: any("dan-v1" in game["seats"] for game in lines(output / "games.jsonl")),
             ladder)  # fmt: skip
    status, said = interrupted(ladder, signal.SIGTERM)
    assert status == 143, said
    assert said.count("ray: ") == 0, said  # no game lost with its slot
    before = check_records(output)
    # It continues on this machine's backend (one Ray started is enough: the records are the backends' to share).
    again = subprocess.run([PYTHON, "-m", "referee", "ladder", str(path), "--games", "3"],
                           env=bots.subprocess_env(), capture_output=True, text=True, timeout=WAIT_S)  # fmt: skip
    assert again.returncode == 0, again.stderr
    games = check_records(output)
    assert len(games) > len(before)
    assert {game["game_id"] for game in before} < {game["game_id"] for game in games}


def test_a_ladder_draws_where_its_standings_are_unsure_and_every_draw_replays_from_its_records(
    tmp_path: Path, bots: Bots
) -> None:
    kinds = {"ann": "heuristic", "bob": "heuristic", "cat": "random", "dan": "random", "eve": "random"}
    path = ladder_file(tmp_path, bots, kinds)
    path.write_text(path.read_text() + "sandbox: none\n")  # the draw is the point here, not the bots' sandbox
    # Two runs: the second draws from the standings the first published as it stopped, every version placed.
    for _ in range(2):
        done = subprocess.run([PYTHON, "-m", "referee", "ladder", str(path), "--games", "30"],
                              env=bots.subprocess_env(), capture_output=True, text=True, timeout=WAIT_S)  # fmt: skip
        assert done.returncode == 0, done.stderr
    output = tmp_path / "out"
    check_records(output)  # every table drawn again from the register and tables.jsonl is the table recorded
    register, tables = Register(output), Tables(output)
    try:
        unsure = [table for table in tables.drawn if table.draw == "unsure"]
        assert len(unsure) >= 10 and set(unsure[-1].places or {}) == {f"{name}-v1" for name in kinds}
        # The places recorded decide the draw: without them, some table would have been another.
        evenly = [dataclasses.replace(table, places=None) for table in tables.drawn]
        redrawn = redraw(evenly, register, 3, PLACEMENT_GAMES, SEED)
        assert not all(table.same for table in redrawn)
    finally:
        tables.close()
        register.close()


def test_a_ladder_file_is_checked_with_file_line_and_key(tmp_path: Path) -> None:
    (tmp_path / "submissions").mkdir()
    path = tmp_path / "ladder.yaml"
    body = "name: season\ngame: stop_the_bus\nseed: 1\ntable_size: 3\nsubmissions: submissions\n"
    path.write_text(body + "placement_games: -1\n")
    with pytest.raises(LeagueError, match=r"ladder.yaml:6: placement_games: -1 is too small"):
        load_ladder(path)
    path.write_text(body + "bots: []\n")
    with pytest.raises(LeagueError, match=r"ladder.yaml:6: bots: unknown key; allowed keys: name, game"):
        load_ladder(path)
    path.write_text(body.replace("submissions: submissions", "submissions: nowhere"))
    with pytest.raises(LeagueError, match=r"ladder.yaml:5: submissions: .*nowhere is not a folder"):
        load_ladder(path)
    path.write_text(body + "forfeits_in_a_row: 0\n")
    with pytest.raises(LeagueError, match=r"ladder.yaml:6: forfeits_in_a_row: 0 is too small"):
        load_ladder(path)
    path.write_text(body + "rest: {}\n")
    with pytest.raises(LeagueError, match=r"ladder.yaml:6: rest: give rank_range \(places wide\), games"):
        load_ladder(path)
    path.write_text(body + "rest:\n  rank_range: 0\n")
    with pytest.raises(LeagueError, match=r"ladder.yaml:7: rest.rank_range: 0 is too small"):
        load_ladder(path)
    path.write_text(body + "rest:\n  rank: 2\n")
    with pytest.raises(LeagueError, match=r"ladder.yaml:7: rest.rank: unknown key; allowed keys: rank_range, games"):
        load_ladder(path)
    path.write_text(body + "rest:\n  games: 50\nforfeits_in_a_row: 3\n")
    assert (load_ladder(path).rest, load_ladder(path).forfeits_in_a_row) == (Rest(games=50), 3)
    path.write_text(body)
    ladder = load_ladder(path)
    assert ladder.placement_games == 6 and ladder.output == tmp_path / "results" / "season"
    assert (ladder.rest, ladder.forfeits_in_a_row) == (None, 5)  # never rests; suspended after 5 forfeits in a row
    example = load_ladder(ROOT / "tournaments" / "ladder.example.yaml")
    assert example.submissions == ROOT / "tournaments" / "ladder-submissions" and example.check_games == 1


def test_while_too_few_versions_are_active_the_page_shows_each_verdict(tmp_path: Path, bots: Bots) -> None:
    path = ladder_file(tmp_path, bots, {"ann": "random"})
    author(tmp_path / "submissions", "eve", bots, manifest="name: eve\nversion: '1'\n")  # no run: rejected
    ladder = load_ladder(path)
    said: list[str] = []

    def board() -> dict:
        try:
            return json.loads((ladder.output / "leaderboard.json").read_text())
        except (OSError, ValueError):
            return {}

    async def waiting() -> None:
        run = asyncio.create_task(run_ladder(ladder, say=said.append))
        try:
            deadline = time.monotonic() + WAIT_S
            while len(board().get("submissions", [])) < 2:
                assert not run.done(), run.exception()
                assert time.monotonic() < deadline, f"no page with both verdicts within {WAIT_S} s: {said}"
                await asyncio.sleep(0.05)
        finally:
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run

    asyncio.run(waiting())
    verdicts = {entry["author"]: entry["versions"][0]["verdict"] for entry in board()["submissions"]}
    assert verdicts == {"ann": "accepted", "eve": "rejected"}
    assert not (ladder.output / "games.jsonl").exists() or not lines(ladder.output / "games.jsonl")
    assert "waiting for submissions: a table needs 3 active versions, the ladder has 1" in said
    assert "eve-v1" in (ladder.output / "leaderboard.html").read_text()


def test_a_ladder_file_reads_the_builds_network_as_a_league_file_does(tmp_path: Path) -> None:
    (tmp_path / "submissions").mkdir()
    path = tmp_path / "ladder.yaml"
    body = "name: season\ngame: stop_the_bus\nseed: 1\ntable_size: 3\nsubmissions: submissions\n"
    path.write_text(body)
    assert load_ladder(path).league.build_network == "outside"  # builds fetch packages
    path.write_text(body + "build_network: none\n")
    assert load_ladder(path).league.build_network == "none"
    path.write_text(body + "sandbox: none\nbuild_network: none\n")
    with pytest.raises(LeagueError, match=r"ladder.yaml:7: build_network: none needs the sandbox"):
        load_ladder(path)


def judge_the_submission(ladder: Ladder) -> Judged:
    """Judge the one submission of a new ladder's folder, as the ladder does, and return its verdict."""
    ladder.output.mkdir()
    register = Register(ladder.output)
    try:
        ((name, folder, digest),) = changed_submissions(ladder, register)
        return asyncio.run(judge(ladder, register, name, folder, digest, lambda line: None))
    finally:
        register.close()


def test_a_ladders_build_network_reaches_each_versions_build(tmp_path: Path, bots: Bots) -> None:
    path = ladder_file(tmp_path, bots, {})
    path.write_text(path.read_text() + "build_network: none\n")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        connect = f"import socket; socket.create_connection(('127.0.0.1', {listener.getsockname()[1]}), 5)"
        eve = author(tmp_path / "submissions", "eve", bots)
        (eve / "bot.yaml").write_text((eve / "bot.yaml").read_text() + f"build: python -c {json.dumps(connect)}\n")
        ladder = load_ladder(path)
        verdict = judge_the_submission(ladder)
    # Its build has a network of its own, loopback only: the referee's machine's listener is out of its reach.
    assert verdict.verdict == "rejected" and verdict.reason.startswith("build: "), verdict
    assert "ConnectionRefusedError" in (ladder.output / "logs" / "build-eve-v1.log").read_text()


def test_a_first_submission_without_run_is_rejected_with_its_report_and_never_built(tmp_path: Path, bots: Bots) -> None:
    path = ladder_file(tmp_path, bots, {})
    author(tmp_path / "submissions", "eve", bots, manifest="name: eve\nversion: '1'\n")
    ladder = load_ladder(path)
    verdict = judge_the_submission(ladder)
    assert (verdict.bot, verdict.verdict) == ("eve-v1", "rejected") and "run: missing" in verdict.reason
    register = Register(ladder.output)
    try:
        assert changed_submissions(ladder, register) == []  # judged once: not again while the folder is unchanged
    finally:
        register.close()
    text = (ladder.output / "reports" / "eve.json").read_text()  # on the author's page: no path of the machine
    assert "bot.yaml:1: run: missing" in text and str(tmp_path) not in text
    assert not (ladder.output / "builds" / "eve-v1").exists()


def test_a_folder_that_changes_while_it_is_copied_is_judged_afresh_not_from_that_copy(
    tmp_path: Path, bots: Bots, monkeypatch: pytest.MonkeyPatch
) -> None:
    import referee.apps.ladder.entries as entries

    path = ladder_file(tmp_path, bots, {})
    eve = author(tmp_path / "submissions", "eve", bots)
    real_build = entries.build_submission

    async def build_then_change(*args, **kwargs):
        built = await real_build(*args, **kwargs)
        (eve / "notes.txt").write_text("saved as the ladder copied the folder\n")  # an upload landing, say
        return built

    monkeypatch.setattr(entries, "build_submission", build_then_change)
    ladder = load_ladder(path)
    ladder.output.mkdir()
    register = Register(ladder.output)
    said: list[str] = []
    try:
        ((name, folder, digest),) = changed_submissions(ladder, register)
        assert asyncio.run(judge(ladder, register, name, folder, digest, said.append)) is None
        assert list(register.judged()) == [] and not (ladder.output / "builds" / "eve-v1").exists()
        assert any("changed while it was copied" in line for line in said), said
        monkeypatch.setattr(entries, "build_submission", real_build)
        ((name, folder, digest),) = changed_submissions(ladder, register)  # looked at again: judged from its content
        verdict = asyncio.run(judge(ladder, register, name, folder, digest, said.append))
    finally:
        register.close()
    assert verdict is not None and (verdict.bot, verdict.verdict) == ("eve-v1", "accepted"), verdict
    assert (ladder.output / "builds" / "eve-v1" / "notes.txt").is_file()


def test_the_ladders_help_names_the_files_it_writes_and_the_orders_it_takes() -> None:
    told = subprocess.run([PYTHON, "-m", "referee", "ladder", "--help"], capture_output=True, text=True, timeout=60)
    assert told.returncode == 0, told.stderr
    words = " ".join(told.stdout.split())
    assert "OUTPUT/reports/AUTHOR.json" in words and "AUTHOR.md" not in words
    assert "--reinstate NAME" in words and "work on a running ladder too" in words
