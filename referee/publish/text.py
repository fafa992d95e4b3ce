"""The words around the figures: what a person reads of a comparison, a duel (its sequential test) and a season.

:mod:`referee.records.stats` and :mod:`referee.records.standings` compute numbers and records; this module says them. The
console, the Markdown leaderboard and ``referee compare`` print these lines; ``leaderboard.json`` carries the
figures themselves (:mod:`referee.publish.files`). Names a bot chose are shown through
:func:`referee.common.printable.printable_line`, so that no name can drive the terminal.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from referee.common.printable import printable_line
from referee.records.luck import MODEL as LUCK_MODEL
from referee.records.sequential import Verdict, describe_hypothesis
from referee.records.standings import FAULT_KINDS, LATENCY_RELATIVE_ERROR
from referee.records.stats import CONFIDENCE, Comparison, Interval

if TYPE_CHECKING:
    from referee.leaguefile.duel_state import DuelState
    from referee.records.standings import BotStanding, LuckAdjusted, Standings


def ranking_note(standings: Standings) -> str:
    """What the leaderboard's rank, strength, score and times mean, and how the ranges were made."""
    spread = (
        f"the fit's covariance over {standings.deals:,} deals"
        if standings.covariance == "sandwich"
        else "a bootstrap over deals"
    )
    return (
        "rank: by strength, a Plackett-Luce fit of every game's finish order; a range such as 1–3 is where the "
        f"games put the bot at {CONFIDENCE:.0%} ({spread}): bots whose order the games do not "
        "establish share ranks. strength: Elo relative to the field's mean, with its "
        f"{CONFIDENCE:.0%} interval; score: per game (n - place) / (n - 1), first 1 and last 0; "
        f"decision times within {LATENCY_RELATIVE_ERROR:.1%}."
    )


CANDIDATES_NOTE = "The candidates are ranked among themselves, on the same deals; the field apart."
REJECTED_NOTE = (
    "Versions the ladder judged and did not enter, each author's newest first, with what rejected them; "
    "each author's own page (authors/AUTHOR/ on referee serve) has the whole reason and every check."
)
HEAD_TO_HEAD_NOTE = (
    "Each cell: how often the row's bot finished above the column's bot, of the games they shared "
    "(two candidates of a gauntlet: of the deals both played in the same seat, a tie counting half). "
    "The JSON leaderboard and `referee compare` add intervals and the likelihood of superiority."
)


# ----- figures as text ---------------------------------------------------------------------------


def format_interval(interval: Interval, form: str = "{:.3f}") -> str:
    """``estimate [low, high]`` in ``form``; infinite ends as -inf and +inf."""
    return f"{_number(interval.estimate, form)} [{_number(interval.low, form)}, {_number(interval.high, form)}]"


def format_elo(elo: Interval) -> str:
    """An Elo difference and its interval, whole Elo, with signs."""
    return f"elo {format_interval(elo, '{:+.0f}')}"


def optional_text(value: float | None, form: str) -> str:
    """``value`` in ``form``, or ``-`` where there is none."""
    return "-" if value is None else form.format(value)


def _number(value: float, form: str) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    text = form.format(value)
    if text.startswith("-") and not any(digit in text for digit in "123456789"):
        text = ("+" if "+" in form else "") + text[1:]  # no "-0" for a value that rounds to zero
    return text


# ----- two bots compared --------------------------------------------------------------------------


def order_sentence(bot: str, other: str, elo: Interval, los: float) -> str:
    """Which of two bots the games put first: only when the Elo interval of ``bot`` over ``other`` leaves out 0.

    The likelihood of superiority ``los`` leans one way with any data; an order is established only where the
    interval says so, and otherwise the sentence says it is not.
    """
    if elo.low > 0.0 or elo.high < 0.0:
        stronger, likelihood = (bot, los) if elo.low > 0.0 else (other, 1.0 - los)
        return f"{stronger} is the stronger bot with likelihood {likelihood:.1%}."
    return f"the order of {bot} and {other} is not established: the elo interval spans 0."


def comparison_text(bot: str, other: str, comparison: Comparison) -> str:
    """Two bots compared on the deals they shared, as lines for the terminal."""
    bot_text, other_text = printable_line(bot), printable_line(other)
    if comparison.games == 0:
        return f"{bot_text} and {other_text} shared no game."
    above_rate, difference, elo = comparison.above_rate, comparison.score_difference, comparison.elo
    los = comparison.los
    assert above_rate is not None and difference is not None and elo is not None and los is not None  # games shared
    deals = f"{comparison.deals} deal{'s' if comparison.deals != 1 else ''}"
    level = f"{CONFIDENCE:.0%} interval"
    if comparison.ties:  # paired games: never at one table, so "above" is a better place in the same seat
        counts = (
            f"  better place: {comparison.above}, worse: {comparison.below}, the same: {comparison.ties} "
            f"({format_interval(above_rate, '{:.1%}')} better, a tie counting half; {level})"
        )
        games = f"{comparison.games} paired games (the same deal, seat and opponents) on {deals}"
    else:
        counts = (
            f"  finished above: {comparison.above}, below: {comparison.below} "
            f"({format_interval(above_rate, '{:.1%}')} above, {level})"
        )
        games = f"{comparison.games} shared games on {deals}"
    lines = [
        f"{bot_text} against {other_text}: {games}",
        counts,
        (
            f"  mean score difference: {format_interval(difference, '{:+.3f}')} ({level}; "
            "score per game (n - place) / (n - 1))"
        ),
        f"  {format_elo(elo)} ({level}; from the share of games above)",
        f"  likelihood of superiority: {los:.1%}; " + order_sentence(bot_text, other_text, elo, los),
    ]
    if comparison.deals < 2:
        lines.append("  one deal cannot show how results vary from deal to deal: the intervals are the whole range")
    return "\n".join(lines)


def luck_adjusted_text(adjusted: LuckAdjusted) -> str:
    """The score difference with the luck of the cards taken out, beside the raw one, as lines for the terminal."""
    if adjusted.raw is None or adjusted.adjusted is None:
        return "  with the luck taken out: no shared game"
    level = f"{CONFIDENCE:.0%} interval, deals as the samples"
    ratio = adjusted.variance_ratio
    gain = "" if ratio is None else f"; as narrow as the raw one would be with {ratio:.2f} times the games"
    return "\n".join(
        [
            (
                f"  mean score difference with the luck taken out: {format_interval(adjusted.adjusted, '{:+.3f}')} "
                f"(raw, the same way: {format_interval(adjusted.raw, '{:+.3f}')}; {level}{gain})"
            ),
            f"  luck measured by the value function {adjusted.model.name} (digest {adjusted.model.digest})",
        ]
    )


# ----- a duel --------------------------------------------------------------------------------------


def duel_lines(state: DuelState) -> list[str]:
    """A duel's verdict as a block of lines for the terminal and the Markdown leaderboard."""
    first, second = state.sprt.candidates
    measure, lower_upper = state.sprt.measure, state.test.bounds
    h0, h1 = describe_hypothesis(measure, state.sprt.h0), describe_hypothesis(measure, state.sprt.h1)
    luck = ", on scores with the luck taken out" if state.sprt.adjust_for_luck else ""
    lines = [
        f"duel {first} against {second}: H0 {h0}, H1 {h1}, alpha {state.sprt.alpha:g}, beta {state.sprt.beta:g}{luck}",
        f"  {state.headline()}",
    ]
    lower, upper = lower_upper
    if state.test.verdict is Verdict.ACCEPT_H1:
        lines.append(
            f"  the results favour {h1} over {h0}: a true {h0} gives this verdict at most "
            f"{state.sprt.alpha:.0%} of the time"
        )
    elif state.test.verdict is Verdict.ACCEPT_H0:
        lines.append(
            f"  the results favour {h0} over {h1}: a true {h1} gives this verdict at most "
            f"{state.sprt.beta:.0%} of the time"
        )
    lines.append(
        f"  log-likelihood ratio {state.test.llr:+.2f}; bounds {lower:+.2f} (accept H0) and {upper:+.2f} (accept H1)"
    )
    comparison = comparison_text(first, second, state.test.comparison())
    lines.extend("  " + line for line in comparison.splitlines())
    adjusted = state.test.adjusted_difference()
    if adjusted is not None:
        lines.append(
            f"    mean score difference with the luck taken out: {format_interval(adjusted, '{:+.3f}')} "
            f"({CONFIDENCE:.0%} interval, deals as the samples; luck measured by {LUCK_MODEL.name}, "
            f"digest {LUCK_MODEL.digest})"
        )
    if state.games_not_counted:
        why = "running when the verdict came" if state.decided else "of deals not yet complete"
        lines.append(
            f"  {state.games_not_counted} more game{'s' if state.games_not_counted != 1 else ''} "
            f"recorded ({why}): in games.jsonl and the standings, not in the test"
        )
    return lines


# ----- the standings ---------------------------------------------------------------------------------


def faults_text(row: BotStanding) -> str:
    """``timeout 3, crash 1; 2 forfeits``: the kinds that happened, then the games forfeited."""
    text = ", ".join(f"{kind} {row.faults[kind]}" for kind in FAULT_KINDS if row.faults[kind])
    if row.forfeits:
        text += f"{'; ' if text else ''}{row.forfeits} forfeit{'s' if row.forfeits != 1 else ''}"
    return text


def season_lines(standings: Standings) -> list[str]:
    """What a season changed, for people: the games left out with the disqualified bots, each author's versions."""
    lines = []
    disqualified = [row for row in standings.rows if row.disqualified]
    if disqualified:
        games = standings.left_out
        lines.append(
            f"Disqualified, unranked: {'; '.join(f'{row.bot} ({row.status_text})' for row in disqualified)}. "
            f"The {games} game{'' if games == 1 else 's'} they sat in count for no one."
        )
    rows = {row.bot: row for row in standings.rows}
    for author, bots in standings.versions:
        shown = [
            f"{bot} ({optional_text(rows[bot].strength, '{:+.0f}')}"
            + (f", {rows[bot].status})" if rows[bot].status_text else ")")
            for bot in bots
            if bot in rows
        ]
        lines.append(f"Versions of {author}: " + " \u2192 ".join(shown))
    return lines


def void_note(standings: Standings) -> str:
    """`` (and 3 void games, which count for nobody: r1-t001-s0 ...)``, or nothing."""
    void = standings.void_games
    if not void:
        return ""
    shown = ", ".join(game_id for game_id, _ in void[:10]) + (", ..." if len(void) > 10 else "")
    return f" (and {len(void)} void game{'s' if len(void) > 1 else ''}, which count for nobody: {shown})"


def utc_minute(at: str) -> str:
    """A time as the ladder records it (ISO 8601, UTC) to the minute: ``2026-01-02 03:04 UTC``, as the page shows it."""
    return at[:16].replace("T", " ") + " UTC" if at.endswith(("+00:00", "Z")) else at
