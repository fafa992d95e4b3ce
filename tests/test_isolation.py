"""Bot isolation and resource limits, with real bot processes: private sockets, containment, network, limits.

What docs/security.md promises, checked: each bot gets a private socket
directory of its own; everything a bot starts (children, and grandchildren
that left its process group and session with ``setsid``) ends when the bot
is stopped or the referee dies, in a PID namespace and, where the machine
refuses namespaces, by the process group and the bot's address; a bot
with network isolation serves over its Unix socket but reaches no network;
memory, CPU time and open-file limits are enforced, and the fault names the
limit. "Where the machine refuses" is made real with a user namespace that
may create no namespaces and holds no capabilities (``LOCKED_DOWN``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shlex
import socket
import stat
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from referee import bots as bots_module
from referee.bots import (
    PID_NAMESPACE,
    PROCESS_GROUP,
    BotSpec,
    ResourceLimits,
    namespace_support,
)
from referee.session import BotSession, GameSetup, Timing
from referee.faults import BotFault, FaultKind
from tests.conftest import BAD_BOTS, FAST, PYTHON, SAMPLE_BOTS, Bots, play, read_log, read_recording

ROOMY = Timing(move_time_ms=2000, time_bank_ms=0, grace_ms=500, startup_timeout_ms=5000)
# A hog uses up its limit on its first decision; the deadline is far beyond, even for a second of CPU time.
HOG_TIMING = Timing(move_time_ms=30_000, time_bank_ms=0, grace_ms=500, startup_timeout_ms=10_000)
SETUP = GameSetup("stop_the_bus", 2, ROOMY)

NAMESPACES = namespace_support()
needs_pid_namespace = pytest.mark.skipif(
    NAMESPACES["pid"] is not None, reason=f"this machine allows no PID namespace: {NAMESPACES['pid']}"
)
needs_net_namespace = pytest.mark.skipif(
    NAMESPACES["net"] is not None, reason=f"this machine allows no network namespace: {NAMESPACES['net']}"
)

# Runs a command as root of a new user namespace that may create no further namespaces and holds no
# capabilities: a machine where unshare is refused, as for an unprivileged user without user namespaces.
LOCKED_DOWN = [
    "unshare", "--user", "--map-root-user", "sh", "-c",
    'echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --inh-caps=-all --bounding-set=-all -- "$@"',
    "locked-down",
]  # fmt: skip


def _locked_down_works() -> str | None:
    """None when LOCKED_DOWN runs here and refuses namespaces inside; otherwise why it cannot be used."""
    try:
        probe = subprocess.run(
            [*LOCKED_DOWN, "unshare", "--net", "true"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError as error:
        return str(error)
    if "Operation not permitted" not in probe.stderr:
        return f"a locked-down user namespace cannot be made here ({probe.stderr.strip() or probe.returncode})"
    return None


LOCKED_DOWN_PROBLEM = _locked_down_works()
needs_locked_down = pytest.mark.skipif(LOCKED_DOWN_PROBLEM is not None, reason=str(LOCKED_DOWN_PROBLEM))


def without_namespaces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process's referee behave as on a machine that refuses namespaces."""
    monkeypatch.setattr(bots_module, "_unshare_prefix", lambda namespaces: (None, "refused for this test"))


def session_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])


def pid_namespace_of(pid: int | str) -> str:
    return os.readlink(f"/proc/{pid}/ns/pid")


def pid_of(line: str) -> int:
    return int(line.split()[1].rstrip(":"))


# ----- private socket directories --------------------------------------------------------------


def test_each_bot_has_a_private_directory_of_its_own_holding_only_its_socket(bots: Bots, tmp_path: Path) -> None:
    recordings = [tmp_path / f"recorder-{index}.jsonl" for index in range(3)]

    async def inspect_running_bots() -> list[tuple[str, Path, int, int, list[str]]]:
        started = [BotSession(bots.bad("recorder.py", "--record", str(path), name=path.stem)) for path in recordings]
        await asyncio.gather(*(bot.start(SETUP) for bot in started))
        try:
            seen = []
            for bot in started:
                directory = Path(bot.process.address.removeprefix("unix:")).parent
                info = directory.stat()
                seen.append((bot.process.address, directory, stat.S_IMODE(info.st_mode), info.st_uid, os.listdir(directory)))
            return seen
        finally:
            await asyncio.gather(*(bot.stop() for bot in started))

    seen = asyncio.run(inspect_running_bots())
    directories = [directory for _, directory, _, _, _ in seen]
    assert len(set(directories)) == 3  # one directory per bot process
    for (address, directory, mode, owner, contents), recording in zip(seen, recordings, strict=True):
        assert mode == 0o700 and owner == os.getuid()  # only the referee's user may enter
        assert contents == ["bot.sock"]
        assert directory.parent == bots.socket_root
        assert not directory.exists()  # stop() removed it
        start, _ = read_recording(recording)
        assert start["address"] == address and start["dir_mode"] == "700"  # each bot was given its own


# ----- containment: children and detached grandchildren ---------------------------------------


def run_forking_bot(bots: Bots, *extra: str) -> tuple[str | None, list[tuple[int, str]]]:
    """Start fork.py (a sleeping child and a detached grandchild), then stop it.

    Returns the bot's containment and the processes that ran before the stop, with their session ids.
    """

    async def start_and_stop() -> tuple[str | None, list[tuple[int, str]]]:
        bot = BotSession(bots.bad("fork.py", "--children", "sleeper,detached", *extra))
        await bot.start(SETUP)
        try:
            # fork.py starts both before it listens: they run by now.
            return bot.process.containment, [(session_of(pid_of(line)), line) for line in bots.processes()]
        finally:
            await bot.stop()

    return asyncio.run(start_and_stop())


def assert_a_detached_grandchild_ran(running: list[tuple[int, str]]) -> None:
    detached = [session for session, line in running if "bad-bot-detached" in line]
    bot = [session for session, line in running if line.split()[2:4] == [PYTHON, str(BAD_BOTS / "fork.py")]]
    assert len(detached) == 1 and len(bot) == 1, running
    assert detached != bot  # it left the bot's session, so its process group too
    assert any("bad-bot-child" in line for _, line in running)


@needs_pid_namespace
@pytest.mark.parametrize("clean_env", [False, True], ids=["detached", "detached-with-no-environment"])
def test_in_a_pid_namespace_stopping_a_bot_ends_everything_it_started(bots: Bots, clean_env: bool) -> None:
    containment, running = run_forking_bot(bots, *(["--clean-env"] if clean_env else []))
    assert containment == PID_NAMESPACE
    assert_a_detached_grandchild_ran(running)
    assert bots.leftovers() == []


@needs_pid_namespace
def test_a_bot_in_a_pid_namespace_sees_only_its_own_processes(bots: Bots, tmp_path: Path) -> None:
    script = (
        "import os; from referee.botkit import run_bot\n"
        "pids = sorted(int(entry) for entry in os.listdir('/proc') if entry.isdigit())\n"
        "print('pid', os.getpid(), 'self', os.readlink('/proc/self'), 'processes', pids, flush=True)\n"
        "run_bot(lambda obs: obs.legal_actions[0], name='looker')\n"
    )
    looker = bots.spec([PYTHON, "-c", script, bots.marker], "looker")
    result = play("stop_the_bus", [looker, bots.sample()], seed=3, timing=FAST, bot_log_dir=tmp_path)
    assert result.faults == [Counter(), Counter()]
    # Its supervising shell is pid 1, the bot pid 2; its /proc agrees and shows nothing of the machine's.
    assert "pid 2 self 2 processes [1, 2]" in (tmp_path / "seat0-looker.log").read_text()


def test_without_namespaces_stopping_a_bot_finds_its_detached_grandchild_by_its_address(
    bots: Bots, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_namespaces(monkeypatch)
    containment, running = run_forking_bot(bots)
    assert containment == PROCESS_GROUP
    assert_a_detached_grandchild_ran(running)
    assert bots.leftovers() == []


def referee_with_a_forking_bot(bots: Bots, tmp_path: Path, prefix: list[str]) -> subprocess.Popen:
    """Start ``referee play`` (under ``prefix``) with fork.py and a bot that hangs; return once the game hangs."""
    recording = tmp_path / "hang.jsonl"
    hanging = bots.command("slow.py", "--at", "1", "--forever", "--record", str(recording))
    forking = bots.command("fork.py", "--children", "sleeper,detached")
    referee = subprocess.Popen(
        [*prefix, PYTHON, "-m", "referee.cli", "play", "--game", "stop_the_bus", "--seed", "3", "--quiet",
         "--move-time-ms", "60000", "--bot", shlex.join(forking), "--bot", shlex.join(hanging)],
        env=bots.subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while not (recording.exists() and len(recording.read_text().splitlines()) >= 2):
        if referee.poll() is not None or time.monotonic() > deadline:
            referee.kill()
            raise AssertionError(f"the game never reached the hanging bot: {referee.communicate()[1].decode()}")
        time.sleep(0.05)
    return referee


@pytest.mark.parametrize(
    "machine",
    [pytest.param("namespaces", marks=needs_pid_namespace), pytest.param("locked-down", marks=needs_locked_down)],
)
def test_a_referee_killed_by_sigkill_leaves_no_detached_grandchild(bots: Bots, tmp_path: Path, machine: str) -> None:
    referee = referee_with_a_forking_bot(bots, tmp_path, LOCKED_DOWN if machine == "locked-down" else [])
    try:
        running = bots.processes()
        assert_a_detached_grandchild_ran([(session_of(pid_of(line)), line) for line in running])
        (bot,) = [pid_of(line) for line in running if line.split()[2:4] == [PYTHON, str(BAD_BOTS / "fork.py")]]
        in_own_namespace = pid_namespace_of(bot) != pid_namespace_of("self")
        assert in_own_namespace == (machine == "namespaces")  # the locked-down referee fell back to process groups
        referee.kill()
        referee.wait()
        assert bots.leftovers(wait=10.0) == []
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
    # The supervising shells also removed the private socket directories (the fixture checks that none remains).


@needs_locked_down
def test_a_league_where_namespaces_are_refused_says_so_and_plays_on(bots: Bots, tmp_path: Path) -> None:
    random_bot = bots.command(SAMPLE_BOTS / "random_bot.py")
    league = tmp_path / "league.yaml"
    league.write_text(
        "name: locked\ngame: stop_the_bus\nseed: 1\ntable_size: 2\nmove_time_ms: 2000\nbots:\n"
        + "".join(f"  - name: {name}\n    command: {json.dumps(random_bot)}\n" for name in ("one", "two"))
    )
    done = subprocess.run(
        [*LOCKED_DOWN, PYTHON, "-m", "referee.cli", "run", str(league), "--output", str(tmp_path / "out"),
         "--no-progress"],
        env=bots.subprocess_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "note: this machine allows no PID namespace (unshare --pid --mount-proc --fork true: " in done.stderr
    assert "can outlive it (see docs/security.md)" in done.stderr
    records = [json.loads(line) for line in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(record["faults"] == [{}, {}] for record in records)


# ----- network isolation ------------------------------------------------------------------------


def play_net_probe(bots: Bots, tmp_path: Path, isolate: bool) -> tuple[dict, list[str], Counter]:
    """Play a game with net_probe.py, which tries to reach a port this test listens on as it starts.

    Returns what the probe recorded, what the listener received, and the probe's faults.
    """
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(0.2)
        port = listener.getsockname()[1]
        recording = tmp_path / f"probe-{isolate}.jsonl"
        probe = bots.bad("net_probe.py", "--connect", f"127.0.0.1:{port}", "--record", str(recording))
        probe = dataclasses.replace(probe, isolate_network=isolate)
        result = play("stop_the_bus", [probe, bots.sample()], seed=5, timing=FAST, log_path=tmp_path / "game.jsonl")
        received = []
        try:
            connection, _ = listener.accept()
            with connection:
                received.append(connection.recv(100).decode())
        except TimeoutError:
            pass
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    (outcome,) = [line for line in lines if "connect" in line]
    return outcome, received, result.faults[0]


@needs_net_namespace
def test_a_bot_with_network_isolation_plays_over_its_socket_but_reaches_no_network(
    bots: Bots, tmp_path: Path
) -> None:
    outcome, received, faults = play_net_probe(bots, tmp_path, isolate=True)
    assert faults == Counter()  # it played the whole game over its Unix socket
    assert outcome["outcome"] != "connected" and "unreachable" in outcome["outcome"]
    assert received == []
    assert any(record["type"] == "decision" and record["seat"] == 0 for record in read_log(tmp_path / "game.jsonl"))
    # The same bot without isolation reaches the port: the check above is not vacuous.
    outcome, received, faults = play_net_probe(bots, tmp_path, isolate=False)
    assert outcome["outcome"] == "connected" and received == ["hello from a bot\n"]


ISOLATION_REFUSED = """
import asyncio, sys
from referee.bots import BotSpec, namespace_support
from referee.session import BotSession, GameSetup, Timing
from referee.faults import BotFault
print("support:", namespace_support())
spec = BotSpec.from_command(sys.argv[1:], name="isolated", isolate_network=True)
async def main():
    bot = BotSession(spec)
    try:
        await bot.start(GameSetup("stop_the_bus", 2, Timing(startup_timeout_ms=5000)))
    except BotFault as fault:
        print("fault:", fault.kind.value, fault.detail)
    else:
        print("started:", bot.process.containment)
    finally:
        await bot.stop()
asyncio.run(main())
"""


def test_where_the_machine_refuses_network_isolation_the_startup_fault_says_so(bots: Bots) -> None:
    if NAMESPACES["net"] is not None:  # this machine refuses: the referee here says so
        bot = BotSession(dataclasses.replace(bots.sample(), isolate_network=True))
        with pytest.raises(BotFault) as raised:
            asyncio.run(bot.start(SETUP))
        assert raised.value.kind is FaultKind.STARTUP
        printed = f"fault: startup {raised.value.detail}"
    else:  # this machine allows it: ask a locked-down referee
        if LOCKED_DOWN_PROBLEM is not None:
            pytest.skip(LOCKED_DOWN_PROBLEM)
        done = subprocess.run(
            [*LOCKED_DOWN, PYTHON, "-c", ISOLATION_REFUSED, *bots.command(SAMPLE_BOTS / "random_bot.py")],
            env=bots.subprocess_env(), capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        printed = done.stdout
        assert "'net': 'unshare --net --fork true: unshare: unshare failed: Operation not permitted" in printed
    assert "fault: startup network isolation (isolate_network) needs `unshare --net`" in printed
    assert "which this machine does not allow" in printed and "Operation not permitted" in printed
    assert "turn network isolation off" in printed


def test_network_isolation_needs_a_bot_the_referee_starts_on_a_unix_socket() -> None:
    with pytest.raises(ValueError, match="transport 'tcp' cannot reach it"):
        BotSpec(name="isolated", command=("bot",), transport="tcp", isolate_network=True)
    with pytest.raises(ValueError, match="applies only to a bot the referee starts"):
        BotSpec(name="remote", address="127.0.0.1:5000", isolate_network=True)


# ----- resource limits ----------------------------------------------------------------------------

LIMITED = [
    # (resource, limits, the fault's detail)
    pytest.param("memory", ResourceLimits(memory_mb=256), "process exit code 1 (memory limit 256 MB)", id="memory"),
    pytest.param("cpu", ResourceLimits(cpu_seconds=1),
                 "process killed by signal SIGXCPU: CPU time limit of 1 s exceeded", id="cpu-time"),
    pytest.param("files", ResourceLimits(open_files=32), "process exit code 1 (open-file limit 32)", id="open-files"),
]  # fmt: skip


@pytest.mark.parametrize(("resource", "limits", "detail"), LIMITED)
def test_a_bot_over_its_limit_is_a_crash_that_names_the_limit(
    bots: Bots, tmp_path: Path, resource: str, limits: ResourceLimits, detail: str
) -> None:
    hog = bots.bad("hog.py", "--resource", resource, "--at", "2", name="hog")
    hog = dataclasses.replace(hog, limits=limits)
    log_path = tmp_path / "game.jsonl"
    result = play("stop_the_bus", [hog, bots.sample()], seed=3, timing=HOG_TIMING, log_path=log_path,
                  bot_log_dir=tmp_path)  # fmt: skip

    assert result.faults == [Counter({"crash": 1}), Counter()]
    (fault,) = [record for record in read_log(log_path) if record["type"] == "fault"]
    assert fault["detail"].startswith(detail)
    assert result.forfeits[0].startswith(f"crash: {detail}")
    assert len([record for record in read_log(log_path) if record["type"] == "decision" and record["seat"] == 0]) == 1
    output = (tmp_path / "seat0-hog.log").read_text()
    assert {"memory": "MemoryError", "cpu": "", "files": "Too many open files"}[resource] in output


def test_a_bot_over_its_memory_limit_before_it_listens_is_a_startup_fault_that_names_the_limit(
    bots: Bots, tmp_path: Path
) -> None:
    hog = bots.bad("hog.py", "--resource", "memory", "--at-start", name="hog")
    hog = dataclasses.replace(hog, limits=ResourceLimits(memory_mb=256, open_files=64))
    result = play("stop_the_bus", [hog, bots.sample()], seed=3, timing=HOG_TIMING, log_path=tmp_path / "game.jsonl")
    assert result.faults[0] == Counter({"startup": 1})
    assert result.forfeits[0].startswith(
        "startup: exited with exit code 1 (memory limit 256 MB, open-file limit 64) before listening on unix:"
    )


def test_a_bot_over_its_cpu_limit_before_it_listens_is_a_startup_fault_that_names_the_limit(
    bots: Bots, tmp_path: Path
) -> None:
    hog = bots.bad("hog.py", "--resource", "cpu", "--at-start", name="hog")
    hog = dataclasses.replace(hog, limits=ResourceLimits(cpu_seconds=1))
    result = play("stop_the_bus", [hog, bots.sample()], seed=3, timing=HOG_TIMING, log_path=tmp_path / "game.jsonl")
    assert result.forfeits[0].startswith(
        "startup: was killed by signal SIGXCPU (CPU time limit of 1 s exceeded) before listening on unix:"
    )


def test_the_hog_refuses_to_run_without_a_limit(bots: Bots, tmp_path: Path) -> None:
    # So that a test without a limit cannot take the machine down: the hog exits before using anything.
    hog = bots.bad("hog.py", "--resource", "memory", "--at", "1", name="hog")
    result = play("stop_the_bus", [hog, bots.sample()], seed=3, timing=HOG_TIMING, log_path=tmp_path / "game.jsonl",
                  bot_log_dir=tmp_path)  # fmt: skip
    assert result.forfeits[0].startswith("startup: exited with exit code 2 before listening")
    assert "refusing to run: the memory (address space) limit is unlimited" in (tmp_path / "seat0-hog.log").read_text()


def test_limits_are_in_force_in_the_bot_and_a_bot_within_them_plays_normally(bots: Bots, tmp_path: Path) -> None:
    limits = ResourceLimits(memory_mb=512, cpu_seconds=30, open_files=64)
    script = (
        "import resource, sys; from referee.botkit import run_bot\n"
        "print('limits', [resource.getrlimit(getattr(resource, name)) for name in sys.argv[1:4]], flush=True)\n"
        "run_bot(lambda obs: obs.legal_actions[0], name='limited')\n"
    )
    limited = bots.spec([PYTHON, "-c", script, "RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NOFILE", bots.marker], "limited")
    limited = dataclasses.replace(limited, limits=limits)
    result = play("stop_the_bus", [limited, bots.sample()], seed=3, timing=FAST, bot_log_dir=tmp_path)
    assert result.faults == [Counter(), Counter()]
    printed = (tmp_path / "seat0-limited.log").read_text()
    assert f"limits [({512 << 20}, {512 << 20}), (30, 31), (64, 64)]" in printed
