"""A ladder's entries: each new or changed submission built once, checked, and entered or rejected; its bots.

An author's folder is judged when its content (:func:`referee.leaguefile.submissions.folder_digest`)
differs from the last version of it the ladder judged. Judging a version
``AUTHOR-vN``: its ``bot.yaml`` is read, the folder is copied into
``OUTPUT/builds/AUTHOR-vN`` and built there (:func:`referee.leaguefile.submissions.build_submission`),
and the built copy is checked as ``referee check-bot`` checks a folder, at
the ladder's game and table size (:func:`referee.apps.checkbot.check_built`). A
version with no problem (slow decisions are noted, not held against it) is
accepted and replaces its author's previous one; otherwise it is rejected.
Either way the verdict goes into ``register.jsonl`` and the author's report,
``OUTPUT/reports/AUTHOR.json`` (whole, for the author's page: a build's
output may be in it), and (:func:`submission_verdicts`, written into
``league.json``) onto the league's pages, in the referee's words alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee.apps.check_report import FAIL, Check
from referee.apps.checkbot import CANDIDATE, CheckSettings, check_built
from referee.apps.ladder.file import Ladder
from referee.apps.ladder.history import Judged, Register
from referee.common.atomic import replace_json
from referee.common.errors import LeagueError
from referee.engine.seeding import derive_seed
from referee.leaguefile.config import MANIFEST_NAME, NAME_PATTERN, League, LeagueBot, Submission, load_submission
from referee.leaguefile.config.bot_entries import hide_from_each_other
from referee.leaguefile.league_record import write_league
from referee.leaguefile.submissions import BUILDS_DIR, build_submission, folder_digest, run_from
from referee.play.processes import BotSpec
from referee.protocol.standing import ACTIVE
from referee.publish.redaction import public_text
from referee.records.results import ACCEPTED, REJECTED

REPORTS_DIR = "reports"  # OUTPUT/reports/AUTHOR.json: what the author's page shows of each version judged
CHECKS_DIR = "checks"  # OUTPUT/checks/AUTHOR-vN/: the check's game logs and the bot's output; .json: its checks
NOT_HELD_AGAINST = frozenset({"slow decision", "slow messages"})  # noted in the report, not a reason to reject
# What league.json keeps of each version judged: what the pages show (the checks stay in the report).
SUBMISSION_FIELDS = ("bot", "version", "verdict", "summary", "at", "digest", "status")
AUTHOR_PAGE = "authors/{author}/"  # the author's own page on `referee serve`, behind their token (referee.apps.site)


def bot_name(author: str, version: int) -> str:
    """The name of ``author``'s ``version``-th version, ``AUTHOR-vN`` (from 1): made here alone, for the ladder's
    register, builds and checks and for the site's pages and answers, which name a version before it is judged."""
    return f"{author}-v{version}"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def author_folders(ladder: Ladder) -> dict[str, Path]:
    """The submissions folder's author folders, by author: every folder named as a bot may be (hidden ones left out)."""
    found = {}
    for entry in sorted(ladder.submissions.iterdir()):
        if entry.is_dir() and NAME_PATTERN.match(entry.name) and entry.resolve() != ladder.output:
            found[entry.name] = entry
    return found


def changed_submissions(ladder: Ladder, register: Register) -> list[tuple[str, Path, str]]:
    """``(author, folder, digest)`` of each author folder whose content is not the last version judged of it."""
    last = {judged.author: judged.digest for judged in register.judged()}
    changed = []
    for author, folder in author_folders(ladder).items():
        try:
            digest = folder_digest(folder, ladder.output)
        except OSError:
            continue  # being written or removed as it is read: looked at again at the next poll
        if last.get(author) != digest:
            changed.append((author, folder, digest))
    return changed


async def judge(
    ladder: Ladder,
    register: Register,
    author: str,
    folder: Path,
    digest: str,
    say: Callable[[str], None],
    tables_drawn: Callable[[], int] = lambda: 0,
) -> Judged | None:
    """Build and check the author's folder as their next version; record the verdict and write their report.

    ``tables_drawn`` tells how many tables the ladder has drawn when the
    verdict is recorded. None, with nothing recorded, when the folder
    changed while it was copied (an upload landing, an author saving): what
    was copied may be half of one version and half of the next, so the
    folder is judged afresh at the next look.
    """
    output = ladder.output
    version = 1 + sum(1 for judged in register.judged() if judged.author == author)
    name = bot_name(author, version)
    say(f"{name}: judging {folder} (digest {digest[:12]})")
    outcome = await _judged(ladder, folder, name, digest)
    if outcome.stage != MANIFEST and await _changed_since(folder, ladder.output, outcome.digest):
        shutil.rmtree(output / BUILDS_DIR / name, ignore_errors=True)
        say(f"{name}: {folder.name}/ changed while it was copied; it is judged again at the next look")
        return None
    if outcome.reason:
        shutil.rmtree(output / BUILDS_DIR / name, ignore_errors=True)  # a rejected version never plays
    (output / CHECKS_DIR).mkdir(parents=True, exist_ok=True)
    replace_json(output / CHECKS_DIR / f"{name}.json", {"bot": name, "checks": outcome.checks})
    verdict = Judged(
        author,
        version,
        name,
        outcome.digest,
        REJECTED if outcome.reason else ACCEPTED,
        outcome.reason,
        now(),
        tables_drawn(),
        summary=outcome.summary,
    )
    register.add(verdict)
    write_reports(ladder, register, [author])
    say(f"{name}: {verdict.verdict}" + (f": {outcome.reason.splitlines()[0]}" if outcome.reason else ""))
    return verdict


async def _changed_since(folder: Path, output: Path, digest: str) -> bool:
    """Whether ``folder``'s content is no longer the one whose digest is ``digest`` (or cannot be read)."""
    try:
        return await asyncio.to_thread(folder_digest, folder, output) != digest
    except OSError:
        return True


MANIFEST, BUILD, CHECK = "manifest", "build", "check"  # where a version was judged last: what rejected it, if any


@dataclass(frozen=True)
class Outcome:
    """How a version's judging went: why it is rejected ("" if it is not), in whole and in public words."""

    stage: str  # MANIFEST, BUILD or CHECK: the last step it got to
    reason: str  # whole: its build's output or its check's details may be in it (for its author alone)
    summary: str  # the referee's words alone (no output, no file of the author's): for the public pages
    checks: list[dict[str, Any]]
    digest: str  # of what was copied and built (the folder's, should it have changed since it was looked at)


async def _judged(ladder: Ladder, folder: Path, name: str, digest: str) -> Outcome:
    """Version ``name`` of ``folder`` read, copied, built and checked, as far as it gets."""
    league, output = ladder.league, ladder.output
    try:
        manifest = load_submission(folder)
    except LeagueError as error:
        checks = [Check("manifest", FAIL, str(error)).json()]
        return Outcome(MANIFEST, str(error), f"its {MANIFEST_NAME} is not valid", checks, digest)
    bot = _entry(ladder, name, manifest, {})
    # A build of this version left by a run stopped before its verdict was recorded is not reused: built afresh,
    # and so is its check.
    shutil.rmtree(output / BUILDS_DIR / name, ignore_errors=True)
    (output / BUILDS_DIR / f"{name}.json").unlink(missing_ok=True)
    shutil.rmtree(output / CHECKS_DIR / name, ignore_errors=True)
    result, copy = await build_submission(bot, output, output / "logs", league.build_timeout_s)
    try:
        built = json.loads((output / BUILDS_DIR / f"{name}.json").read_text(encoding="utf-8"))
        digest = str(built.get("digest") or digest)  # what was copied, should the folder have changed since
    except (OSError, ValueError):
        pass
    if not result.ok:
        checks = [Check("build", FAIL, result.message).json()]
        return Outcome(BUILD, f"build: {result.message}", "its build failed", checks, digest)
    candidate = dataclasses.replace(run_from(bot, copy).spec, name=CANDIDATE)
    settings = CheckSettings(
        games_per_size=ladder.check_games,
        seed=derive_seed(league.seed, "ladder-check", name),
        timing=league.timing,
        turn_limit=league.turn_limit,
        policy=league.fault_policy,
        games=(league.game,),
        seats=(league.table_size,),
    )
    log_dir = output / CHECKS_DIR / name
    log_dir.mkdir(parents=True, exist_ok=True)
    said = io.StringIO()
    report = await check_built(candidate, settings, log_dir, said)
    checks = [check.json() for check in report.checks]
    failed = held_against(report.checks)
    if failed:
        return Outcome(CHECK, "check: " + _failures(failed), "its check found: " + _kinds(failed), checks, digest)
    if not any(check.check == "game" and check.verdict != "skip" for check in report.checks):
        reason = f"check: the bot does not play {league.game} (its handshake does not list it)"
        return Outcome(CHECK, reason, reason, checks, digest)
    return Outcome(CHECK, "", "", checks, digest)


def held_against(checks: Sequence[Check]) -> list[Check]:
    """The failed checks that reject a version: not those :data:`NOT_HELD_AGAINST`, and not a game's own check,
    which fails with whatever was found in the game (a slow decision alone must not reject through it)."""
    return [check for check in checks if check.verdict == FAIL and check.check not in NOT_HELD_AGAINST | {"game"}]


def _failures(failed: Sequence[Check]) -> str:
    """The failed checks, each with its detail: ``crash: process exit code 3; forfeit: ...`` (no empty parts)."""
    told = [check for check in failed if check.detail] or list(failed)
    return "; ".join(f"{check.check}: {check.detail}" if check.detail else check.check for check in told)


def _kinds(failed: Sequence[Check]) -> str:
    """What kinds of failure a check found, each once, in the order first found: ``crash, forfeit``."""
    return ", ".join(dict.fromkeys(check.check for check in failed))


def _entry(ladder: Ladder, name: str, manifest: Submission, status: dict[str, Any]) -> LeagueBot:
    """Version ``name`` as a league's bot (its submission as its manifest says; not yet run from its copy)."""
    league = ladder.league
    spec = BotSpec(
        name=name,
        command=manifest.run,
        cwd=str(manifest.folder),
        limits=league.limits,
        transport=league.transport,
        folders=(str(manifest.folder),),
        network=league.network,
        sandbox=league.sandbox,
        freeze=league.freeze,
    )
    written = {
        "path": manifest.folder.name,
        "submission": {"name": manifest.name, "version": manifest.version, "build": manifest.build,
                       "run": list(manifest.run)},
    }  # fmt: skip
    return LeagueBot(
        spec=spec,
        submission=manifest,
        declared_at=manifest.manifest,
        written=written,
        build_network=league.build_network,
        **status,
    )


def ladder_bots(ladder: Ladder, register: Register) -> tuple[LeagueBot, ...]:
    """Every accepted version, in the order accepted, with its status, run from its built copy."""
    output = ladder.output
    statuses = register.statuses()
    reasons = {change.bot: change.reason for change in register.status_changes()}
    previous: dict[str, str] = {}
    bots = []
    copies = []
    for judged in register.judged():
        if judged.verdict != ACCEPTED:
            continue
        copy = output / BUILDS_DIR / judged.bot
        manifest = load_submission(copy)  # its bot.yaml as it was copied; its author's folder may hold a newer one
        manifest = dataclasses.replace(manifest, folder=ladder.submissions / judged.author)  # hidden from the others
        status = statuses.get(judged.bot, ACTIVE)
        replaced_by = next((later for later in _later_versions(register, judged)), None)
        reason = reasons.get(judged.bot) or (f"replaced by {replaced_by}" if status != ACTIVE and replaced_by else "")
        fields = {"status": status, "status_reason": reason, "replaces": previous.get(judged.author),
                  "author": judged.author}  # fmt: skip
        bots.append(_entry(ladder, judged.bot, manifest, fields))
        copies.append(copy)
        previous[judged.author] = judged.bot
    hidden = hide_from_each_other(bots, output, ladder.source)
    return tuple(run_from(bot, copy) for bot, copy in zip(hidden, copies, strict=True))


def ladder_league(ladder: Ladder, register: Register) -> League:
    """The league the ladder plays now: its settings and every accepted version, with its status."""
    return dataclasses.replace(ladder.league, bots=ladder_bots(ladder, register))


def write_ladder_league(ladder: Ladder, register: Register, league: League) -> None:
    """Write ``league.json``: ``league`` (its versions, with their statuses) and every version judged, for the pages."""
    write_league(ladder.output, league, league, submissions=submission_verdicts(register))


def _later_versions(register: Register, judged: Judged) -> Iterator[str]:
    for later in register.judged():
        if later.author == judged.author and later.version > judged.version and later.verdict == ACCEPTED:
            yield later.bot


# ----- what each author sees ---------------------------------------------------------------------


def _versions_by_author(register: Register) -> dict[str, list[dict[str, Any]]]:
    """Each author's versions in the order judged (authors in the order of their first): the verdict and status now."""
    statuses = register.statuses()
    reasons = {change.bot: change.reason for change in register.status_changes()}  # each version's last
    versions: dict[str, list[dict[str, Any]]] = {}
    for judged in register.judged():
        status = statuses.get(judged.bot)
        reason = reasons.get(judged.bot, "") if status not in (None, ACTIVE) else ""
        versions.setdefault(judged.author, []).append(
            {**dataclasses.asdict(judged), "status": status, "status_reason": reason}
        )
    return versions


def submission_verdicts(register: Register) -> list[dict[str, Any]]:
    """``league.json``'s ``submissions``: each author's versions as judged, with the author's report, for the pages."""
    return [
        {
            "author": author,
            "page": AUTHOR_PAGE.format(author=author),
            "versions": [{key: version[key] for key in SUBMISSION_FIELDS} for version in versions],
        }
        for author, versions in _versions_by_author(register).items()
    ]


def write_reports(ladder: Ladder, register: Register, authors: Sequence[str] | None = None) -> None:
    """Write ``reports/AUTHOR.json`` for ``authors`` (default: every author judged): what their page shows.

    The whole of each verdict, with every check: for the author alone
    (``referee serve`` shows it on their page, behind their token, and never
    serves the file), naming no path of the organiser's machine.
    """
    versions = _versions_by_author(register)
    reports = ladder.output / REPORTS_DIR
    reports.mkdir(parents=True, exist_ok=True)
    for author in authors if authors is not None else sorted(versions):
        entries = [_public(ladder, version) for version in versions.get(author, [])]
        replace_json(reports / f"{author}.json", {"author": author, "ladder": ladder.league.name, "versions": entries})


def _public(ladder: Ladder, version: dict[str, Any]) -> dict[str, Any]:
    """A version's report entry, with its checks, naming no path of the organiser's machine (served with the pages)."""
    checks = [
        {key: public_text(value, ladder.output) if isinstance(value, str) else value for key, value in check.items()}
        for check in _checks(ladder, version["bot"])
    ]
    return {**version, "reason": public_text(version["reason"], ladder.output), "checks": checks}


def _checks(ladder: Ladder, bot: str) -> list[dict[str, Any]]:
    """The checks of version ``bot`` as its check recorded them (none where that record is missing or unreadable)."""
    try:
        return list(json.loads((ladder.output / CHECKS_DIR / f"{bot}.json").read_text(encoding="utf-8"))["checks"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
