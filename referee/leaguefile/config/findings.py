"""What ``referee validate`` says of a valid league beyond its errors: limits no bot starts under, runs unchecked."""

from __future__ import annotations

import json
import shlex

from referee.leaguefile.commands import resolve_command
from referee.leaguefile.config.loaded import League
from referee.play.sandbox import ResourceLimits

# Measured with the sample Python bot: it starts at memory_mb 20, processes 12 (a gRPC server's threads
# count) and open_files 16, and is killed at 16, 8 and 8.
_FLOORS = (
    ("memory_mb", 20, "an interpreter and its gRPC server"),
    ("processes", 12, "a gRPC server's threads count as processes"),
    ("open_files", 16, "an interpreter and its gRPC server"),
)


def unstartable_limits(league: League, *, ladder: bool = False) -> list[str]:
    """Warnings for ``referee validate``: limits under which no bot the referee starts can get going.

    A ``ladder``'s league has no bots yet: its limits are every version's.
    """
    warnings = []
    limited: list[tuple[str, ResourceLimits | None]] = [("every version", league.limits)] if ladder else []
    limited.extend(
        (f"bot {bot.name}", getattr(bot.spec, "limits", None))
        for bot in league.bots
        if bot.spec.command or bot.submission is not None
    )
    for who, limits in limited:
        for key, floor, why in _FLOORS:
            value = getattr(limits, key, None) if limits else None
            if value is not None and value < floor:
                warnings.append(
                    f"{league.source}: warning: {who}: limits.{key} is {value}; the sample Python "
                    f"bot needs {floor} to start ({why}): a bot held below what it needs fails to start "
                    + ("its check" if ladder else "in every game")
                )
    if league.timing.startup_timeout_ms < 200:
        warnings.append(
            f"{league.source}: warning: startup_timeout_ms is {league.timing.startup_timeout_ms}, below "
            "200: no bot process starts, listens and answers its handshake that fast, so every game "
            "would be forfeited"
        )
    return warnings


def unchecked_runs(league: League) -> list[str]:
    """Notes for ``referee validate``: run commands naming files that only the submission's build can make.

    Loading a league cannot check them (the build has not run); the run
    checks them after the build and leaves the bot out if they are missing.
    """
    notes = []
    for bot in league.bots:
        submission = bot.submission
        if submission is None or submission.build is None:
            continue
        _, problem = resolve_command(submission.run, submission.folder, bot.spec.env)
        if problem:
            notes.append(
                f"{submission.manifest}: note: run: {json.dumps(shlex.join(submission.run))} cannot start before "
                f"the build ({problem}); it is checked again once {bot.name}'s build has run"
            )
    return notes
