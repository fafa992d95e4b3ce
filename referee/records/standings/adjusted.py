"""Two bots compared with the luck of the cards taken out (:mod:`referee.records.luck`), and each game's luck from its log."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.records.luck import MODEL, LuckModel, game_luck
from referee.records.results import GameRecord
from referee.records.stats import Interval, mean_per_game, placement_score

LuckOf = Callable[[GameRecord], Sequence[float]]  # a game's luck, by seat (referee.records.luck)


@dataclass(frozen=True)
class LuckAdjusted:
    """Bot A against bot B over the deals they shared: the mean score difference per shared game, raw and with
    each game's luck taken out, both with deals as the samples (the same estimator, so their widths compare)."""

    games: int
    deals: int
    raw: Interval | None
    adjusted: Interval | None
    model: LuckModel

    @property
    def variance_ratio(self) -> float | None:
        """How many times fewer games the adjusted figure needs for the same width (the squared width ratio)."""
        if self.raw is None or self.adjusted is None or self.deals < 2:
            return None
        adjusted = self.adjusted.high - self.adjusted.low
        return ((self.raw.high - self.raw.low) / adjusted) ** 2 if adjusted else None


def luck_adjusted(
    records: Iterable[GameRecord],
    bot: str,
    other: str,
    luck_of: LuckOf,
    model: LuckModel = MODEL,
) -> LuckAdjusted:
    """``bot`` against ``other`` on the games they shared (void games left out), each game's luck given by
    ``luck_of`` (by seat): the score difference ``score(bot) - score(other)`` raw and less the luck's."""
    raw: dict[tuple[str, int], list[float]] = {}
    adjusted: dict[tuple[str, int], list[float]] = {}
    for record in records:
        if record.void or bot not in record.seats or other not in record.seats:
            continue
        luck = luck_of(record)
        places = record.places()
        size = len(record.seats)
        for seat, name in enumerate(record.seats):
            for other_seat, other_name in enumerate(record.seats):
                if name != bot or other_name != other:
                    continue
                difference = float(placement_score(places[seat], size) - placement_score(places[other_seat], size))
                for totals, value in ((raw, difference), (adjusted, difference - luck[seat] + luck[other_seat])):
                    entry = totals.setdefault(record.deal, [0, 0.0])
                    entry[0] += 1
                    entry[1] += value
    deals_raw = [(int(games), total) for games, total in raw.values()]
    deals_adjusted = [(int(games), total) for games, total in adjusted.values()]
    return LuckAdjusted(
        games=sum(games for games, _ in deals_raw),
        deals=len(deals_raw),
        raw=mean_per_game(deals_raw),
        adjusted=mean_per_game(deals_adjusted),
        model=model,
    )


def folder_luck(directory: Path) -> LuckOf:
    """Each game's luck, by seat, from its log in the league output folder ``directory``."""
    return lambda record: game_luck(directory, record.game_id)
