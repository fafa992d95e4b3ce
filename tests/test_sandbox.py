"""The sandbox, with real bots under real bubblewrap: what a bot can reach, the limits, and the clean-up.

What docs/security.md promises, checked: a snooping bot (tests/bad_bots/snoop.py)
in a real league reaches none of the league's output, another submission's
files, other bots' sockets, the network, other processes or the referee's
files, and cannot write outside its scratch folder and /tmp; the same bot
without the sandbox reaches them (so the probes are not vacuous). Each limit
stops a bot that exceeds it, and the fault names it. A bot and everything it
starts die when it is stopped and when the referee is killed; what a killed
referee leaves (cgroups, socket folders) goes when the next one starts.
Where bubblewrap is missing, `referee run` refuses and says what to install.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import referee
from referee.apps.league import BOT_LOG_DIR, RESULTS_FILE, run_league
from referee.common.errors import LeagueError, RefereeError
from referee.leaguefile.config import load_league
from referee.play import sandbox
from referee.play.processes import PROCESS_GROUP, SANDBOXED, BotProcess, BotSpec, BotSpecError, ResourceLimits
from referee.play.session import BotSession
from referee.protocol.clock import Timing
from referee.protocol.setup import GameSetup
from referee.records.gamelog import log_files, log_text
from tests.bot_kits import NPM_ENV, built_copy
from tests.conftest import BAD_BOTS, PYTHON, ROOT, SAMPLE_BOTS, Bots, play, read_log

BWRAP = sandbox.bubblewrap()
pytestmark = pytest.mark.skipif(BWRAP.problem is not None, reason=f"no sandbox here: {BWRAP.problem}")
ENFORCED = sandbox.enforcement()
CGROUPS = sandbox.cgroup_support()

ROOMY = Timing(move_time_ms=5000, time_bank_ms=0, grace_ms=500, startup_timeout_ms=10_000)
# A hog uses up its limit on its first decision; the deadline is far beyond, even on a busy machine.
HOG_TIMING = Timing(move_time_ms=60_000, time_bank_ms=0, grace_ms=500, startup_timeout_ms=10_000)
EXTERNAL = "192.0.2.1:80"  # TEST-NET-1: never routed; only ever tried from inside a sandbox with no network

needs_cgroup = pytest.mark.skipif(CGROUPS.v2 is None and not CGROUPS.v1, reason="the referee can create no cgroup here")


def enforced_by_cgroup(key: str):
    how = ENFORCED[key]
    return pytest.mark.skipif(not how.startswith("cgroup"), reason=f"{key} is enforced by {how} here, not a cgroup")


def pid_of(line: str) -> int:
    return int(line.split()[1].rstrip(":"))


def bot_cgroups() -> list[Path]:
    """This referee's bots' cgroup folders (bot-N), in every hierarchy."""
    hierarchies = [CGROUPS.v2, *CGROUPS.v1.values()]
    return sorted({path for hierarchy in hierarchies if hierarchy for path in hierarchy.folder.glob("bot-*")})


# ----- what a bot can reach -------------------------------------------------------------------------


def copy_bot(folder: Path, scripts: list[Path], run: list[str]) -> Path:
    """A submission folder holding copies of ``scripts`` and a bot.yaml that runs ``run``."""
    folder.mkdir(parents=True)
    for script in scripts:
        shutil.copy(script, folder / script.name)
    (folder / "bot.yaml").write_text(f"name: {folder.name}\nversion: '1'\nrun: {json.dumps(run)}\n")
    return folder


def snoop_reports(log_dir: Path) -> list[dict]:
    """What the snoop reached, from each of its processes (one per lane, referee.leaguefile.lanes), the first first."""
    reports = []
    for log in sorted(log_dir.glob("snoop-*.log")):
        (line,) = [line for line in log.read_text().splitlines() if line.startswith("SNOOP ")]
        reports.append(json.loads(line.removeprefix("SNOOP ")))
    return reports


def run_snoop_league(bots: Bots, tmp_path: Path, *, sandboxed: bool) -> tuple[list[dict], dict[str, object]]:
    """A league of the snoop and another submission; return the snoop's reports and the targets it was given.

    The targets: the league's output, the other submission's files, the
    league file, the referee's own files, other bots' sockets (every one
    under the socket folder, and a listening decoy at a path given to it),
    a TCP listener of this test, this test's process, and places to write.
    """
    league_folder = tmp_path / ("sandboxed" if sandboxed else "unsandboxed")
    output = league_folder / "out"
    other = copy_bot(
        league_folder / "submissions" / "other",
        [SAMPLE_BOTS / "random_bot.py"],
        ["python", "random_bot.py", "--marker", bots.marker],
    )
    (other / "strategy.txt").write_text("always draw from the stock\n")
    decoy_folder = bots.socket_root / f"decoy-{sandboxed}"
    decoy_folder.mkdir()
    decoy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    decoy.bind(str(decoy_folder / "bot.sock"))
    decoy.listen()
    listener = socket.create_server(("127.0.0.1", 0))
    targets: dict[str, object] = {
        "output": str(output),
        "other": str(other),
        "secret": str(other / "strategy.txt"),
        "league": str(league_folder / "league.yaml"),
        "results": str(output / RESULTS_FILE),
        "marker": str(output / "league.json"),
        "readme": str(ROOT / "README.md"),
        "makefile": str(ROOT / "Makefile"),
        "shadow": "/etc/shadow",
        "socket_root": str(bots.socket_root),
        "decoy": str(decoy_folder / "bot.sock"),
        "tcp": f"127.0.0.1:{listener.getsockname()[1]}",
        "referee_pid": str(os.getpid()),
        "league_folder": str(league_folder),
    }
    snoop_folder = league_folder / "submissions" / "snoop"
    writes = [str(snoop_folder / "x"), str(output / "x"), str(league_folder / "x")]
    run = ["python", "snoop.py", "--marker", bots.marker]
    run += [f"--list={path}" for path in (targets["output"], targets["other"], targets["socket_root"], "/home")]
    readable = ("secret", "league", "results", "marker", "readme", "makefile", "shadow")
    run += [f"--read={targets[name]}" for name in readable]
    run += [f"--write={path}" for path in writes]
    run += [f"--unix={targets['decoy']}", f"--unix-glob={bots.socket_root}/*/bot.sock", "--unix-glob=/tmp/*/*.sock"]
    run += [f"--tcp={targets['tcp']}", f"--signal={targets['referee_pid']}"]
    if sandboxed:  # never tried with the host's network, nor on the host's own folders
        run += [f"--tcp={EXTERNAL}", "--write=/usr/local/x", "--write=/etc/x", "--write=/scratch/x", "--write=/tmp/x"]
    copy_bot(snoop_folder, [BAD_BOTS / "snoop.py", BAD_BOTS / "_common.py"], run)
    env = f"{{REFEREE_TEST_MARKER: {bots.marker}}}"
    (league_folder / "league.yaml").write_text(
        f"name: snoop\ngame: stop_the_bus\nseed: 5\ntable_size: 2\nmove_time_ms: {ROOMY.move_time_ms}\n"
        f"startup_timeout_ms: {ROOMY.startup_timeout_ms}\noutput: out\nconcurrency: 1\n"
        + ("" if sandboxed else "sandbox: none\n")
        + f"bots:\n  - path: submissions/snoop\n    env: {env}\n  - path: submissions/other\n    env: {env}\n"
    )
    try:
        summary = asyncio.run(run_league(load_league(league_folder / "league.yaml")))
    finally:
        decoy.close()
        listener.close()
        shutil.rmtree(decoy_folder)
    assert summary.played == 2 and summary.disabled == {}
    return snoop_reports(output / BOT_LOG_DIR), targets


def reached(report: dict) -> dict[tuple[str, str], bool]:
    return {(probe["probe"], probe["target"]): probe["reached"] for probe in report["probes"]}


def test_a_snooping_bot_in_its_sandbox_reaches_nothing_it_must_not(bots: Bots, tmp_path: Path) -> None:
    reports, targets = run_snoop_league(bots, tmp_path, sandboxed=True)
    assert len(reports) == 2  # a process for each of the table's two rotations: each must reach nothing
    for report in reports:
        check_sandboxed_snoop(report, targets)


def check_sandboxed_snoop(report: dict, targets: dict[str, object]) -> None:
    outcome = reached(report)
    details = {(probe["probe"], probe["target"]): probe["detail"] for probe in report["probes"]}
    # Nothing reached but writing to its own /tmp and /scratch (the league's folder, as it sees it, is in its /tmp).
    private = {("write", "/scratch/x"), ("write", "/tmp/x"), ("write", targets["league_folder"] + "/x")}
    # It runs from its built copy in the output (builds/snoop): of the output, only the way to that copy shows.
    private |= {("list", targets["output"]), ("write", targets["output"] + "/x")}  # that way is in its own /tmp too
    assert details[("list", targets["output"])] == "1 entries: ['builds']"
    assert {key for key, value in outcome.items() if value} <= private, details
    assert not (Path(targets["league_folder"]) / "x").exists()  # it wrote to its own /tmp, not the host's
    assert not (Path(targets["output"]) / "x").exists()
    # What it tried, each by name: the output, the other submission, the sockets, the network, the referee's files.
    for probe, target in [
        ("list", "output"),
        ("list", "other"),
        ("read", "secret"),
        ("read", "results"),
        ("read", "marker"),
        ("read", "league"),
        ("read", "readme"),
        ("read", "makefile"),
        ("read", "shadow"),
        ("list", "socket_root"),
        ("unix", "decoy"),
        ("tcp", "tcp"),
        ("signal", "referee_pid"),
    ]:
        assert (probe, targets[target]) in outcome, (probe, target)
    assert ("tcp", EXTERNAL) in outcome and ("write", "/usr/local/x") in outcome
    assert "No such file" in details[("unix", targets["decoy"])]
    assert not [target for probe, target in outcome if probe == "unix" and target != targets["decoy"]]  # no socket seen
    assert "No such process" in details[("signal", targets["referee_pid"])]
    # Its own view: its own processes only (the sandbox's init, itself), no capability, an empty scratch folder.
    assert max(report["processes"]) < 20 and report["pid"] in report["processes"]
    assert report["capabilities"] == "0000000000000000"
    assert report["scratch"] == []
    visible = set(report["root"])
    # Python bots get the referee's interpreter and package read-only: their top folder (wherever the checkout is) shows.
    referee_paths = [Path(path) for path in (sys.prefix, sys.base_prefix, referee.__file__)]
    referee_tops = {path.parts[1] for path in referee_paths + [path.resolve() for path in referee_paths]}
    assert (
        visible
        <= {
            "bin",
            "dev",
            "etc",
            "lib",
            "lib32",
            "lib64",
            "libx32",
            "proc",
            "root",
            "run",
            "sbin",
            "scratch",
            "tmp",
            "usr",
        }
        | referee_tops
    ), visible


def test_the_same_snooping_bot_without_the_sandbox_reaches_all_of_it(bots: Bots, tmp_path: Path) -> None:
    # The probes work: without the sandbox, the snoop reaches what the sandbox keeps from it.
    reports, targets = run_snoop_league(bots, tmp_path, sandboxed=False)
    report = reports[0]
    outcome = reached(report)
    for probe, target in [
        ("list", "output"),
        ("list", "other"),
        ("read", "secret"),
        ("read", "marker"),
        ("read", "league"),
        ("read", "readme"),
        ("list", "socket_root"),
        ("unix", "decoy"),
        ("tcp", "tcp"),
        ("signal", "referee_pid"),
    ]:
        assert outcome[(probe, targets[target])], (probe, target)
    assert outcome[("write", str(Path(targets["output"]) / "x"))] and (Path(targets["output"]) / "x").exists()
    own_socket = report["address"].removeprefix("unix:")
    others = (targets["decoy"], own_socket)
    # The other bot's socket, in the referee's socket folder (a stray socket of another program in /tmp is not its).
    other_sockets = [
        target
        for probe, target in outcome
        if probe == "unix" and target not in others and target.startswith(str(bots.socket_root))
    ]
    assert other_sockets and all(outcome[("unix", target)] for target in other_sockets)  # the other bot's
    if os.geteuid() == 0:
        assert outcome[("read", "/etc/shadow")]
    assert os.getpid() in report["processes"]


def test_a_bot_sees_its_own_folder_read_only_and_its_command_runs_there(bots: Bots, tmp_path: Path) -> None:
    script = (
        "import os, sys; from referee.play.kit import run_bot\n"
        "here = os.path.dirname(os.path.abspath(sys.argv[0]))\n"
        "print('sees', sorted(os.listdir(here)), 'writable', os.access(here, os.W_OK), 'home', os.environ['HOME'],\n"
        "      'address', os.environ['REFEREE_BOT_ADDRESS'], flush=True)\n"
        "run_bot(lambda obs: obs.legal_actions[0], name='looker')\n"
    )
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "looker.py").write_text(script)
    (folder / "data.txt").write_text("mine\n")
    (tmp_path / "not-mine.txt").write_text("someone else's\n")
    (tmp_path / "logs").mkdir()
    looker = bots.spec([PYTHON, str(folder / "looker.py"), bots.marker], "looker")
    result = play("stop_the_bus", [looker, bots.sample()], seed=3, timing=ROOMY, bot_log_dir=tmp_path / "logs")
    assert result.faults == [Counter(), Counter()]
    printed = (tmp_path / "logs" / "seat0-looker.log").read_text()
    assert "sees ['data.txt', 'looker.py'] writable False home /scratch address unix:/run/referee/bot.sock" in printed


# ----- limits -----------------------------------------------------------------------------------------


def play_hog(bots: Bots, tmp_path: Path, limits: ResourceLimits, *args: str) -> tuple[dict, str]:
    """Play a game with hog.py misbehaving on its first decision; return its fault record and its output."""
    hog = dataclasses.replace(bots.bad("hog.py", *args, "--at", "1", name="hog"), limits=limits)
    log_path = tmp_path / "game.jsonl"
    result = play(
        "stop_the_bus", [hog, bots.sample()], seed=3, timing=HOG_TIMING, log_path=log_path, bot_log_dir=tmp_path
    )
    assert result.faults == [Counter({"crash": 1}), Counter()]
    (fault,) = [record for record in read_log(log_path) if record["type"] == "fault"]
    output = (tmp_path / "seat0-hog.log").read_text()
    assert "the limit was not enforced" not in output
    return fault, output


@enforced_by_cgroup("memory_mb")
def test_a_bot_whose_processes_together_exceed_its_memory_limit_is_stopped_and_the_fault_says_so(
    bots: Bots, tmp_path: Path
) -> None:
    # Two children of 72 MiB each: each is under the 128 MB limit, together (with the bot's own tens of MB) they
    # are over it, and once the kernel kills one the rest is well under it (with 96 MiB, what was left stood so
    # near the limit that the kernel at times killed the second child too).
    fault, output = play_hog(
        bots, tmp_path, ResourceLimits(memory_mb=128), "--resource", "memory", "--children", "2", "--child-mb", "72"
    )
    assert "memory limit of 128 MB exceeded (the kernel killed 1 of its processes)" in fault["detail"]
    assert "a child was killed by SIGKILL" in output


@enforced_by_cgroup("memory_mb")
def test_a_bot_held_at_its_memory_limit_and_not_killed_is_said_to_have_reached_it(tmp_path: Path) -> None:
    # A file's written pages count against the limit, and the kernel takes them back there, killing nothing: as it
    # takes back a memory hog's code pages before it kills the hog (which may time out meanwhile, and is told why).
    cgroup = sandbox.BotCgroup(CGROUPS, ResourceLimits(memory_mb=64))
    try:
        for megabytes, hits in (
            (8, []),
            (160, [("memory_mb", "memory limit of 64 MB reached (the kernel reclaiming its memory there)")]),
        ):
            code = f"with open({str(tmp_path / 'file')!r}, 'wb') as out:\n    for _ in range({megabytes}): out.write(bytes(1 << 20))"
            subprocess.run(sandbox.launch_argv(cgroup.procs_files, [], [PYTHON, "-c", code]), check=True)
            assert cgroup.limits_hit() == hits, f"after writing {megabytes} MiB"
    finally:
        cgroup.kill()
        cgroup.remove()


@enforced_by_cgroup("processes")
def test_a_fork_bomb_is_stopped_at_the_process_limit_and_the_fault_says_so(bots: Bots, tmp_path: Path) -> None:
    fault, output = play_hog(bots, tmp_path, ResourceLimits(processes=32), "--resource", "processes")
    assert "process limit of 32 reached (" in fault["detail"] and "refused)" in fault["detail"]
    assert "Resource temporarily unavailable" in output


@enforced_by_cgroup("cpu_seconds")
def test_a_bot_whose_processes_together_use_up_its_cpu_time_is_stopped_and_the_fault_says_so(
    bots: Bots, tmp_path: Path
) -> None:
    # The bot and a child spin: their CPU time together reaches the limit, and the referee stops the bot.
    fault, _ = play_hog(bots, tmp_path, ResourceLimits(cpu_seconds=2), "--resource", "cpu", "--children", "1")
    assert fault["detail"].startswith(
        "process killed by signal SIGKILL: CPU time limit of 2 s exceeded (its processes used 2."
    )


def test_a_bot_over_its_open_file_limit_is_a_crash_that_names_the_limit(bots: Bots, tmp_path: Path) -> None:
    fault, output = play_hog(bots, tmp_path, ResourceLimits(open_files=32), "--resource", "files")
    assert fault["detail"].startswith("process exit code 1 (open-file limit 32)")
    assert "Too many open files" in output


FILL_AND_FLOOD = """
import os, sys
for folder in ("/scratch", "/tmp", "/dev/shm"):
    written = 0
    try:
        with open(os.path.join(folder, "fill"), "wb") as file:
            while written < 8 << 20:
                file.write(b"x" * 65536)
                file.flush()
                written += 65536
    except OSError as error:
        print(folder, written, error.strerror, flush=True)
    else:
        print(folder, written, "not full", flush=True)
sys.stdout.write("flood " * 600_000)
"""


def test_a_bots_output_and_writable_folders_are_capped_at_its_output_limit(bots: Bots, tmp_path: Path) -> None:
    spec = dataclasses.replace(
        bots.spec([PYTHON, "-c", FILL_AND_FLOOD, bots.marker], "filler"), limits=ResourceLimits(output_mb=1)
    )
    log_path = tmp_path / "filler.log"

    async def run_to_the_end() -> None:
        process = BotProcess(spec, log_path)  # the log cap is the bot's output limit
        await process.launch()
        try:
            assert await process.wait_exit(30)
        finally:
            await process.stop()

    asyncio.run(run_to_the_end())
    log = log_path.read_bytes()
    lines = log.decode().splitlines()
    for folder in ("/scratch", "/tmp", "/dev/shm"):
        (line,) = [line for line in lines if line.startswith(folder + " ")]
        _, written, why = line.split(" ", 2)
        assert int(written) <= 1 << 20 and why == "No space left on device", line
    assert log.endswith(b" more bytes discarded]\n")
    assert len(log) < (1 << 20) + 100 and f"log capped at {1 << 20} bytes".encode() in log


# ----- containment ------------------------------------------------------------------------------------


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
def test_stopping_a_bot_ends_everything_it_started_and_removes_its_cgroup(bots: Bots, sandboxed: bool) -> None:
    if not sandboxed and CGROUPS.v2 is None:
        pytest.skip("without the sandbox, a detached grandchild is found only through the bot's cgroup v2")
    before = bot_cgroups()

    async def start_and_stop() -> tuple[str | None, list[str], list[Path]]:
        spec = dataclasses.replace(
            bots.bad("fork.py", "--children", "sleeper,detached", "--clean-env"), sandbox=sandboxed
        )
        bot = BotSession(spec)
        await bot.start(GameSetup("stop_the_bus", 2, ROOMY))
        try:
            return bot.process.containment, bots.processes(), bot_cgroups()
        finally:
            await bot.stop()

    containment, running, cgroups = asyncio.run(start_and_stop())
    assert containment == (SANDBOXED if sandboxed else PROCESS_GROUP)
    assert any("bad-bot-detached" in line for line in running) and any("bad-bot-child" in line for line in running)
    assert bots.leftovers() == []
    assert len(cgroups) > len(before) or not (CGROUPS.v2 or CGROUPS.v1)
    assert bot_cgroups() == before  # removed at stop


def referee_cgroup(pid: int) -> Path:
    return CGROUPS.v2.folder.parent / f"referee-{sandbox._token_of(pid)}"


@needs_cgroup
def test_a_referee_killed_by_sigkill_takes_its_bots_along_and_the_next_referee_clears_what_it_left(
    bots: Bots, tmp_path: Path
) -> None:
    if CGROUPS.v2 is None:
        pytest.skip("this test finds the referee's cgroups in cgroup v2")
    recording = tmp_path / "hang.jsonl"
    hanging = bots.command("slow.py", "--at", "1", "--forever", "--record", str(recording))
    forking = bots.command("fork.py", "--children", "sleeper,detached")
    referee = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "referee.cli",
            "play",
            "--game",
            "stop_the_bus",
            "--seed",
            "3",
            "--quiet",
            "--move-time-ms",
            "60000",
            "--share",
            str(tmp_path),
            "--bot",
            shlex.join(forking),
            "--bot",
            shlex.join(hanging),
        ],
        env=bots.subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not (recording.exists() and len(recording.read_text().splitlines()) >= 2):
            assert referee.poll() is None and time.monotonic() < deadline, "the game never reached the hanging bot"
            time.sleep(0.05)
        running = bots.processes()
        assert any("bad-bot-detached" in line for line in running)
        folder = referee_cgroup(referee.pid)
        assert len(list(folder.glob("bot-*"))) == 2
        referee.kill()
        referee.wait()
        assert bots.leftovers(wait=10.0) == []  # every bot, child and detached grandchild died with it
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
    # A process killed by SIGKILL removes nothing: its cgroups stay, empty (its bots' sockets were in their sandboxes).
    assert folder.exists() and (folder / "cgroup.procs").read_text() == ""
    # The next referee to start removes them.
    done = subprocess.run(
        [
            PYTHON,
            "-m",
            "referee.cli",
            "play",
            "--game",
            "stop_the_bus",
            "--seed",
            "3",
            "--quiet",
            "--bot",
            shlex.join(bots.command(SAMPLE_BOTS / "random_bot.py")),
            "--bot",
            shlex.join(bots.command(SAMPLE_BOTS / "random_bot.py")),
        ],
        env=bots.subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not folder.exists()
    assert not any((hierarchy.folder.parent / folder.name).exists() for hierarchy in CGROUPS.v1.values())
    # What stays is the killed `referee play`'s own temporary folder of bot logs, which only it could remove.
    bots.leaves_socket_dirs = True
    left = [path.name for path in bots.socket_root.iterdir() if path.name.startswith("referee-")]
    assert [name for name in left if not name.startswith("referee-play-")] == []


# Runs a command in a mount namespace of its own where every cgroup hierarchy is read-only: a machine whose
# cgroups the referee cannot write (as for a referee that is not root).
REMOUNT_CGROUPS_READ_ONLY = (
    "for m in $(awk '$3 ~ /^cgroup/ {print $2}' /proc/mounts); do mount -o remount,bind,ro \"$m\" || exit 1; done; "
    'exec "$@"'
)
READ_ONLY_CGROUPS = ["unshare", "--mount", "--propagation", "private", "sh", "-c", REMOUNT_CGROUPS_READ_ONLY, "ro"]


@pytest.mark.skipif(os.geteuid() != 0, reason="making the cgroups read-only for one process needs root")
def test_where_no_cgroup_can_be_made_limits_fall_back_to_rlimits_and_the_run_says_so(
    bots: Bots, tmp_path: Path
) -> None:
    hog = bots.command("hog.py", "--resource", "memory", "--at", "1")
    random_bot = bots.command(SAMPLE_BOTS / "random_bot.py")
    league = tmp_path / "league.yaml"
    league.write_text(
        "name: rlimits\ngame: stop_the_bus\nseed: 1\ntable_size: 2\nmove_time_ms: 30000\nbots:\n"
        f"  - name: hog\n    command: {json.dumps(hog)}\n    limits: {{memory_mb: 256}}\n"
        f"  - name: random\n    command: {json.dumps(random_bot)}\n"
    )
    done = subprocess.run(
        [
            *READ_ONLY_CGROUPS,
            PYTHON,
            "-m",
            "referee.cli",
            "run",
            str(league),
            "--output",
            str(tmp_path / "out"),
            "--no-progress",
        ],
        env=bots.subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        f"sandbox: {BWRAP.version}; memory: rlimit; processes: not enforced; CPU time: rlimit; "
        "open files: rlimit; output: log cap, tmpfs size; clock: wall time only (no cgroup for the bots: "
    ) in done.stdout
    assert "Read-only file system" in done.stdout
    records = [json.loads(line) for line in (tmp_path / "out" / RESULTS_FILE).read_text().splitlines()]
    forfeits = [reason for record in records for reason in record["forfeits"].values()]
    assert forfeits == ["crash", "crash"]
    hog_log = "".join(path.read_text() for path in (tmp_path / "out" / BOT_LOG_DIR).glob("hog-*.log"))
    assert "MemoryError" in hog_log
    game_logs = "".join(log_text(path) for path in log_files(tmp_path / "out" / "games"))
    assert "process exit code 1 (memory limit 256 MB)" in game_logs


# ----- network ---------------------------------------------------------------------------------------


def test_network_host_lets_a_sandboxed_bot_reach_the_machines_network(bots: Bots, tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(10)
        recording = tmp_path / "probe.jsonl"
        probe = bots.bad(
            "net_probe.py", "--connect", f"127.0.0.1:{listener.getsockname()[1]}", "--record", str(recording)
        )
        probe = dataclasses.replace(probe, network="host")
        result = play("stop_the_bus", [probe, bots.sample()], seed=5, timing=ROOMY)
        connection, _ = listener.accept()
        with connection:
            assert connection.recv(100) == b"hello from a bot\n"
    assert result.faults == [Counter(), Counter()]
    outcome = [json.loads(line) for line in recording.read_text().splitlines() if "connect" in line]
    assert outcome[0]["outcome"] == "connected"


def test_tcp_needs_the_host_network() -> None:
    with pytest.raises(BotSpecError, match="transport 'tcp' needs network 'host'"):
        BotSpec(name="listener", command=("bot",), transport="tcp")
    BotSpec(name="listener", command=("bot",), transport="tcp", network="host")
    BotSpec(name="trusted", command=("bot",), transport="tcp", sandbox=False)


@pytest.mark.parametrize(
    "command, message",
    [
        ("", "a bot command cannot be empty; give the program and its arguments"),
        ('python "bot.py', "bot command 'python \"bot.py' cannot be split into words: No closing quotation"),
    ],
)
def test_a_command_that_is_no_command_is_a_referee_error(command: str, message: str) -> None:
    # A RefereeError, so the command line says it in one line rather than as an internal error.
    with pytest.raises(BotSpecError, match=re.escape(message)) as raised:
        BotSpec.from_command(command)
    assert isinstance(raised.value, RefereeError)


# ----- every sample bot in its sandbox ---------------------------------------------------------------


@pytest.mark.parametrize("bot", ["random", "heuristic", "node"])
def test_every_sample_bot_plays_in_its_sandbox(
    bots: Bots, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, bot: str
) -> None:
    if bot == "node" and (shutil.which("node") is None or shutil.which("npm") is None):
        pytest.skip("Node.js and npm are not installed: the Node.js sample bot cannot be built here")
    league = tmp_path / "league.yaml"
    entry = {
        "random": f"command: python {ROOT / 'sample_bots/python/random_bot.py'}",
        "heuristic": f"path: {ROOT / 'sample_bots/python'}",
        "node": f"path: {built_copy(tmp_path_factory, ROOT / 'sample_bots/node', tmp_path / 'node', ('node_modules',), {**os.environ, **NPM_ENV})}"
        if bot == "node"
        else "",
    }[bot]
    league.write_text(
        f"name: one\ngame: stop_the_bus\nseed: 1\ntable_size: 2\nbots:\n  - name: {bot}\n    {entry}\n"
        f"  - name: other\n    {entry}\n"
    )
    spec = dataclasses.replace(load_league(league).bot(bot).spec, env={"REFEREE_TEST_MARKER": bots.marker})
    assert spec.sandbox and spec.network == "none"  # as a league runs it: in its sandbox, with no network
    result = play("stop_the_bus", [spec, bots.sample()], seed=2, timing=ROOMY, bot_log_dir=tmp_path)
    log = (tmp_path / f"seat0-{bot}.log").read_text()
    assert result.faults == [Counter(), Counter()] and result.forfeits == {}, log
    assert result.decisions > 0


# ----- the clock's figures -------------------------------------------------------------------------

SPIN_TWICE = """
import subprocess, sys, time
spin = "import time\\nwhile time.process_time() < 0.3: pass"
child = subprocess.Popen([sys.executable, "-c", spin])
while time.process_time() < 0.3:
    pass
child.wait()
"""


@needs_cgroup
def test_usage_is_the_cpu_time_of_the_bots_whole_process_tree(bots: Bots) -> None:
    async def run() -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        process = BotProcess(bots.spec([PYTHON, "-c", SPIN_TWICE, bots.marker], "spinner"))
        await process.launch()
        try:
            first = process.usage()
            assert await process.wait_exit(60)
            return first, process.usage()  # its cgroup still counts until it is stopped
        finally:
            await process.stop()

    first, last = asyncio.run(run())
    assert first is not None and last is not None
    cpu_us, stall_us = last
    assert 600_000 <= cpu_us - first[0] < 5_000_000  # the bot's 0.3 s and its child's 0.3 s, and start-up
    assert stall_us >= first[1] >= 0


def test_the_machine_summary_says_how_each_limit_is_enforced() -> None:
    summary = sandbox.machine_summary()
    assert summary.startswith(f"sandbox: {BWRAP.version}; memory: ")
    for words in ("; processes: ", "; CPU time: ", "; open files: rlimit", "; output: log cap", "; clock: "):
        assert words in summary
    off = sandbox.machine_summary(sandboxed=False)
    assert off.startswith("sandbox: none (turned off); ") and "output: log cap, rlimit (file size)" in off


# ----- no bubblewrap, or no sandbox ------------------------------------------------------------------


def two_bot_league(tmp_path: Path, bots: Bots, extra: str = "") -> Path:
    random_bot = bots.command(SAMPLE_BOTS / "random_bot.py")
    league = tmp_path / "league.yaml"
    league.write_text(
        f"name: plain\ngame: stop_the_bus\nseed: 1\ntable_size: 2\nmove_time_ms: 2000\n{extra}bots:\n"
        + "".join(f"  - name: {name}\n    command: {json.dumps(random_bot)}\n" for name in ("one", "two"))
    )
    return league


def run_cli(bots: Bots, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "referee.cli", *args],
        env={**bots.subprocess_env(), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_without_bubblewrap_referee_run_refuses_to_start_bots_and_says_what_to_install(
    bots: Bots, tmp_path: Path
) -> None:
    league = two_bot_league(tmp_path, bots)
    done = run_cli(
        bots,
        "run",
        str(league),
        "--output",
        str(tmp_path / "out"),
        "--no-progress",
        REFEREE_BWRAP=str(tmp_path / "no-such-bwrap"),
    )
    assert done.returncode == 1
    assert "referee run: bubblewrap, which every bot runs in, is not installed" in done.stderr
    assert "install it with `apt-get install bubblewrap`" in done.stderr
    assert "sandbox: none in the league file (or --no-sandbox)" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()
    played = run_cli(
        bots,
        "play",
        "--game",
        "stop_the_bus",
        "--bot",
        "python bot.py",
        "--bot",
        "python bot.py",
        REFEREE_BWRAP=str(tmp_path / "no-such-bwrap"),
    )
    assert played.returncode == 1 and "apt-get install bubblewrap" in played.stderr and "--no-sandbox" in played.stderr


def test_a_league_with_sandbox_none_runs_without_bubblewrap_and_warns(bots: Bots, tmp_path: Path) -> None:
    league = two_bot_league(tmp_path, bots, "sandbox: none\n")
    done = run_cli(
        bots,
        "run",
        str(league),
        "--output",
        str(tmp_path / "out"),
        "--no-progress",
        REFEREE_BWRAP=str(tmp_path / "no-such-bwrap"),
    )
    assert done.returncode == 0, done.stderr
    assert "warning: the sandbox is off (sandbox: none): every bot runs as you" in done.stderr
    assert "sandbox: none (turned off); memory: " in done.stdout
    records = [json.loads(line) for line in (tmp_path / "out" / RESULTS_FILE).read_text().splitlines()]
    assert len(records) == 2 and all(record["faults"] == [{}, {}] for record in records)


def test_referee_run_prints_how_bots_are_contained_and_no_sandbox_warns(bots: Bots, tmp_path: Path) -> None:
    league = two_bot_league(tmp_path, bots)
    done = run_cli(bots, "run", str(league), "--output", str(tmp_path / "out"), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert sandbox.machine_summary() in done.stdout and "warning" not in done.stderr
    again = run_cli(bots, "run", str(league), "--output", str(tmp_path / "again"), "--no-progress", "--no-sandbox")
    assert again.returncode == 0, again.stderr
    assert "warning: the sandbox is off (--no-sandbox)" in again.stderr


def test_a_league_whose_results_lie_inside_its_bots_folder_plays_and_hides_them(bots: Bots, tmp_path: Path) -> None:
    # The usual layout: the league file's folder holds the bots (their cwd) and, by default, the results
    # (results/NAME, with its logs/ and games/): masks nested in a folder the bots see must all be made.
    league = two_bot_league(tmp_path, bots, "rounds: 2\n")
    done = run_cli(bots, "run", str(league), "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    records = [json.loads(line) for line in (tmp_path / "results" / "plain" / RESULTS_FILE).read_text().splitlines()]
    assert len(records) == 4 and all(record["faults"] == [{}, {}] and "void" not in record for record in records)


def test_python_in_a_play_command_is_the_referees_python_which_its_sandbox_shows(bots: Bots) -> None:
    # A `python` on PATH may be a launcher (pyenv's shims) that needs the home folder no sandbox shows.
    random_bot = f"python {SAMPLE_BOTS / 'random_bot.py'} --marker {bots.marker}"
    done = run_cli(bots, "play", "--game", "stop_the_bus", "--quiet", "--bot", random_bot, "--bot", random_bot)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "faults" not in done.stdout and "decisions" in done.stdout


# ----- the league file's keys ----------------------------------------------------------------------


def league_text(extra: str = "", bot_extra: str = "") -> str:
    return (
        f"name: keys\ngame: stop_the_bus\nseed: 1\ntable_size: 2\n{extra}bots:\n"
        f"  - name: alice\n    command: python alice.py\n{bot_extra}  - name: bob\n    command: python bob.py\n"
    )


def load_text(tmp_path: Path, text: str):
    path = tmp_path / "league.yaml"
    path.write_text(text)
    for script in ("alice.py", "bob.py"):  # the scripts the bots run (a missing one is refused at load)
        (tmp_path / script).touch()
    return load_league(path)


def load_problem(tmp_path: Path, text: str) -> str:
    with pytest.raises(LeagueError) as raised:
        load_text(tmp_path, text)
    return str(raised.value)


def test_by_default_every_bot_is_sandboxed_with_no_network_and_the_default_limits(tmp_path: Path) -> None:
    league = load_text(tmp_path, league_text())
    assert league.sandbox and league.network == "none" and league.limits == ResourceLimits()
    alice = league.bot("alice").spec
    assert alice.sandbox and alice.network == "none" and alice.limits == sandbox.DEFAULT_LIMITS
    assert str(league.output) in alice.hidden  # the league's output is masked wherever alice could see it


def test_league_limits_apply_to_every_bot_and_a_bots_own_override_them_key_by_key(tmp_path: Path) -> None:
    league = load_text(
        tmp_path,
        league_text("limits: {memory_mb: 512, cpu_seconds: 60}\n", "    limits: {memory_mb: 256, open_files: none}\n"),
    )
    assert league.bot("bob").spec.limits == ResourceLimits(memory_mb=512, cpu_seconds=60)
    assert league.bot("alice").spec.limits == ResourceLimits(memory_mb=256, cpu_seconds=60, open_files=None)
    problem = load_problem(tmp_path, league_text("limits: {memory: 5}\n"))
    assert 'limits.memory: unknown key; did you mean "memory_mb"?' in problem


def test_sandbox_none_gives_the_host_network_and_refuses_network_none(tmp_path: Path) -> None:
    league = load_text(tmp_path, league_text("sandbox: none\n"))
    assert not league.sandbox and league.network == "host"
    assert not any(bot.spec.sandbox for bot in league.bots)
    problem = load_problem(tmp_path, league_text("sandbox: none\nnetwork: none\n"))
    assert "network: none needs the sandbox, which sandbox: none turns off" in problem
    assert "allowed: bubblewrap, none" in load_problem(tmp_path, league_text("sandbox: off\n"))


def test_transport_tcp_without_the_host_network_is_refused_with_what_to_do(tmp_path: Path) -> None:
    problem = load_problem(tmp_path, league_text("transport: tcp\n"))
    assert problem.endswith(
        ":5: transport: tcp needs network: host (a bot in its sandbox has no network by default, so the referee "
        "could not reach it over TCP); add network: host, or use transport: unix"
    )
    assert load_text(tmp_path, league_text("transport: tcp\nnetwork: host\n")).bot("alice").spec.network == "host"


def test_a_shared_folder_is_shared_with_its_bot_and_hidden_from_the_others(tmp_path: Path) -> None:
    (tmp_path / "alice-data").mkdir()
    league = load_text(tmp_path, league_text("", "    shared: [alice-data]\n"))
    assert league.bot("alice").spec.shared == (str(tmp_path / "alice-data"),)
    assert str(tmp_path / "alice-data") in league.bot("bob").spec.hidden
    problem = load_problem(tmp_path, league_text("", "    shared: [nowhere]\n"))
    assert 'bots[0].shared[0]: "nowhere" is not a folder' in problem


def test_a_submission_sees_only_its_own_folder(tmp_path: Path) -> None:
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "bot.yaml").write_text("name: sub\nversion: '1'\nrun: python bot.py /etc/passwd\n")
    (folder / "bot.py").touch()
    league = load_text(
        tmp_path, league_text().replace("  - name: bob\n    command: python bob.py\n", "  - path: sub\n")
    )
    spec = league.bot("sub").spec
    assert spec.folders == (str(folder),)
    plan = sandbox.plan_sandbox(spec.command, spec.cwd, own_folders=spec.folders)
    # Its run command's arguments are the author's: they show it nothing (but the referee's Python runs it).
    assert plan.read_only[0] == str(folder) and "/etc" not in plan.read_only
    assert str(tmp_path) not in plan.read_only
