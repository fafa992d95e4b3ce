"""How often each pair of bots has met in a sampled draw so far, and how far that is from the draw's guarantees."""

from __future__ import annotations

MAX_SPREAD = 2  # the most two pairs' meeting counts may differ
COVER_FROM = 1.5  # the average meetings a pair from which every pair meets


class Meetings:
    """The state the draw carries from block to block: how often each pair has met."""

    def __init__(self, bots: int, table_size: int) -> None:
        self.bots = bots
        self.table_size = table_size
        self.met = [[0] * bots for _ in range(bots)]
        self.tables_so_far = 0  # per bot, not counting extra tables

    @property
    def average(self) -> float:
        """How many times a pair has met on average (not counting extra tables)."""
        return self.tables_so_far * (self.table_size - 1) / max(1, self.bots - 1)

    def histogram(self) -> dict[int, int]:
        """How many pairs have met how many times."""
        histogram: dict[int, int] = {}
        for first in range(self.bots):
            row = self.met[first]
            for second in range(first):
                histogram[row[second]] = histogram.get(row[second], 0) + 1
        return histogram

    def score(self) -> tuple[bool, int, int]:
        """How far the draw is from its guarantees, lower is better: whether it breaks one, the spread of the
        pair counts, and how many pairs lie outside the best band."""
        histogram = self.histogram()
        spread = max(histogram) - min(histogram)
        uncovered = self.average >= COVER_FROM and min(histogram) == 0
        if spread <= MAX_SPREAD:
            return uncovered, spread, histogram.get(0, 0) if uncovered else 0
        bottom = bands(histogram)[0]
        return True, spread, sum(n for count, n in histogram.items() if not bottom <= count <= bottom + MAX_SPREAD)


def bands(histogram: dict[int, int]) -> list[int]:
    """Bands of MAX_SPREAD + 1 counts (by their lowest count) to pull every pair into, the most promising first.

    The band that leaves the fewest pairs outside (each weighed by its squared
    distance) comes first; of equals, the higher (more pairs meet).
    """
    low, high = min(histogram), max(histogram)

    def cost(bottom: int) -> int:
        return sum(n * max(0, bottom - count, count - bottom - MAX_SPREAD) ** 2 for count, n in histogram.items())

    return sorted(range(low, max(low, high - MAX_SPREAD) + 1), key=lambda bottom: (cost(bottom), -bottom))
