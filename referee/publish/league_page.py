"""The league's page, ``leaderboard.html``: the standings, the games, the faults and a chart, in one file.

Everything on it is read from the league's output directory: ``league.json``
(the name and the settings), ``games.jsonl`` (every finished game, in
schedule order), the game logs of games with faults (which decision, and
where in the bot's output), and the standings computed from the results.
Each game links to its replay page, ``replays/GAME_ID.html``, where one was
written. The page is self-contained (its script, style and data inline), so
a finished league's directory is a static site; while a league runs the page
refreshes itself (see :mod:`referee.publish.live` and ``referee serve``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from openskill.models import PlackettLuce

from referee import __version__
from referee.gamelog import read_log
from referee.seeding import seed_commitment

ASSETS = Path(__file__).resolve().parent / "html"
REPLAY_DIR = "replays"
FAULTS_SHOWN = 50  # fault entries listed per bot (every fault is counted)
EXCERPTS_SHOWN = 12  # of those, how many show the bot's output around the fault
EXCERPT_BEFORE, EXCERPT_AFTER = 12, 6  # lines of a bot's output shown around a fault
HISTORY_POINTS = 60  # points of the rating chart
DETAIL_CHARS = 300


def league_settings(directory: Path) -> dict:
    """The league's name and settings, from ``league.json`` (empty when there is none)."""
    try:
        return json.loads((directory / "league.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def page_data(
    directory: Path | None,
    board: dict,
    records: Sequence[Mapping] = (),
    *,
    live: bool = False,
    scheduled: int | None = None,
) -> dict:
    """The page's data: the league, the leaderboard (``publish.leaderboard_data``), the games, faults, history."""
    league = league_settings(directory) if directory is not None else {}
    records = sorted(records, key=lambda record: record.get("index", 0))
    started = [record["timing"]["started"] for record in records if "started" in record.get("timing", {})]
    replays = directory / REPLAY_DIR if directory is not None else None
    return {
        "league": {
            "name": league.get("name", board["title"]),
            "game": league.get("game") or (records[0].get("game") if records else None),
            "settings": _public_settings(league.get("settings") or _settings_from_logs(directory, records),
                                         finished=scheduled is not None and len(records) >= scheduled),
            "bots": len(board["rows"]),
            "referee_version": league.get("referee_version", __version__),
            "page_version": __version__,
            "games": len(records),
            "scheduled": scheduled,
            "first_game": min(started) if started else None,
            "last_game": max(started) if started else None,
            "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "live": live,
        },
        "board": board,
        "games": [_game_row(record, replays) for record in records],
        "faults": _faults(directory, records) if directory is not None else {},
        "history": rating_history(records, [row["bot"] for row in board["rows"]]),
    }


def _public_settings(settings: Mapping, finished: bool) -> dict:
    """The settings a page may show: until every game is played, the seed's commitment in place of the seed.

    A page may be published while the league runs; a bot that learnt the
    seed from it would know every deal. The commitment lets anyone check the
    seed once it is shown (``referee seed --check SEED``).
    """
    shown = dict(settings)
    if not finished and isinstance(shown.get("seed"), int):
        shown["seed_commitment"] = seed_commitment(shown.pop("seed"))
    return shown


def _game_row(record: Mapping, replays: Path | None) -> list:
    """One game, compactly: index, id, seats, placements, hands, decisions, faults by seat, void, replay."""
    faults = record.get("faults") or []
    game_id = str(record.get("game_id", ""))
    replay = replays is not None and (replays / f"{game_id}.html").exists()
    return [
        record.get("index"),
        game_id,
        record.get("seats", []),
        record.get("placements", []),
        record.get("hands_played"),
        record.get("decisions"),
        [sum(seat.values()) for seat in faults] if any(faults) else 0,
        record.get("void"),
        1 if replay else 0,
    ]


def _faults(directory: Path, records: Iterable[Mapping]) -> dict:
    """Each bot's faults, from the logs of the games that had any: game, decision, kind, detail, output lines."""
    found: dict[str, list] = {}
    for record in records:
        if not any(record.get("faults") or ()):
            continue
        game_id = str(record.get("game_id", ""))
        try:
            log = read_log(directory / "games" / f"{game_id}.jsonl")
        except (OSError, ValueError):
            continue  # no log (or not yet): the counts still show on the leaderboard
        for entry in log:
            if entry.get("type") != "fault":
                continue
            listed = found.setdefault(entry.get("bot", "?"), [])
            if len(listed) >= FAULTS_SHOWN:
                continue
            log_name = entry.get("log")
            excerpt = None
            if log_name and entry.get("log_line") is not None and len(listed) < EXCERPTS_SHOWN:
                excerpt = _excerpt(directory / "logs" / log_name, entry["log_line"])
            listed.append({
                "game": game_id,
                "n": entry.get("n"),
                "kind": entry.get("kind"),
                "detail": str(entry.get("detail", ""))[:DETAIL_CHARS],
                "log": f"logs/{log_name}" if log_name else None,
                "line": entry.get("log_line"),
                "excerpt": excerpt,
            })  # fmt: skip
    return found


def _excerpt(path: Path, line: int) -> list | None:
    """The bot's output around line ``line`` (lines received when the fault was noted): [first line number, text]."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return _read_excerpt(str(path), line, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=512)
def _read_excerpt(path: str, line: int, size: int, mtime_ns: int) -> list | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as text:
            lines = text.read().splitlines()
    except OSError:
        return None
    first = max(0, line - EXCERPT_BEFORE)
    shown = [entry[:200] for entry in lines[first : line + EXCERPT_AFTER]]
    return [first + 1, "\n".join(shown)] if shown else None


def _settings_from_logs(directory: Path | None, records: Sequence[Mapping]) -> dict:
    """The settings of a league whose ``league.json`` predates them: from its first game's log."""
    if directory is None or not records:
        return {}
    try:
        start = read_log(directory / "games" / f"{records[0].get('game_id')}.jsonl")[0]
    except (OSError, ValueError, IndexError):
        return {}
    return {
        "table_size": start.get("num_players"),
        "timing": start.get("timing"),
        "turn_limit": start.get("turn_limit"),
        "fault_policy": start.get("policy"),
    }


def rating_history(records: Sequence[Mapping], bots: Sequence[str], points: int = HISTORY_POINTS) -> dict:
    """Each bot's rating (mu and sigma) as counted games accumulate, at up to ``points`` evenly spaced counts.

    The same updates as :func:`referee.standings.compute_standings` (openskill
    Plackett-Luce, one per counted game in schedule order, void games
    skipped), so the last point is the leaderboard's rating.
    """
    counted = [record for record in sorted(records, key=lambda record: record["index"]) if not record.get("void")]
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in bots}
    total = len(counted)
    marks = {round(total * step / points) for step in range(1, points + 1)} if total else set()
    history = {"games": [0], "mu": {name: [round(ratings[name].mu, 2)] for name in bots},
               "sigma": {name: [round(ratings[name].sigma, 2)] for name in bots}}  # fmt: skip
    for number, record in enumerate(counted, start=1):
        seats = record["seats"]
        place = {seat: rank for rank, seat in enumerate(record.get("finish_order", record.get("placements", [])), start=1)}
        for name in seats:
            ratings.setdefault(name, model.rating(name=name))
        teams = [[ratings[name]] for name in seats]
        rated = model.rate(teams, ranks=[place[seat] for seat in range(len(seats))])
        for name, (rating,) in zip(seats, rated, strict=True):
            ratings[name] = rating
        if number in marks:
            history["games"].append(number)
            for name in bots:
                history["mu"][name].append(round(ratings[name].mu, 2))
                history["sigma"][name].append(round(ratings[name].sigma, 2))
    return history


def _script_json(data: dict) -> str:
    """JSON to put inside a <script> element: nothing in it can close the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(data: dict) -> str:
    """The page: the template with its style, script and data inline."""
    template = (ASSETS / "leaderboard.html").read_text(encoding="utf-8")
    title = data["league"]["name"] + " — leaderboard"
    return (
        template.replace("{{title}}", _html_text(title))
        .replace("/*{{style}}*/", (ASSETS / "leaderboard.css").read_text(encoding="utf-8"))
        .replace("{{data}}", _script_json(data))
        .replace("/*{{script}}*/", (ASSETS / "leaderboard.js").read_text(encoding="utf-8"))
    )


def _html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def page_data_of(html_text: str) -> dict:
    """The data inside a league page (for tests and tools)."""
    start = html_text.index('<script id="league"')
    start = html_text.index(">", start) + 1
    return json.loads(html_text[start : html_text.index("</script>", start)])
