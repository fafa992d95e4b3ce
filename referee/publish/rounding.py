"""Figures as the files publish them: rounded to fixed digits, so that the same standings give the same bytes."""

from __future__ import annotations

import math
from typing import Any

from referee.records.stats import Interval

STRENGTH_DIGITS = 1  # Elo
FRACTION_DIGITS = 4  # win rate, average placement, scores, likelihoods
ELO_DIGITS = 1
MS_DIGITS = 3


def rounded(value: float | None, digits: int) -> float | None:
    """``value`` to ``digits`` decimals, never ``-0.0``; None stays None."""
    if value is None:
        return None
    return round(value, digits) or 0.0  # no "-0.0"


def rounded_finite(value: float, digits: int) -> float | None:
    """``value`` rounded, or None for an infinite end (one the data cannot bound)."""
    return None if math.isinf(value) else rounded(value, digits)


def rounded_finite_or_none(value: float | None, digits: int) -> float | None:
    return None if value is None else rounded_finite(value, digits)


def interval_data(interval: Interval | None, digits: int) -> dict[str, Any] | None:
    """An interval as JSON-ready data: its estimate and ends rounded, an infinite end null."""
    if interval is None:
        return None
    return {
        "estimate": rounded_finite(interval.estimate, digits),
        "low": rounded_finite(interval.low, digits),
        "high": rounded_finite(interval.high, digits),
    }
