"""Files replaced in one step, so that a reader, a crash or a full disk never leaves half of one."""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# What replace_file (and the other writers that replace a file the same way) leave when interrupted: mkstemp's
# ".NAME." + 8 random characters + ".tmp".
_TEMPORARY = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp\Z")


def replace_file(path: Path, content: str | bytes, mode: int = 0o644) -> None:
    """Write ``content`` to a temporary file beside ``path``, flush it to disk, then move it over ``path``.

    On any failure (a full disk, say) the temporary file is removed and
    ``path`` keeps its old content.
    """
    data = content.encode("utf-8") if isinstance(content, str) else content
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)  # mkstemp makes 0600
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def append_whole(fd: int, data: bytes, size: int) -> None:
    """Append ``data`` to the file open for appending on ``fd`` (now ``size`` bytes) and flush it to disk.

    On failure (a full disk) the file is cut back to ``size`` before the error goes on, so no reader, and
    no line appended later, ever meets half of ``data``.
    """
    try:
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        raise


def replace_json(path: Path, data: Any, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` as indented JSON, in one step."""
    replace_file(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode)


def remove_stale_temporaries(folder: Path, leave: Iterable[str] = ()) -> list[Path]:
    """Remove the temporary files an interrupted replacement left in ``folder`` and its sub-folders (but those
    named in ``leave``); return them. Only for a folder no other writer uses meanwhile (a league's, held)."""
    removed = []
    left_alone = set(leave)
    folders = [folder, *(path for path in folder.iterdir() if path.is_dir() and path.name not in left_alone)]
    for place in folders:
        with contextlib.suppress(OSError):
            for entry in os.scandir(place):
                if _TEMPORARY.match(entry.name) and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
                        removed.append(Path(entry.path))
    return removed
