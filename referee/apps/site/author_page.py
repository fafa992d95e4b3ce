"""An author's own page on ``referee serve``, and the site's other pages: sign-in, refusals, a bot's output (a page
for a browser, plain text for a script).

The author's page is their report. First, in plain words, what needs them:
a version suspended (it could not play: why, and how it plays again) or
their newest version rejected. Then every version they submitted, newest
first, with its verdict and why: what rejected it in plain words first
(``crashed: exit code 3 in its check game``, with a link to that game and
its output, or the output itself where there is no game), then in full
(the build's output or the check's details, which only they see, naming no
file they cannot open); its failures since it entered play, each start that
failed with its output; its build log, its check games (replays and their
output), its standing (rank, strength with its interval, games, faults),
its newest games, each with a link to its private replay (with its notes) and its output in it, its faults grouped
by cause, the first of each cause with the output around it (read from its
oldest games with faults: what went wrong first); and their A/B tests (:mod:`referee.apps.ladder.author_tests`):
the form that asks for one, and each test's verdict, its curve and its games. It is rendered when asked
for, from the ladder's records (:mod:`referee.apps.site.season_folder`), by Jinja2 with
every value escaped, and it is one column that reads on a phone. So is each page of a bot's output (in a game,
in a check game, a build's), with its lines wrapped and the way back to the author's page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, select_autoescape

from referee.apps.ladder.author_tests import test_folder, tests_of
from referee.apps.ladder.entries import NOT_HELD_AGAINST, bot_name
from referee.apps.ladder.file import MB, UploadLimits
from referee.apps.ladder.guard import plain_detail
from referee.apps.ladder.history import FAILURES_DIR, version_failures
from referee.apps.site.auth import SESSION_HOURS
from referee.apps.site.season_folder import (
    BOT_LOGS,
    GAME_LOGS,
    SeatOutput,
    check_start_output,
    faults_of,
    last_upload,
    read_board,
    read_report,
    start_output,
    versions_of,
)
from referee.protocol.standing import ACTIVE, SUSPENDED
from referee.records.gamelog import find_log
from referee.records.results import ACCEPTED, REJECTED, RESULTS_FILE, read_league, read_records
from referee.records.visibility import Shown

if TYPE_CHECKING:
    from referee.apps.ladder.file import Ladder
    from referee.apps.site.season_folder import GamesIndex

GAMES_SHOWN = 100  # of each version, the newest
FAULT_GAMES_READ = 40  # of each version's games with a fault, the oldest: read for the causes of its faults
FAILURES_SHOWN = 10  # of each version's failures since it entered play, the first
_templates = Environment(
    loader=PackageLoader("referee.apps.site", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
HEADINGS = {401: "Sign in", 403: "Refused", 404: "Not found", 429: "Too many tries"}


def utc_minute(at: str | None) -> str:
    """An ISO 8601 time in UTC as people read it, to the minute: ``2026-12-03 07:34 UTC``."""
    if not at:
        return ""
    try:
        when = datetime.fromisoformat(at)
    except ValueError:
        return at
    return when.strftime("%Y-%m-%d %H:%M UTC")


def signin(site: str, error: str | None = None, author: str | None = None, root: str = "") -> str:
    return _templates.get_template("signin.html").render(
        site=site, error=error, author=author, root=root, hours=int(SESSION_HOURS)
    )


def refused(status: int, message: str, root: str = "", heading: str | None = None) -> str:
    heading = heading or HEADINGS.get(status, "Refused")
    return _templates.get_template("refused.html").render(status=status, heading=heading, message=message, root=root)


HELD_BACK_RELOAD_S = 5  # how often a page waiting for a held-back replay looks again


def held_back(game: str, root: str = "") -> str:
    """The page for a replay whose deals are still in play elsewhere: what it waits for, and it reloads itself.
    It names no time: with a spectator delay, the time another game on the deals ended is not yet public."""
    return _templates.get_template("held_back.html").render(game=game, root=root, every_s=HELD_BACK_RELOAD_S)


def not_yours(signed_in: str, root: str = "") -> str:
    message = f"You are signed in as {signed_in}; this page is another author's, and only they may read it."
    return refused(403, message, root, "Not yours")


def output_text(game: str, outputs: Sequence[SeatOutput]) -> str:
    """A bot's output in a game, as plain text, each line numbered as in its output file."""
    if not outputs:
        return f"{game}: no output of your bot was recorded for this game\n"
    parts = []
    for seat in outputs:
        header = f"# {seat.bot} at seat {seat.seat} in {game}: its output ({seat.log}) during the game"
        if not seat.lines:
            parts.append(f"{header}: none\n")
            continue
        lines = "".join(f"{seat.first + number}: {line}\n" for number, line in enumerate(seat.lines, start=1))
        more = f"... and {seat.more} more lines\n" if seat.more else ""
        parts.append(f"{header}\n{lines}{more}")
    return "\n".join(parts)


def output_page(
    title: str, outputs: Sequence[SeatOutput], back: str, links: Sequence[tuple[str, str]] = (), empty: str = ""
) -> str:
    """A bot's output as a page (the lines of :func:`output_text`, wrapped to the screen): ``title`` over each
    seat's lines, or ``empty`` where there are none; ``back`` leads to the author's page, ``links`` (label, href)
    to what goes with the output (the game's replay)."""
    parts = [
        {"heading": f"{seat.bot} at seat {seat.seat}, its output ({seat.log}) during the game", "first": seat.first,
         "lines": seat.lines, "more": f"... and {seat.more} more lines, not shown" if seat.more else ""}
        for seat in outputs
    ]  # fmt: skip
    return _templates.get_template("output.html").render(
        title=title, parts=parts, back=back, links=list(links), empty=empty or "no output of your bot was recorded"
    )


def build_log_page(bot: str, lines: Sequence[str], more: bool, back: str) -> str:
    """The output of version ``bot``'s build as a page (``more``: the log goes on past ``lines``)."""
    part = {"heading": f"builds/{bot}.log", "first": 0, "lines": list(lines),
            "more": "... and more lines, not shown" if more else ""}  # fmt: skip
    return _templates.get_template("output.html").render(
        title=f"The build of {bot}", parts=[part], back=back, links=[], empty="the build wrote nothing"
    )


@dataclass(frozen=True)
class AuthorPageSources:
    """What an author's page is drawn from: the ladder's output folder, its ladder file (if known), its games."""

    output: Path
    ladder: Ladder | None
    games: GamesIndex


def author(
    sources: AuthorPageSources, name: str, api: str, refused_upload: str | None = None, tests_api: str = ""
) -> str:
    """The author's page, rendered from the ladder's records as they are now; ``api``: the upload's URL, ``tests_api``
    the A/B tests'."""
    data = _author_data(sources, name, api, refused_upload)
    return _templates.get_template("author.html").render(**data, tests_api=tests_api)


def _author_data(sources: AuthorPageSources, name: str, api: str, refused_upload: str | None) -> dict[str, Any]:
    output, ladder = sources.output, sources.ladder
    report = read_report(output, name) or {"versions": []}
    judged = versions_of(output, name)
    rows = {row.get("bot"): row for row in read_board(output).get("rows", [])}
    league = ladder.league if ladder else None
    shown = sources.games.shown()  # the games of deals still in play, or within the spectator delay: not yet
    versions = [
        _version(sources, shown, entry, rows.get(entry.get("bot"))) for entry in reversed(report.get("versions", []))
    ]
    return {
        "site": league.name if league else output.name,
        "author": name,
        "game": league.game if league else "",
        "table_size": league.table_size if league else "",
        "root": "../../",
        "refused": refused_upload,
        "waiting": _waiting(output, name, judged),
        "poll_s": f"{ladder.poll_s:g}" if ladder else "",
        "uploads": ladder is not None,
        "limits": _limits(ladder.uploads) if ladder else None,
        "api": api,
        "versions": versions,
        "notices": _notices(versions),
        "fault_games_read": FAULT_GAMES_READ,
        "failures_shown": FAILURES_SHOWN,
        "tests": [_test(output, test) for test in tests_of(output, name)],
        "test_choices": _test_choices(output, judged),
    }


CURVE_WIDTH, CURVE_HEIGHT = 320, 120  # the test's curve, in the SVG's own units


def _test(output: Path, test: dict[str, Any]) -> dict[str, Any]:
    """One of the author's tests as their page shows it: what it is, its verdict, its curve, its games."""
    folder = test_folder(output, str(test.get("id", "")))
    records = list(read_records(folder / RESULTS_FILE)) if folder and (folder / RESULTS_FILE).is_file() else []
    a, b = test.get("a"), test.get("b")
    deals: dict[Any, int] = {}
    for record in records:
        deals[record.get("table")] = deals.get(record.get("table"), 0) + 1
    games = [
        {
            "game_id": record["game_id"],
            "deal": record.get("table"),
            "places": _places_of(record, (a, b)),
            "shown": deals.get(record.get("table")) == len(record.get("seats", ())),  # the deal's games all ended
        }
        for record in reversed(records[-GAMES_SHOWN:])
    ]
    return {**test, "games_shown": games, "curve": _curve(test.get("curve") or [], test.get("bounds"))}


def _places_of(record: dict[str, Any], bots: tuple[Any, Any]) -> str:
    seats, order = record.get("seats", []), record.get("finish_order", [])
    places = []
    for bot in bots:
        seat = seats.index(bot) if bot in seats else None
        places.append(f"{bot} {order.index(seat) + 1}" if seat in order else f"{bot} -")
    return ", ".join(places)


def _curve(points: Sequence[Sequence[float]], bounds: Sequence[float] | None) -> dict[str, Any] | None:
    """The log-likelihood ratio after each deal, as an SVG polyline between the test's two bounds."""
    if not points or not bounds:
        return None
    lower, upper = float(bounds[0]), float(bounds[1])
    low, high = min(lower, *(p[1] for p in points)), max(upper, *(p[1] for p in points))
    last = max(p[0] for p in points)

    def y(value: float) -> float:
        return round(CURVE_HEIGHT - (value - low) / (high - low or 1) * CURVE_HEIGHT, 1)

    line = " ".join(f"{round(p[0] / last * CURVE_WIDTH, 1)},{y(p[1])}" for p in points)
    return {"points": line, "upper": y(upper), "lower": y(lower), "zero": y(0.0), "width": CURVE_WIDTH,
            "height": CURVE_HEIGHT, "deals": int(last)}  # fmt: skip


def _test_choices(output: Path, judged: Sequence[Any]) -> dict[str, list[str]]:
    """What the form offers: A, one of the author's accepted versions; B, another of theirs or an active version."""
    mine = [each.bot for each in reversed(judged) if each.verdict == ACCEPTED]
    league = read_league(output)
    active = []
    if league is not None and league.bots is not None:
        active = [bot for bot in league.bots if league.entries.get(bot, {}).get("status", ACTIVE) == ACTIVE]
    return {"a": mine, "b": mine + [bot for bot in active if bot not in mine]}


def _notices(versions: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """What needs the author, said first: each version suspended, and their newest version if it was rejected."""
    notices = [
        {"bot": version["bot"], "kind": "suspended", "text": version["status_reason"] or "it could not play"}
        for version in versions
        if version["status"] == SUSPENDED
    ]
    if versions and versions[0]["verdict"] == REJECTED and versions[0]["why"]:
        notices.append({"bot": versions[0]["bot"], "kind": "rejected", "text": versions[0]["why"][0]["text"]})
    return notices


def _limits(limits: UploadLimits) -> dict[str, int]:
    return {"archive_mb": limits.archive_bytes // MB, "unpacked_mb": limits.unpacked_bytes // MB,
            "files": limits.files, "depth": limits.depth}  # fmt: skip


def _waiting(output: Path, name: str, judged: Sequence[Any]) -> dict[str, str] | None:
    """The author's last upload, when no version judged since has its content: it waits for the ladder."""
    upload = last_upload(output, name)
    if upload is None:
        return None
    if any(version.digest == upload.get("digest") and version.at >= upload.get("at", "") for version in judged):
        return None
    if judged and judged[-1].digest == upload.get("digest"):
        return None
    return {"at": utc_minute(upload.get("at")), "digest": str(upload.get("digest", "")),
            "version": bot_name(name, len(judged) + 1)}  # fmt: skip


def _version(
    sources: AuthorPageSources, shown: Shown, entry: dict[str, Any], row: dict[str, Any] | None
) -> dict[str, Any]:
    output = sources.output
    bot = str(entry.get("bot"))
    checks = [check for check in entry.get("checks", []) if isinstance(check, dict)]
    games = sources.games.of(bot, shown) if entry.get("verdict") == ACCEPTED else []
    build_log = (output / BOT_LOGS / f"build-{bot}.log").is_file()
    faults, games_read = faults_of(output, reversed(games), bot, FAULT_GAMES_READ) if row and _faulted(row) else ([], 0)
    return {
        "bot": bot,
        "verdict": entry.get("verdict"),
        "status": entry.get("status"),
        "status_reason": entry.get("status_reason") or (row or {}).get("status_reason") or "",
        "at": utc_minute(entry.get("at")),
        "digest": str(entry.get("digest") or ""),
        "why": _why_rejected(output, bot, entry, checks, build_log) if entry.get("verdict") == REJECTED else [],
        "reason": plain_detail(str(entry.get("reason") or ""), output),
        "row": _figures(row) if row else None,
        "build_log": build_log,
        "check_games": [
            {"game_id": check["game_id"], "seat": check.get("seat"), "placed": check.get("placed")}
            for check in checks
            if check.get("check") == "game" and check.get("game_id")
        ],
        "checks": [{**check, "detail": plain_detail(str(check.get("detail") or ""), output)} for check in checks],
        "games_total": len(games),
        "games": [_game(game, bot, output) for game in games[:GAMES_SHOWN]],
        "failures": _failures(output, bot) if entry.get("verdict") == ACCEPTED else [],
        "faults": faults,
        "fault_games": games_read,
    }


def _failures(output: Path, bot: str) -> list[dict[str, Any]]:
    """Version ``bot``'s failures since it entered play (the first few): each start that failed with its output (the
    output of a crash in a game is shown with that game's fault, once the game may be shown)."""
    return [
        {
            "detail": failure.detail,
            "at": utc_minute(failure.at),
            "output": start_output(output, failure.kept, FAILURES_DIR) if failure.kept else None,
        }
        for failure in version_failures(output, bot)[:FAILURES_SHOWN]
    ]


def _why_rejected(
    output: Path, bot: str, entry: dict[str, Any], checks: Sequence[dict[str, Any]], build_log: bool
) -> list[dict[str, Any]]:
    """What rejected a version, in plain words, one line a finding (``crashed: exit code 3 in its check game``), each
    with the links the author can open, or the output itself where no page has it (a start that failed)."""
    found: list[dict[str, Any]] = []
    told_games: set[str] = set()
    for check in checks:
        name = str(check.get("check"))
        if check.get("verdict") != "fail" or name in NOT_HELD_AGAINST or name == "game":
            continue
        detail = plain_detail(str(check.get("detail") or ""), output)
        game = str(check.get("game_id") or "")
        links = [("its replay", f"checks/{bot}/{game}.html"), ("your bot's output", f"checks/{bot}/{game}.txt")]
        line: dict[str, Any] = {"links": links if game else [], "output": None}
        if name == "manifest":
            line["text"] = f"its bot.yaml is not valid: {detail}"
        elif name == "build":
            told = detail.removeprefix("build: ").splitlines()[0] if detail else ""
            line["text"] = f"its build failed: {told}" if told else "its build failed"
            line["links"] = [("the build's output", f"builds/{bot}.log")] if build_log else []
        elif name == "fault":
            kind = str(check.get("kind") or "fault")
            at = f", at decision {check['decision']}" if check.get("decision") is not None else ""
            if kind == "crash":
                line["text"] = f"crashed: {detail.removeprefix('process ')} in its check game{at}"
            else:
                line["text"] = f"{kind} in its check game{at}: {detail}"
            told_games.add(game)
        elif name == "forfeit":
            if game in told_games:
                continue  # the fault that made it forfeit is told already
            line["text"] = f"forfeited its check game: {detail}"
        elif name in ("startup", "handshake"):
            what = "could not start" if name == "startup" else "its handshake failed"
            line["text"] = f"{what} in its check: {detail}"
            line["output"] = check_start_output(output, bot, str(check.get("log") or ""))
        else:
            line["text"] = f"{name}: {detail}" if detail else name
        found.append(line)
    if not found and entry.get("reason"):
        first = plain_detail(str(entry["reason"]), output).splitlines()[0]
        found.append({"text": first.removeprefix("check: "), "links": [], "output": None})
    return found


def _faulted(row: dict[str, Any]) -> bool:
    return any(row.get("faults", {}).values()) or bool(row.get("forfeits"))


def _figures(row: dict[str, Any]) -> dict[str, Any]:
    """A version's standing as the page shows it."""
    low, high = row.get("rank_range") or (row.get("rank"), row.get("rank"))
    rank = f"{row.get('rank')}" if low == high else f"{row.get('rank')} ({low}–{high})"
    strength = row.get("strength")
    if strength is None:
        strength_text = "-"
    else:
        ends = [f"{value:+.0f}" if value is not None else "?" for value in (strength.get("low"), strength.get("high"))]
        strength_text = f"{strength['estimate']:+.0f} ({ends[0]} to {ends[1]})"
    faults = {kind: count for kind, count in (row.get("faults") or {}).items() if count}
    faults_text = ", ".join(f"{kind} {count}" for kind, count in faults.items()) or "none"
    if row.get("forfeits"):
        faults_text += f"; {row['forfeits']} forfeit{'s' if row['forfeits'] != 1 else ''}"
    mean = row.get("mean_score")
    median = row.get("median_ms")
    return {
        "rank_text": rank,
        "strength_text": strength_text,
        "games": row.get("games", 0),
        "wins": row.get("wins", 0),
        "mean_score_text": "-" if mean is None else f"{mean:.3f}",
        "faults_text": faults_text,
        "median_text": "-" if median is None else f"{median:.1f} ms",
    }


def _game(game: Any, bot: str, output: Path) -> dict[str, Any]:
    seat = game.seats.index(bot)
    place = list(game.finish_order).index(seat) + 1 if seat in game.finish_order else None
    faults = sum(game.faults[seat].values()) if seat < len(game.faults) else 0
    # The author's private replay (their bots' notes beside their decisions), made from the game's log.
    replay = f"games/{game.game_id}.html"
    kept = find_log(output / GAME_LOGS, game.game_id) is not None
    return {
        "game_id": game.game_id,
        "seat": seat,
        "place": place if place is not None else "-",
        "players": len(game.seats),
        "faults": faults,
        "replay": replay if kept else None,  # none once keep_logs has removed its log
    }


def versions_json(output: Path, name: str, page: str) -> dict[str, Any]:
    """``GET /api/submissions``: the author's versions, whole, and an upload waiting to be judged (for their CI)."""
    report = read_report(output, name) or {"versions": []}
    judged = versions_of(output, name)
    keys = ("bot", "version", "verdict", "status", "at", "digest", "reason", "summary")
    return {
        "author": name,
        "page": page,
        "versions": [{key: entry.get(key) for key in keys} for entry in report.get("versions", [])],
        "waiting": _waiting(output, name, judged),
    }
