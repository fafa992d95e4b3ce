"""The loaded league: :func:`load_league` reads a league file into a :class:`League`, and what its results depend on.

Paths and commands are explained in docs/leagues.md ("The league file"); every
key, its range and default are in :mod:`referee.leaguefile.config.schema`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from referee.common.errors import LeagueError
from referee.engine.games import GAMES
from referee.engine.seeding import is_guessable
from referee.leaguefile.commands import resolve_path
from referee.leaguefile.config.bot_entries import LeagueBot, hide_from_each_other, read_bot, read_network
from referee.leaguefile.config.formats import check_size, read_format
from referee.leaguefile.config.reader import Checker, compose, read_text, shown
from referee.leaguefile.config.schema import (
    FAULT_POLICY,
    FAULT_POLICY_KEYS,
    LEAGUE,
    LEAGUE_KEYS,
    LEAGUE_REQUIRED,
    BuildFailureAction,
    by_name,
)
from referee.leaguefile.schedule import Format, Gauntlet, RoundRobin, Schedule, ScheduledGame, Sprt
from referee.play.processes import Network, Transport
from referee.play.sandbox import ResourceLimits
from referee.play.sandbox.build import BuildNetwork
from referee.protocol.clock import Timing
from referee.protocol.faults import FaultPolicy, PolicyMode
from referee.protocol.setup import GameSetup
from referee.protocol.standing import WITHDRAWN

_KEYS = by_name(LEAGUE)
_FAULT_POLICY = by_name(FAULT_POLICY)


@dataclass(frozen=True)
class League:
    """A checked league file; build it with :func:`load_league`."""

    source: Path  # the league file, as given
    folder: Path  # the league file's folder, absolute: relative paths start here
    name: str
    game: str
    seed: int
    table_size: int
    rounds: int
    timing: Timing
    turn_limit: int
    fault_policy: FaultPolicy
    max_restarts: int  # restarts of a crashed bot, per bot, over the league
    concurrency: int | None  # games played at once; None: auto
    output: Path  # absolute
    transport: Transport
    network: Network  # the league's default for its bots
    sandbox: bool  # bots run in their sandbox (sandbox: bubblewrap, the default)
    limits: ResourceLimits  # the league's default limits for its bots
    build_timeout_s: float
    on_build_failure: BuildFailureAction
    bots: tuple[LeagueBot, ...]
    format: Format = dataclasses.field(default_factory=RoundRobin)  # how tables are made: referee.leaguefile.schedule
    freeze: bool = True  # the league's default for its bots: frozen while not on move (referee.play.freezer)
    build_network: BuildNetwork = "host"  # the network of each submission's build, in its sandbox
    spectator_delay_s: float = 0.0  # how late spectators see a game in play (referee.publish.spectators)
    static_replays: bool = False  # each game's replay page written as it ends (referee.publish.live)
    keep_logs: int | None = (
        None  # the logs of each bot's last N games kept (referee.records.retention); None: every log
    )
    warnings: tuple[str, ...] = ()  # what validate and run say about the file (located), the league being valid

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)

    @property
    def scheduled_names(self) -> tuple[str, ...]:
        """The bots the schedule is made of: every bot but those that replace another (they take its seats)."""
        return tuple(bot.name for bot in self.bots if bot.replaces is None)

    @property
    def stands_in(self) -> dict[str, str]:
        """Each bot that replaces another, and the bot it replaces."""
        return {bot.name: bot.replaces for bot in self.bots if bot.replaces is not None}

    def first_version(self, name: str) -> str:
        """The bot of the schedule whose seats ``name`` plays in: itself, or the first version of its line."""
        return first_version(name, self.bots)

    def newest(self, name: str) -> LeagueBot:
        """The bot that now holds ``name``'s seats: the last of the bots that replace it, one after another."""
        if name not in self._newest:
            raise KeyError(f"no bot {name!r} in league {self.name!r}; the bots are: {', '.join(self.bot_names)}")
        return self._newest[name]

    @functools.cached_property
    def _newest(self) -> dict[str, LeagueBot]:
        successors = {replaced: bot for bot, replaced in self.stands_in.items()}
        newest = {}
        for bot in self.bots:
            name = bot.name
            while name in successors:
                name = successors[name]
            newest[bot.name] = self.bot(name)
        return newest

    @functools.cached_property
    def every_bot_plays(self) -> bool:
        """Whether no bot is withdrawn, disqualified or replaced: every game is played as scheduled."""
        return all(bot.plays and bot.replaces is None for bot in self.bots)

    def seated(self, game: ScheduledGame) -> ScheduledGame | None:
        """The scheduled game as it is played now: each seat to its newest version; None if one of them plays no more."""
        if self.every_bot_plays:
            return game
        bots = [self.newest(name) for name in game.seats]
        if not all(bot.plays for bot in bots):
            return None
        seats = tuple(bot.name for bot in bots)
        if seats == game.seats:
            return game
        candidate = None if game.candidate is None else self.newest(game.candidate).name
        return dataclasses.replace(game, seats=seats, candidate=candidate)

    @property
    def candidates(self) -> tuple[str, ...]:
        """A gauntlet's candidates that are in the league (standings are for them); empty in other formats."""
        if not isinstance(self.format, Gauntlet):
            return ()
        return tuple(name for name in self.format.candidates if name in self.bot_names)

    @property
    def game_setup(self) -> GameSetup:
        """What every bot's handshake is told: the game, the table size and the limits."""
        return GameSetup(game=self.game, num_players=self.table_size, timing=self.timing, turn_limit=self.turn_limit)

    def schedule(self) -> Schedule:
        """Return the league's schedule: every game in the canonical order, made as it is reached.

        Only the league's bots count, so after a failed build left a bot out the
        schedule is that of the bots that remain (a gauntlet without a candidate
        plays on with the others; a duel without one of its two cannot be played).
        """
        league_format = self.format
        if isinstance(league_format, Sprt):
            missing = [name for name in league_format.candidates if name not in self.bot_names]
            if missing:
                raise LeagueError(
                    f"{self.source}: the duel cannot be played: {', '.join(missing)} "
                    f"{'is' if len(missing) == 1 else 'are'} left out of the league, and a duel needs both candidates"
                )
        if isinstance(league_format, Gauntlet):
            kept = self.candidates
            if not kept:
                raise LeagueError(
                    f"{self.source}: no candidate of the gauntlet is left to play "
                    f"({', '.join(league_format.candidates)}: left out of the league)"
                )
            league_format = Gauntlet(kept, league_format.games_per_candidate)
        try:
            return league_format.schedule(self.scheduled_names, self.table_size, self.rounds, self.seed)
        except ValueError as error:
            raise LeagueError(f"{self.source}: no schedule can be made: {error}") from None

    def bot(self, name: str) -> LeagueBot:
        """Return the bot called ``name``; raise ``KeyError`` naming the bots there are."""
        for bot in self.bots:
            if bot.name == name:
                return bot
        raise KeyError(f"no bot {name!r} in league {self.name!r}; the bots are: {', '.join(self.bot_names)}")


def load_league(path: str | os.PathLike[str]) -> League:
    """Read and check a league file; raise :class:`LeagueError` naming the file, line and key of any problem.

    Every number is checked against its range, and the league's size is
    counted without making its schedule, so any file is checked in moments.
    """
    source = Path(path)
    label = str(path)
    text = read_text(source, label, "the league file")
    root = compose(text, label)
    folder = source.resolve().parent
    checker = Checker(label)
    if root is None:
        raise LeagueError(f"{label}:1: the league file is empty; see tournaments/league.example.yaml for every key")
    keys = checker.mapping(root, "", LEAGUE_KEYS, LEAGUE_REQUIRED, what="the league file")

    name: str = checker.key(keys, _KEYS["name"])
    game: str = checker.key(keys, _KEYS["game"])
    game_class = GAMES[game]
    seed: int = checker.key(keys, _KEYS["seed"])
    warnings = []
    if is_guessable(seed):
        warnings.append(
            checker.located(
                keys["seed"],
                "seed",
                (
                    f"warning: {seed} can be guessed: a bot that tries every seed below 2^32 against the cards it is dealt "
                    "finds it, and then knows every hand; for a competition use a secret 64-bit seed (`referee seed` "
                    "prints one) and publish it when the league is over (its pages show a commitment until then)"
                ),
            )
        )
    table_node = keys["table_size"]
    table_size: int = checker.key(keys, _KEYS["table_size"])
    if not game_class.min_players <= table_size <= game_class.max_players:
        raise checker.error(
            table_node,
            "table_size",
            f"{table_size} player{'s' if table_size != 1 else ''} is outside the range of {game}; "
            f"allowed: {game_class.min_players} to {game_class.max_players}",
        )
    rounds: int = checker.key(keys, _KEYS["rounds"])
    timing = Timing(
        move_time_ms=checker.key(keys, _KEYS["move_time_ms"]),
        time_bank_ms=checker.key(keys, _KEYS["time_bank_ms"]),
        grace_ms=checker.key(keys, _KEYS["grace_ms"]),
        startup_timeout_ms=checker.key(keys, _KEYS["startup_timeout_ms"]),
    )
    turn_limit: int = checker.key(keys, _KEYS["turn_limit"])
    fault_policy = read_fault_policy(checker, keys.get("fault_policy"))
    max_restarts: int = checker.key(keys, _KEYS["max_restarts"])
    concurrency: int | None = None  # auto: what the machine holds fairly (referee.apps.league.auto_concurrency)
    if not (isinstance(keys.get("concurrency"), yaml.ScalarNode) and keys["concurrency"].value == "auto"):
        concurrency = checker.key(keys, _KEYS["concurrency"])
    output = folder / "results" / name
    if "output" in keys:
        output = resolve_path(folder, checker.key(keys, _KEYS["output"]))
    transport: Transport = checker.key(keys, _KEYS["transport"])
    sandboxed = checker.key(keys, _KEYS["sandbox"]) == "bubblewrap"
    network = read_network(checker, keys, "network", "none" if sandboxed else "host", transport, sandboxed)
    limits: ResourceLimits = _KEYS["limits"].default
    if "limits" in keys:
        limits = checker.limits(keys["limits"], "limits", limits)
    freeze: bool = checker.key(keys, _KEYS["freeze"])
    build_timeout_s: float = checker.key(keys, _KEYS["build_timeout_s"])
    on_build_failure: BuildFailureAction = checker.key(keys, _KEYS["on_build_failure"])
    build_network = read_build_network(checker, keys, sandboxed)
    spectator_delay_s: float = checker.key(keys, _KEYS["spectator_delay_s"])
    static_replays: bool = checker.key(keys, _KEYS["static_replays"])
    keep_logs: int | None = checker.key(keys, _KEYS["keep_logs"])

    bots_node = keys["bots"]
    if not isinstance(bots_node, yaml.SequenceNode):
        raise checker.error(bots_node, "bots", f"{shown(bots_node)} is not a list; list the bots, one entry each")
    bots: list[LeagueBot] = []
    declared: dict[str, tuple[str, int]] = {}
    for index, entry in enumerate(bots_node.value):
        key = f"bots[{index}]"
        bot = read_bot(checker, entry, key, folder, transport, network, sandboxed, limits, freeze, build_network)
        if bot.name in declared:
            first_key, first_line = declared[bot.name]
            named_by = "" if "name" in bot.written or bot.submission is None else f" (from {bot.submission.manifest})"
            raise checker.error(
                entry,
                f"{key}.name",
                f"{json.dumps(bot.name)}{named_by} is already the name of {first_key} (line {first_line}); "
                "bot names must be unique, so give this entry its own name",
            )
        declared[bot.name] = (key, entry.start_mark.line + 1)
        bots.append(bot)
    bots = hide_from_each_other(check_versions(checker, bots_node, bots), output, source)
    bot_names = tuple(bot.name for bot in bots if bot.replaces is None)  # the schedule's: see League.scheduled_names
    if len(bot_names) < table_size:
        raise checker.error(
            bots_node,
            "bots",
            f"{len(bot_names)} bot{'' if len(bot_names) == 1 else 's'} cannot fill a table of {table_size} "
            f"(table_size); list at least {table_size} bots "
            + ("(a bot that replaces another takes its seats) " if len(bot_names) < len(bots) else "")
            + "or lower table_size",
        )
    new_versions = {bot.name: first_version(bot.name, bots) for bot in bots if bot.replaces is not None}
    league_format = read_format(checker, keys.get("format"), table_size, bot_names, new_versions)
    if isinstance(league_format, Sprt):
        check_duel_bots(checker, bots_node, bots, league_format)
        if league_format.adjust_for_luck and keep_logs is not None:
            raise checker.error(
                keys["keep_logs"],
                "keep_logs",
                f"{keep_logs} games; a duel that adjusts for luck measures each game's "
                "luck from its log, so it keeps every log: leave keep_logs out, or adjust_for_luck",
            )
    check_size(checker, keys, league_format, bot_names, table_size, rounds, seed)
    return League(
        source=source,
        folder=folder,
        name=name,
        game=game,
        seed=seed,
        table_size=table_size,
        rounds=rounds,
        timing=timing,
        turn_limit=turn_limit,
        fault_policy=fault_policy,
        max_restarts=max_restarts,
        concurrency=concurrency,
        output=output,
        transport=transport,
        network=network,
        sandbox=sandboxed,
        limits=limits,
        build_timeout_s=build_timeout_s,
        on_build_failure=on_build_failure,
        bots=tuple(bots),
        format=league_format,
        freeze=freeze,
        build_network=build_network,
        spectator_delay_s=spectator_delay_s,
        static_replays=static_replays,
        keep_logs=keep_logs,
        warnings=tuple(warnings),
    )


def check_versions(checker: Checker, bots_node: yaml.SequenceNode, bots: list[LeagueBot]) -> list[LeagueBot]:
    """Check each ``replaces:`` (a bot of the file, replaced once, no circle); a replaced bot becomes withdrawn."""
    names = [bot.name for bot in bots]
    replaced_by: dict[str, int] = {}
    for index, bot in enumerate(bots):
        if bot.replaces is None:
            continue
        node = _entry_node(bots_node.value[index], "replaces")
        key = f"bots[{index}].replaces"
        if bot.replaces not in names:
            raise checker.error(
                node, key, f"{json.dumps(bot.replaces)} is not a bot of this file; the bots are {', '.join(names)}"
            )
        if bot.replaces in replaced_by:
            first = replaced_by[bot.replaces]
            raise checker.error(
                node,
                key,
                f"{bot.replaces} is already replaced by {names[first]} (bots[{first}]); a bot has one next version: "
                f"let {bot.name} replace {names[first]}",
            )
        replaced_by[bot.replaces] = index
    stands_in = {bot.name: bot.replaces for bot in bots if bot.replaces is not None}
    for index, bot in enumerate(bots):
        chain, name = [bot.name], stands_in.get(bot.name)
        while name is not None and name != bot.name:
            chain.append(name)
            name = stands_in.get(name)
        if name == bot.name:
            raise checker.error(
                _entry_node(bots_node.value[index], "replaces"),
                f"bots[{index}].replaces",
                f"{' -> '.join([*chain, bot.name])} replace each other in a circle; the first version replaces no bot",
            )
    return [
        dataclasses.replace(
            bot, status=WITHDRAWN, status_reason=bot.status_reason or f"replaced by {names[replaced_by[bot.name]]}"
        )
        if bot.name in replaced_by and bot.plays
        else bot
        for bot in bots
    ]


def first_version(name: str, bots: Sequence[LeagueBot]) -> str:
    """The first version among ``bots`` of ``name``'s line (itself, if it replaces none): whose seats it plays in."""
    stands_in = {bot.name: bot.replaces for bot in bots if bot.replaces is not None}
    names, seen = {bot.name for bot in bots}, {name}
    while (replaced := stands_in.get(name)) is not None and replaced in names and replaced not in seen:
        seen.add(replaced)
        name = replaced
    return name


def check_duel_bots(checker: Checker, bots_node: yaml.SequenceNode, bots: list[LeagueBot], duel: Sprt) -> None:
    """Refuse a season's edit (``status:``, ``replaces:``) in a duel: its test needs the same bots from first to last.

    Its deals enter the test one after another, each seating both candidates
    and field bots: a bot that plays no more would leave its deals unplayed,
    and the test would wait for them to the end; a new version's games would
    be counted with its old version's, answering no question.
    """
    first, second = duel.candidates
    for index, bot in enumerate(bots):
        entry = bots_node.value[index]
        if bot.replaces is not None:
            raise checker.error(
                _entry_node(entry, "replaces"),
                f"bots[{index}].replaces",
                f"{bot.name} cannot replace {bot.replaces} in a duel (format sprt): its test counts {first}'s games "
                f"against {second}'s deal by deal, and a new version's games counted with its old version's would "
                "be of neither; duel the new version afresh, in another output, from a league file where it "
                "replaces no bot, and leave this duel's bots as they are",
            )
        status = _entry_node(entry, "status")
        if status is not None and not bot.plays:
            if bot.name in duel.candidates:
                why = f"every deal seats {first} and {second}, so the test would stop where it is, without a verdict"
            else:
                why = "the test takes the deals in order, and a field bot's deals left unplayed would stop it"
            raise checker.error(
                status,
                f"bots[{index}].status",
                f"{bot.status} is not allowed in a duel (format sprt): {why}; a duel's bots stay as they are from "
                f"its first game to its verdict: remove status, or play the duel afresh without {bot.name}, in "
                "another output",
            )


def _entry_node(entry: yaml.MappingNode, name: str) -> yaml.Node | None:
    """The value of key ``name`` in a bot's entry, or None when the entry has none."""
    return next((value for key, value in entry.value if key.value == name), None)


def read_build_network(checker: Checker, keys: dict[str, yaml.Node], sandboxed: bool) -> BuildNetwork:
    """Read ``build_network``: the network each submission's build has in its sandbox (all but host need the
    sandbox, without which a build has the machine's network)."""
    if not sandboxed and "build_network" not in keys:
        return "host"
    build_network: BuildNetwork = checker.key(keys, _KEYS["build_network"])
    if build_network != "host" and not sandboxed:
        raise checker.error(
            keys["build_network"],
            "build_network",
            f"{build_network} needs the sandbox, which sandbox: none turns off (a build without it has the host's "
            "network); remove one of them",
        )
    return build_network


def read_fault_policy(checker: Checker, node: yaml.Node | None) -> FaultPolicy:
    """Read ``fault_policy:``: its mode and, under default_action, the faults before a forfeit."""
    if node is None:
        return FaultPolicy()
    keys = checker.mapping(node, "fault_policy", FAULT_POLICY_KEYS, ())
    mode = PolicyMode(checker.key(keys, _FAULT_POLICY["mode"], "fault_policy."))
    max_faults: int = checker.key(keys, _FAULT_POLICY["max_faults"], "fault_policy.")
    return FaultPolicy(mode=mode, max_faults=max_faults)


def league_without_sandbox(league: League) -> League:
    """The same league with every bot started, and built, without its sandbox (``--no-sandbox``): host network, no
    masks."""
    bots = tuple(
        dataclasses.replace(
            bot, spec=dataclasses.replace(bot.spec, sandbox=False, network="host"), build_network="host"
        )
        for bot in league.bots
    )
    return dataclasses.replace(league, sandbox=False, network="host", build_network="host", bots=bots)


def league_identity(league: League) -> dict[str, Any]:
    """The league as its results depend on it, as plain JSON data: ``rules``, ``rounds`` and ``bots``.

    ``rules`` is everything that changes how any game is played: the game,
    seed, table size, format, time limits, turn limit, fault policy, restarts,
    network, freezing (when it is off) and the bots' default resource limits.
    ``bots`` is every bot as the league file declares it, in order
    (its entry as written, with its submission's manifest), whether or not
    its build succeeds. ``rounds`` and ``bots`` may grow between runs: more
    rounds or bots appended at the end only add games
    (:func:`referee.apps.league.league_changes`). Not included, because results
    do not depend on them: the name, output, concurrency, transport, sandbox
    and build settings. Paths are kept as written, so moving the league folder
    changes nothing.
    """
    return {
        "rules": {
            "game": league.game,
            "seed": league.seed,
            "table_size": league.table_size,
            "move_time_ms": league.timing.move_time_ms,
            "time_bank_ms": league.timing.time_bank_ms,
            "grace_ms": league.timing.grace_ms,
            "startup_timeout_ms": league.timing.startup_timeout_ms,
            "turn_limit": league.turn_limit,
            "fault_policy": {"mode": league.fault_policy.mode.value, "max_faults": league.fault_policy.max_faults},
            "max_restarts": league.max_restarts,
            "network": league.network,
            "limits": dataclasses.asdict(league.limits),  # the bots' defaults; a bot's own are in its entry
            "format": league.format.written(),
            # Only when off: leagues begun before bots were frozen resume as they were.
            **({} if league.freeze else {"freeze": False}),
        },
        "rounds": league.rounds,
        # A bot's replaces is kept (it decides whose seats the bot takes); its status is a season's edit, not kept.
        "bots": [
            {"league_name": bot.name, **bot.written, **({"replaces": bot.replaces} if bot.replaces else {})}
            for bot in league.bots
        ],
    }


def league_fingerprint(league: League) -> str:
    """A SHA-256 hex digest of the league's rules (see :func:`league_identity`): what no finished league may change.

    Rounds and bots are not in it: a league grows by them.
    """
    text = json.dumps(league_identity(league)["rules"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
