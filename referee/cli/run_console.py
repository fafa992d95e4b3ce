"""A league's run at the terminal: its plan, its progress, the final table, its problems, and Ctrl-C.

:func:`referee.apps.league.run_league` runs a league and prints nothing; this
module hands it the callbacks that show the run (``announce``, ``progress``)
and prints what the run did, for ``referee run`` and ``referee duel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from referee.apps.duel import DuelState, DuelWatch
from referee.apps.league import RunPlan, RunSummary, run_league
from referee.backends.backend import auto_concurrency
from referee.cli.interrupts import describe_os_error, run_interruptibly
from referee.common.errors import OutputError, RefereeError
from referee.leaguefile.schedule.sprt import Sprt
from referee.play.processes import log_tail
from referee.publish.console_table import console_table
from referee.publish.text import duel_lines, faults_text
from referee.records.results import RESULTS_FILE, count_games
from referee.records.standings import Standings, folder_luck, folder_standings
from referee.records.visibility import Shown

if TYPE_CHECKING:
    from referee.backends.backend import BackendFactory
    from referee.leaguefile.config import League

PROGRESS_LINE_EVERY_S = 10.0  # without a terminal, a duel's progress line at most this often


class Display(Protocol):
    """What shows a run's progress: called with games done, games in all and (now and then) the standings."""

    def __call__(self, done: int, total: int, standings: Standings | None) -> None: ...

    def close(self) -> None: ...


def _progress_bar(total: int, done: int) -> Any:
    """A tqdm bar of games, once the lines printed before it are out."""
    from tqdm import tqdm

    sys.stdout.flush()
    return tqdm(total=total, initial=done, unit="game", dynamic_ncols=True)


class ProgressDisplay:
    """Games done of total, rate and time left (tqdm on a terminal, plain lines otherwise), plus standings so far.

    The bar starts at the first report, after the run's header is printed,
    so the two never share a line.
    """

    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled
        self._bar: Any = None
        self._started = time.perf_counter()
        self._already: int | None = None

    def __call__(self, done: int, total: int, standings: Standings | None) -> None:
        if not self._enabled:
            return
        if self._already is None:
            self._already = done
            self._started = time.perf_counter()
            if sys.stderr.isatty():
                self._bar = _progress_bar(total, done)
        if self._bar is not None:
            self._bar.update(done - self._bar.n)
            if standings is not None:
                self._bar.write("standings so far:\n" + console_table(standings, compact=True))
            return
        if standings is not None:
            elapsed = time.perf_counter() - self._started
            rate = (done - self._already) / elapsed * 60 if elapsed > 0 else 0.0
            left = (total - done) / rate if rate > 0 else 0.0
            print(f"{done}/{total} games, {rate:.1f} games/min, about {left:.1f} min left", file=sys.stderr)
            print("standings so far:\n" + console_table(standings, compact=True), file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class DuelProgress:
    """Progress of a duel: games done and the test's ratio between its bounds (a bar on a terminal, else lines).

    It stands in for a league's :class:`ProgressDisplay`.
    """

    def __init__(self, enabled: bool, watch: DuelWatch) -> None:
        self._enabled = enabled
        self._bar: Any = None
        self._watch = watch
        self._last_line = -PROGRESS_LINE_EVERY_S
        self._told_verdict = False

    def __call__(self, done: int, total: int, standings: Standings | None) -> None:
        if not self._enabled:
            return
        self._watch.update()
        state = self._watch.state
        if self._bar is None and sys.stderr.isatty():
            self._bar = _progress_bar(total, done)
        if self._bar is not None:
            self._bar.update(done - self._bar.n)
            self._bar.set_postfix_str(state.status(), refresh=True)
            return
        now = time.monotonic()
        verdict_now = state.decided and not self._told_verdict
        if verdict_now or now - self._last_line >= PROGRESS_LINE_EVERY_S:
            self._last_line = now
            self._told_verdict = state.decided
            print(f"{done} games: {state.status()}" + (f"; {state.headline()}" if verdict_now else ""), file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def run_league_command(
    league: League,
    output: Path | None,
    concurrency: int | None,
    show_progress: bool,
    backend: BackendFactory | None = None,
    *,
    stop: Callable[[], bool] | None = None,
    display: Display | None = None,
    report: Callable[[], None] | None = None,
) -> int:
    """Run a league from the command line; print the final table. Returns the exit status.

    A duel brings its own ``stop``, progress ``display`` and ``report``,
    printed after the table and after an interruption.
    """
    output = (output or league.output).resolve()
    display = display or ProgressDisplay(show_progress)
    plan: RunPlan | None = None

    def announce(run: RunPlan) -> None:
        nonlocal plan
        plan = run
        _print_plan(run, concurrency or league.concurrency)

    try:
        summary = run_interruptibly(
            run_league(
                league,
                output=output,
                concurrency=concurrency,
                progress=display,
                announce=announce,
                stop=stop,
                stop_is_final=stop is not None,  # a duel's: decided, it plays nothing more, ever
                backend=backend,
            )
        )
    except (KeyboardInterrupt, asyncio.CancelledError) as interruption:
        display.close()
        ctrl_c = isinstance(interruption, KeyboardInterrupt)
        status = _interrupted(output, plan, "SIGINT (Ctrl-C)" if ctrl_c else "SIGTERM", 130 if ctrl_c else 143)
        if report is not None:
            report()
        return status
    except OSError as error:
        display.close()
        finished = count_games(output / RESULTS_FILE) if output.is_dir() else 0
        what = describe_os_error(error) if error.filename else f"cannot write in {output}: {describe_os_error(error)}"
        raise OutputError(
            f"{what}; the {finished} games finished so far are kept: "
            f"{_remedy(error)}run the same command again to resume"
        ) from None
    finally:
        display.close()
    print(console_table(summary.standings))
    for game_id, reason in summary.standings.void_games:
        print(f"{game_id}: void ({reason}): it counts for nobody")
    rate = summary.played / summary.wall_s * 60 if summary.wall_s > 0 else 0.0
    print(
        f"{summary.played} games played in {summary.wall_s:.1f} s ({rate:.1f} games/min, "
        f"{summary.concurrency} at once); leaderboards written to {output}"
    )
    if report is not None:
        report()
    problems = run_problems(summary)
    # A bot left out by its build was told of, with the build's message, before the first game.
    for name in sorted({*summary.disabled, *problems.never_played} - set(summary.left_out)):
        reason = summary.disabled.get(name) or problems.never_played[name]
        print(f"{name}: {reason}" + log_tail(summary.failed_logs.get(name)), file=sys.stderr)
    if problems.no_game_counted:
        print(f"no game counted: {problems.no_game_counted}", file=sys.stderr)
    if problems.summary:
        print(f"referee run: {problems.summary}", file=sys.stderr)
        return 1
    return 0


def run_duel_command(
    league: League,
    output: Path | None,
    concurrency: int | None,
    show_progress: bool,
    backend: BackendFactory | None = None,
) -> int:
    """Run an sprt league from the command line until its test decides; print the standings and the verdict."""
    sprt = league.format
    assert isinstance(sprt, Sprt)
    output = (output or league.output).resolve()
    state = DuelState(sprt, league.table_size, folder_luck(output) if sprt.adjust_for_luck else None)
    watch = DuelWatch(output / RESULTS_FILE, state)
    first, second = sprt.candidates
    print(
        f"duel {first} against {second}: {sprt.hypotheses()}; at most {state.scheduled_deals * league.table_size} "
        f"games ({state.scheduled_deals} deals), stopping as soon as the test decides",
        flush=True,
    )

    def report() -> None:
        watch.update()
        print("\n".join(duel_lines(state)))

    return run_league_command(
        league,
        output,
        concurrency,
        show_progress,
        backend,
        stop=watch,
        display=DuelProgress(show_progress, watch),
        report=report,
    )


@dataclass(frozen=True)
class RunProblems:
    """What makes a run's results less than asked for: bots that never played, or no game that counts."""

    never_played: dict[str, str]  # bot -> why: it made no decision in any of its games
    incomplete: list[str]  # bots left out (a failed build) or disabled (the restart limit), or that never played
    no_game_counted: str | None  # why no finished game counts, or None

    @property
    def summary(self) -> str:
        """One line naming every problem, or empty when the run has none."""
        parts: list[str] = []
        if self.incomplete:
            parts.append(
                f"{len(self.incomplete)} bot{'s' if len(self.incomplete) > 1 else ''} did not play every "
                "game: " + ", ".join(self.incomplete)
            )
        if self.no_game_counted:
            parts.append("no game counted")
        return "; ".join(parts)


def run_problems(summary: RunSummary) -> RunProblems:
    """The problems of a finished run, from its summary and standings."""
    standings = summary.standings
    never: dict[str, str] = {}
    for row in standings.rows:
        if row.decisions == 0 and (row.games or any(row.faults.values())):
            what = faults_text(row) or "no fault recorded"
            why = summary.disabled.get(row.bot, "")
            never[row.bot] = f"never played: it made no decision in any of its games ({what})" + (
                f"; {why}" if why else ""
            )
    finished = standings.games + len(standings.void_games)
    no_game = None
    if finished and not standings.games:
        reasons = sorted({reason.split(";")[0] for _, reason in standings.void_games})
        no_game = (
            f"all {finished} finished game{'s are' if finished > 1 else ' is'} void ({'; '.join(reasons[:3])}), "
            "so nothing ranks the bots"
        )
    incomplete = sorted({*summary.disabled, *summary.left_out, *never})
    return RunProblems(never, incomplete, no_game)


def _print_plan(plan: RunPlan, asked_concurrency: int | None) -> None:
    league = plan.league
    for build in plan.builds:
        if not build.ok:
            print(f"{build.bot}: left out of the league: {build.message}", file=sys.stderr)
        elif build.note:
            print(f"note: {build.note}", file=sys.stderr)
    if plan.growth:
        print(
            f"the league has grown since its last run ({'; '.join(plan.growth)}): its finished games are kept "
            "and only the new ones are played",
            file=sys.stderr,
        )
    print(
        f"league {league.name}: {league.game}, {len(league.bots)} bots, {plan.total} games"
        + (f", {plan.already_finished} already finished" if plan.already_finished else "")
        + (f", {plan.unplayed} left unplayed (a bot in each plays no more)" if plan.unplayed else "")
        + f"; results in {plan.output}",
        flush=True,
    )
    note = league.schedule().note
    if note:
        print(note, flush=True)
    cpus = auto_concurrency()
    if plan.backend == "local" and asked_concurrency is not None and asked_concurrency > cpus:
        print(
            f"warning: concurrency {asked_concurrency} is more games at once than this machine's {cpus} CPUs hold "
            "fairly: bots will wait for a CPU (the clock does not charge them for it, but games take longer); "
            "`concurrency: auto` picks what the machine holds",
            file=sys.stderr,
        )


def _interrupted(output: Path, plan: RunPlan | None, signal_name: str, status: int) -> int:
    """After Ctrl-C or SIGTERM: the standings so far, and how to go on. Returns the exit status."""
    finished = count_games(output / RESULTS_FILE) if output.is_dir() else 0
    total = f" of {plan.total}" if plan is not None else ""
    if plan is not None and (output / "leaderboard.json").exists():
        with contextlib.suppress(RefereeError, OSError):
            print(console_table(folder_standings(output)[0]))
        where = f"; the standings so far are in {output}/leaderboard.*"
        held = finished - sum(1 for _ in Shown.read(output).records(output)) if output.is_dir() else 0
        if held > 0:  # referee.records.visibility: their deals are still to be played
            where += f" ({held} of the games held back until every game on their deals is played)"
    else:
        where = ""
    print(
        f"referee run: stopped by {signal_name}: {finished}{total} games finished and kept{where}; "
        "run the same command again to resume",
        file=sys.stderr,
    )
    return status


def _remedy(error: OSError) -> str:
    """What to do about a refused write before running again, as the start of a sentence."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return "free some space, then "
    if error.errno == errno.EFBIG:
        return "raise the file size limit (ulimit -f), then "
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "make the folder writable, then "
    return ""
