"""A duel: the sequential test of an ``sprt`` league, fed from its results, and the moment it stops.

``format: {type: sprt, ...}`` (:mod:`referee.schedule.sprt`) schedules deals
of the two candidates; this module turns the finished games into the test's
evidence and tells the runner when to stop:

- :class:`DuelState` takes ``games.jsonl`` records in any order and adds
  each deal's outcome (:func:`referee.stats.deal_outcome`, void games left
  out) to a :class:`referee.stats.SequentialTest` once every game of the
  deal and of every deal before it is in. So deals enter the test in deal
  order, and the deal that decides is the same at any concurrency and in
  any finishing order. Once a bound is crossed nothing more is added: the
  verdict and its figures are those of the deals up to the deciding one;
  games that were still running are recorded (and in the standings) but
  not counted in the test.
- :class:`DuelWatch` is the runner's ``stop``: before each game starts it
  reads the lines ``games.jsonl`` gained and answers whether the test has
  decided. It reads the file from its start on its first call, so a resumed
  duel starts from every game finished before, and a decided one plays
  nothing more.
- :func:`duel_report` is the verdict of an output folder (for the
  leaderboards and ``referee leaderboard``), :func:`run_duel` the command.

A duel ends in one of three ways: H1 accepted, H0 accepted, or
*inconclusive* when every scheduled deal (``max_games``) is played with the
log-likelihood ratio still between the bounds.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.errors import LeagueError
from referee.results import RESULTS_FILE, GameRecord, LeagueRecord, games_after
from referee.schedule.sprt import Sprt
from referee.stats import Measure, Verdict, deal_outcome, describe_hypothesis

if TYPE_CHECKING:  # imports kept light: the leaderboard writer (a helper process) reads verdicts from here
    from referee.config import League
    from referee.standings import Standings

PROGRESS_LINE_EVERY_S = 10.0  # without a terminal, a progress line at most this often


class DuelState:
    """A duel's sequential test, fed with game records deal by deal, in deal order (see the module's doc)."""

    def __init__(self, sprt: Sprt, table_size: int) -> None:
        self.sprt = sprt
        self.table_size = table_size
        self.scheduled_deals = sprt.deals(table_size)
        self.test = sprt.sequential_test()
        self.deals = 0  # deals counted: each of deals 1..this one is complete and in the test
        self.decided_at: int | None = None  # the deal whose outcome crossed a bound
        self.records = 0  # game records seen, counted or not
        self._pending: dict[int, list[GameRecord]] = {}

    @classmethod
    def of(cls, sprt: Sprt, table_size: int, records: Iterable[GameRecord]) -> DuelState:
        state = cls(sprt, table_size)
        for record in records:
            state.add(record)
        return state

    def add(self, record: GameRecord) -> None:
        """Take one game's record; count its deal, and any deals after it, once they are complete and due."""
        record = GameRecord.of(record, latencies=False)
        self.records += 1
        if self.decided_at is not None or record.table is None:
            return
        self._pending.setdefault(record.table, []).append(record)
        while len(self._pending.get(self.deals + 1, ())) == self.table_size:
            games = self._pending.pop(self.deals + 1)
            self.deals += 1
            first, second = self.sprt.candidates
            counted = [(game.seats, game.finish_order) for game in games if not game.void]
            outcome = deal_outcome(counted, first, second)
            if outcome is not None:  # None: every game of the deal was void
                self.test.add(outcome)
            if self.test.verdict is not Verdict.CONTINUE:
                self.decided_at = self.deals
                self._pending.clear()
                return

    @property
    def decided(self) -> bool:
        """Whether a bound has been crossed: the runner starts no more games."""
        return self.decided_at is not None

    @property
    def inconclusive(self) -> bool:
        """Every scheduled deal counted and no bound crossed."""
        return not self.decided and self.deals >= self.scheduled_deals

    @property
    def games_counted(self) -> int:
        return self.deals * self.table_size

    @property
    def games_not_counted(self) -> int:
        """Games recorded beyond the counted deals: running when the verdict came, or of deals not yet complete."""
        return self.records - self.games_counted

    @property
    def outcome(self) -> str | None:
        """``H1``, ``H0``, ``inconclusive``, or None while the duel goes on."""
        if self.test.verdict is Verdict.ACCEPT_H1:
            return "H1"
        if self.test.verdict is Verdict.ACCEPT_H0:
            return "H0"
        return "inconclusive" if self.inconclusive else None

    def headline(self) -> str:
        """The verdict in one line: which hypothesis, after how many deals, and what it says about the two bots."""
        progress = f"{self.deals} deal{'s' if self.deals != 1 else ''} ({self.games_counted} games)"
        if self.decided:
            return f"{self.outcome} accepted after {progress}: {self.claim()}"
        if self.inconclusive:
            return f"inconclusive: no verdict after all {progress} that max_games ({self.sprt.max_games}) allows"
        return f"no verdict yet after {progress} of at most {self.scheduled_deals} deals"

    def claim(self) -> str:
        """What the verdict says about A and B, no more than the test shows."""
        first, second = self.sprt.candidates
        h0, h1 = self.sprt.h0, self.sprt.h1
        if self.test.verdict is Verdict.ACCEPT_H1:
            if h0 >= 0:
                return f"{first} is stronger than {second}"
            return f"{first} is not weaker than {second} by {_amount(self.sprt.measure, -h0)} or more"
        if self.test.verdict is Verdict.ACCEPT_H0:
            if h1 <= 0:
                return f"{second} is stronger than {first}"
            return f"{first} is not stronger than {second} by {_amount(self.sprt.measure, h1)} or more"
        return "neither hypothesis yet"

    def status(self) -> str:
        """A short progress note: deals counted and the log-likelihood ratio between its bounds."""
        lower, upper = self.test.bounds
        return f"{self.deals} deals, LLR {self.test.llr:+.2f} ({lower:+.2f}, {upper:+.2f})"

    def lines(self) -> list[str]:
        """The verdict as a block of lines for the terminal and the Markdown leaderboard."""
        from referee.publish import comparison_text

        first, second = self.sprt.candidates
        measure, lower_upper = self.sprt.measure, self.test.bounds
        h0, h1 = describe_hypothesis(measure, self.sprt.h0), describe_hypothesis(measure, self.sprt.h1)
        lines = [f"duel {first} against {second}: H0 {h0}, H1 {h1}, alpha {self.sprt.alpha:g}, "
                 f"beta {self.sprt.beta:g}", f"  {self.headline()}"]  # fmt: skip
        lower, upper = lower_upper
        if self.test.verdict is Verdict.ACCEPT_H1:
            lines.append(f"  the results favour {h1} over {h0}: a true {h0} gives this verdict at most "
                         f"{self.sprt.alpha:.0%} of the time")  # fmt: skip
        elif self.test.verdict is Verdict.ACCEPT_H0:
            lines.append(f"  the results favour {h0} over {h1}: a true {h1} gives this verdict at most "
                         f"{self.sprt.beta:.0%} of the time")  # fmt: skip
        lines.append(f"  log-likelihood ratio {self.test.llr:+.2f}; bounds {lower:+.2f} (accept H0) and "
                     f"{upper:+.2f} (accept H1)")  # fmt: skip
        comparison = comparison_text(first, second, self.test.comparison())
        lines.extend("  " + line for line in comparison.splitlines())
        if self.games_not_counted:
            why = "running when the verdict came" if self.decided else "of deals not yet complete"
            lines.append(f"  {self.games_not_counted} more game{'s' if self.games_not_counted != 1 else ''} "
                         f"recorded ({why}): in games.jsonl and the standings, not in the test")  # fmt: skip
        return lines

    def data(self) -> dict[str, Any]:
        """The verdict as JSON-ready data: the ``duel`` object of ``leaderboard.json``."""
        from referee.publish import FRACTION_DIGITS, comparison_data

        lower, upper = self.test.bounds
        return {
            "candidates": list(self.sprt.candidates),
            "measure": self.sprt.measure.value,
            "h0": self.sprt.h0,
            "h1": self.sprt.h1,
            "alpha": self.sprt.alpha,
            "beta": self.sprt.beta,
            "max_games": self.sprt.max_games,
            "verdict": self.outcome,
            "headline": self.headline(),
            "deals": self.deals,
            "games": self.games_counted,
            "games_not_counted": self.games_not_counted,
            "scheduled_deals": self.scheduled_deals,
            "llr": round(self.test.llr, FRACTION_DIGITS),
            "bounds": [round(lower, FRACTION_DIGITS), round(upper, FRACTION_DIGITS)],
            "comparison": comparison_data(self.test.comparison()),
        }


def _amount(measure: Measure, value: float) -> str:
    return f"{value:g} Elo" if measure is Measure.ELO else f"a mean score difference of {value:g}"


# ----- the runner's stop ------------------------------------------------------------------


class DuelWatch:
    """The runner's ``stop``: reads what ``games.jsonl`` gained since the last call and says if the test decided."""

    def __init__(self, results: Path, state: DuelState) -> None:
        self.results = results
        self.state = state
        self._offset = 0

    def update(self) -> None:
        """Feed the state every whole line added to the results file since the last call."""
        games, self._offset = games_after(self.results, self._offset)
        for game in games:
            self.state.add(game)

    def __call__(self) -> bool:
        self.update()
        return self.state.decided


class DuelProgress:
    """Progress of a duel: games done and the test's ratio between its bounds (a bar on a terminal, else lines).

    It stands in for the runner's :class:`referee.league.ProgressDisplay`.
    """

    def __init__(self, enabled: bool, watch: DuelWatch) -> None:
        self._enabled = enabled
        self._bar = None
        self._watch = watch
        self._last_line = -PROGRESS_LINE_EVERY_S
        self._told_verdict = False

    def __call__(self, done: int, total: int, standings: Standings | None) -> None:
        if not self._enabled:
            return
        self._watch.update()
        state = self._watch.state
        if self._bar is None and sys.stderr.isatty():
            from tqdm import tqdm

            sys.stdout.flush()
            self._bar = tqdm(total=total, initial=done, unit="game", dynamic_ncols=True)
        if self._bar is not None:
            self._bar.update(done - self._bar.n)
            self._bar.set_postfix_str(state.status(), refresh=True)
            return
        now = time.monotonic()
        verdict_now = state.decided and not self._told_verdict
        if verdict_now or now - self._last_line >= PROGRESS_LINE_EVERY_S:
            self._last_line = now
            self._told_verdict = state.decided
            print(f"{done} games: {state.status()}" + (f"; {state.headline()}" if verdict_now else ""),
                  file=sys.stderr)  # fmt: skip

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


# ----- output folders and the command ---------------------------------------------------------


def duel_report(league: LeagueRecord | None, records: Iterable[GameRecord]) -> DuelState | None:
    """The duel of a league (its ``league.json`` record) from its game ``records``; None when it is no duel."""
    if league is None or league.format.get("type") != Sprt.type or league.table_size is None:
        return None
    try:
        sprt = Sprt.from_written(dict(league.format))
    except (ValueError, KeyError, TypeError):
        return None
    if sprt is None:
        return None
    return DuelState.of(sprt, league.table_size, records)


def duel_league(league: League, sprt: Sprt) -> League:
    """``league`` played as a duel: its bots and settings, ``sprt`` as its format, one round, a name of its own."""
    first, second = sprt.candidates
    for name in sprt.candidates:
        if name not in league.bot_names:
            raise LeagueError(f"{league.source}: no bot {name!r} in the league; the bots are: "
                              + ", ".join(league.bot_names))  # fmt: skip
    try:
        sprt.schedule(league.bot_names, league.table_size, 1, league.seed)
    except ValueError as error:
        raise LeagueError(f"{league.source}: no duel can be made: {error}") from None
    return dataclasses.replace(league, format=sprt, rounds=1, name=f"{league.name}-duel-{first}-{second}")


def duel_output(duel: League) -> Path:
    """Where ``referee duel`` writes by default: beside the league file's output, in a folder named for the duel."""
    return duel.output.parent / duel.name


def run_duel(
    league: League, output: Path | None, concurrency: int | None, show_progress: bool, backend=None
) -> int:  # fmt: skip
    """Run an sprt league from the command line until its test decides; print the standings and the verdict."""
    from referee.league import run_command

    sprt = league.format
    assert isinstance(sprt, Sprt)
    output = (output or league.output).resolve()
    state = DuelState(sprt, league.table_size)
    watch = DuelWatch(output / RESULTS_FILE, state)
    first, second = sprt.candidates
    print(f"duel {first} against {second}: {sprt.hypotheses()}; at most {state.scheduled_deals * league.table_size} "
          f"games ({state.scheduled_deals} deals), stopping as soon as the test decides", flush=True)  # fmt: skip

    def report() -> None:
        watch.update()
        print("\n".join(state.lines()))

    return run_command(
        league, output, concurrency, show_progress, backend, stop=watch, display=DuelProgress(show_progress, watch),
        report=report,
    )  # fmt: skip
