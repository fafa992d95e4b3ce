"""What the benchmarks print about the machine they ran on."""

from __future__ import annotations

import platform


def cpu_name() -> str:
    """The processor's model name, as precisely as the platform tells it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown cpu"
