"""The leaderboard for the terminal: a plain-text table, at most a console's width for usual names."""

from __future__ import annotations

from referee.common.printable import printable_line
from referee.publish.columns import LUCK_COLUMNS, columns_of
from referee.publish.text import faults_text
from referee.records.standings import Standings

CONSOLE_WIDTH = 100

# The console's columns (the files hold every column): the main figures, then every fault kind
# and the forfeits folded into one column, shown only when some bot has a fault.
_CONSOLE_HEADERS = ("rank", "bot", "strength", "95%", "games", "mean score", "median ms")
# The standings shown while a league runs.
_COMPACT_HEADERS = ("rank", "bot", "strength", "games", "mean score")
_NARROWEST_FAULTS = 12
_NARROWEST_BOT = 12


def console_table(standings: Standings, compact: bool = False, width: int = CONSOLE_WIDTH) -> str:
    """The leaderboard as a plain-text table for the terminal, at most ``width`` columns wide for usual names.

    The fault kinds and forfeits are folded into one ``faults`` column
    (``crash 2, timeout 1; 1 forfeit``: only what happened), shown only when
    some bot has a fault. Fault lists, then bot names, too long for
    ``width`` are cut with "…": a fault list at its end, a name in its
    middle, so that its end (``-v2``: which version) still shows.
    ``compact`` keeps fewer figures, for the standings while a league runs.
    """
    every = columns_of(standings)
    shown = {*(_COMPACT_HEADERS if compact else _CONSOLE_HEADERS), *(header for header, _, _ in LUCK_COLUMNS)}
    columns = [(header, right) for header, right, _ in every if header in shown]
    table = [[printable_line(cell(row)) for header, _, cell in every if header in shown] for row in standings.rows]
    cuttable = [(1, _NARROWEST_BOT, True)]
    if any(any(row.faults.values()) or row.forfeits for row in standings.rows):
        columns.append(("faults", False))
        for cells, row in zip(table, standings.rows, strict=True):
            cells.append(faults_text(row))
        cuttable.insert(0, (len(columns) - 1, _NARROWEST_FAULTS, False))
    headers = [header for header, _ in columns]
    widths = _fit(table, headers, width, cuttable)
    lines = [
        "  ".join(
            (text.rjust if right else text.ljust)(column_width)
            for text, column_width, (_, right) in zip(cells, widths, columns, strict=True)
        ).rstrip()
        for cells in [headers, ["-" * column_width for column_width in widths], *table]
    ]
    if standings.candidates:
        first_field = 2 + sum(row.candidate for row in standings.rows)
        lines.insert(first_field, f"the field (ranked apart from the {len(standings.candidates)} candidates):")
        lines.insert(2, "candidates:")
    return "\n".join(lines)


def _fit(table: list[list[str]], headers: list[str], width: int, cuttable: list[tuple[int, int, bool]]) -> list[int]:
    """Cut the cells of the ``cuttable`` columns with "…" until the table fits ``width``; return the column widths.

    ``cuttable`` lists (column, narrowest width, cut in the middle) in the
    order to cut: each column is cut down to its narrowest before the next
    is touched. A cell cut in the middle keeps its end (a name's version);
    another keeps its start. Columns are two spaces apart.
    """
    widths = [max([len(header), *(len(cells[index]) for cells in table)]) for index, header in enumerate(headers)]
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    for index, narrowest, middle in cuttable:
        cut = max(0, min(excess, widths[index] - max(narrowest, len(headers[index]))))
        widths[index] -= cut
        excess -= cut
        kept = widths[index] - 1
        for cells in table:
            if len(cells[index]) > widths[index]:
                text = cells[index]
                cells[index] = (
                    text[: kept // 2] + "…" + text[len(text) - (kept - kept // 2) :] if middle else text[:kept] + "…"
                )
    return widths
