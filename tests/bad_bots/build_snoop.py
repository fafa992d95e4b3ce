"""A hostile build command (not a bot): tries to reach what a build must not, and records what it reached.

    python build_snoop.py PROBES     # a JSON file: {"read": [FILE, ...], "list": [DIR, ...], "write": [FILE, ...]}

Run by a submission's ``build:`` in the league's copy of its folder. Each probe tries one thing: read
a file (reached: it has content), list a folder (reached: it shows entries), write a file (reached:
written; it is left there, for the test to look for on the host). It also records its user and
groups, the command lines of the processes it sees, whether the referee's environment reached it
(``$REFEREE_TEST_SECRET``), and what ``/`` holds; and it leaves in its copy a set-user-ID program, a
folder and a file anyone may write, for the test to see the copy handed back harmless. All of it
goes to ``reached.json`` in its copy; the build then succeeds, whatever it reached.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def attempt(probe: str, target: str) -> dict:
    try:
        if probe == "read":
            with open(target, "rb") as file:
                data = file.read(100)
            reached, detail = bool(data), f"{len(data)} bytes"
        elif probe == "list":
            entries = sorted(os.listdir(target))
            reached, detail = bool(entries), f"{len(entries)} entries: {entries[:8]}"
        else:
            with open(target, "w", encoding="utf-8") as file:
                file.write("planted by a build\n")
            reached, detail = True, "written"
    except OSError as error:
        reached, detail = False, f"{type(error).__name__}: {error.strerror or error}"
    return {"probe": probe, "target": target, "reached": reached, "detail": detail}


def command_lines() -> dict[str, str]:
    lines = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines[entry.name] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
    return lines


def main() -> int:
    probes = json.loads(Path(sys.argv[1]).read_text())
    report = {
        "probes": [attempt(kind, target) for kind in ("read", "list", "write") for target in probes.get(kind, [])],
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "secret": os.environ.get("REFEREE_TEST_SECRET"),
        "home": os.environ.get("HOME"),
        "command_lines": command_lines(),
        "root": sorted(os.listdir("/")),
    }
    # What a build may leave behind: a program that would run as its owner, and places anyone may write.
    Path("set-user-id").write_text("#!/bin/sh\n")
    os.chmod("set-user-id", 0o4777)
    Path("open-to-all").mkdir()
    os.chmod("open-to-all", 0o777)
    Path("open-to-all/file").write_text("anyone may change me\n")
    os.chmod("open-to-all/file", 0o666)
    Path("reached.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
