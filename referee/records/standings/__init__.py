"""League standings from finished games: the ranking, results, faults, decision times and head-to-head.

The input is the league's game records (:class:`referee.records.results.GameRecord`,
or their ``games.jsonl`` objects), one per finished game. Records may
arrive in any order (parallel workers append them as they finish), and every
figure is a sum that does not depend on it: the same records in any order
give identical standings, to the last digit.

The ranking is one Plackett-Luce fit of every counted game's finish order,
with rank ranges from a bootstrap over deals, or past its size the fit's
covariance (:mod:`referee.records.ranking`). In a gauntlet or a duel the candidates
are ranked among themselves, the field apart. Each pair of bots comes with a
comparison over the deals they shared (``referee.records.stats``;
docs/statistics.md); two candidates of a gauntlet, who never sit at one
table, are compared on the same deals in the same seats.

- :func:`compute_standings`: the standings of records given (any order);
- :func:`folder_standings`: of a league's output folder, and
  :class:`FolderStandings` the same kept current, reading only what
  ``games.jsonl`` gained (``folder.py``);
- the figures kept as games are counted (``tally.py``), the table they make
  (``table.py``), and two bots compared less the luck (``adjusted.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from referee.protocol.standing import DISQUALIFIED
from referee.records.ranking import RESAMPLES
from referee.records.results import FAULT_KINDS, GameRecord, RecordError
from referee.records.standings.adjusted import LuckAdjusted, LuckOf, folder_luck, luck_adjusted
from referee.records.standings.folder import (
    FAULTY_GAMES,
    NEWEST_GAMES,
    FolderStandings,
    adjusts_for_luck,
    bootstrap_seed,
    folder_standings,
)
from referee.records.standings.table import (
    LATENCY_MAX_MS,
    LATENCY_MIN_MS,
    LATENCY_RELATIVE_ERROR,
    BotStanding,
    History,
    LatencyHistogram,
    ShownGames,
    Standings,
    UnknownBotError,
    version_lines,
)
from referee.records.standings.tally import BOOTSTRAP_DEALS, HISTORY_POINTS, WINDOW_DEALS, Tally, history_counts

__all__ = [
    "BOOTSTRAP_DEALS",
    "FAULTY_GAMES",
    "FAULT_KINDS",
    "HISTORY_POINTS",
    "LATENCY_MAX_MS",
    "LATENCY_MIN_MS",
    "LATENCY_RELATIVE_ERROR",
    "NEWEST_GAMES",
    "WINDOW_DEALS",
    "BotStanding",
    "FolderStandings",
    "History",
    "LatencyHistogram",
    "LuckAdjusted",
    "LuckOf",
    "RecordError",
    "ShownGames",
    "Standings",
    "Tally",
    "UnknownBotError",
    "adjusts_for_luck",
    "bootstrap_seed",
    "compute_standings",
    "folder_luck",
    "folder_standings",
    "history_counts",
    "luck_adjusted",
    "version_lines",
]


def compute_standings(
    records: Iterable[Mapping[str, Any] | GameRecord],
    bots: Sequence[str] | None = None,
    *,
    candidates: Sequence[str] = (),
    league_seed: int | None = None,
    resamples: int = RESAMPLES,
    entries: Mapping[str, Mapping[str, str]] | None = None,
    luck_of: LuckOf | None = None,
    history: int = 0,
) -> Standings:
    """Compute the standings from game records, in any order.

    ``luck_of`` (a game's luck by seat, :mod:`referee.records.luck`): each bot's
    mean score is also given with its interval, raw and with the luck taken out.

    ``entries`` are ``league.json``'s season fields by bot: every game a
    disqualified bot sat in is left out (it counts for no one, as if never
    played), and the bot is listed after the ranked bots, unranked.

    ``bots`` is the league's bot list, so that a bot without a finished game
    still gets a row; a record naming another bot is an error. Without it,
    the bots are those the records name. ``candidates`` (a duel's; a
    gauntlet's are also read from its records) are ranked among themselves,
    apart from the field. ``league_seed`` seeds the bootstrap of the rank
    ranges (:func:`bootstrap_seed`). ``history``: the strength over time too, at
    most that many points (:func:`history_counts`), the games counted in the order given.
    """
    entries = entries or {}
    tally = Tally(
        bots,
        disqualified=frozenset(name for name, entry in entries.items() if entry.get("status") == DISQUALIFIED),
        candidates=candidates,
        luck_of=luck_of,
        history=history,
    )
    for record in records:
        tally.add(record)
    return tally.standings(seed=bootstrap_seed(league_seed), resamples=resamples, entries=entries)
