"""How a command runs as a process: asyncio with SIGTERM stopping it as Ctrl-C does, an OS error as one line."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_interruptibly(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run``, with SIGTERM cancelling the run as Ctrl-C does (which raises ``KeyboardInterrupt`` after).

    A run cancelled by SIGTERM raises ``asyncio.CancelledError``, once its
    ``finally`` blocks have stopped the bots and saved what is finished.
    """

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None  # main() runs as asyncio.run's task
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            return await coroutine
        finally:
            with contextlib.suppress(NotImplementedError):
                loop.remove_signal_handler(signal.SIGTERM)

    return asyncio.run(main())


def describe_os_error(error: OSError) -> str:
    """An operating system's refusal as one line: the file, then the reason."""
    reason = error.strerror or str(error)
    if error.filename is not None and error.filename2 is not None:
        return f"{error.filename} -> {error.filename2}: {reason}"
    if error.filename is not None:
        return f"{error.filename}: {reason}"
    return reason
