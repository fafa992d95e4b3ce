"""The league's page, ``leaderboard.html``: the standings, the games, the faults and a chart, in one file.

Everything on it is read from the league's output directory through
:mod:`referee.results`: ``league.json`` (the name and the settings),
``games.jsonl`` (every finished game, in the order they finished), the game
logs of games with faults (which decision, and where in the bot's output,
never the output itself), and the standings computed from the results. The chart is the standings'
strength as games accumulate (:func:`strength_history`). Seeds are strings
in its data (a JavaScript number would round a 64-bit seed), and nothing on
it names a path of the organiser's machine: paths inside the league's
folder are written relative to it, others by their last part.
Each game links to its replay page, ``replays/GAME_ID.html``: a file where
the league writes them (``static_replays``), else made from the game's log by
``referee serve`` (so the link is shown on a served page, not on one opened
from disk). The page is self-contained (its script, style and data inline), so
a finished league's directory is a static site; while a league runs the page
refreshes itself (see :mod:`referee.publish.live` and ``referee serve``).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee import __version__
from referee.errors import OutputError
from referee.faults import without_bot_words
from referee.gamelog import GameLogError, find_log, log_path, read_log
from referee.publish.redaction import ABSOLUTE_PATH, public_text
from referee.publish.rounding import STRENGTH_DIGITS
from referee.results import GameRecord, LeagueRecord, read_league, seed_text
from referee.seeding import seed_commitment

ASSETS = Path(__file__).resolve().parent / "html"
REPLAY_DIR = "replays"
FAULTS_SHOWN = 50  # fault entries listed per bot (every fault is counted)
HISTORY_POINTS = 60  # the most points of the strength chart
HISTORY_FITS_KEPT = 1024  # checkpoint fits kept between rewrites of a page (each a few numbers a bot)
DETAIL_CHARS = 300
_NUMBER = re.compile(r"\d+")


def page_data(
    directory: Path | None,
    board: dict[str, Any],
    records: Sequence[GameRecord] = (),
    *,
    live: bool = False,
    scheduled: int | None = None,
) -> dict[str, Any]:
    """The page's data: the league, the leaderboard (``publish.leaderboard_data``), the games, faults, history."""
    league = _league_of(directory)
    finished = [GameRecord.of(record, latencies=False) for record in records]  # as games.jsonl lists them
    records = sorted(finished, key=lambda game: game.index)
    started = [record.started for record in records if record.started]
    replays = directory / REPLAY_DIR if directory is not None else None
    disqualified = {row["bot"] for row in board["rows"] if row.get("status") == "disqualified"}
    settings = dict(league.settings) if league and league.settings else _settings_from_logs(directory, records)
    return {
        "league": {
            "name": league.name if league else board["title"],
            "game": (league.game if league else None) or (records[0].game if records else None),
            "settings": _public_settings(settings, finished=scheduled is not None and len(records) >= scheduled),
            "bots": len(board["rows"]),
            **_season_counts(board),
            "referee_version": (league.referee_version if league else None) or __version__,
            "page_version": __version__,
            "games": len(records),
            "scheduled": scheduled,
            "first_game": min(started) if started else None,
            "last_game": max(started) if started else None,
            "updated": datetime.now(UTC).isoformat(timespec="seconds"),
            "live": live,
            "changes": [dict(change) for change in league.changes] if league else [],  # a season's recorded edits
        },
        "board": board,
        "games": [_game_row(record, replays, directory) for record in records],
        **(_faults(directory, records) if directory is not None else {"faults": {}, "causes": {}}),
        # The chart leaves out what the standings do: the games of disqualified bots (and void games).
        "history": strength_history(
            [record for record in finished if not disqualified.intersection(record.seats)],
            [row["bot"] for row in board["rows"]],
        ),
    }


def _season_counts(board: Mapping[str, Any]) -> dict[str, int]:
    """A season's authors and active versions, for the header beside its versions (the board's bots); a league's: none.

    A season is a board with a ladder's ``submissions`` or an author's line of
    versions; each bot's author is the one those name, else the bot itself.
    """
    if not board.get("submissions") and not board.get("versions"):
        return {}
    author_of = {row["bot"]: row["bot"] for row in board["rows"]}
    for line in board.get("versions") or ():
        author_of.update((bot, line["author"]) for bot in line["bots"] if bot in author_of)
    for author in board.get("submissions") or ():
        author_of.update(
            (version["bot"], author["author"]) for version in author["versions"] if version["bot"] in author_of
        )
    active = sum(row.get("status", "active") == "active" for row in board["rows"])
    return {"authors": len(set(author_of.values())), "active": active}


def _league_of(directory: Path | None) -> LeagueRecord | None:
    if directory is None:
        return None
    try:
        return read_league(directory)
    except OutputError:  # a page is still drawn from the games of a folder whose league.json is unreadable
        return None


def _public_settings(settings: Mapping[str, Any], finished: bool) -> dict[str, Any]:
    """The settings a page may show: until every game is played, the seed's commitment in place of the seed.

    A page may be published while the league runs; a bot that learnt the
    seed from it would know every deal. The commitment lets anyone check the
    seed once it is shown (``referee seed --check SEED``). The seed is a
    string of digits: exact in the page's script.
    """
    shown = dict(settings)
    seed = shown.pop("seed", None)
    if isinstance(seed, int):
        if finished:
            shown["seed"] = seed_text(seed)
        else:
            shown["seed_commitment"] = seed_commitment(seed)
    return shown


def _game_row(record: GameRecord, replays: Path | None, directory: Path | None) -> list[Any]:
    """One game, compactly: index, id, seats, finish order (seats), hands, decisions, faults by seat, void, replay."""
    faults = record.faults or ()
    # 2: its replay page is a file; 1: referee serve makes it from the game's log (written before its record).
    replay = 0 if replays is None else 2 if (replays / f"{record.game_id}.html").exists() else 1
    return [
        record.index,
        record.game_id,
        list(record.seats),
        list(record.finish_order),
        record.hands_played,
        record.decisions,
        [sum(seat.values()) for seat in faults] if any(faults) else 0,
        without_bot_words(public_text(record.void, directory)) if record.void else None,
        replay,
    ]


def _cause(detail: str) -> str:
    """What faults of one cause share: the detail with its paths and numbers left out."""
    return _NUMBER.sub("N", ABSOLUTE_PATH.sub("\u2026", detail))


def _faults(directory: Path, records: Iterable[GameRecord]) -> dict[str, Any]:
    """Each bot's faults, from the logs of the games that had any, and their causes, counted.

    ``faults``: bot -> the first entries (game, decision, kind, the
    referee's detail, and where the bot's output stood, ``line N of
    logs/NAME.log``, for the organiser); ``causes``: bot -> kind ->
    ``[[cause, games, first game, its detail], ...]``, most games first: a
    bot that failed to start in 80 games is one line, not 80. Nothing a bot
    wrote is on the page, which every author may read: not its output, which
    shows its author's thinking, nor the words it sent with a fault
    (:func:`referee.faults.without_bot_words`).
    """
    found: dict[str, list[Any]] = {}
    causes: dict[str, dict[str, dict[str, list[Any]]]] = {}
    for record in records:
        if not any(any(seat.values()) for seat in record.faults or ()):
            continue
        try:
            games = directory / "games"
            log = read_log(find_log(games, record.game_id) or log_path(games, record.game_id))
        except (OSError, ValueError, GameLogError):
            continue  # no log (or not yet): the counts still show on the leaderboard
        for entry in log:
            if entry.get("type") != "fault":
                continue
            bot, kind = entry.get("bot", "?"), entry.get("kind")
            detail = without_bot_words(public_text(str(entry.get("detail", "")), directory))[:DETAIL_CHARS]
            counted = causes.setdefault(bot, {}).setdefault(str(kind), {})
            cause = counted.setdefault(_cause(detail), [_cause(detail), 0, record.game_id, detail])
            cause[1] += 1
            listed = found.setdefault(bot, [])
            if len(listed) < FAULTS_SHOWN:
                listed.append(
                    {
                        "game": record.game_id,
                        "n": entry.get("n"),
                        "kind": kind,
                        "detail": detail,
                        "output": _output_place(entry.get("log"), entry.get("log_line")),
                    }
                )
    return {
        "faults": found,
        "causes": {
            bot: {
                kind: sorted(entries.values(), key=lambda cause: (-cause[1], cause[0]))
                for kind, entries in kinds.items()
            }
            for bot, kinds in causes.items()
        },
    }


def _output_place(log_name: Any, line: Any) -> str | None:
    """Where a bot's output stood at a fault, in words: ``line 12 of logs/alpha-1.log``; no link, no output."""
    if not log_name:
        return None
    log = f"logs/{Path(str(log_name)).name}"
    return f"line {line} of {log}" if isinstance(line, int) and line > 0 else f"the start of {log}"


def _settings_from_logs(directory: Path | None, records: Sequence[GameRecord]) -> dict[str, Any]:
    """The settings of a league whose ``league.json`` predates them: from its first game's log."""
    if directory is None or not records:
        return {}
    try:
        games = directory / "games"
        start = read_log(find_log(games, records[0].game_id) or log_path(games, records[0].game_id))[0]
    except (OSError, ValueError, IndexError, GameLogError):
        return {}
    return {
        "table_size": start.get("num_players"),
        "timing": start.get("timing"),
        "turn_limit": start.get("turn_limit"),
        "fault_policy": start.get("policy"),
    }


def history_counts(total: int, points: int = HISTORY_POINTS) -> list[int]:
    """The numbers of counted games the chart is fitted after: every ``step`` games, and ``total``; at most ``points``.

    ``step`` is the smallest power of two that keeps to ``points``, so the
    counts of a league that grows stay counts as it grows (a step only ever
    doubles): a fit made after 512 games is still wanted after 20,000.
    """
    step = 1
    while -(-total // step) > points:
        step *= 2
    counts = list(range(step, total + 1, step))
    return counts if not total or counts[-1:] == [total] else [*counts, total]


# Fits of earlier rewrites, by a digest of the games they were fitted on: a page is rewritten as games finish,
# by one long-lived process (referee.publish.live), and the games before a count only change if the file does.
_FITTED: OrderedDict[bytes, dict[str, float]] = OrderedDict()


def strength_history(
    records: Sequence[GameRecord | Mapping[str, Any]], bots: Sequence[str], points: int = HISTORY_POINTS
) -> dict[str, Any]:
    """Each bot's strength as counted games accumulate: the standings' fit of the games up to each of a few counts.

    ``records`` are the games in the order they finished (as ``games.jsonl``
    lists them); void games do not count, and the caller leaves out what
    else the standings leave out (a disqualified bot's games). After each of
    :func:`history_counts`, the strengths are those :func:`referee.ranking.rank_bots`
    fits from the games so far (Elo relative to the mean of the bots that
    played them; ``None`` for a bot yet to play), so the last point is the
    standings' strength. A fit is kept, by a digest of the games it was
    made from, and not made again while those games stay the same.
    """
    games = [GameRecord.of(record, latencies=False) for record in records]
    orders = [game.bots_in_finish_order() for game in games if not game.void]
    counts = history_counts(len(orders), points)
    digests = _prefix_digests(orders, counts)
    missing = [(count, digest) for count, digest in zip(counts, digests, strict=True) if digest not in _FITTED]
    if missing:
        # Imported here: the fit needs numpy (0.1 s to load), which a process writing only replay pages (the live
        # helper of a short league) never does.
        from referee.ranking import strengths_after

        fitted = strengths_after(orders, [count for count, _ in missing])
        for (_, digest), strengths in zip(missing, fitted, strict=True):
            _FITTED[digest] = strengths
    fits = []
    for digest in digests:
        _FITTED.move_to_end(digest)
        fits.append(_FITTED[digest])
    while len(_FITTED) > HISTORY_FITS_KEPT:
        _FITTED.popitem(last=False)
    return {
        "games": counts,
        "strength": {
            name: [None if name not in fit else round(fit[name], STRENGTH_DIGITS) or 0.0 for fit in fits]
            for name in bots
        },
    }


def _prefix_digests(orders: Sequence[Sequence[str]], counts: Sequence[int]) -> list[bytes]:
    """A digest of the first ``count`` finish orders, for each of ``counts`` (ascending)."""
    running = hashlib.sha256()
    digests = []
    done = 0
    for count in counts:
        for order in orders[done:count]:
            running.update("".join(f"{len(name)}:{name}," for name in order).encode() + b";")
        done = count
        digests.append(running.copy().digest())
    return digests


def _script_json(data: dict[str, Any]) -> str:
    """JSON to put inside a <script> element: nothing in it can close the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(data: dict[str, Any]) -> str:
    """The page: the template with its style, script and data inline."""
    template = (ASSETS / "leaderboard.html").read_text(encoding="utf-8")
    title = data["league"]["name"] + " — leaderboard"
    return (
        template.replace("{{title}}", html.escape(title))
        .replace("/*{{style}}*/", (ASSETS / "leaderboard.css").read_text(encoding="utf-8"))
        .replace("{{data}}", _script_json(data))
        .replace("/*{{script}}*/", (ASSETS / "leaderboard.js").read_text(encoding="utf-8"))
    )


def page_data_of(html_text: str) -> dict[str, Any]:
    """The data inside a league page (for tests and tools)."""
    start = html_text.index('<script id="league"')
    start = html_text.index(">", start) + 1
    data: dict[str, Any] = json.loads(html_text[start : html_text.index("</script>", start)])
    return data
