"""The command line run in the test's own process, as click's ``CliRunner`` runs one: for the commands that
only read and write files (``validate``, ``seed``, ``ladder --add-author`` ...), whose words and exit
status are the test's point, not a process of their own.

A separate ``python -m referee`` costs 0.1 to 0.4 s of CPU to start, import and run (``validate`` and
``verify`` about 0.15 s, the ladder's token commands about 0.4 s); this costs milliseconds. Tests of what only a process shows (signals, a closed pipe, bots started, the entry point
itself) run the command as a process.
"""

from __future__ import annotations

import contextlib
import io
import subprocess

from referee.cli import main


def referee_in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``referee ARGS`` run by its ``main``: the exit status and what it wrote, as ``subprocess.run`` gives them."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as exited:  # argparse: a usage error (2) or --help (0)
            status = exited.code if isinstance(exited.code, int) else 0 if exited.code is None else 1
    return subprocess.CompletedProcess(["referee", *args], status, out.getvalue(), err.getvalue())
