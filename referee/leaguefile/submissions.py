"""Building submissions: each submission is copied into its league's output, built there once, and the result kept.

A submission is a folder with ``bot.yaml`` (read by :mod:`referee.leaguefile.config`).
A league never builds in, or runs a bot from, the submission's own folder:

- ``OUTPUT/builds/BOT/`` is a copy of the folder (regular files, folders and
  symbolic links as they are; the league's own output is left out when it
  lies inside the folder), and the build command runs there, as it would in
  a fresh checkout: ``npm ci``, ``make`` or ``go build`` find what they
  expect at the same relative paths. The bot then runs from that copy, so
  what the league plays is what was built, whatever happens to the
  submission's folder meanwhile, and two leagues naming one folder never
  build in the same place.
- ``OUTPUT/builds/BOT.json`` records the build once it has ended: whether
  it succeeded, the message, when, and a digest of the folder as copied.
  A later run of the league reuses the record and the copy: a submission is
  built once per league. A failed build stands once the league has finished
  games (the bots playing decide the schedule); before that, a run tries it
  again. A run interrupted during a build leaves no record, so the next run
  builds afresh.
- ``OUTPUT/logs/build-BOT.log`` holds the build's output.

Bots that share one folder share one build, named for the first of them.
A bot that plays no more (withdrawn, disqualified or replaced) is not built:
no copy, no build, no log (a folder it shares with a bot that plays is built
for that bot).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import os
import shlex
import shutil
import stat
import time
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from referee import __version__
from referee.common.atomic import replace_json
from referee.common.errors import LeagueError
from referee.common.printable import printable
from referee.leaguefile.commands import resolve_command
from referee.leaguefile.config import League, LeagueBot, Submission
from referee.play import sandbox

BUILDS_DIR = "builds"
BUILD_LOG_TAIL_LINES = 10
_RECORD_VERSION = 1
_COPY_CHUNK_BYTES = 1 << 20
_NOT_COPIED = frozenset({"__pycache__"})  # Python's caches: remade where the bot runs


class BuildResult(NamedTuple):
    """How one submission's build went: the bot, whether it can play, and what to tell the organiser."""

    bot: str
    ok: bool
    message: str
    reused: bool = False  # recorded by an earlier run of this league, not built now
    note: str | None = None  # worth saying even when the build is fine (the folder changed since it was copied)


async def build_submissions(
    league: League,
    output: Path,
    log_dir: Path,
    *,
    retry_failed: bool = True,
    left_out_before: Collection[str] = (),
) -> tuple[League, list[BuildResult]]:
    """Copy and build once, for this league, each submission a bot that still plays runs from; return the league of
    the bots that can play, and a result for each of those bots.

    A build fails when its command exits non-zero, outlasts
    ``build_timeout_s``, or leaves no run program. With ``on_build_failure:
    skip`` failed bots are left out (a :class:`LeagueError` if too few remain
    for a table); with ``stop`` a :class:`LeagueError` lists every failure.
    ``retry_failed``: build again a submission whose recorded build failed
    (the league has no finished game yet, so nothing depends on it).

    A bot that plays no more (withdrawn, disqualified or replaced) is not
    built and has no result: it stays in the league as it is, its seats and
    its games kept, unless ``left_out_before`` names it (a failed build left
    it out of the schedule the league's finished games were played on, so it
    stays out of it).
    """
    results: list[BuildResult] = []
    playing: list[LeagueBot] = []
    builds: dict[Path, tuple[BuildResult, Path]] = {}  # submission folder -> its build's result, its copy
    told: dict[Path, str] = {}  # submission folder -> the bot whose result tells of its build
    for bot in league.bots:
        submission = bot.submission
        if submission is None:
            playing.append(bot)
            continue
        if not bot.plays:
            if bot.name not in left_out_before:
                playing.append(bot)
            continue
        folder = submission.folder
        if folder not in builds:
            # Named for the folder's first bot in the file, whether it plays or not: its copy is the one later runs
            # of the league find again.
            named = next(other for other in league.bots if other.submission and other.submission.folder == folder)
            builds[folder] = await build_submission(
                named, output, log_dir, league.build_timeout_s, retry_failed=retry_failed
            )
        result, copy = builds[folder]
        first = told.setdefault(folder, bot.name)
        if first == bot.name:
            results.append(result._replace(bot=bot.name))
        else:
            outcome = "built" if result.ok else "failed"
            results.append(
                BuildResult(
                    bot.name,
                    result.ok,
                    f"{bot.name}: same folder as {first}, so the same build ({outcome}; see {first})",
                    result.reused,
                )
            )
        if result.ok:
            playing.append(run_from(bot, copy))
    failed = [result for result in results if not result.ok]
    if failed and league.on_build_failure == "stop":
        raise LeagueError(
            f"{league.source}: {len(failed)} submission build{'s' if len(failed) > 1 else ''} failed and "
            "on_build_failure is stop (set it to skip to play without them):\n"
            + "\n".join(result.message for result in failed)
        )
    if len(playing) < league.table_size:
        failed_names = ", ".join(sorted(result.bot for result in failed))
        raise LeagueError(
            f"{league.source}: after leaving out {failed_names} (build failed), "
            f"{len(playing)} bots remain, too few for a table of {league.table_size}:\n"
            + "\n".join(result.message for result in failed)
        )
    return dataclasses.replace(league, bots=tuple(playing)), results


async def build_submission(
    bot: LeagueBot,
    output: Path,
    log_dir: Path,
    timeout_s: float,
    *,
    retry_failed: bool = True,
    rebuild_changed: bool = False,
) -> tuple[BuildResult, Path]:
    """Copy and build one bot's submission in ``OUTPUT/builds/BOT``, or reuse the build recorded there;
    return the result and the copy (the bot runs from it: :func:`run_from`).

    ``rebuild_changed``: build again when the submission's folder changed
    since it was copied (``referee check-bot``), where a league goes on
    playing the copy it built.
    """
    builds = output / BUILDS_DIR
    builds.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    copy = builds / bot.name
    submission = _submission(bot)
    result = _recorded(bot, submission, copy, output, retry_failed, rebuild_changed)
    if result is None:
        result = await _copy_and_build(bot, submission, copy, output, log_dir, timeout_s)
    return result, copy


def run_from(bot: LeagueBot, folder: Path) -> LeagueBot:
    """The bot, started from ``folder`` (its built copy) instead of its submission's folder."""
    command, _ = resolve_command(_submission(bot).run, folder, bot.spec.env)
    # Its sandbox shows the bot its own folder, read-only: the copy it runs from, never the submission's folder.
    spec = dataclasses.replace(bot.spec, command=command, cwd=str(folder), folders=(str(folder),))
    return dataclasses.replace(bot, spec=spec)


def _submission(bot: LeagueBot) -> Submission:
    if bot.submission is None:
        raise ValueError(f"bot {bot.name} is not a submission: it has no bot.yaml to build or run")
    return bot.submission


def folder_digest(folder: Path, leave_out: Path | None = None) -> str:
    """A SHA-256 digest of a folder's names, kinds, executable bits, link targets and file contents."""
    digest = hashlib.sha256()
    _walk(folder, None, _identity(leave_out), digest.update)
    return digest.hexdigest()


# ----- one build -------------------------------------------------------------------


def _recorded(
    bot: LeagueBot, submission: Submission, copy: Path, output: Path, retry_failed: bool, rebuild_changed: bool
) -> BuildResult | None:
    """The result an earlier run recorded for this submission, if it can stand; None to build it now."""
    record_path = copy.with_name(copy.name + ".json")
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(record, dict)
        or record.get("record_version") != _RECORD_VERSION
        or record.get("manifest") != _manifest(submission)
        or record.get("source") != str(submission.folder)
    ):
        return None
    when = str(record.get("built_at", "?"))
    if record.get("ok") is not True:
        if retry_failed:
            return None
        return BuildResult(
            bot.name,
            False,
            f"{record.get('message')} (recorded on {when}: a build that failed "
            "stands once the league has finished games)",
            reused=True,
        )
    _, problem = resolve_command(submission.run, copy, bot.spec.env)
    if problem:  # the copy was removed or damaged since: build it again
        return None
    note = None
    try:
        changed = folder_digest(submission.folder, output) != record.get("digest")
    except OSError:
        changed = True
    if changed and rebuild_changed:
        return None
    if changed:
        note = (
            f"{bot.name}: {submission.folder} has changed since this league copied it on {when}; "
            f"the league goes on playing the copy it built then ({copy})"
        )
    return BuildResult(bot.name, True, f"{bot.name}: built on {when}, reused ({copy})", reused=True, note=note)


async def _copy_and_build(
    bot: LeagueBot, submission: Submission, copy: Path, output: Path, log_dir: Path, timeout_s: float
) -> BuildResult:
    record_path = copy.with_name(copy.name + ".json")
    record_path.unlink(missing_ok=True)
    _remove(copy)
    started = time.monotonic()
    digest = hashlib.sha256()
    try:
        _walk(submission.folder, copy, _identity(output), digest.update)
        if submission.build is None:
            result = _check_run_program(bot, submission, copy, f"{bot.name}: copied to {copy} (no build)")
        else:
            build_log = log_dir / f"build-{bot.name}.log"
            result = await _build(bot, submission, submission.build, copy, build_log, timeout_s)
    except BaseException:
        _remove(copy)  # interrupted: the next run starts this build afresh
        raise
    replace_json(
        record_path,
        {
            "record_version": _RECORD_VERSION,
            "bot": bot.name,
            "source": str(submission.folder),
            "manifest": _manifest(submission),
            "digest": digest.hexdigest(),
            "ok": result.ok,
            "message": result.message,
            "seconds": round(time.monotonic() - started, 3),
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "referee_version": __version__,
        },
    )
    return result


async def _build(
    bot: LeagueBot, submission: Submission, build: str, copy: Path, log_path: Path, timeout_s: float
) -> BuildResult:
    """Run ``build`` (the submission's build command) by a shell in ``copy``, in its sandbox unless the league
    turned that off, its output in ``log_path``."""
    described = f"{bot.name} ({submission.manifest}): build {json.dumps(build)}"
    output = copy.parent.parent  # the league's output: OUTPUT/builds/NAME
    started = time.monotonic()
    with open(log_path, "wb") as log:
        log.write(f"$ {build}\n# in {copy}, a copy of {submission.folder}\n".encode())
        log.flush()
        try:
            running = await sandbox.start_build(
                bot.name,
                build,
                copy,
                log,
                env=bot.spec.env,
                sandboxed=bot.spec.sandbox,
                network=bot.build_network,
                # What its bot may not see, should a folder the build sees hold it; and the league's output.
                hidden=(*bot.spec.hidden, str(output), str(log_path.parent)),
            )
        except (OSError, sandbox.SandboxError) as error:
            return BuildResult(bot.name, False, f"{described} could not be started: {error}")
        returncode: int | None = None
        try:
            async with asyncio.timeout(timeout_s):
                returncode = await running.wait()
        except TimeoutError:
            pass  # killed below, with everything it started
        finally:  # and on Ctrl-C or SIGTERM: the build goes too
            await running.stop()
    elapsed = time.monotonic() - started
    if running.problem is not None:
        return BuildResult(bot.name, False, f"{described} ended, but {running.problem}")
    if returncode is None:
        return BuildResult(
            bot.name,
            False,
            f"{described} did not finish within {timeout_s:g} s (build_timeout_s) and was killed; "
            f"its output is in {log_path}{_log_tail(log_path)}",
        )
    if returncode != 0:
        how = f"exit code {returncode}" if returncode > 0 else f"signal {-returncode}"
        hits = running.limits_hit()
        if hits:
            how += f" ({'; '.join(hits)})"
        return BuildResult(
            bot.name,
            False,
            f"{described} failed with {how} after {elapsed:.1f} s; its output is in {log_path}{_log_tail(log_path)}",
        )
    return _check_run_program(
        bot,
        submission,
        copy,
        f"{bot.name}: built in {elapsed:.1f} s (output in {log_path})",
        f"{described} succeeded, but its run command",
    )


def _check_run_program(
    bot: LeagueBot, submission: Submission, copy: Path, success: str, failure: str | None = None
) -> BuildResult:
    _, problem = resolve_command(submission.run, copy, bot.spec.env)
    if problem:
        failure = failure or f"{bot.name} ({submission.manifest}): its run command"
        return BuildResult(
            bot.name, False, f"{failure} {json.dumps(shlex.join(submission.run))} cannot be started ({problem})"
        )
    return BuildResult(bot.name, True, success)


def _manifest(submission: Submission) -> dict[str, Any]:
    return {
        "name": submission.name,
        "version": submission.version,
        "build": submission.build,
        "run": list(submission.run),
    }


def _log_tail(log_path: Path) -> str:
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[2:]  # past the header
    tail = [printable(line) for line in lines if line.strip()][-BUILD_LOG_TAIL_LINES:]
    return ", ending:\n" + "\n".join("    " + line for line in tail) if tail else " (no output)"


# ----- copying ---------------------------------------------------------------------


def _walk(
    source: Path, target: Path | None, leave_out: tuple[int, int] | None, update: Callable[[bytes], None]
) -> None:
    """Digest ``source`` in name order and, given a ``target``, copy it there as it goes.

    Regular files (with their permission bits), folders and symbolic links
    (as links, unfollowed) are taken; sockets, pipes, devices and Python's
    ``__pycache__`` folders are not.
    ``leave_out`` (the device and inode of the league's output, when it lies
    inside the folder) is skipped.
    """
    if target is not None:
        target.mkdir(parents=True)
    for entry in sorted(os.scandir(source), key=lambda entry: entry.name):
        path = Path(entry.path)
        name = os.fsencode(entry.name)
        if entry.is_symlink():
            link = os.readlink(path)
            update(b"L\0" + name + b"\0" + os.fsencode(link) + b"\0")
            if target is not None:
                os.symlink(link, target / entry.name)
        elif entry.is_dir(follow_symlinks=False):
            if entry.name in _NOT_COPIED or _identity(path) == leave_out:
                continue
            update(b"D\0" + name + b"\0")
            _walk(path, target / entry.name if target is not None else None, leave_out, update)
            update(b"U\0")
        elif entry.is_file(follow_symlinks=False):
            mode = entry.stat(follow_symlinks=False).st_mode
            update(b"F\0" + name + b"\0" + (b"x" if mode & stat.S_IXUSR else b"-") + b"\0")
            _copy_file(path, target / entry.name if target is not None else None, mode, update)


def _identity(path: Path | None) -> tuple[int, int] | None:
    """A folder's device and inode, which name it however it is reached; None if there is none."""
    try:
        status = os.stat(path, follow_symlinks=False) if path is not None else None
    except OSError:
        return None
    return (status.st_dev, status.st_ino) if status is not None else None


def _copy_file(source: Path, target: Path | None, mode: int, update: Callable[[bytes], None]) -> None:
    # A file's bytes are digested as they are up to its first NUL, which no text holds; a file holding one adds two
    # NULs and the SHA-256 of the rest. Nothing else puts two NULs after a file's header or text (a name is never
    # empty, and what follows one record's NUL is a name or the next record's letter), so no two trees give the same
    # bytes (digesting whole files, "a" = "PF\0b\0-\0Q" gave those of "a" = "P" beside "b" = "Q"), and a folder of
    # text keeps the digest it had then.
    rest = None  # the digest of the file from its first NUL on
    with open(source, "rb") as reader, open(target, "xb") if target is not None else contextlib.nullcontext() as out:
        while chunk := reader.read(_COPY_CHUNK_BYTES):
            if rest is not None:
                rest.update(chunk)
            elif (nul := chunk.find(b"\0")) < 0:
                update(chunk)
            else:
                update(chunk[:nul])
                rest = hashlib.sha256(chunk[nul:])
            if out is not None:
                out.write(chunk)
    if rest is not None:
        update(b"\0\0" + rest.digest())
    if target is not None:
        shutil.copystat(source, target)
        os.chmod(target, stat.S_IMODE(mode) & ~sandbox.NEVER_ON_A_COPYS_FILE)


def _remove(folder: Path) -> None:
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
