"""Lanes: what keeps a bot's processes from carrying one game's deals into another game on the same deals.

The games of a table share a seed (duplicate deals): every rotation deals
the same cards. A bot's process that played one of them and remembered it
would know the cards of the others. So a league gives each game, for each
of its bots, a *lane* (:meth:`referee.leaguefile.schedule.ScheduledGame.lane`): the
``k``-th game the bot plays on that seed is in lane ``k``, and each process
plays in one lane only (:class:`referee.backends.pool.BotPool`). A process
of lane ``k`` plays rotation ``k`` of many tables, and never two games on
one seed.

Memory is not the only thing that outlives a game: a bot's ``shared:``
folders are written by its processes and kept between them (and between
leagues: a bot keeps there what it learns). A folder every lane wrote would
carry the deals across. So each lane of a league has its own copies: lane 0
(rotation 0 of every table) writes the folders themselves, and lane ``k``
writes copies made before the league's first game, kept in the league's
output at ``shared/BOT/lane-K/N-NAME`` (``N`` the folder's place in the bot's
``shared:`` list, ``NAME`` its name) and shown to the bot at the folder's
own path. So every lane starts from what the bot knew before the league,
and no lane sees what another learned of its deals. After the league the
folders hold what lane 0 learned; the copies stay in the output, where a
resumed run finds them again.

Without the sandbox (``sandbox: none``) nothing can show a bot a copy in
place of a folder: its processes all write the folders themselves, so lanes
keep its memory apart but not its files (docs/security.md).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from referee.play.processes import BotSpec

if TYPE_CHECKING:
    from referee.leaguefile.config import League
    from referee.leaguefile.schedule import Schedule

LANES_DIR = "shared"  # OUTPUT/shared/BOT/lane-K/N-NAME: lane K's copy of a bot's shared folder N


def lane_spec(spec: BotSpec, lane: int) -> BotSpec:
    """The spec of a process of ``spec``'s bot that plays in ``lane``."""
    return spec if lane == spec.lane else dataclasses.replace(spec, lane=lane)


def lane_copy(output: Path, bot: str, lane: int, index: int, folder: str) -> Path:
    """Where lane ``lane`` keeps its copy of bot ``bot``'s shared folder ``folder`` (its ``index``-th)."""
    return output / LANES_DIR / bot / f"lane-{lane}" / f"{index}-{Path(folder).name}"


def with_lane_copies(league: League, output: Path, games: Schedule) -> League:
    """The league with each sandboxed bot's shared folders copied for each of its lanes after the first.

    Copies already in ``output`` (a resumed run's) are kept as they are. A bot that plays no more gets none; a new
    version plays in the lanes of the seats it takes (its first version's).
    """
    bots = []
    for bot in league.bots:
        spec = bot.spec
        copied = spec.command and spec.shared and spec.sandbox and bot.plays
        lanes = games.lanes(league.first_version(bot.name)) if copied else 1
        copies = tuple(
            tuple(
                str(_copied(folder, lane_copy(output, bot.name, lane, index, folder)))
                for index, folder in enumerate(spec.shared)
            )
            for lane in range(1, lanes)
        )
        bots.append(dataclasses.replace(bot, spec=dataclasses.replace(spec, lane_copies=copies)) if copies else bot)
    return dataclasses.replace(league, bots=tuple(bots))


def _copied(folder: str, copy: Path) -> Path:
    """``copy``, made from ``folder`` unless it exists: copied in full under a temporary name, then renamed."""
    if copy.is_dir():
        return copy
    copy.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{copy.name}.", suffix=".tmp", dir=copy.parent))
    try:
        shutil.copytree(folder, temporary, symlinks=True, ignore=_not_plain, dirs_exist_ok=True)
        os.chmod(temporary, stat.S_IMODE(os.stat(folder).st_mode))
        os.replace(temporary, copy)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return copy


def _not_plain(folder: str, names: Sequence[str]) -> set[str]:
    """What a copy leaves out: anything but files, folders and symbolic links (a FIFO would block the copy)."""
    left_out = set()
    for name in names:
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            left_out.add(name)
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            left_out.add(name)
    return left_out
