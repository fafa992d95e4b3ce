"""Benchmark a resting ladder: the CPU a ladder whose standings are settled uses while it waits for the field to change.

A real `referee ladder` of three authors (each the Python random sample bot, in its sandbox unless
``--no-sandbox``), tables of 3, ``placement_games: 3`` and ``rest: {games: 3}``, plays until every version has
its games and the ladder says it rests. Then, for ``--seconds`` (60; 10 with ``--quick``), the CPU time
(user and system, from /proc, with that of the children each has reaped) of every process of the ladder's tree
is read at the start and at the end:
the referee, its page writer, the bots' processes (idle, and frozen off move). Printed: the ladder's CPU while it
played (for scale), and while it rested, in all and by process, against the target of under 2% of one CPU.

    .venv/bin/python bench/ladder_rest.py                 # about 80 s
    .venv/bin/python bench/ladder_rest.py --quick         # about 30 s
    .venv/bin/python bench/ladder_rest.py --poll-s 1      # the judge looking five times as often
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
TARGET = 0.02  # of one CPU


def ladder_folder(where: Path, poll_s: float, sandbox: bool) -> Path:
    submissions = where / "submissions"
    for name in ("ann", "bob", "cat"):
        folder = submissions / name
        shutil.copytree(ROOT / "sample_bots" / "python", folder, ignore=shutil.ignore_patterns("__pycache__"))
        (folder / "bot.yaml").write_text(f"name: {name}\nversion: '1'\nrun: [python, random_bot.py]\n")
    path = where / "ladder.yaml"
    path.write_text(
        f"name: at-rest\ngame: stop_the_bus\nseed: 8157702950177155349\ntable_size: 3\nsubmissions: submissions\n"
        f"output: out\nplacement_games: 3\npoll_s: {poll_s}\nconcurrency: 2\nrest:\n  games: 3\n"
        + ("" if sandbox else "sandbox: none\n")
    )
    return path


def tree(root: int) -> dict[int, tuple[str, float]]:
    """Every live process under ``root`` (itself included): its name and the CPU seconds it and the children it
    reaped have used so far."""
    parents: dict[int, int] = {}
    found: dict[int, tuple[str, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            role = next((word.decode() for word in words if b"referee" in word or word.endswith(b".py")), "")
            name = f"{name} {role.rsplit('/', 1)[-1]}".strip()
        except OSError:
            pass
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry.name)] = int(fields[1])
        # Its own CPU and that of its children it has reaped (a check's bots, a build), so none is lost.
        found[int(entry.name)] = (name, sum(int(field) for field in fields[11:15]) * TICK_S)
    inside = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in inside and pid not in inside:
                inside.add(pid)
                grew = True
    return {pid: found[pid] for pid in inside if pid in found}


def used(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds each kind of process used between two readings (a process started between them: all of its)."""
    by_name: dict[str, float] = {}
    for pid, (name, seconds) in after.items():
        start = before[pid][1] if pid in before and before[pid][0] == name else 0.0
        by_name[name] = by_name.get(name, 0.0) + seconds - start
    return by_name


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    options.add_argument("--seconds", type=float, help="how long the rest is measured (default 60; 10 with --quick)")
    options.add_argument("--quick", action="store_true", help="measure 10 s of rest")
    options.add_argument("--poll-s", type=float, default=5.0, help="the ladder's poll_s (default 5, its default)")
    options.add_argument("--no-sandbox", action="store_true", help="bots without their sandbox")
    args = options.parse_args()
    seconds = args.seconds or (10.0 if args.quick else 60.0)
    with tempfile.TemporaryDirectory(prefix="ladder-rest-") as scratch:
        where = Path(scratch)
        path = ladder_folder(where, args.poll_s, not args.no_sandbox)
        said = where / "said.txt"
        with open(said, "w") as out:
            started = time.monotonic()
            ladder = subprocess.Popen([sys.executable, "-m", "referee", "ladder", str(path)], stdout=out,
                                      stderr=subprocess.STDOUT, cwd=ROOT)  # fmt: skip
            try:
                while "resting: " not in said.read_text():
                    if ladder.poll() is not None or time.monotonic() - started > 600:
                        print(said.read_text(), file=sys.stderr)
                        return 1
                    time.sleep(0.2)
                played_s = time.monotonic() - started
                playing = sum(seconds for _, seconds in tree(ladder.pid).values())
                games = sum(1 for line in (where / "out" / "games.jsonl").read_text().splitlines() if line)
                time.sleep(1.0)  # the last leaderboard written (within its interval of the last game)
                before = tree(ladder.pid)
                time.sleep(seconds)
                after = tree(ladder.pid)
                awake = [line for line in said.read_text().splitlines() if line.startswith("awake")]
            finally:
                ladder.send_signal(signal.SIGINT)
                ladder.wait(timeout=60)
    resting = used(before, after)
    total = sum(resting.values())
    print(f"the ladder judged 3 versions and played {games} games in {played_s:.1f} s, using {playing:.1f} s of CPU "
          f"in all ({playing / played_s:.0%} of one CPU)")  # fmt: skip
    print(f"resting for {seconds:g} s (poll_s {args.poll_s:g}), {len(after)} processes: {total:.2f} s of CPU, "
          f"{total / seconds:.2%} of one CPU (target under {TARGET:.0%}: {'met' if total / seconds < TARGET else 'MISSED'})")  # fmt: skip
    for name, cpu in sorted(resting.items(), key=lambda item: -item[1]):
        print(f"  {name:<16} {cpu:6.2f} s")
    if awake:
        print(f"it woke while measured: {json.dumps(awake)}")
    return 0 if total / seconds < TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
