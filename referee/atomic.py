"""Files replaced in one step, so that a reader, a crash or a full disk never leaves half of one."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


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


def replace_json(path: Path, data: Any) -> None:
    """Replace ``path`` with ``data`` as indented JSON, in one step."""
    replace_file(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
