"""The ladder file: a league file's keys that make sense for a ladder, and the ladder's own (docs/ladder.md).

It is read with the league file's reader and its keys' schema, so every
problem is told as ``FILE:LINE: KEY: ...`` and every key the two files share
means the same thing in both. A ladder has no ``bots``, ``rounds`` or
``format``: its bots come from its submissions folder, one folder per
author, and its tables are drawn as it goes (:mod:`referee.apps.ladder.table_draw`).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from referee.apps.ladder.table_draw import DRAWS, UNSURE
from referee.common.errors import LeagueError
from referee.engine.games import GAMES
from referee.engine.seeding import is_guessable
from referee.leaguefile.commands import resolve_path
from referee.leaguefile.config import League
from referee.leaguefile.config.bot_entries import read_network
from referee.leaguefile.config.loaded import read_build_network, read_fault_policy
from referee.leaguefile.config.reader import Checker, compose, read_text
from referee.leaguefile.config.schema import LEAGUE, MAX_GAMES, Key, by_name, names, required
from referee.leaguefile.schedule import RoundRobin
from referee.play.processes import Transport
from referee.play.sandbox import ResourceLimits
from referee.protocol.clock import Timing
from referee.protocol.faults import FaultPolicy

# The league file's keys a ladder does not take: its bots are its submissions, its tables are drawn as it goes.
NOT_LADDER_KEYS = ("format", "rounds", "bots", "on_build_failure")
LADDER_ONLY: tuple[Key, ...] = (
    Key("submissions", "text", "the submissions folder: one folder per author, each holding bot.yaml",
        value="a path"),
    Key("placement_games", "integer", "games a new version plays before the others have their turn again",
        default=6, minimum=0, maximum=MAX_GAMES),
    Key("poll_s", "seconds", "how often the submissions folder is looked at for new or changed submissions",
        default=5.0, maximum=86_400),
    Key("draw", "choice", "how tables are drawn after placement: where the standings are unsure (every pair still "
        "meeting), or evenly (the fewest games first)", default=UNSURE, choices=DRAWS),
    Key("check_games", "integer", "games a new version plays in its check (as check-bot --games), at the "
        "ladder's game and table size", default=1, minimum=1, maximum=100),
    Key("uploads", "mapping", "what an author's upload (referee serve) may be: limits on its archive, and on each "
        "author's uploads an hour and versions kept",
        default=None, shown_default="see uploads", value="{KEY: N, ...}"),
    Key("forfeits_in_a_row", "integer", "a version that forfeits this many games in a row is suspended (it plays no "
        "new game until its author submits again or the organiser reinstates it)",
        default=5, minimum=1, maximum=MAX_GAMES),
    Key("rest", "mapping", "when the standings are settled enough for the ladder to rest (start no table until a "
        "version arrives, is reinstated or withdrawn): rank_range, games",
        default=None, shown_default="never rests", value="{KEY: N, ...}"),
    Key("author_tests", "mapping", "what an author's own A/B tests (asked on their page) may take of the ladder: "
        "every, in_flight, per_day, max_games",
        default=None, shown_default="see author_tests", value="{KEY: N, ...}"),
)  # fmt: skip


MB = 2**20


@dataclass(frozen=True)
class UploadLimits:
    """What one upload may be, and how many an author may make (the ladder file's ``uploads:``, in megabytes there):
    past any of them it is refused."""

    archive_bytes: int = 20 * MB  # the archive as sent, compressed
    unpacked_bytes: int = 200 * MB  # every file's content once unpacked, counted as it is written (a zip or gzip bomb)
    files: int = 5_000  # entries of every kind: files, folders, links
    depth: int = 20  # path components of the deepest entry
    # Each landed upload can be a version to build, check and place: what one author may make the ladder do.
    per_hour: int = 10  # uploads landed in the last hour, per author
    versions: int = 100  # versions judged (each kept, with its build, for the season), per author


UPLOADS: tuple[Key, ...] = (
    Key("archive_mb", "integer", "megabytes of the archive as sent (compressed)",
        default=UploadLimits.archive_bytes // MB, minimum=1, maximum=4096),
    Key("unpacked_mb", "integer", "megabytes of its files once unpacked (a zip or gzip bomb stops here)",
        default=UploadLimits.unpacked_bytes // MB, minimum=1, maximum=65_536),
    Key("files", "integer", "entries of every kind: files, folders and links",
        default=UploadLimits.files, minimum=1, maximum=1_000_000),
    Key("depth", "integer", "folders deep the deepest entry may be", default=UploadLimits.depth, minimum=1,
        maximum=256),
    Key("per_hour", "integer", "uploads an author may land in an hour (more: 429)", default=UploadLimits.per_hour,
        minimum=1, maximum=10_000),
    Key("versions", "integer", "versions of an author the ladder judges and keeps (more uploads: 409)",
        default=UploadLimits.versions, minimum=1, maximum=100_000),
)  # fmt: skip
_UPLOAD_KEYS = by_name(UPLOADS)
REST: tuple[Key, ...] = (
    Key("rank_range", "integer", "rests once every active version's rank range is at most this many places wide "
        "(1: every rank known)", default=None, minimum=1, maximum=100_000),
    Key("games", "integer", "rests once every active version has played this many games after its placement",
        default=None, minimum=1, maximum=MAX_GAMES),
)  # fmt: skip
_REST_KEYS = by_name(REST)


@dataclass(frozen=True)
class TestLimits:
    """What the ladder gives its authors' own A/B tests (the ladder file's ``author_tests:``;
    referee.apps.ladder.author_tests)."""

    every: int = 3  # rated games between two test games started, while rated games are to be played
    in_flight: int = 2  # an author's test games at once
    per_day: int = 1000  # an author's test games started in any 24 hours
    max_games: int = 600  # a test's games at most: then it is inconclusive


AUTHOR_TESTS: tuple[Key, ...] = (
    Key("every", "integer", "rated games between two test games, while there are rated games to play (rated games "
        "keep priority; a resting ladder gives tests every slot)", default=TestLimits.every, minimum=1,
        maximum=10_000),
    Key("in_flight", "integer", "an author's test games at once", default=TestLimits.in_flight, minimum=1,
        maximum=1_000),
    Key("per_day", "integer", "an author's test games in any 24 hours", default=TestLimits.per_day, minimum=0,
        maximum=MAX_GAMES),
    Key("max_games", "integer", "a test's games at most, then it is inconclusive", default=TestLimits.max_games,
        minimum=2, maximum=MAX_GAMES),
)  # fmt: skip
_AUTHOR_TEST_KEYS = by_name(AUTHOR_TESTS)
# A season runs for months: by default it keeps the logs of each version's last 1,000 games (referee.records.retention).
LADDER_KEEP_LOGS = dataclasses.replace(by_name(LEAGUE)["keep_logs"], default=1000, shown_default=None)
LADDER: tuple[Key, ...] = (
    *(LADDER_KEEP_LOGS if key.name == "keep_logs" else key for key in LEAGUE if key.name not in NOT_LADDER_KEYS),
    *LADDER_ONLY,
)
LADDER_KEYS = names(LADDER)
LADDER_REQUIRED = required(LADDER)
_KEYS = by_name(LADDER)


@dataclass(frozen=True)
class Rest:
    """When a ladder's standings are settled enough to rest (the ladder file's ``rest:``): whichever comes first."""

    rank_range: int | None = None  # every active version's rank range at most this many places wide
    games: int | None = None  # every active version has this many games after its placement


@dataclass(frozen=True)
class Ladder:
    """A checked ladder file; build it with :func:`load_ladder`. ``league`` holds its settings, with no bots yet."""

    league: League  # name, game, seed, table size, timing, policy, sandbox, limits, output; bots: none
    submissions: Path  # absolute
    placement_games: int
    poll_s: float
    check_games: int
    uploads: UploadLimits = UploadLimits()
    draw: str = UNSURE  # referee.apps.ladder.table_draw: UNSURE or EVEN
    forfeits_in_a_row: int = 5  # a version that forfeits this many games in a row is suspended
    rest: Rest | None = None  # None: the ladder never rests
    author_tests: TestLimits = TestLimits()

    @property
    def source(self) -> Path:
        return self.league.source

    @property
    def output(self) -> Path:
        return self.league.output


def load_ladder(path: str | os.PathLike[str]) -> Ladder:
    """Read and check a ladder file; raise :class:`LeagueError` naming the file, line and key of any problem."""
    source = Path(path)
    checker, keys = _ladder_keys(source, str(path))
    folder = source.resolve().parent
    name: str = checker.key(keys, _KEYS["name"])
    game: str = checker.key(keys, _KEYS["game"])
    table_size = _table_size(checker, keys, game)
    submissions = _submissions_folder(checker, keys, folder)
    output = resolve_path(folder, checker.key(keys, _KEYS["output"])) if "output" in keys else folder / "results" / name
    league = _ladder_league(checker, keys, source, folder, name, game, table_size, output)
    return Ladder(
        league=league,
        submissions=submissions,
        placement_games=checker.key(keys, _KEYS["placement_games"]),
        poll_s=checker.key(keys, _KEYS["poll_s"]),
        check_games=checker.key(keys, _KEYS["check_games"]),
        uploads=_upload_limits(checker, keys.get("uploads")),
        draw=checker.key(keys, _KEYS["draw"]),
        forfeits_in_a_row=checker.key(keys, _KEYS["forfeits_in_a_row"]),
        rest=_rest(checker, keys.get("rest")),
        author_tests=_author_tests(checker, keys.get("author_tests")),
    )


def _ladder_keys(source: Path, label: str) -> tuple[Checker, dict[str, yaml.Node]]:
    """The ladder file's top-level keys, each a key a ladder takes and every required one given, with the checker
    that reads them."""
    root = compose(read_text(source, label, "the ladder file"), label)
    if root is None:
        raise LeagueError(f"{label}:1: the ladder file is empty; see tournaments/ladder.example.yaml for every key")
    checker = Checker(label)
    return checker, checker.mapping(root, "", LADDER_KEYS, LADDER_REQUIRED, what="the ladder file")


def _table_size(checker: Checker, keys: dict[str, yaml.Node], game: str) -> int:
    """``table_size``, within the players ``game`` seats."""
    table_size: int = checker.key(keys, _KEYS["table_size"])
    game_class = GAMES[game]
    if not game_class.min_players <= table_size <= game_class.max_players:
        raise checker.error(
            keys["table_size"],
            "table_size",
            f"{table_size} players is outside the range of {game}; "
            f"allowed: {game_class.min_players} to {game_class.max_players}",
        )
    return table_size


def _submissions_folder(checker: Checker, keys: dict[str, yaml.Node], folder: Path) -> Path:
    """``submissions``, resolved from the ladder file's ``folder``: a folder that exists."""
    submissions = resolve_path(folder, checker.key(keys, _KEYS["submissions"]))
    if not submissions.is_dir():
        raise checker.error(
            keys["submissions"],
            "submissions",
            f"{submissions} is not a folder; make it (one folder per author inside, each with bot.yaml)",
        )
    return submissions


def _ladder_league(
    checker: Checker,
    keys: dict[str, yaml.Node],
    source: Path,
    folder: Path,
    name: str,
    game: str,
    table_size: int,
    output: Path,
) -> League:
    """The league the ladder's games are played as: the keys it shares with a league file, with no bots yet."""
    transport: Transport = checker.key(keys, _KEYS["transport"])
    sandboxed = checker.key(keys, _KEYS["sandbox"]) == "bubblewrap"
    limits: ResourceLimits = _KEYS["limits"].default
    if "limits" in keys:
        limits = checker.limits(keys["limits"], "limits", limits)
    fault_policy: FaultPolicy = read_fault_policy(checker, keys.get("fault_policy"))
    seed: int = checker.key(keys, _KEYS["seed"])
    return League(
        source=source,
        folder=folder,
        name=name,
        game=game,
        seed=seed,
        table_size=table_size,
        rounds=1,
        timing=_timing(checker, keys),
        turn_limit=checker.key(keys, _KEYS["turn_limit"]),
        fault_policy=fault_policy,
        max_restarts=checker.key(keys, _KEYS["max_restarts"]),
        concurrency=_concurrency(checker, keys),
        output=output,
        transport=transport,
        network=read_network(checker, keys, "network", "none" if sandboxed else "host", transport, sandboxed),
        sandbox=sandboxed,
        limits=limits,
        build_timeout_s=checker.key(keys, _KEYS["build_timeout_s"]),
        build_network=read_build_network(checker, keys, sandboxed),
        on_build_failure="skip",
        bots=(),
        format=RoundRobin(),
        freeze=checker.key(keys, _KEYS["freeze"]),
        spectator_delay_s=checker.key(keys, _KEYS["spectator_delay_s"]),
        static_replays=checker.key(keys, _KEYS["static_replays"]),
        keep_logs=checker.key(keys, _KEYS["keep_logs"]),
        warnings=_seed_warnings(checker, keys, seed),
    )


def _timing(checker: Checker, keys: dict[str, yaml.Node]) -> Timing:
    return Timing(
        move_time_ms=checker.key(keys, _KEYS["move_time_ms"]),
        time_bank_ms=checker.key(keys, _KEYS["time_bank_ms"]),
        grace_ms=checker.key(keys, _KEYS["grace_ms"]),
        startup_timeout_ms=checker.key(keys, _KEYS["startup_timeout_ms"]),
    )


def _concurrency(checker: Checker, keys: dict[str, yaml.Node]) -> int | None:
    """``concurrency``: a number of games at once, or None for ``auto`` (as many as the machine can run)."""
    node = keys.get("concurrency")
    if isinstance(node, yaml.ScalarNode) and node.value == "auto":
        return None
    concurrency: int | None = checker.key(keys, _KEYS["concurrency"])
    return concurrency


def _seed_warnings(checker: Checker, keys: dict[str, yaml.Node], seed: int) -> tuple[str, ...]:
    """A warning where ``seed`` can be guessed (and with it every deal), or none."""
    if not is_guessable(seed):
        return ()
    return (
        checker.located(
            keys["seed"],
            "seed",
            f"warning: {seed} can be guessed, and with it every deal; keep a secret 64-bit seed (`referee seed`)",
        ),
    )


def _upload_limits(checker: Checker, node: yaml.Node | None) -> UploadLimits:
    """Read ``uploads:``: each key a whole number in its range; the rest as :class:`UploadLimits` has them."""
    if node is None:
        return UploadLimits()
    keys = checker.mapping(node, "uploads", names(UPLOADS), ())
    value = {name: checker.key(keys, key, "uploads.") for name, key in _UPLOAD_KEYS.items()}
    return UploadLimits(
        value["archive_mb"] * MB,
        value["unpacked_mb"] * MB,
        value["files"],
        value["depth"],
        value["per_hour"],
        value["versions"],
    )


def _author_tests(checker: Checker, node: yaml.Node | None) -> TestLimits:
    """Read ``author_tests:``: each key a whole number in its range, those left out at their default."""
    if node is None:
        return TestLimits()
    keys = checker.mapping(node, "author_tests", names(AUTHOR_TESTS), ())
    return TestLimits(**{name: checker.key(keys, key, "author_tests.") for name, key in _AUTHOR_TEST_KEYS.items()})


def _rest(checker: Checker, node: yaml.Node | None) -> Rest | None:
    """Read ``rest:``: ``rank_range``, ``games`` or both, each a whole number in its range; at least one of them."""
    if node is None:
        return None
    keys = checker.mapping(node, "rest", names(REST), ())
    if not keys:
        raise checker.error(
            node, "rest", "give rank_range (places wide), games (after placement) or both, or leave rest out"
        )
    return Rest(**{name: checker.key(keys, key, "rest.") for name, key in _REST_KEYS.items()})
