"""What ``referee check-bot`` found: each check with its verdict, the problems in words, and the report as JSON.

The checks themselves are :mod:`referee.apps.checkbot`'s; this is what they leave for people, for scripts
(``--json``) and for the ladder, which judges a submission by them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from referee import __version__

__all__ = ["FAIL", "NOTE", "PASS", "SKIP", "Check", "Problem", "Report"]

PASS, FAIL, NOTE, SKIP = "pass", "fail", "note", "skip"


@dataclass
class Check:
    """One check and its verdict (pass, fail, note or skip): what it concerns, and what was found."""

    check: str  # manifest, build, handshake, game, fault, forfeit, slow decision, slow messages, opponent fault
    verdict: str
    detail: str = ""
    game: str | None = None
    seats: int | None = None
    game_id: str | None = None
    seat: int | None = None
    decision: int | None = None
    facts: dict[str, Any] = field(
        default_factory=dict
    )  # what else a reader may want: the seed, the place, times, paths

    def json(self) -> dict[str, Any]:
        data = {
            key: value for key, value in dataclasses.asdict(self).items() if key != "facts" and value not in (None, "")
        }
        return {**data, **self.facts}


@dataclass(frozen=True)
class Problem:
    """A problem found: what (the same words wherever it is found), where, and what is particular to this time."""

    what: str
    where: str = ""  # the game or table size it was found at; empty for the bot as a whole
    particulars: str = ""  # where the bot's output is, its last lines
    in_a_game: bool = False  # found in one game (counted against the games played), not at a table or start


class Report:
    """Every check, the problems in words, and the lines said as the check goes (to ``out``)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.checks: list[Check] = []
        self.problems: list[Problem] = []
        self.opponents: list[str] = []  # who the bot played against, in words
        self.games = 0  # games played

    def say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    def problem(
        self, what: str, *checks: Check, where: str = "", particulars: str = "", in_a_game: bool = False
    ) -> None:
        """A problem: ``what`` was found (at ``where``, in a game or not) for people, and the failed ``checks`` it
        sums up."""
        self.problems.append(Problem(what, where, particulars, in_a_game))
        for check in checks:
            check.verdict = FAIL
            self.add(check)

    def lines(self) -> list[str]:
        """The problems for people: one line for each thing found, however many games it was found in (the
        first kept whole)."""
        found: dict[str, list[Problem]] = {}
        for problem in self.problems:
            found.setdefault(problem.what, []).append(problem)
        lines = []
        for what, problems in found.items():
            first = problems[0]
            if len(problems) == 1:
                lines.append(f"{first.where}: {what}{first.particulars}" if first.where else what + first.particulars)
            else:
                in_games = all(problem.in_a_game for problem in problems)
                count = f"in {len(problems)} of {self.games} games" if in_games else f"{len(problems)} times"
                lines.append(f"{what} ({count}; the first: {first.where}){first.particulars}")
        return lines

    def summary(self) -> int:
        """Print the problems; return the exit status (0: none)."""
        lines = self.lines()
        if not lines:
            self.say("no problems found")
            return 0
        self.say(f"{len(lines)} problem{'s' if len(lines) > 1 else ''}:")
        for line in lines:
            self.say(f"  - {line}")
        return 1

    def json(self, bot: str, logs: Path | None) -> dict[str, Any]:
        lines = self.lines()
        checks = [check.json() for check in self.checks]
        if logs is None:  # removed with the temporary folder: no path to name
            checks = [{key: value for key, value in check.items() if key != "log"} for check in checks]
        return {
            "referee_version": __version__,
            "bot": bot,
            "opponents": self.opponents,
            "passed": not self.problems,
            "problems": len(lines),
            "problem_lines": lines,
            "logs": str(logs) if logs is not None else None,
            "checks": checks,
        }
