"""Building submissions: a copy in the league's output, built once, recorded, reused; never the submission's folder."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import shlex
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

from referee.common.errors import LeagueError
from referee.leaguefile.config import League, load_league
from referee.leaguefile.submissions import BUILDS_DIR, BuildResult, build_submissions, folder_digest

TWO_BOTS = """\
bots:
  - name: alice
    command: python alice.py
  - name: bob
    command: python bob.py
"""


# For the tests whose builds count their runs, or say when they start and end, in a file outside their copy: only
# a build without its sandbox can write there.
UNSANDBOXED = "build_timeout_s: 20\nsandbox: none\n"


def league_file(folder: Path, bots: str, body: str = "build_timeout_s: 20\n", table_size: int = 2) -> Path:
    path = folder / "league.yaml"
    header = f"name: subs\ngame: stop_the_bus\nseed: 1\ntable_size: {table_size}\n"
    path.write_text(header + textwrap.dedent(body) + textwrap.dedent(bots))
    for script in ("alice.py", "bob.py"):  # the scripts the command bots run (a missing one is refused at load)
        if f"python {script}" in bots:
            (folder / script).touch()
    return path


def submission(folder: Path, manifest: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.yaml").write_text(manifest)
    for name, text in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    if "python bot.py" in manifest and not (folder / "bot.py").exists():
        (folder / "bot.py").write_text("#")  # the script its run command names (a missing one is refused)
    return folder


def manifest(build: str | None, run: str = "python bot.py") -> str:
    return "name: sub\nversion: '1'\n" + (f"build: {json.dumps(build)}\n" if build else "") + f"run: {run}\n"


def build(league: League, output: Path, retry_failed: bool = True) -> tuple[League, list[BuildResult]]:
    output.mkdir(parents=True, exist_ok=True)
    return asyncio.run(build_submissions(league, output, output / "logs", retry_failed=retry_failed))


def test_a_copy_keeps_no_set_id_bit_and_nothing_writable_by_others(tmp_path):
    source = submission(tmp_path / "sub", manifest(None), {"tool": "#!/bin/sh\n", "notes.txt": "shared\n"})
    os.chmod(source / "tool", 0o6777)  # set-user-ID and set-group-ID, writable by all
    os.chmod(source / "notes.txt", 0o666)
    _, [result] = build(load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n")), tmp_path / "out")
    assert result.ok, result.message
    copy = tmp_path / "out" / BUILDS_DIR / "sub"
    assert stat.S_IMODE((copy / "tool").stat().st_mode) == 0o755  # still a program: its owner's, as anyone's
    assert stat.S_IMODE((copy / "notes.txt").stat().st_mode) == 0o644


def test_a_build_runs_in_a_copy_in_the_output_and_the_bot_runs_from_there(tmp_path):
    source = submission(tmp_path / "sub", manifest("echo compiled > built.txt && echo building"), {"bot.py": "#"})
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n"))
    output = tmp_path / "out"
    built, [result] = build(league, output)
    copy = output / BUILDS_DIR / "sub"
    assert (result.bot, result.ok, result.reused) == ("sub", True, False)
    assert result.message.startswith("sub: built in ")
    assert sorted(os.listdir(source)) == ["bot.py", "bot.yaml"], "the build wrote in the submission's folder"
    assert (copy / "built.txt").read_text() == "compiled\n"
    assert built.bot("sub").spec.cwd == str(copy)
    assert built.bot("sub").spec.command == (sys.executable, "bot.py")
    assert league.bot("sub").spec.cwd == str(source)  # the loaded league is unchanged
    log = output / "logs" / "build-sub.log"
    assert "building" in log.read_text() and str(log) in result.message
    record = json.loads((output / BUILDS_DIR / "sub.json").read_text())
    assert record["ok"] is True and record["digest"] == folder_digest(source)


def test_the_copy_keeps_links_and_modes_and_leaves_out_the_leagues_own_output(tmp_path):
    source = submission(tmp_path / "sub", manifest(None, "./run.sh"), {"run.sh": "#!/bin/sh\n", "data/x.txt": "x"})
    (source / "run.sh").chmod(0o755)
    (source / "data.txt").symlink_to("data/x.txt")
    os.mkfifo(source / "a-pipe")  # copying would read it forever
    (source / "__pycache__").mkdir()
    # The league's output inside the submission's folder (path: .) must not be copied into itself.
    for script in ("alice.py", "bob.py"):
        (tmp_path / script).touch()
    league = load_league(league_file(source, TWO_BOTS.replace("python ", "python ../") + "  - path: .\n"))
    output = source / "results"
    built, [result] = build(league, output)
    assert result.ok, result.message
    copy = output / BUILDS_DIR / "sub"
    assert sorted(os.listdir(copy)) == ["bot.yaml", "data", "data.txt", "league.yaml", "run.sh"]
    assert os.readlink(copy / "data.txt") == "data/x.txt" and (copy / "data.txt").read_text() == "x"
    assert os.access(copy / "run.sh", os.X_OK)
    assert built.bot("sub").spec.command == (str(copy / "run.sh"),)


def test_a_build_may_make_the_run_program(tmp_path):
    submission(tmp_path / "sub", manifest("printf '#!/bin/sh\\n' > bot && chmod +x bot", "./bot --fast"))
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n"))  # ./bot does not exist yet
    built, [result] = build(league, tmp_path / "out")
    assert result.ok, result.message
    assert built.bot("sub").spec.command == (str(tmp_path / "out" / BUILDS_DIR / "sub" / "bot"), "--fast")
    assert not (tmp_path / "sub" / "bot").exists()


def test_a_build_that_does_not_make_the_run_program_fails(tmp_path):
    submission(tmp_path / "sub", manifest("true", "./bot"))
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n"))
    built, [result] = build(league, tmp_path / "out")
    assert not result.ok
    assert result.message == (
        f'sub ({tmp_path / "sub" / "bot.yaml"}): build "true" succeeded, but its run command "./bot" cannot be '
        f"started (no such file: ./bot, looked for {tmp_path / 'out' / BUILDS_DIR / 'sub' / 'bot'})"
    )
    assert built.bot_names == ("alice", "bob")


def test_a_failed_build_is_reported_and_skipped(tmp_path):
    submission(tmp_path / "sub", manifest("echo 'error: compiler says no' >&2; exit 3"))
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n"))
    built, [result] = build(league, tmp_path / "out")
    assert (result.bot, result.ok) == ("sub", False)
    assert "sub (" in result.message and "failed with exit code 3" in result.message
    assert str(tmp_path / "out" / "logs" / "build-sub.log") in result.message
    assert result.message.endswith("ending:\n    error: compiler says no")
    assert built.bot_names == ("alice", "bob")
    assert league.bot_names == ("alice", "bob", "sub")


def test_a_failed_build_stops_the_league_when_asked(tmp_path):
    submission(tmp_path / "sub", manifest("exit 2"))
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n", "on_build_failure: stop\n"))
    with pytest.raises(LeagueError) as caught:
        build(league, tmp_path / "out")
    message = str(caught.value)
    assert message.startswith(f"{league.source}: 1 submission build failed and on_build_failure is stop")
    assert "sub (" in message and "failed with exit code 2" in message


def test_skipping_a_failed_build_must_leave_enough_bots(tmp_path):
    submission(tmp_path / "sub", manifest("exit 1"))
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n", table_size=3))
    with pytest.raises(LeagueError) as caught:
        build(league, tmp_path / "out")
    assert str(caught.value).startswith(
        f"{league.source}: after leaving out sub (build failed), 2 bots remain, too few for a table of 3:"
    )


def processes_naming(marker: str) -> list[int]:
    """The live processes whose command line holds ``marker`` (not the zombies waiting to be reaped)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            named = marker.encode() in (entry / "cmdline").read_bytes()
            alive = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and named and alive:
            found.append(int(entry.name))
    return found


def test_a_build_that_outlasts_its_timeout_is_killed_with_everything_it_started(tmp_path):
    marker = f"build-child-{os.getpid()}-{time.monotonic_ns()}"
    # A child in the build's process group and one that left it for a session of its own, each naming the marker
    # (which the build command itself, on the command lines of the build's shell and its sandbox, does not).
    named = f'"sleep 30; : $half{marker[5:]}"'
    children = f"half={marker[:5]}; sh -c {named} & setsid sh -c {named} & wait"
    submission(tmp_path / "sub", manifest(children))
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n", "build_timeout_s: 2\n"))
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        building = pool.submit(build, league, tmp_path / "out")
        while len(processes_naming(marker)) < 2 and not building.done():
            time.sleep(0.01)
        seen = processes_naming(marker)
        _, [result] = building.result()
    # Two, or for a moment three: a shell forking its sleep carries its command line until the sleep starts.
    assert len(seen) >= 2, "the build's children should have been running"
    assert time.monotonic() - started < 10
    assert not result.ok
    assert "did not finish within 2 s (build_timeout_s) and was killed" in result.message
    assert processes_naming(marker) == [], "the build's processes outlived it"


def test_a_folder_shared_by_two_bots_is_built_once(tmp_path):
    count = tmp_path / "count.txt"
    submission(tmp_path / "sub", manifest(f"echo run >> {count}"))
    bots = TWO_BOTS + "  - path: sub\n  - name: sub-2\n    path: sub\n"
    built, results = build(load_league(league_file(tmp_path, bots, UNSANDBOXED)), tmp_path / "out")
    assert count.read_text() == "run\n"
    assert [(result.bot, result.ok) for result in results] == [("sub", True), ("sub-2", True)]
    assert built.bot("sub").spec.cwd == built.bot("sub-2").spec.cwd == str(tmp_path / "out" / BUILDS_DIR / "sub")


def test_a_bot_that_plays_no_more_is_not_built_and_a_folder_it_shares_is_built_for_the_others(tmp_path):
    count = tmp_path / "count.txt"
    source = submission(tmp_path / "sub", manifest(f"echo sub >> {count}"))
    submission(tmp_path / "old", manifest(f"echo old >> {count}"))
    bots = TWO_BOTS + (
        "  - path: sub\n    status: withdrawn\n"
        "  - name: sub-2\n    path: sub\n"
        "  - name: old\n    path: old\n    status: disqualified\n"
    )
    league = load_league(league_file(tmp_path, bots, UNSANDBOXED))  # the count is kept outside the copies
    output = tmp_path / "out"
    built, results = build(league, output)
    # Built once, for sub-2, under the name of the folder's first bot: the copy a later run finds again.
    assert count.read_text() == "sub\n"
    assert [(result.bot, result.ok) for result in results] == [("sub-2", True)]
    assert results[0].message.startswith("sub: built in ")
    assert sorted(os.listdir(output / BUILDS_DIR)) == ["sub", "sub.json"]
    assert os.listdir(output / "logs") == ["build-sub.log"]
    assert built.bot("sub-2").spec.cwd == str(output / BUILDS_DIR / "sub")
    # The others stay in the league as they were loaded: their seats and games are the league's still.
    assert built.bot_names == league.bot_names
    assert built.bot("sub").spec.cwd == str(source) and built.bot("old") == league.bot("old")
    # Unless a failed build left one out of the schedule the league's games were played on: it stays out.
    built, _ = asyncio.run(
        build_submissions(league, output, output / "logs", retry_failed=False, left_out_before={"old"})
    )
    assert built.bot_names == ("alice", "bob", "sub", "sub-2") and count.read_text() == "sub\n"


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="only a virtual environment puts its python first on PATH")
def test_python_in_a_build_is_the_referees_interpreter(tmp_path):
    submission(tmp_path / "sub", manifest('python -c \'import sys; open("exe.txt", "w").write(sys.prefix)\''))
    _, [result] = build(load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n")), tmp_path / "out")
    assert result.ok, result.message
    assert (tmp_path / "out" / BUILDS_DIR / "sub" / "exe.txt").read_text() == sys.prefix


def test_a_build_may_lock_files_as_go_and_sqlite_do(tmp_path):
    locking = (
        "import fcntl, sqlite3; lock = open('lock', 'w'); fcntl.flock(lock, fcntl.LOCK_EX); "
        "fcntl.lockf(lock, fcntl.LOCK_EX); db = sqlite3.connect('cache.db'); db.execute('create table t (x)'); "
        "db.commit(); open('locked', 'w')"
    )
    submission(tmp_path / "sub", manifest(f"python3 -c {shlex.quote(locking)}"))
    _, [result] = build(load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n")), tmp_path / "out")
    assert result.ok, result.message
    assert (tmp_path / "out" / BUILDS_DIR / "sub" / "locked").exists()


def test_a_submission_without_a_build_is_copied_and_runs_from_the_copy(tmp_path):
    submission(tmp_path / "sub", manifest(None), {"bot.py": "#"})
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n"))
    built, [result] = build(league, tmp_path / "out")
    copy = tmp_path / "out" / BUILDS_DIR / "sub"
    assert result.ok and result.message == f"sub: copied to {copy} (no build)"
    assert (copy / "bot.py").read_text() == "#" and built.bot("sub").spec.cwd == str(copy)
    assert not (tmp_path / "out" / "logs" / "build-sub.log").exists()


def test_a_league_builds_a_submission_once_and_reuses_the_build(tmp_path):
    count = tmp_path / "count.txt"
    source = submission(tmp_path / "sub", manifest(f"echo run >> {count}"), {"bot.py": "# one"})
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n", UNSANDBOXED))
    first, _ = build(league, tmp_path / "out")
    again, [result] = build(league, tmp_path / "out")
    assert count.read_text() == "run\n"
    assert result.ok and result.reused and result.note is None
    assert again == first
    # The submission changes after the league copied it: the league goes on with its copy, and says so.
    (source / "bot.py").write_text("# two")
    _, [result] = build(league, tmp_path / "out")
    assert count.read_text() == "run\n"
    assert result.note.startswith(f"sub: {source} has changed since this league copied it on ")
    assert (tmp_path / "out" / BUILDS_DIR / "sub" / "bot.py").read_text() == "# one"
    # Another league (another output) builds its own copy, of the folder as it is now.
    build(league, tmp_path / "other")
    assert count.read_text() == "run\nrun\n"
    assert (tmp_path / "other" / BUILDS_DIR / "sub" / "bot.py").read_text() == "# two"


def test_a_removed_copy_is_built_again(tmp_path):
    count = tmp_path / "count.txt"
    submission(
        tmp_path / "sub", manifest(f"echo run >> {count} && printf '#!/bin/sh\\n' > bot && chmod +x bot", "./bot")
    )
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n", UNSANDBOXED))
    build(league, tmp_path / "out")
    (tmp_path / "out" / BUILDS_DIR / "sub" / "bot").unlink()
    _, [result] = build(league, tmp_path / "out")
    assert result.ok and not result.reused and count.read_text() == "run\nrun\n"


def test_a_failed_build_is_tried_again_until_the_league_has_games_then_it_stands(tmp_path):
    count = tmp_path / "count.txt"
    submission(tmp_path / "sub", manifest(f"echo run >> {count}; exit 1"))
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n", UNSANDBOXED))
    build(league, tmp_path / "out")
    build(league, tmp_path / "out", retry_failed=True)
    assert count.read_text() == "run\nrun\n"
    built, [result] = build(league, tmp_path / "out", retry_failed=False)
    assert count.read_text() == "run\nrun\n"
    assert not result.ok and result.reused and "failed with exit code 1" in result.message
    assert "a build that failed stands once the league has finished games" in result.message
    assert built.bot_names == ("alice", "bob")


def test_two_leagues_sharing_a_submission_build_at_once_without_racing(tmp_path):
    # In one folder the two builds would overwrite each other's files; each copy has its own.
    events = tmp_path / "events.txt"
    racy = (
        f'echo start >> {events} && echo $$ > owner && sleep 1 && [ "$(cat owner)" = "$$" ] '
        f'&& printf "#!/bin/sh\\n" > bot && chmod +x bot && echo end >> {events}'
    )
    submission(tmp_path / "shared" / "sub", manifest(racy, "./bot"))
    leagues = []
    for name in ("spring", "autumn"):
        (tmp_path / name / "out").mkdir(parents=True)
        leagues.append(load_league(league_file(tmp_path / name, TWO_BOTS + "  - path: ../shared/sub\n", UNSANDBOXED)))

    async def both():
        return await asyncio.gather(
            *(build_submissions(league, league.folder / "out", league.folder / "out" / "logs") for league in leagues)
        )

    outcomes = asyncio.run(both())
    assert events.read_text().split() == ["start", "start", "end", "end"], "the two builds should overlap"
    for built, [result] in outcomes:
        assert result.ok, result.message
        assert built.bot_names == ("alice", "bob", "sub")
    assert sorted(os.listdir(tmp_path / "shared" / "sub")) == ["bot.yaml"]


# ----- what a build's network reaches -----------------------------------------------------------------------------


def _own_address() -> str | None:
    """This machine's address on its default route (a UDP socket's connect sends nothing), or None: loopback only."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


PROBE = """\
import json, socket, sys
reached = {}
for name, host, port in json.loads(sys.argv[1]):
    try:
        socket.create_connection((host, port), 3).close()
        reached[name] = "connected"
    except OSError as error:
        reached[name] = error.strerror or str(error)
try:
    reached["resolver"] = open("/etc/resolv.conf").read()  # the one its network can ask
except OSError as error:
    reached["resolver"] = error.strerror
print(json.dumps(reached))
json.dump(reached, open("reached.json", "w"))
"""


def test_a_build_with_the_outside_network_reaches_out_but_nothing_on_the_machines_loopback(tmp_path):
    import socket

    own = _own_address()
    with socket.socket() as server, socket.socket() as outward:
        server.bind(("127.0.0.1", 0))  # where `referee serve` listens, and a bot with the host's network
        server.listen()
        outward.bind((own or "127.0.0.1", 0))  # a server of this machine on its own address, off loopback
        outward.listen()
        port, outward_port = server.getsockname()[1], outward.getsockname()[1]
        targets = [
            ["loopback", "127.0.0.1", port],  # the build's own loopback: nothing listens
            ["gateway", "10.0.2.2", port],  # slirp4netns's way to the machine's loopback, shut
            *([["outside", own, outward_port]] if own else []),
        ]
        reached = {}
        for network in ("outside", "host"):
            folder = tmp_path / network
            probe = f"python probe.py {shlex.quote(json.dumps(targets))}"
            submission(folder / "sub", manifest(probe), {"probe.py": PROBE})
            body = f"build_timeout_s: 60\nbuild_network: {network}\n"
            _, [result] = build(load_league(league_file(folder, TWO_BOTS + "  - path: sub\n", body)), folder / "out")
            assert result.ok, result.message
            reached[network] = json.loads((folder / "out" / BUILDS_DIR / "sub" / "reached.json").read_text())
    outside = reached["outside"]
    assert outside["loopback"] == "Connection refused" and outside["gateway"] != "connected", outside
    assert outside.get("outside", "connected") == "connected", outside  # the network works: only loopback is shut
    assert outside["resolver"] == "nameserver 10.0.2.3\n", outside  # slirp4netns's, whatever the machine's names
    assert reached["host"]["loopback"] == "connected", reached["host"]  # the probe is not vacuous


def test_a_league_builds_with_the_outside_network_unless_it_says_otherwise(tmp_path):
    submission(tmp_path / "sub", manifest(None))
    league = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n"))
    assert league.build_network == "outside" and league.bot("sub").build_network == "outside"
    unsandboxed = load_league(league_file(tmp_path, TWO_BOTS + "  - path: sub\n", "sandbox: none\n"))
    assert unsandboxed.build_network == "host"  # without the sandbox a build has the machine's network
    path = league_file(tmp_path, TWO_BOTS + "  - path: sub\n", "sandbox: none\nbuild_network: outside\n")
    with pytest.raises(LeagueError, match=r"build_network: outside needs the sandbox, which sandbox: none turns off"):
        load_league(path)


# ----- the content digest -----------------------------------------------------------------------------------------


def test_the_content_digest_tells_apart_trees_whose_bytes_once_ran_together(tmp_path):
    manifest_text = "name: sub\nversion: '1'\nrun: python bot.py\n"
    two = submission(tmp_path / "two", manifest_text, {"bot.py": "#", "a": "P", "b": "Q"})
    one = submission(tmp_path / "one", manifest_text, {"bot.py": "#"})
    (one / "a").write_bytes(b"PF\0b\0-\0Q")  # "a" holding the bytes that once digested as "a" = P and "b" = Q
    assert folder_digest(one) != folder_digest(two)
    empty_then_nul = submission(tmp_path / "nul", manifest_text, {"bot.py": "#", "a": ""})
    (empty_then_nul / "a").write_bytes(b"\0")
    assert len({folder_digest(one), folder_digest(two), folder_digest(empty_then_nul)}) == 3


def test_a_folder_of_text_keeps_the_digest_it_had_before_files_holding_nul_were_digested_apart(tmp_path):
    # The digest of this folder when every file's bytes were digested whole (the register of a running ladder
    # holds such digests: a folder of text files must not be judged again for the change).
    folder = submission(tmp_path / "sub", "name: sub\nversion: '1'\nrun: python bot.py\n", {"bot.py": "print(1)\n"})
    (folder / "lib").mkdir()
    (folder / "lib" / "util.py").write_text("X = 1\n")
    os.symlink("lib/util.py", folder / "util.py")
    assert folder_digest(folder) == "e1c09a515e60985263dd9b68841e89357259ed20bf90f8543a61ca110e4c8311"
