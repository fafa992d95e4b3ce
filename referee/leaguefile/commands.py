"""A bot's command made ready to run: ``python`` as the referee's interpreter, programs found, scripts checked."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

PYTHON_PROGRAMS = ("python", "python3")
INTERPRETERS = re.compile(r"(python[0-9.]*|node|nodejs|ruby|perl|php|lua|bash|sh|dash|zsh)\Z")


def resolve_command(
    command: tuple[str, ...], cwd: Path, env: Mapping[str, str], files: bool = True
) -> tuple[tuple[str, ...], str | None]:
    """Return ``command`` ready to run in ``cwd``, and why it cannot start (``None`` when it can).

    ``python``/``python3`` become ``sys.executable``; a program with a slash
    becomes an absolute path resolved against ``cwd``; a bare name is looked
    up on ``PATH`` (the bot's own, if its ``env`` sets one) and kept as written.
    With ``files``, files in ``cwd`` are checked too: a program with a slash
    must be an executable file, and when the program is an interpreter
    (:data:`INTERPRETERS`) whose first argument is not an option, that
    argument is its script and must be a file.
    """
    program, arguments = command[0], command[1:]
    if program in PYTHON_PROGRAMS:
        resolved = (sys.executable, *arguments)
    elif "/" in program:
        path = resolve_path(cwd, program)
        resolved = (str(path), *arguments)
        if files and not path.exists():
            return resolved, f"no such file: {program}, looked for {path}"
        if files and (path.is_dir() or not os.access(path, os.X_OK)):
            return resolved, f"not an executable file: {path}"
    elif shutil.which(program, path=env.get("PATH", os.environ.get("PATH"))) is None:
        return command, f"no such program: {program}"
    else:
        resolved = command
    if files and arguments and not arguments[0].startswith("-") and INTERPRETERS.match(os.path.basename(program)):
        script = resolve_path(cwd, arguments[0])
        if not script.is_file():
            found = "a folder" if script.is_dir() else "no such file"
            interpreter = os.path.basename(program)
            return resolved, f"{found}: {arguments[0]}, the script {interpreter} runs, looked for {script}"
    return resolved, None


def resolve_path(folder: Path, text: str) -> Path:
    """``text`` (``~`` expanded) relative to ``folder``, normalised: how every path of a league file is read."""
    return Path(os.path.normpath(folder / os.path.expanduser(text)))
