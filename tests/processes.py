"""Finding bot processes in /proc: shared by the tests' leak checks and bench/soak.py."""

from __future__ import annotations

import os
from pathlib import Path

from referee.play.processes import ADDRESS_VARIABLE


def marked_processes(marker: str, socket_root: Path) -> list[str]:
    """Live processes (not zombies) carrying ``marker`` in their command line or environment, or a bot
    address under ``socket_root``; one ``"pid N: command"`` line each."""
    address_prefix = f"{ADDRESS_VARIABLE}=unix:{socket_root}/".encode()
    marker_bytes = marker.encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except (OSError, IndexError):
            continue  # gone meanwhile, or not ours to read
        if state == "Z":
            continue
        if marker_bytes in cmdline or marker_bytes in environ or address_prefix in environ:
            found.append(f"pid {entry}: " + cmdline.replace(b"\0", b" ").decode(errors="replace"))
    return found
