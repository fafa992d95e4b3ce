"""The limits of a bot's process tree: their names (the league file's keys), defaults, words and rlimits."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields

MIB = 1 << 20

# How a limit is enforced where no cgroup enforces it (see referee.play.sandbox.enforcement).
RLIMIT = "rlimit"
NOT_ENFORCED = "not enforced"


@dataclass(frozen=True)
class ResourceLimits:
    """The limits of one bot's whole process tree; ``None`` means no limit. The names are the league file's keys.

    ``memory_mb``: memory in use by all its processes together (and its
    files in its writable places, which are in memory, with the kernel's
    own records of them: so the number of files too). ``processes``:
    processes and threads at once. ``cpu_seconds``: CPU time used by all its
    processes over the life of the bot process (which may play many games;
    off by default, as the clock already polices each decision).
    ``open_files``: per process. ``output_mb``: the most of its output kept
    in its log, and the size of each of its writable places.
    """

    memory_mb: int | None = 1024
    processes: int | None = 256
    cpu_seconds: int | None = None
    open_files: int | None = 1024
    output_mb: int | None = 4

    @property
    def output_bytes(self) -> int | None:
        return None if self.output_mb is None else self.output_mb * MIB

    def describe(self, keys: Iterable[str] | None = None) -> str:
        """The limits in words ("memory limit 256 MB, open-file limit 32"), of ``keys`` (default all set)."""
        chosen = [field.name for field in fields(self)] if keys is None else list(keys)
        return ", ".join(limit_text(key, getattr(self, key)) for key in chosen if getattr(self, key) is not None)

    def changed(self) -> tuple[str, ...]:
        """The keys whose value differs from the default."""
        default = DEFAULT_LIMITS
        return tuple(field.name for field in fields(self) if getattr(self, field.name) != getattr(default, field.name))


DEFAULT_LIMITS = ResourceLimits()
LIMIT_KEYS = tuple(field.name for field in fields(ResourceLimits))
_LIMIT_WORDS = {
    "memory_mb": ("memory limit", " MB"),
    "processes": ("process limit", ""),
    "cpu_seconds": ("CPU time limit", " s"),
    "open_files": ("open-file limit", ""),
    "output_mb": ("output limit", " MB"),
}


def limit_text(key: str, value: int) -> str:
    """One limit in words: ``limit_text("memory_mb", 256) == "memory limit 256 MB"``."""
    words, unit = _LIMIT_WORDS[key]
    return f"{words} {value}{unit}"


def rlimit_arguments(limits: ResourceLimits, enforced_by: Mapping[str, str], sandboxed: bool) -> list[str]:
    """The ``ulimit`` arguments for the limits that rlimits enforce (see ``enforcement``), and no core files."""
    arguments = ["-c 0"]  # a core file would land in the bot's folder
    if limits.open_files is not None:
        arguments.append(f"-n {limits.open_files}")
    if enforced_by.get("memory_mb") == RLIMIT and limits.memory_mb is not None:
        arguments.append(f"-v {limits.memory_mb * 1024}")
    if enforced_by.get("cpu_seconds") == RLIMIT and limits.cpu_seconds is not None:
        # The hard limit a second later: the soft one sends SIGXCPU, which names the cause.
        arguments += [f"-H -t {limits.cpu_seconds + 1}", f"-S -t {limits.cpu_seconds}"]
    if not sandboxed and limits.output_mb is not None:
        arguments.append(f"-f {limits.output_mb * 2048}")  # in 512-byte blocks
    return arguments
