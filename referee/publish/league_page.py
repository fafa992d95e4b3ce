"""The league's page, ``leaderboard.html``: the standings, the games, the faults and a chart, in one file.

Everything on it is read from the league's output directory through
:mod:`referee.records.results`: ``league.json`` (the name and the settings), the
games of ``games.jsonl`` that may be shown as the standings read them
(:class:`referee.records.standings.ShownGames`: how many, the newest
:data:`~referee.records.standings.NEWEST_GAMES` of them, each bot's newest games with
a fault), the logs of those games with faults (which decision, and where in
the bot's output, never the output itself), and the standings computed from
the results. The chart is the standings' strength as games accumulated, at up
to 60 points (:class:`referee.records.standings.History`). So a page costs the same
however many games the league has played. Seeds are strings
in its data (a JavaScript number would round a 64-bit seed), and nothing on
it names a path of the organiser's machine: paths inside the league's
folder are written relative to it, others by their last part.
Each game links to its replay page, ``replays/GAME_ID.html``: a file where
the league writes them (``static_replays``), else made from the game's log by
``referee serve`` (so the link is shown on a served page, not on one opened
from disk); :func:`replay_of` is the one place that says which, and
:func:`archive_of` likewise of the archive of every game shown
(:mod:`referee.publish.archive`). Each cell of the head to head links to the two
bots' own page (:mod:`referee.publish.head_to_head`), where the folder has them. The page is
self-contained (its script, style and data inline), so
a finished league's directory is a static site; while a league runs the page
refreshes itself (see :mod:`referee.publish.live` and ``referee serve``).
"""

from __future__ import annotations

import html
import json
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee import __version__
from referee.common.errors import OutputError
from referee.engine.seeding import seed_commitment
from referee.protocol.faults import without_bot_words
from referee.publish.redaction import ABSOLUTE_PATH, public_text
from referee.publish.rounding import STRENGTH_DIGITS
from referee.records.gamelog import GameLogError, find_log, log_path, read_log
from referee.records.results import GameRecord, LeagueRecord, read_league, seed_text

if TYPE_CHECKING:
    from referee.records.standings import History, ShownGames

ASSETS = Path(__file__).resolve().parent / "html"
REPLAY_DIR = "replays"
ARCHIVE_NAME = "games.tar.gz"  # every game shown, as one archive: beside the page, or served at /games.tar.gz
FAULTS_SHOWN = 50  # fault entries listed per bot (every fault is counted)
LOGS_KEPT = 4096  # games' fault entries kept between rewrites of a page (each bot's newest games with faults)
DETAIL_CHARS = 300
_NUMBER = re.compile(r"\d+")


def page_data(
    directory: Path | None,
    board: dict[str, Any],
    games: ShownGames | None = None,
    history: History | None = None,
    *,
    live: bool = False,
    scheduled: int | None = None,
    pair_pages: bool = False,
) -> dict[str, Any]:
    """The page's data: the league, the leaderboard (``publish.leaderboard_data``), the games, faults, history.

    ``games`` and ``history`` are what the standings read of the folder (:class:`referee.records.standings.Standings`'s
    ``shown`` and ``history``); without them, the page has the standings alone. ``pair_pages``: each pair of bots
    that shared a game has its page (:mod:`referee.publish.head_to_head`), which the head to head links to.
    """
    league = _league_of(directory)
    newest = sorted(games.newest, key=lambda game: -game.index) if games else []  # the schedule's latest first
    first = games.first if games else None
    count = games.count if games else 0
    settings = dict(league.settings) if league and league.settings else _settings_from_logs(directory, first)
    return {
        "league": {
            "name": league.name if league else board["title"],
            "game": (league.game if league else None) or (first.game if first else None),
            "settings": public_settings(settings, finished=scheduled is not None and count >= scheduled),
            "bots": len(board["rows"]),
            **_season_counts(board),
            "referee_version": (league.referee_version if league else None) or __version__,
            "page_version": __version__,
            "games": count,
            "games_listed": len(newest),  # the newest: a page lists no more, however long the league
            "scheduled": scheduled,
            "first_game": games.first_started if games else None,
            "last_game": games.last_started if games else None,
            "updated": datetime.now(UTC).isoformat(timespec="seconds"),
            "live": live,
            "changes": [dict(change) for change in league.changes] if league else [],  # a season's recorded edits
            "pair_pages": pair_pages,
            "archive": archive_of(directory),
        },
        "board": board,
        "games": [game_row(record, directory) for record in newest],
        **(_faults(directory, games) if directory is not None and games else {"faults": {}, "causes": {}}),
        # The chart leaves out what the standings do: the games of disqualified bots (and void games).
        "history": history_data(history, [row["bot"] for row in board["rows"]]),
    }


def history_data(history: History | None, bots: Sequence[str]) -> dict[str, Any]:
    """The chart's data: the counts of games it was fitted after, and each bot's strength there (None before it
    played), rounded as the leaderboard rounds strengths."""
    counts = list(history.counts) if history else []
    fits = list(history.strengths) if history else []
    return {
        "games": counts,
        "strength": {
            name: [None if name not in fit else round(fit[name], STRENGTH_DIGITS) or 0.0 for fit in fits]
            for name in bots
        },
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


def public_settings(settings: Mapping[str, Any], finished: bool) -> dict[str, Any]:
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


def replay_of(directory: Path | None, game_id: str) -> int:
    """Where a game's replay is: 2, a file (``replays/GAME_ID.html``); 1, made from the game's log by ``referee
    serve`` when asked (the log is written before the record); 0, nowhere: a page of the standings alone, or a
    game whose log is no longer kept (``keep_logs``, :mod:`referee.records.retention`).

    The one place the page decides a game's replay link.
    """
    if directory is None:
        return 0
    if (directory / REPLAY_DIR / f"{game_id}.html").exists():
        return 2
    return 1 if find_log(directory / "games", game_id) is not None else 0


def archive_of(directory: Path | None) -> int:
    """Where the archive of every game shown is (:mod:`referee.publish.archive`): 2, a file in the folder
    (``games.tar.gz``, as ``referee export DIR --archive DIR/games.tar.gz`` writes it); 1, made by ``referee serve``
    when asked; 0, nowhere (a page of the standings alone)."""
    if directory is None:
        return 0
    return 2 if (directory / ARCHIVE_NAME).is_file() else 1


def game_row(record: GameRecord, directory: Path | None) -> list[Any]:
    """One game, compactly: index, id, seats, finish order (seats), hands, decisions, faults by seat, void, replay
    (:func:`replay_of`); the league's page and the head-to-head pages list games so."""
    faults = record.faults or ()
    replay = replay_of(directory, record.game_id)
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


# Each game's fault entries from its log, by (folder, game id): a page is rewritten as games finish, by one
# long-lived process (referee.publish.live), and the bots' newest games with faults change a few at a time.
_LOGGED: OrderedDict[tuple[Path, str], list[dict[str, Any]]] = OrderedDict()


def _logged_faults(directory: Path, game_id: str) -> list[dict[str, Any]]:
    """The fault entries of a game's log (none where it has no log, or not yet)."""
    key = (directory, game_id)
    if key in _LOGGED:
        _LOGGED.move_to_end(key)
        return _LOGGED[key]
    try:
        games = directory / "games"
        log = read_log(find_log(games, game_id) or log_path(games, game_id))
    except (OSError, ValueError, GameLogError):
        return []  # no log (or not yet): the counts still show on the leaderboard
    _LOGGED[key] = [entry for entry in log if entry.get("type") == "fault"]
    while len(_LOGGED) > LOGS_KEPT:
        _LOGGED.popitem(last=False)
    return _LOGGED[key]


def _faults(directory: Path, games: ShownGames) -> dict[str, Any]:
    """Each bot's faults, from the logs of its newest games with faults (``games.with_faults``), and their causes.

    ``faults``: bot -> the first entries, newest game first (game,
    decision, kind, the referee's detail, and where the bot's output stood,
    ``line N of logs/NAME.log``, for the organiser); ``causes``: bot -> kind
    -> ``[[cause, faults, first game, its detail], ...]``, most first: a bot
    that failed to start in 80 games is one line, not 80. Read from those
    games alone (``fault_games``: how many a bot), so a page costs the same
    however many games had faults; the leaderboard counts every fault.
    Nothing a bot wrote is on the page, which every author may read: not its
    output, which shows its author's thinking, nor the words it sent with a
    fault (:func:`referee.protocol.faults.without_bot_words`).
    """
    found: dict[str, list[Any]] = {}
    causes: dict[str, dict[str, dict[str, list[Any]]]] = {}
    for faulty, records in games.with_faults.items():
        for record in reversed(records):  # oldest first: a cause's first game is the earliest read
            for entry in _logged_faults(directory, record.game_id):
                bot, kind = entry.get("bot", "?"), entry.get("kind")
                if bot != faulty:
                    continue  # another bot's fault in the game: in that bot's own games with faults
                detail = without_bot_words(public_text(str(entry.get("detail", "")), directory))[:DETAIL_CHARS]
                counted = causes.setdefault(bot, {}).setdefault(str(kind), {})
                cause = counted.setdefault(_cause(detail), [_cause(detail), 0, record.game_id, detail])
                cause[1] += 1
                found.setdefault(bot, []).append(
                    {
                        "game": record.game_id,
                        "n": entry.get("n"),
                        "kind": kind,
                        "detail": detail,
                        "output": _output_place(entry.get("log"), entry.get("log_line")),
                        "replay": replay_of(directory, record.game_id),
                    }
                )
    return {
        "faults": {bot: entries[::-1][:FAULTS_SHOWN] for bot, entries in found.items()},
        "fault_games": {bot: len(records) for bot, records in games.with_faults.items()},
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


def _settings_from_logs(directory: Path | None, first: GameRecord | None) -> dict[str, Any]:
    """The settings of a league whose ``league.json`` predates them: from its first game's log."""
    if directory is None or first is None:
        return {}
    try:
        games = directory / "games"
        start = read_log(find_log(games, first.game_id) or log_path(games, first.game_id))[0]
    except (OSError, ValueError, IndexError, GameLogError):
        return {}
    return {
        "table_size": start.get("num_players"),
        "timing": start.get("timing"),
        "turn_limit": start.get("turn_limit"),
        "fault_policy": start.get("policy"),
    }


def strength_history(
    records: Iterable[GameRecord | Mapping[str, Any]], bots: Sequence[str], points: int | None = None
) -> dict[str, Any]:
    """The chart's data for ``records`` counted in the order given (as ``games.jsonl`` lists them): each bot's
    strength after each of :func:`referee.records.standings.history_counts` counted games, at most ``points`` (void games
    do not count; the caller leaves out what else the standings leave out), the last the standings' own."""
    # Imported here: the fit needs numpy (0.1 s to load), which a process writing only replay pages (the live
    # helper of a short league) never does.
    from referee.records.standings import HISTORY_POINTS, compute_standings

    return history_data(compute_standings(records, history=points or HISTORY_POINTS).history, bots)


def script_json(data: dict[str, Any]) -> str:
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
        .replace("{{data}}", script_json(data))
        .replace("/*{{script}}*/", (ASSETS / "leaderboard.js").read_text(encoding="utf-8"))
    )


def page_data_of(html_text: str) -> dict[str, Any]:
    """The data inside a league page (for tests and tools)."""
    start = html_text.index('<script id="league"')
    start = html_text.index(">", start) + 1
    data: dict[str, Any] = json.loads(html_text[start : html_text.index("</script>", start)])
    return data
