"""Containment against a hostile bot, in the layout organisers use: what docs/security.md's threat list promises.

Each test plays real bots (tests/bad_bots/) under the real sandbox: a
snooping bot in the default layout (the league file with bots/ and subs/
beside it, results in the league's folder) reads nothing of the
competition, as a command or as a submission, and cannot write a kernel
setting; two colluding bots carry no bit through locks or change notices;
bots planting huge trees in their writable places leave this league and the
next intact; a referee killed while a bot is starting takes the start along.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from referee.apps.league import BOT_LOG_DIR, GAME_LOG_DIR, RESULTS_FILE, output_folder, run_league
from referee.common.errors import LeagueError
from referee.leaguefile.config import load_league
from referee.play import sandbox
from referee.play.processes import BotSpec
from referee.play.sandbox import ResourceLimits
from referee.play.session import BotSession
from referee.protocol.clock import Timing
from referee.protocol.faults import BotFault, FaultKind
from referee.protocol.setup import GameSetup
from referee.records.gamelog import log_files
from tests.conftest import BAD_BOTS, PYTHON, SAMPLE_BOTS, Bots, play

BWRAP = sandbox.bubblewrap()
pytestmark = pytest.mark.skipif(BWRAP.problem is not None, reason=f"no sandbox here: {BWRAP.problem}")
PYTHON_PLACES = (sys.prefix, sys.base_prefix)  # the referee's Python, which a Python bot's sandbox shows
ROOMY = Timing(move_time_ms=10_000, time_bank_ms=0, grace_ms=500, startup_timeout_ms=10_000)
AS_ROOT = os.geteuid() == 0


def reports(log_dir: Path, prefix: str, pattern: str) -> list[dict]:
    """The ``PREFIX {json}`` lines that bots wrote to the logs ``pattern`` matches, in order."""
    found = []
    for log in sorted(log_dir.glob(pattern)):
        found += [json.loads(line.split(" ", 1)[1]) for line in log.read_text().splitlines() if line.startswith(prefix)]
    return found


# ----- the default layout: nothing of the competition is visible ---------------------------------------------


def default_layout(tmp_path: Path, bots: Bots) -> tuple[Path, dict[str, list[str]]]:
    """A league folder as organisers make it: league.yaml, bots/ (two command bots' scripts), subs/ (two
    submissions), no output key (so results/NAME is in the league's folder). Return it and the snoop's probes."""
    folder = tmp_path / "league"
    (folder / "bots").mkdir(parents=True)
    for script in ("snoop.py", "_common.py"):
        shutil.copy(BAD_BOTS / script, folder / "bots" / script)
    shutil.copy(SAMPLE_BOTS / "random_bot.py", folder / "bots" / "random_bot.py")
    for name, scripts in (("snooper", ("snoop.py", "_common.py")), ("other", ())):
        sub = folder / "subs" / name
        sub.mkdir(parents=True)
        for script in scripts:
            shutil.copy(BAD_BOTS / script, sub / script)
        shutil.copy(SAMPLE_BOTS / "random_bot.py", sub / "random_bot.py")
        (sub / "strategy.txt").write_text(f"{name}'s secret: always draw from the stock\n")
        run = ["python", "snoop.py", "--probes", "probes.json"] if scripts else ["python", "random_bot.py"]
        (sub / "bot.yaml").write_text(
            f"name: {name}\nversion: '1'\nrun: {json.dumps(run + ['--marker', bots.marker])}\n"
        )
    output = folder / "results" / "layout"
    probes = {
        "list": [
            str(folder),
            str(folder / "results"),
            str(output),
            str(output / GAME_LOG_DIR),
            str(folder / "subs"),
            str(folder / "subs" / "other"),
            str(folder / "bots"),
        ],
        "read": [
            str(folder / "league.yaml"),
            str(output / RESULTS_FILE),
            str(output / "league.json"),
            str(folder / "subs" / "other" / "strategy.txt"),
            str(folder / "subs" / "other" / "random_bot.py"),
            str(folder / "bots" / "random_bot.py"),
            str(output / "builds" / "other" / "strategy.txt"),
        ],
        "read-glob": [
            str(output / GAME_LOG_DIR / "*"),
            str(output / BOT_LOG_DIR / "*"),
            str(output / "builds" / "other" / "*"),
        ],
        "sysctl": ["/proc/sys/vm/swappiness", "/proc/sys/kernel/hostname"],
        "open-write": ["/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger"],
    }
    for where in (folder / "bots", folder / "subs" / "snooper"):
        (where / "probes.json").write_text(json.dumps(probes))
    env = f"{{REFEREE_TEST_MARKER: {bots.marker}}}"
    snoop = ["python", "bots/snoop.py", "--probes", "bots/probes.json", "--in-game", "1", "--marker", bots.marker]
    (folder / "league.yaml").write_text(
        "name: layout\ngame: stop_the_bus\nseed: 8624913370264123917\ntable_size: 4\nconcurrency: 1\n"
        f"move_time_ms: {ROOMY.move_time_ms}\nstartup_timeout_ms: {ROOMY.startup_timeout_ms}\nbots:\n"
        f"  - name: snoop\n    command: {json.dumps(snoop)}\n    env: {env}\n"
        f"  - name: random\n    command: python bots/random_bot.py --marker {bots.marker}\n    env: {env}\n"
        f"  - path: subs/snooper\n    env: {env}\n  - path: subs/other\n    env: {env}\n"
    )
    # The submission snoops in its game too (its run command is its author's: it names nothing here).
    manifest = folder / "subs" / "snooper" / "bot.yaml"
    manifest.write_text(manifest.read_text().replace('"probes.json"', '"probes.json", "--in-game", "1"'))
    return folder, probes


def test_in_the_default_layout_a_snooping_bot_reads_nothing_of_the_competition(bots: Bots, tmp_path: Path) -> None:
    folder, probes = default_layout(tmp_path, bots)
    league = load_league(folder / "league.yaml")
    summary = asyncio.run(run_league(league))
    assert summary.played == 4 and summary.disabled == {}
    output = folder / "results" / "layout"
    assert len(log_files(output / GAME_LOG_DIR)) == 4  # there were game logs to read
    # A process of each bot for each of the table's four rotations, one game each, one after another: all but the
    # first looked once a game was over, its log and result written.
    commands = reports(output / BOT_LOG_DIR, "SNOOP ", "snoop-*.log")
    submissions = reports(output / BOT_LOG_DIR, "SNOOP ", "snooper-*.log")
    assert len(commands) == len(submissions) == 4
    for report in (*commands, *submissions):
        assert report["games_started"] == 1
        outcome = {(probe["probe"], probe["target"]): probe for probe in report["probes"]}
        # No seed, no result, no game log, no other bot's files, no kernel setting: nothing read or written.
        for kind in ("read", "read-glob", "sysctl", "open-write"):
            for target in probes[kind]:
                assert not outcome[(kind, target)]["reached"], outcome[(kind, target)]
        # Of the listings: only the bot's own files, and the bare way to them.
        listed = {target: probe["detail"] for (kind, target), probe in outcome.items() if kind == "list"}
        for target in probes["list"][1:6]:
            assert not outcome[("list", target)]["reached"] or target in (str(folder / "results"), str(output)), listed
        # No other bot's process, command line or environment in its /proc: its sandbox's init and its own.
        assert all("random_bot" not in line and "snooper" not in line for line in report["command_lines"].values())
        assert report["capabilities"] == "0000000000000000"
    for command in commands:
        command_listing = {probe["target"]: probe["detail"] for probe in command["probes"] if probe["probe"] == "list"}
        assert command_listing[str(folder)] == "1 entries: ['bots']"  # its cwd shows what its command needs, no more
        assert "random_bot.py" in command_listing[str(folder / "bots")]  # a name, masked by an empty file
    for submission in submissions:
        listing = {probe["target"]: probe["detail"] for probe in submission["probes"] if probe["probe"] == "list"}
        assert listing[str(output)] == "1 entries: ['builds']"  # only the way to its own copy
    if AS_ROOT:  # each bot runs as a user of its own, none of the machine's
        command_uids = {report["uid"] for report in commands}
        submission_uids = {report["uid"] for report in submissions}
        assert len(command_uids) == len(submission_uids) == 1 and command_uids != submission_uids
        assert min(command_uids | submission_uids) >= sandbox.FIRST_BOT_ID
        assert all(report["gid"] == report["uid"] and report["groups"] in ([], [report["gid"]]) for report in commands)


def test_a_command_naming_a_hidden_path_is_refused_with_one_line_naming_the_bot_and_why(
    bots: Bots, tmp_path: Path
) -> None:
    folder, _ = default_layout(tmp_path, bots)
    league_file = folder / "league.yaml"
    text = league_file.read_text()
    for argument, why in [
        ("league.yaml", "the league file"),
        ("results/layout/games.jsonl", "the league's output"),
        ("--seed-from=results/layout/league.json", "the league's output"),
        ("subs/other", "other's submission folder"),
    ]:
        league_file.write_text(text.replace("python bots/random_bot.py", f"python bots/random_bot.py {argument}"))
        with pytest.raises(LeagueError) as refused:
            load_league(league_file)
        assert f'bots[1].command: "{argument}" (bot random) names {why}' in str(refused.value)
    # As validate and run say it: one line, and nothing run.
    for command in (["validate"], ["run", "--no-progress"]):
        done = subprocess.run(
            [PYTHON, "-m", "referee.cli", command[0], str(league_file), *command[1:]],
            env=bots.subprocess_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1 and str(league_file) in lines[0], done.stderr
        assert 'bots[1].command: "subs/other" (bot random) names other\'s submission folder' in lines[0]
    assert not (folder / "results").exists()
    # A file of another bot's folder, named, is shared: shown alone, the rest of that folder still masked.
    secret = folder / "subs" / "other" / "strategy.txt"
    league_file.write_text(text.replace("python bots/random_bot.py", f"python bots/random_bot.py {secret}"))
    shown = load_league(league_file).bot("random").spec.folders
    assert str(secret) in shown and str(secret.parent) not in shown


# ----- a submission's build: its copy, and nothing else of the machine ------------------------------------------


def hostile_build_layout(tmp_path: Path, bots: Bots, sandboxed: bool = True) -> tuple[Path, Path, dict[str, list[str]]]:
    """A league folder as organisers make it (league.yaml, subs/, results in the league's folder), playing a command
    bot and the submission ``other``, whose build makes its program; and ``subs/hostile``, not yet in the league
    file, whose build snoops (tests/bad_bots/build_snoop.py). Return the league file, the league's output and the
    snooping build's probes: what it must not reach, then, last of each kind, its own copy's (which it must).
    Without ``sandboxed`` the league says ``sandbox: none``, and the build writes in no home folder."""
    folder = tmp_path / "league"
    other = folder / "subs" / "other"
    hostile = folder / "subs" / "hostile"
    other.mkdir(parents=True)
    hostile.mkdir()
    run = json.dumps(["python", "random_bot.py", "--marker", bots.marker])
    shutil.copy(SAMPLE_BOTS / "random_bot.py", other / "player.py")
    (other / "strategy.txt").write_text("other's secret: always draw from the stock\n")
    (other / "bot.yaml").write_text(f"name: other\nversion: '1'\nbuild: cp player.py random_bot.py\nrun: {run}\n")
    for script in (BAD_BOTS / "build_snoop.py", SAMPLE_BOTS / "random_bot.py"):
        shutil.copy(script, hostile)
    (hostile / "bot.yaml").write_text(
        f"name: hostile\nversion: '1'\nbuild: python build_snoop.py probes.json\nrun: {run}\n"
    )
    output = folder / "results" / "builds"
    planted = f"planted-{bots.marker}"
    homes = [path for path in ("/root", "/home") if os.path.isdir(path) and os.listdir(path)]
    probes = {
        "read": [
            str(folder / "league.yaml"),
            "../../../../league.yaml",  # the same file, from the copy in results/builds/builds/hostile
            str(output / RESULTS_FILE),
            str(output / "league.json"),
            str(output / "builds" / "other.json"),
            str(output / "builds" / "other" / "random_bot.py"),
            str(other / "strategy.txt"),
            "/etc/shadow",
            "bot.yaml",
        ],
        "list": [str(folder), str(folder / "subs"), str(other), str(output / GAME_LOG_DIR), *homes, "."],
        "write": [
            str(folder / planted),
            str(output / planted),
            str(output / "builds" / "other" / planted),
            str(other / planted),
            *(str(Path(home) / planted) for home in homes if sandboxed),
            planted,
        ],
    }
    (hostile / "probes.json").write_text(json.dumps(probes))
    env = f"{{REFEREE_TEST_MARKER: {bots.marker}}}"
    league_file = folder / "league.yaml"
    league_file.write_text(
        "name: builds\ngame: stop_the_bus\nseed: 8624913370264123917\ntable_size: 2\nconcurrency: 1\n"
        + ("" if sandboxed else "sandbox: none\n")
        + f"move_time_ms: {ROOMY.move_time_ms}\nstartup_timeout_ms: {ROOMY.startup_timeout_ms}\nbots:\n"
        f"  - name: random\n    command: python {SAMPLE_BOTS / 'random_bot.py'} --marker {bots.marker}\n"
        f"    env: {env}\n  - path: subs/other\n    env: {env}\n"
    )
    return league_file, output, probes


def test_a_hostile_build_reads_and_writes_nothing_of_the_machine_beyond_its_copy(
    bots: Bots, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    league_file, output, probes = hostile_build_layout(tmp_path, bots)
    # A first run: the league file, its results and another submission's build are there for the build to look for.
    summary = asyncio.run(run_league(load_league(league_file)))
    assert summary.played == 2 and not summary.left_out
    other_record = (output / "builds" / "other.json").read_text()
    for target in probes["read"][:-1]:
        if target.startswith("/"):
            assert Path(target).read_bytes(), f"{target} should hold something to read"
    # The hostile submission joins; the referee's environment holds a secret of the machine's.
    league_file.write_text(league_file.read_text() + "  - path: subs/hostile\n")
    monkeypatch.setenv("REFEREE_TEST_SECRET", "the organiser's cloud token")
    try:
        summary = asyncio.run(run_league(load_league(league_file)))
        copy = output / "builds" / "hostile"
        report = json.loads((copy / "reached.json").read_text())
        planted = [target for target in probes["write"][:-1] if Path(target).exists()]
    finally:
        for target in probes["write"][:-1]:
            Path(target).unlink(missing_ok=True)  # had the sandbox failed, what it planted goes
    assert planted == [], "the build wrote outside its copy"
    outcome = {(probe["probe"], probe["target"]): probe for probe in report["probes"]}
    for kind in ("read", "list", "write"):
        own = probes[kind][-1]
        assert outcome[(kind, own)]["reached"], outcome[(kind, own)]  # its own copy: so the probes work
    assert (copy / probes["write"][-1]).exists()
    for target in probes["read"][:-1]:
        assert not outcome[("read", target)]["reached"], outcome[("read", target)]
    # Of the league's folder, the bare way to its copy; of a home folder, at most the way to the referee's Python
    # (which its PATH starts with, as a Python bot's sandbox shows it); of the rest, nothing.
    league_folder, *others = probes["list"][:-1]
    assert outcome[("list", league_folder)]["detail"] == "1 entries: ['results']"
    for target in others:
        python = {
            Path(place).relative_to(target).parts[0] for place in PYTHON_PLACES if Path(place).is_relative_to(target)
        }
        assert not outcome[("list", target)]["reached"] or outcome[("list", target)]["detail"] == (
            f"{len(python)} entries: {sorted(python)}"
        ), outcome[("list", target)]
    assert report["secret"] is None, "the referee's environment reached the build"
    # In its /proc: its sandbox's init, its shell and itself; no process of the referee or of a bot.
    assert len(report["command_lines"]) <= 3 and not any(
        "pytest" in line or "random_bot" in line for line in report["command_lines"].values()
    ), report["command_lines"]
    if AS_ROOT:  # the bot's own user, in no group but its own; its copy is the referee's again once built
        assert report["uid"] == report["gid"] == sandbox.bot_user("hostile") >= sandbox.FIRST_BOT_ID
        assert report["groups"] in ([], [report["gid"]])
    for place, folders, files in os.walk(copy):
        for name in [place, *(os.path.join(place, entry) for entry in folders + files)]:
            info = os.lstat(name)
            assert info.st_uid == os.geteuid() and info.st_gid == os.getegid(), f"{name} is not the referee's"
            if not stat.S_ISLNK(info.st_mode):
                assert not info.st_mode & 0o022, f"{name} is writable by others: {stat.filemode(info.st_mode)}"
            if stat.S_ISREG(info.st_mode):
                assert not info.st_mode & 0o6000, f"{name} runs as its owner: {stat.filemode(info.st_mode)}"
    # Meanwhile the league went on: the other build reused, both submissions built and playing.
    assert summary.played == 4 and not summary.left_out and summary.disabled == {}
    assert (output / "builds" / "other.json").read_text() == other_record
    seats = Counter(
        name for line in (output / RESULTS_FILE).read_text().splitlines() for name in json.loads(line)["seats"]
    )
    assert seats == {"random": 4, "other": 4, "hostile": 4}


def test_the_same_hostile_build_without_the_sandbox_reaches_all_of_it(
    bots: Bots, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    league_file, output, probes = hostile_build_layout(tmp_path, bots, sandboxed=False)
    asyncio.run(run_league(load_league(league_file)))
    league_file.write_text(league_file.read_text() + "  - path: subs/hostile\n")
    monkeypatch.setenv("REFEREE_TEST_SECRET", "the organiser's cloud token")
    try:
        summary = asyncio.run(run_league(load_league(league_file)))
        report = json.loads((output / "builds" / "hostile" / "reached.json").read_text())
        planted = [target for target in probes["write"][:-1] if Path(target).exists()]
    finally:
        for target in probes["write"][:-1]:
            Path(target).unlink(missing_ok=True)
    assert summary.played == 4
    assert planted == probes["write"][:-1], "without the sandbox the build writes wherever its user may"
    reached = {probe["target"] for probe in report["probes"] if probe["reached"] and probe["probe"] == "read"}
    assert reached >= {str(league_file), str(output / RESULTS_FILE), str(output / "league.json")}
    assert report["secret"] == "the organiser's cloud token"


def test_a_build_has_the_hosts_network_unless_the_league_turns_it_off(tmp_path: Path) -> None:
    from referee.leaguefile.submissions import build_submissions

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), 5); open('connected', 'w')"
        reached = {}
        for network in ("host", "none"):
            folder = tmp_path / network
            (folder / "sub").mkdir(parents=True)
            (folder / "sub" / "bot.yaml").write_text(
                f"name: sub\nversion: '1'\nbuild: {json.dumps(f'python -c {shlex.quote(connect)}; true')}\n"
                f"run: python {SAMPLE_BOTS / 'random_bot.py'}\n"
            )
            (folder / "league.yaml").write_text(
                f"name: net\ngame: stop_the_bus\nseed: 1\ntable_size: 2\nbuild_network: {network}\nbots:\n"
                f"  - name: random\n    command: python {SAMPLE_BOTS / 'random_bot.py'}\n  - path: sub\n"
            )
            league = load_league(folder / "league.yaml")
            _, [result] = asyncio.run(build_submissions(league, folder / "out", folder / "out" / "logs"))
            assert result.ok, result.message
            reached[network] = (folder / "out" / "builds" / "sub" / "connected").exists()
    assert reached == {"host": True, "none": False}


# ----- no covert channel ---------------------------------------------------------------------------------------


MESSAGE = "10110010"


def colluders(bots: Bots, sandboxed: bool) -> list[BotSpec]:
    specs = [
        bots.bad("collude.py", "--role", role, "--message", MESSAGE, name=name)
        for role, name in (("send", "sender"), ("receive", "receiver"))
    ]
    return specs if sandboxed else [dataclasses.replace(spec, sandbox=False, network="host") for spec in specs]


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
def test_two_colluding_bots_decode_nothing_through_locks_or_change_notices(
    bots: Bots, tmp_path: Path, sandboxed: bool
) -> None:
    result = play("stop_the_bus", colluders(bots, sandboxed), seed=4, timing=ROOMY, bot_log_dir=tmp_path)
    assert result.faults == [Counter(), Counter()]
    sent = reports(tmp_path, "COLLUDE ", "seat0-sender.log")[-1]
    received = reports(tmp_path, "COLLUDE ", "seat1-receiver.log")[-1]
    assert sent["bits"] == MESSAGE
    for channel in ("flock", "fcntl", "inotify"):
        heard = received["heard"][channel]
        if sandboxed:  # every attempt refused: no bit at all, only the refusals' reasons
            assert set(heard) <= {"No locks available", "Operation not permitted"} and heard, (channel, heard)
        else:  # without the sandbox the channel carries the message: the bots and the test are not vacuous
            assert "1" in heard and "0" in heard, (channel, heard)


# ----- writes bounded and harmless ------------------------------------------------------------------------------


def fault_free(output: Path) -> bool:
    records = [json.loads(line) for line in (output / RESULTS_FILE).read_text().splitlines()]
    return bool(records) and all(not any(faults) for record in records for faults in record["faults"])


def planting_league(
    folder: Path, bots: Bots, name: str, planters: list[tuple[str, list[str]]], extra: str = ""
) -> Path:
    folder.mkdir(parents=True)
    entries = "".join(
        f"  - name: {bot}\n    command: {json.dumps(bots.command('plant.py', *args))}\n" for bot, args in planters
    )
    entries += f"  - name: random\n    command: {json.dumps(bots.command(SAMPLE_BOTS / 'random_bot.py'))}\n"
    (folder / "league.yaml").write_text(
        f"name: {name}\ngame: stop_the_bus\nseed: 8624913370264123917\ntable_size: 2\nconcurrency: 1\n"
        f"move_time_ms: 30000\nstartup_timeout_ms: 10000\n{extra}bots:\n{entries}"
    )
    return folder / "league.yaml"


@pytest.fixture
def memory_folder(tmp_path: Path) -> Path:
    """A folder in memory (/dev/shm) where the machine has one: planting a bot's hundred thousand files on this
    machine's disk would make the test slow, not the referee."""
    if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
        return tmp_path
    folder = Path(tempfile.mkdtemp(prefix="rt-", dir="/dev/shm"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_bots_planting_deep_trees_and_many_files_leave_the_league_and_the_next_intact(
    bots: Bots, tmp_path: Path, memory_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In its sandbox: 3,000 nested folders, 200,000 files, link loops and locked folders, in its socket folder
    # and /tmp; every game is played, and nothing of it is on the host to clean.
    planter = ["--nested", "3000", "--files", "200000", "--odd"]
    # It plants in the first of its two games (seat 0), and the second game is played after it, one at a time.
    league_file = planting_league(
        tmp_path / "first", bots, "planted", [("plant", [*planter, "--in-tmp", "--seat", "0"])]
    )
    summary = asyncio.run(run_league(load_league(league_file)))
    assert summary.played == 2 and summary.disabled == {} and summary.failed_logs == {}
    results = tmp_path / "first" / "results" / "planted"
    assert fault_free(results)
    records = [json.loads(line) for line in (results / RESULTS_FILE).read_text().splitlines()]
    assert [record["seats"].index("plant") for record in records] == [0, 1]  # the planting game first
    planted = reports(results / BOT_LOG_DIR, "PLANT ", "plant-*.log")
    assert sorted(report["folder"] for report in planted) == ["/run/referee", "/tmp"]  # one process, both places
    assert all(
        (report["nested"], report["files"], report["odd"], report["stopped"]) == (3000, 200000, True, None)
        for report in planted
    )
    assert list(bots.socket_root.iterdir()) == []  # nothing on the host's disk
    # The next league on the same TMPDIR (kept in memory here), without the sandbox: the planter's socket folder
    # is a host folder, which its stop removes off the event loop; the league plays (one game), and nothing is left.
    monkeypatch.setattr(tempfile, "tempdir", str(memory_folder))
    one_game = "sandbox: none\nformat: {type: sampled, games_per_bot: 1, rotations: 1}\n"
    league_file = planting_league(tmp_path / "next", bots, "next", [("plant", planter)], one_game)
    summary = asyncio.run(run_league(load_league(league_file)))
    assert summary.played == 1 and summary.disabled == {} and summary.failed_logs == {}
    assert fault_free(tmp_path / "next" / "results" / "next")
    planted = reports(tmp_path / "next" / "results" / "next" / BOT_LOG_DIR, "PLANT ", "plant-*.log")
    assert planted and all(
        report["folder"].startswith(str(memory_folder)) and report["files"] == 200000 for report in planted
    )
    assert list(memory_folder.iterdir()) == [] and list(bots.socket_root.iterdir()) == []


def test_removing_what_a_bot_left_never_fails_however_deep_or_odd(memory_folder: Path) -> None:
    # A killed referee's leftover folder, as a bot filled it: past the kernel's path length, link loops,
    # folders without permissions; the next referee's clean-up removes it all and never raises.
    left = memory_folder / "referee-0-1-2-x"
    left.mkdir()
    code = "import sys, plant; print(plant.plant(sys.argv[1], 3000, 2000, True))"
    done = subprocess.run(
        [PYTHON, "-c", code, str(left)], cwd=BAD_BOTS, capture_output=True, text=True, timeout=60, check=True
    )
    assert "'stopped': None" in done.stdout, done.stdout
    assert sandbox.remove_tree(left) and not left.exists()
    assert sandbox.remove_tree(memory_folder / "not-there")  # nothing to remove: done, no error


# ----- startup faults name what held the bot back ----------------------------------------------------------------

# Never listens: starts processes until the limit refuses them, and goes on trying.
FORK_BOMB = """
import os, time
while True:
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
    except OSError:
        time.sleep(0.01)
"""


def start_fault(spec: BotSpec, timing: Timing) -> BotFault:
    """The fault with which a bot fails to start (the test fails if it starts)."""

    async def start() -> BotFault:
        session = BotSession(spec)
        try:
            await session.start(GameSetup("stop_the_bus", 2, timing))
        except BotFault as fault:
            return fault
        finally:
            await session.stop()
        raise AssertionError("the bot started")

    return asyncio.run(start())


@pytest.mark.parametrize(
    ("command", "limits", "words"),
    [
        pytest.param(
            [PYTHON, "-c", FORK_BOMB],
            ResourceLimits(processes=16),
            [
                "did not listen on unix:/run/referee/bot.sock (its REFEREE_BOT_ADDRESS) within 3 s: process limit of 16 "
                "reached ("
            ],
            id="fork-bomb",
        ),
        pytest.param(
            ["hog.py", "--resource", "memory", "--at-start"],
            ResourceLimits(memory_mb=64),
            ["before listening", "memory limit of 64 MB exceeded"],
            id="memory-hog",
        ),
        pytest.param(
            ["not_grpc.py"],
            ResourceLimits(),
            ["listens on unix:/run/referee/bot.sock (its REFEREE_BOT_ADDRESS) but does not speak gRPC's HTTP/2"],
            id="listens-but-speaks-no-grpc",
        ),
    ],
)
def test_a_startup_fault_names_the_limit_that_held_the_bot_back_or_that_it_speaks_no_grpc(
    bots: Bots, command: list[str], limits: ResourceLimits, words: list[str]
) -> None:
    command = bots.command(*command) if command[0].endswith(".py") else [*command, bots.marker]
    spec = dataclasses.replace(bots.spec(command, "starter"), limits=limits)
    fault = start_fault(spec, Timing(move_time_ms=1000, startup_timeout_ms=3000))
    assert fault.kind is FaultKind.STARTUP
    for phrase in words:
        assert phrase in fault.detail, fault.detail


# ----- a start dies with the referee ------------------------------------------------------------------------------

# Stands in for bubblewrap: for a bot's sandbox, it first starts a child that nothing ties to the referee (as
# bubblewrap's own child is until it ties itself; it carries the bot's command, and so the test's marker),
# takes its time, then runs the real bubblewrap.
SLOW_BWRAP = """#!/bin/sh
if [ "$1" = --args ]; then
    sh -c "sleep 30" unarmed-child "$@" &
    sleep 1
fi
exec {bwrap} "$@"
"""


def test_a_referee_killed_while_a_bot_starts_takes_the_whole_start_along(bots: Bots, tmp_path: Path) -> None:
    fake = tmp_path / "slow-bwrap"
    fake.write_text(SLOW_BWRAP.format(bwrap=BWRAP.path))
    fake.chmod(0o755)
    random_bot = f"python {SAMPLE_BOTS / 'random_bot.py'} --marker {bots.marker}"
    referee = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "referee.cli",
            "play",
            "--game",
            "stop_the_bus",
            "--quiet",
            "--bot",
            random_bot,
            "--bot",
            random_bot,
        ],
        env={**bots.subprocess_env(), sandbox.BWRAP_VARIABLE: str(fake)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not any("unarmed-child" in line for line in bots.processes()):
            assert referee.poll() is None and time.monotonic() < deadline, "no bot began to start"
            time.sleep(0.02)
        referee.kill()
        referee.wait()
        bots.leaves_socket_dirs = True  # the killed `referee play`'s own folder of bot logs, which only it removes
        # The launcher dies by its parent-death signal, what it started by the watcher of the bots' cgroups.
        assert bots.leftovers(wait=5.0) == []
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()


# ----- what reaches the organiser's terminal -------------------------------------------------------------------

# A bot whose name and output try the organiser's terminal: the window's title, the clipboard (OSC 52), a
# cleared screen and a line overwritten with a fake verdict; then it crashes on its first decision.
ESCAPING_BOT = r"""
import os, sys
from referee.play.kit import run_bot
sys.stderr.write("\x1b]0;owned\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[H\rleague ok\u202e\n")
sys.stderr.flush()
run_bot(lambda observation: os._exit(3), name="\x1b[31mred\x1b[0m\r")
"""


def test_what_a_bot_says_reaches_the_organisers_terminal_printable(bots: Bots, tmp_path: Path) -> None:
    done = subprocess.run(
        [
            PYTHON,
            "-m",
            "referee.cli",
            "check-bot",
            "--game",
            "stop_the_bus",
            "--seats",
            "2",
            "--games",
            "1",
            "--logs",
            str(tmp_path / "logs"),
            "--",
            PYTHON,
            "-c",
            ESCAPING_BOT,
            bots.marker,
        ],
        env=bots.subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    shown = done.stdout + done.stderr
    assert done.returncode == 1, shown
    assert "handshake ok: \\x1b[31mred\\x1b[0m\\x0d" in shown  # its name, as escapes
    # Its output, as escapes (a carriage return ends a line there, so the fake verdict shows on a line of its own).
    assert "\\x1b]0;owned\\x07\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J\\x1b[H\n        league ok\\u202e\n" in shown
    assert "\x1b" not in shown and "\r" not in shown and "\u202e" not in shown and "\x07" not in shown


def test_a_run_removes_the_temporary_files_an_interrupted_run_left_in_its_output(tmp_path: Path) -> None:
    output = tmp_path / "out"
    stale = [output / ".league.json.k2x8_q0z.tmp", output / "games" / ".leaderboard.md.abcdefgh.tmp"]
    kept = [output / "league.json", output / "builds" / "bot" / ".cache.abcdefgh.tmp", output / ".notes.tmp"]
    for path in stale + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    with output_folder(output):  # as every run holds its output
        pass
    assert [path for path in stale if path.exists()] == [] and all(path.exists() for path in kept)


@pytest.mark.skipif(not AS_ROOT, reason="only a referee run as root gives each bot a user of its own")
def test_a_bot_whose_files_its_own_user_cannot_read_is_told_so_before_it_starts(bots: Bots, tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    shutil.copy(SAMPLE_BOTS / "random_bot.py", closed / "random_bot.py")
    spec = bots.spec([PYTHON, str(closed / "random_bot.py"), bots.marker], "closed")
    fault = start_fault(spec, ROOMY)
    assert fault.kind is FaultKind.STARTUP and f"which cannot read {closed} (mode 700)" in fault.detail, fault.detail


READS_ANOTHER_BOTS_FILE = """import importlib.util
spec = importlib.util.spec_from_file_location("theirs", {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
if not hasattr(module, "decide"):
    raise SystemExit("nothing to play with in " + {path!r})
"""


def test_a_bot_failing_on_another_bots_hidden_file_is_told_which_file_and_whose(bots: Bots, tmp_path: Path) -> None:
    """A bot that loads another bot's script fails, in its sandbox, on a masked file; the fault says which path its
    output named, that the league hides it, and whose it is."""
    from .test_league import write_league

    theirs = str(SAMPLE_BOTS / "random_bot.py")
    reader = tmp_path / "reader.py"
    reader.write_text(READS_ANOTHER_BOTS_FILE.format(path=theirs))
    entries = [("reader", bots.command(reader)), ("random", bots.command(theirs))]
    path = write_league(tmp_path / "league.yaml", bots, entries=entries, extra="max_restarts: 0")
    run = subprocess.run([PYTHON, "-m", "referee", "run", str(path), "--no-progress"], capture_output=True, text=True,
                         timeout=300, env=bots.subprocess_env())  # fmt: skip
    shown = run.stdout + run.stderr
    assert f"its output names {theirs}, which this league hides from it (random's own files)" in shown, shown
