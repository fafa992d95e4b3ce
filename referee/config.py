"""The league file: read it, check every key, and say what of it the results depend on.

``tournaments/league.example.yaml`` documents every key. Every problem raises
:class:`LeagueError` with a message of the form
``FILE:LINE: KEY.PATH: what is wrong; what is allowed``, for example
``tournaments/x.yaml:14: bots[2].command: "pyhton bot.py" could not be
started (no such program: pyhton)``. Line numbers come from the YAML nodes
(``yaml.compose``), so every message points at the line to fix.

Paths. Relative paths in the league file are relative to the folder holding
the league file, never to where the referee was started:

- ``output``, ``cwd`` and ``path`` are resolved against the league folder;
- a bot with ``command`` runs in its ``cwd`` (default: the league folder), so
  relative paths among the command's arguments are relative to that folder;
  a program containing a slash (``./bot``, ``bin/bot``) is resolved against
  the same folder and must be an executable file; a bare program name
  (``node``) is looked up on ``PATH`` (the bot's ``env`` may set ``PATH``);
- a submission (``path``) runs with its ``bot.yaml`` run command in its
  folder's copy, built in the league's output (:mod:`referee.submissions`).

``python``. A command whose program is exactly ``python`` or ``python3``
runs with the interpreter running the referee (``sys.executable``), so that
Python bots get the referee's virtual environment and its ``referee.botkit``.
Build commands (run by a shell) find the same interpreter first on ``PATH``.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import ipaddress
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from referee import sandbox
from referee.bots import BotSpec
from referee.clock import Timing
from referee.errors import LeagueError
from referee.faults import FaultPolicy, PolicyMode
from referee.games import GAMES
from referee.gamesetup import GameSetup
from referee.sandbox import DEFAULT_LIMITS, LIMIT_KEYS, ResourceLimits
from referee.schedule import FORMATS, Format, Gauntlet, RoundRobin, Sampled, Sprt
from referee.schedule.sprt import DEFAULT_ERROR_RATE, DEFAULT_MAX_GAMES, HYPOTHESIS_KEYS, MAX_ELO
from referee.seeding import is_guessable
from referee.stats import Measure

MANIFEST_NAME = "bot.yaml"
PYTHON_PROGRAMS = ("python", "python3")
TRANSPORTS = ("unix", "tcp")
NETWORKS = ("host", "none")  # none: each bot in its sandbox has no network at all
SANDBOXES = ("bubblewrap", "none")  # none: bots run without a sandbox (for bots the organiser trusts)
BUILD_FAILURE_ACTIONS = ("skip", "stop")
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
NAME_RULE = 'ASCII letters (a-z, A-Z), digits, ".", "_" and "-", starting with a letter or digit'
BUILD_LOG_TAIL_LINES = 10
SHOWN_LENGTH = 60  # a longer value is shown by its start and length in messages
INTERPRETERS = re.compile(r"(python[0-9.]*|node|nodejs|ruby|perl|php|lua|bash|sh|dash|zsh)\Z")

# The ranges of numbers (see docs/leagues.md, "Validation"):
UINT32_MAX = 2**32 - 1  # move_time_ms, time_bank_ms and turn_limit travel in the protocol's uint32 fields
SEED_RANGE = (-(2**63), 2**64 - 1)  # a seed fits 64 bits, signed or not
MAX_CONCURRENCY = 1024  # games at once; each holds table_size bot processes (see docs/leagues.md)
MAX_GAMES = 2**53 - 1  # a game's index stays exact in every JSON reader of games.jsonl
MAX_BUILD_TIMEOUT_S = UINT32_MAX // 1000  # the longest time limit in milliseconds, in whole seconds
MANY_GAMES = 100_000  # `referee validate` warns above this many games (a day or more on one machine)

_DEFAULT_TIMING = Timing()
LEAGUE_KEYS = (
    "name", "game", "seed", "table_size", "format", "rounds", "move_time_ms", "time_bank_ms", "grace_ms",
    "startup_timeout_ms", "turn_limit", "fault_policy", "max_restarts", "concurrency", "output", "transport",
    "network", "sandbox", "limits", "freeze", "build_timeout_s", "on_build_failure", "bots",
)  # fmt: skip
LEAGUE_REQUIRED = ("name", "game", "seed", "table_size", "bots")
BOT_KEYS = ("name", "command", "address", "path", "cwd", "env", "limits", "network", "shared", "freeze")
BOT_SOURCES = ("command", "address", "path")
FAULT_POLICY_KEYS = ("mode", "max_faults")
MANIFEST_KEYS = ("name", "version", "build", "run")
FORMAT_KEYS = {
    RoundRobin.type: ("type",),
    Sampled.type: ("type", "games_per_bot", "rotations"),
    Gauntlet.type: ("type", "candidates", "games_per_candidate"),
    Sprt.type: ("type", "candidates", "elo0", "elo1", "difference0", "difference1", "alpha", "beta", "max_games"),
}
FORMAT_REQUIRED = {
    RoundRobin.type: ("type",),
    Sampled.type: ("type", "games_per_bot"),
    Gauntlet.type: ("type", "candidates"),
    Sprt.type: ("type", "candidates"),  # and one pair of hypotheses: checked by _sprt
}
FORMAT_EXAMPLES = {
    Sampled.type: "{type: sampled, games_per_bot: 30}",
    Gauntlet.type: "{type: gauntlet, candidates: [NAME]}",
    Sprt.type: "{type: sprt, candidates: [A, B], elo0: 0, elo1: 10}",
}
MANIFEST_REQUIRED = ("name", "version", "run")
MANIFEST_RULES = {  # what each key of bot.yaml holds, for the message that says one is missing
    "name": f"the bot's name: {NAME_RULE}",
    "version": 'text, e.g. "1.2" (quote a number)',
    "run": "the command that starts the bot, in its folder: a string split as a shell would, or a list of strings",
}


@dataclass(frozen=True)
class Submission:
    """A bot submitted as a folder holding ``bot.yaml``: its name, version, build and run commands."""

    folder: Path  # absolute
    manifest: str  # the bot.yaml path as shown in messages
    name: str
    version: str
    build: str | None  # a shell command run once in the folder before the league
    run: tuple[str, ...]  # as written in bot.yaml


@dataclass(frozen=True)
class LeagueBot:
    """One bot of the league: how to start or reach it, and where the league file declares it."""

    spec: BotSpec  # ready for referee.bots: program resolved, cwd absolute, transport set
    submission: Submission | None
    declared_at: str  # "FILE:LINE" of the bot's entry
    written: Mapping[str, Any]  # the entry as written, plus its manifest: what league_identity keeps

    @property
    def name(self) -> str:
        return self.spec.name


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
    transport: str
    network: str  # the league's default for its bots: "host" or "none"
    sandbox: bool  # bots run in their sandbox (sandbox: bubblewrap, the default)
    limits: ResourceLimits  # the league's default limits for its bots
    build_timeout_s: float
    on_build_failure: str
    bots: tuple[LeagueBot, ...]
    format: Format = RoundRobin()  # how tables are made: referee.schedule
    freeze: bool = True  # the league's default for its bots: frozen while not on move (referee.freezer)
    warnings: tuple[str, ...] = ()  # what validate and run say about the file (located), the league being valid

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)

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

    def bot(self, name: str) -> LeagueBot:
        """Return the bot called ``name``; raise ``KeyError`` naming the bots there are."""
        for bot in self.bots:
            if bot.name == name:
                return bot
        raise KeyError(f"no bot {name!r} in league {self.name!r}; the bots are: {', '.join(self.bot_names)}")


# ----- loading ---------------------------------------------------------------------


def load_league(path: str | os.PathLike[str]) -> League:
    """Read and check a league file; raise :class:`LeagueError` naming the file, line and key of any problem.

    Every number is checked against its range, and the league's size is
    counted without making its schedule, so any file is checked in moments.
    """
    source = Path(path)
    label = str(path)
    text = _read_text(source, label, "the league file")
    root = _compose(text, label)
    folder = source.resolve().parent
    checker = _Checker(label)
    if root is None:
        raise LeagueError(f"{label}:1: the league file is empty; see tournaments/league.example.yaml for every key")
    keys = checker.mapping(root, "", LEAGUE_KEYS, LEAGUE_REQUIRED, what="the league file")

    name = checker.name(keys["name"], "name")
    game_node = keys["game"]
    game = checker.choice(game_node, "game", tuple(GAMES))
    game_class = GAMES[game]
    seed = checker.integer(keys["seed"], "seed", *SEED_RANGE)
    warnings = []
    if is_guessable(seed):
        warnings.append(checker.located(keys["seed"], "seed", (
            f"warning: {seed} can be guessed: a bot that tries every seed below 2^32 against the cards it is dealt "
            "finds it, and then knows every hand; for a competition use a secret 64-bit seed (`referee seed` "
            "prints one) and publish it when the league is over (its pages show a commitment until then)")))
    table_node = keys["table_size"]
    table_size = checker.integer(table_node, "table_size")
    if not game_class.min_players <= table_size <= game_class.max_players:
        raise checker.error(
            table_node,
            "table_size",
            f"{table_size} player{'s' if table_size != 1 else ''} is outside the range of {game}; "
            f"allowed: {game_class.min_players} to {game_class.max_players}",
        )
    rounds = checker.optional_integer(keys, "rounds", 1, minimum=1, maximum=MAX_GAMES)
    timing = Timing(
        move_time_ms=checker.optional_integer(
            keys, "move_time_ms", _DEFAULT_TIMING.move_time_ms, minimum=1, maximum=UINT32_MAX
        ),
        time_bank_ms=checker.optional_integer(
            keys, "time_bank_ms", _DEFAULT_TIMING.time_bank_ms, minimum=0, maximum=UINT32_MAX
        ),
        grace_ms=checker.optional_integer(keys, "grace_ms", _DEFAULT_TIMING.grace_ms, minimum=0, maximum=UINT32_MAX),
        startup_timeout_ms=checker.optional_integer(
            keys, "startup_timeout_ms", _DEFAULT_TIMING.startup_timeout_ms, minimum=1, maximum=UINT32_MAX
        ),
    )
    turn_limit = checker.optional_integer(keys, "turn_limit", GameSetup.turn_limit, minimum=1, maximum=UINT32_MAX)
    fault_policy = _fault_policy(checker, keys.get("fault_policy"))
    max_restarts = checker.optional_integer(keys, "max_restarts", 3, minimum=0, maximum=UINT32_MAX)
    concurrency = None  # auto: what the machine holds fairly (referee.league.auto_concurrency)
    if "concurrency" in keys and not (
        isinstance(keys["concurrency"], yaml.ScalarNode) and keys["concurrency"].value == "auto"
    ):
        concurrency = checker.integer(keys["concurrency"], "concurrency", minimum=1, maximum=MAX_CONCURRENCY)
    output = folder / "results" / name
    if "output" in keys:
        output = _resolve(folder, checker.text(keys["output"], "output"))
    transport = checker.choice(keys["transport"], "transport", TRANSPORTS) if "transport" in keys else "unix"
    sandboxed = "sandbox" not in keys or checker.choice(keys["sandbox"], "sandbox", SANDBOXES) == "bubblewrap"
    network = _network(checker, keys, "network", "none" if sandboxed else "host", transport, sandboxed)
    limits = checker.limits(keys["limits"], "limits", DEFAULT_LIMITS) if "limits" in keys else DEFAULT_LIMITS
    freeze = checker.boolean(keys["freeze"], "freeze") if "freeze" in keys else True
    build_timeout_s = 300.0
    if "build_timeout_s" in keys:
        build_timeout_s = checker.number(keys["build_timeout_s"], "build_timeout_s", maximum=MAX_BUILD_TIMEOUT_S)
    on_build_failure = "skip"
    if "on_build_failure" in keys:
        on_build_failure = checker.choice(keys["on_build_failure"], "on_build_failure", BUILD_FAILURE_ACTIONS)

    bots_node = keys["bots"]
    if not isinstance(bots_node, yaml.SequenceNode):
        raise checker.error(bots_node, "bots", f"{_shown(bots_node)} is not a list; list the bots, one entry each")
    bots: list[LeagueBot] = []
    declared: dict[str, tuple[str, int]] = {}
    for index, entry in enumerate(bots_node.value):
        key = f"bots[{index}]"
        bot = _bot(checker, entry, key, folder, transport, network, sandboxed, limits, freeze)
        if bot.name in declared:
            first_key, first_line = declared[bot.name]
            named_by = "" if "name" in bot.written else f" (from {bot.submission.manifest})"
            raise checker.error(
                entry,
                f"{key}.name",
                f"{json.dumps(bot.name)}{named_by} is already the name of {first_key} (line {first_line}); "
                "bot names must be unique, so give this entry its own name",
            )
        declared[bot.name] = (key, entry.start_mark.line + 1)
        bots.append(bot)
    bots = _hide_from_each_other(bots, output, source)
    if len(bots) < table_size:
        raise checker.error(
            bots_node,
            "bots",
            f"{len(bots)} bot{'' if len(bots) == 1 else 's'} cannot fill a table of {table_size} (table_size); "
            f"list at least {table_size} bots or lower table_size",
        )
    bot_names = tuple(bot.name for bot in bots)
    league_format = _format(checker, keys.get("format"), table_size, bot_names)
    _check_size(checker, keys, league_format, bot_names, table_size, rounds, seed)
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
        warnings=tuple(warnings),
    )


def _read_text(path: Path, label: str, what: str) -> str:
    """Read a UTF-8 file; a byte that is not UTF-8 is reported with its line."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise LeagueError(f"{label}: cannot read {what}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - data.rfind(b"\n", 0, error.start)
        raise LeagueError(
            f"{label}:{line}: {what} is not UTF-8 text: byte {column} of the line, "
            f"0x{data[error.start]:02x}, is not UTF-8 ({error.reason}); save the file as UTF-8"
        ) from None


# ----- the format and the league's size ------------------------------------------------


def _format(checker: _Checker, node: yaml.Node | None, table_size: int, bot_names: tuple[str, ...]) -> Format:
    """Read ``format:``: a type (``round-robin`` may be written alone) and that type's settings."""
    if node is None:
        return RoundRobin()
    if isinstance(node, yaml.ScalarNode):
        kind = checker.choice(node, "format", tuple(FORMATS))
        if kind != RoundRobin.type:
            needs = " and ".join(FORMAT_REQUIRED[kind][1:])
            raise checker.error(node, "format", f"{kind} needs {needs}; write format: {FORMAT_EXAMPLES[kind]}")
        return RoundRobin()
    type_node = None
    if isinstance(node, yaml.MappingNode):
        type_node = next((value for key, value in node.value if getattr(key, "value", None) == "type"), None)
    if type_node is None:
        checker.mapping(node, "format", ("type",), ("type",), what="format")  # raises, naming what is wrong
    kind = checker.choice(type_node, "format.type", tuple(FORMATS))
    keys = checker.mapping(node, "format", FORMAT_KEYS[kind], FORMAT_REQUIRED[kind], what=f"format {kind}")
    if kind == RoundRobin.type:
        return RoundRobin()
    if kind == Sampled.type:
        rotations = _rotations(checker, keys["rotations"], table_size) if "rotations" in keys else None
        return Sampled(_games(checker, keys["games_per_bot"], "format.games_per_bot", table_size, rotations), rotations)
    if kind == Sprt.type:
        return _sprt(checker, node, keys, table_size, bot_names)
    candidates = _candidates(checker, keys["candidates"], bot_names)
    games = None
    if "games_per_candidate" in keys:
        games = _games(checker, keys["games_per_candidate"], "format.games_per_candidate", table_size)
    return Gauntlet(candidates, games)


def _games(checker: _Checker, node: yaml.Node, key: str, table_size: int, rotations: int | None = None) -> int:
    games = checker.integer(node, key, 1, MAX_GAMES)
    if rotations is not None and games < rotations:
        raise checker.error(
            node, key,
            f"{games} is fewer than one table's games: a table plays {rotations} games, one per seat rotation it "
            f"plays (format.rotations), so write {rotations} or more (a multiple of {rotations}, or it is rounded "
            "to one)",
        )  # fmt: skip
    if rotations is None and games < table_size:
        raise checker.error(
            node, key,
            f"{games} is fewer than one table's games: a table of {table_size} plays {table_size} games, one per "
            f"seat rotation, so write {table_size} or more (a multiple of {table_size}, or it is rounded to one)",
        )  # fmt: skip
    return games


def _rotations(checker: _Checker, node: yaml.Node, table_size: int) -> int | None:
    """Read ``format.rotations``: ``auto`` (None) or how many of a table's seat rotations it plays."""
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str" and node.value == "auto":
        return None
    allowed = f"write auto or a whole number from 1 to {table_size} (the seat rotations of a table of {table_size})"
    value = checker.value(node) if isinstance(node, yaml.ScalarNode) else None
    if type(value) is not int:  # bool is an int subclass, 2.0 is not whole, "all" is not a number
        raise checker.error(node, "format.rotations", f"{_shown(node)} is not allowed; {allowed}")
    if not 1 <= value <= table_size:
        raise checker.error(node, "format.rotations", f"{value} is out of range; {allowed}")
    return value


def _sprt(
    checker: _Checker, node: yaml.Node, keys: dict[str, yaml.Node], table_size: int, bot_names: tuple[str, ...]
) -> Sprt:
    """Read a duel: two candidates, one pair of hypotheses (Elo or score difference), error rates, a bound."""
    candidates = _candidates(checker, keys["candidates"], bot_names)
    if len(candidates) != 2:
        raise checker.error(
            keys["candidates"], "format.candidates",
            f"{len(candidates)} bot{'' if len(candidates) == 1 else 's'} listed; a duel has exactly two candidates, "
            "A and B, e.g. [new, old] (A's advantage over B is what the test measures)",
        )  # fmt: skip
    pairs = [measure for measure, pair in HYPOTHESIS_KEYS.items() if any(key in keys for key in pair)]
    if not pairs:
        raise checker.error(
            node, "format", "a duel needs its hypotheses: elo0 and elo1 (Elo), or difference0 and difference1 "
            f"(mean score difference); write format: {FORMAT_EXAMPLES[Sprt.type]}",
        )  # fmt: skip
    if len(pairs) > 1:
        extra = next(key for key in HYPOTHESIS_KEYS[Measure.SCORE_DIFFERENCE] if key in keys)
        raise checker.error(
            keys[extra], f"format.{extra}",
            "give either elo0 and elo1 or difference0 and difference1, not both: a test measures one of them",
        )  # fmt: skip
    measure = pairs[0]
    first, second = HYPOTHESIS_KEYS[measure]
    for key, other in ((first, second), (second, first)):
        if key not in keys:
            raise checker.error(keys[other], f"format.{key}", f"missing; {other} needs {key} (H0 and H1)")
    limit = MAX_ELO if measure is Measure.ELO else 1.0
    inclusive = measure is Measure.ELO
    h0 = checker.real(keys[first], f"format.{first}", -limit, limit, inclusive)
    h1 = checker.real(keys[second], f"format.{second}", -limit, limit, inclusive)
    if not h0 < h1:
        raise checker.error(
            keys[second], f"format.{second}",
            f"{keys[second].value} is not above {first} ({keys[first].value}); H1 ({second}) is the larger advantage "
            f"of {candidates[0]} over {candidates[1]}, H0 ({first}) the smaller, e.g. {first}: 0, {second}: "
            + ("10" if measure is Measure.ELO else "0.05"),
        )  # fmt: skip
    rates = {}
    for key in ("alpha", "beta"):
        rates[key] = DEFAULT_ERROR_RATE
        if key in keys:
            rates[key] = checker.real(keys[key], f"format.{key}", 0.0, 1.0, inclusive=False)
    if rates["alpha"] + rates["beta"] >= 1.0:
        raise checker.error(
            keys.get("beta", keys.get("alpha")), "format.beta" if "beta" in keys else "format.alpha",
            f"alpha {rates['alpha']:g} plus beta {rates['beta']:g} is 1 or more; the two error rates must add up "
            "to less than 1 (0.05 each is usual)",
        )  # fmt: skip
    max_games = DEFAULT_MAX_GAMES
    if "max_games" in keys:
        max_games = checker.integer(keys["max_games"], "format.max_games", 1, MAX_GAMES)
        if max_games < table_size:
            raise checker.error(
                keys["max_games"], "format.max_games",
                f"{max_games} is fewer than one deal's games: a deal at a table of {table_size} plays {table_size} "
                f"games, one per seat rotation, so write {table_size} or more (it is rounded down to whole deals)",
            )  # fmt: skip
    return Sprt((candidates[0], candidates[1]), measure, h0, h1, rates["alpha"], rates["beta"], max_games)


def _candidates(checker: _Checker, node: yaml.Node, bot_names: tuple[str, ...]) -> tuple[str, ...]:
    key = "format.candidates"
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise checker.error(
            node, key, f"{_shown(node)} is not allowed; list one or more bot names, e.g. [{bot_names[0]}]"
        )
    candidates: list[str] = []
    for index, item in enumerate(node.value):
        name = checker.name(item, f"{key}[{index}]")
        if name not in bot_names:
            close = difflib.get_close_matches(name, bot_names, n=1, cutoff=0.6)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            raise checker.error(item, f"{key}[{index}]", f"{json.dumps(name)} is not a bot of this league{hint}; "
                                "a candidate is one of the bots listed under bots")  # fmt: skip
        if name in candidates:
            raise checker.error(
                item, f"{key}[{index}]", f"{json.dumps(name)} is listed twice; list each candidate once"
            )
        candidates.append(name)
    return tuple(candidates)


def _check_size(
    checker: _Checker, keys: dict[str, yaml.Node], league_format: Format, bot_names: tuple[str, ...],
    table_size: int, rounds: int, seed: int,
) -> None:  # fmt: skip
    """Check that a schedule can be made and that its game count stays within MAX_GAMES, without making it."""
    format_node = keys.get("format", keys["bots"])
    one_round = isinstance(league_format, Sampled | Sprt) or (
        isinstance(league_format, Gauntlet) and league_format.games_per_candidate is not None
    )
    if one_round and rounds != 1:
        length = {Sampled.type: "games_per_bot", Sprt.type: "max_games"}.get(league_format.type, "games_per_candidate")
        raise checker.error(
            keys["rounds"], "rounds",
            f"{rounds} is not allowed with format {league_format.type}: it plays one round, as long as "
            f"format.{length} says; remove rounds and raise {length} for a longer league",
        )  # fmt: skip
    try:
        games = league_format.schedule(bot_names, table_size, rounds, seed).count
    except ValueError as error:
        raise checker.error(format_node, "format" if "format" in keys else "bots", str(error)) from None
    if games > MAX_GAMES:
        where = "rounds" if rounds > 1 else ("format" if "format" in keys else "bots")
        raise checker.error(
            keys.get(where, format_node), where,
            f"the league would play {games:,} games, more than the {MAX_GAMES:,} a schedule can number; "
            "use fewer rounds, or format: {type: sampled, games_per_bot: N} for a large field",
        )  # fmt: skip


def _compose(text: str, label: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else 1
        problem = error.problem or error.context or "unreadable"
        if error.context and error.problem and error.context_mark:
            problem += f" ({error.context}, from line {error.context_mark.line + 1})"
        raise LeagueError(f"{label}:{line}: invalid YAML: {problem}") from None
    except yaml.reader.ReaderError as error:  # a character YAML does not allow; the position is in characters
        line = text.count("\n", 0, error.position) + 1
        raise LeagueError(
            f"{label}:{line}: invalid YAML: character U+{error.character:04X} is not allowed in a YAML file"
        ) from None
    except yaml.YAMLError as error:
        raise LeagueError(f"{label}: invalid YAML: {error}") from None


def _fault_policy(checker: _Checker, node: yaml.Node | None) -> FaultPolicy:
    if node is None:
        return FaultPolicy()
    keys = checker.mapping(node, "fault_policy", FAULT_POLICY_KEYS, ())
    mode = PolicyMode.FORFEIT
    if "mode" in keys:
        mode = PolicyMode(checker.choice(keys["mode"], "fault_policy.mode", tuple(m.value for m in PolicyMode)))
    max_faults = checker.optional_integer(
        keys, "max_faults", FaultPolicy.max_faults, minimum=1, maximum=UINT32_MAX, prefix="fault_policy."
    )
    return FaultPolicy(mode=mode, max_faults=max_faults)


def _network(
    checker: _Checker, keys: dict[str, yaml.Node], key: str, default: str, transport: str, sandboxed: bool
) -> str:
    """The ``network`` of the league or of a bot: checked against the transport and the sandbox."""
    name = key.rsplit(".", 1)[-1]
    if name not in keys:
        if transport == "tcp" and default == "none":
            node = keys.get("transport")
            where = "transport" if node is not None else key
            raise checker.error(
                node, where, "tcp needs network: host (a bot in its sandbox has no network by default, so the "
                "referee could not reach it over TCP); add network: host, or use transport: unix",
            )  # fmt: skip
        return default
    network = checker.choice(keys[name], key, NETWORKS)
    if network == "none" and transport == "tcp":
        raise checker.error(
            keys[name], key, "none needs transport: unix; a bot with no network cannot be reached over TCP"
        )
    if network == "none" and not sandboxed:
        raise checker.error(
            keys[name], key, "none needs the sandbox, which sandbox: none turns off; remove one of them"
        )
    return network


def _hide_from_each_other(bots: list[LeagueBot], output: Path, league_file: Path) -> list[LeagueBot]:
    """Give each started bot what its sandbox shows and must mask; refuse a command that names what it must not see.

    Masked: the league's output and file, and each other bot's own paths
    (:func:`referee.sandbox.hidden_from_each`). A command's own files are
    what it names (:func:`referee.sandbox.command_folders`), and its cwd
    only when the league file gives one (the default is the league's folder);
    a file it names in another bot's folder is shown alone.
    """
    competition = [(str(output), "the league's output"), (str(league_file.resolve()), "the league file")]
    owners = [sandbox.Owner(bot.name, bot.spec.cwd or "", tuple(_own_paths(bot)), _private_paths(bot))
              for bot in bots if bot.spec.command]  # fmt: skip
    hidden = sandbox.hidden_from_each(owners, competition)
    hidden_bots = []
    for index, bot in enumerate(bots):
        spec = bot.spec
        if not spec.command:
            hidden_bots.append(bot)
            continue
        folders = spec.folders
        if bot.submission is None:
            named = sandbox.named_paths(spec.command, spec.cwd)
            if "cwd" in bot.written:
                named.append((bot.written["cwd"], spec.cwd))
            others = [path for path, _ in hidden[bot.name][len(competition) :]]
            conflict = sandbox.naming_a_hidden_path(named, hidden[bot.name], files_shared_from=others)
            if conflict is not None:
                written, path, what = conflict
                key = "cwd" if "cwd" in bot.written and written == bot.written["cwd"] else "command"
                raise LeagueError(
                    f"{bot.declared_at}: bots[{index}].{key}: {json.dumps(written)} (bot {bot.name}) names {what}, "
                    f"{path}, which no bot may see; give the bot what it needs in a folder of its own"
                )
            given_cwd = "cwd" in bot.written
            folders = tuple(sandbox.command_folders(spec.command, spec.cwd, given_cwd, bare_cwd=not given_cwd, hidden=others))
        spec = dataclasses.replace(spec, folders=folders, hidden=tuple(path for path, _ in hidden[bot.name]))
        hidden_bots.append(dataclasses.replace(bot, spec=spec))
    return hidden_bots


def _own_paths(bot: LeagueBot) -> list[tuple[str, str]]:
    """A started bot's own paths, which the others must not see: its submission folder, or its cwd and what its
    command names; and its shared folders."""
    spec = bot.spec
    if bot.submission is not None:
        own = [(str(bot.submission.folder), "submission folder")]
    else:
        own = [(spec.cwd, "folder (its cwd)"), *((path, "own files") for path in sandbox.own_paths(spec.command, spec.cwd))]
    return [*own, *((folder, "shared folder") for folder in spec.shared)]


def _private_paths(bot: LeagueBot) -> tuple[str, ...]:
    """A bot's own paths that no other bot may share: its submission folder, its shared folders."""
    submission = (str(bot.submission.folder),) if bot.submission is not None else ()
    return (*submission, *bot.spec.shared)


def league_without_sandbox(league: League) -> League:
    """The same league with every bot started without its sandbox (``--no-sandbox``): host network, no masks."""
    bots = tuple(
        dataclasses.replace(bot, spec=dataclasses.replace(bot.spec, sandbox=False, network="host"))
        for bot in league.bots
    )
    return dataclasses.replace(league, sandbox=False, network="host", bots=bots)


def _bot(
    checker: _Checker, entry: yaml.Node, key: str, folder: Path, transport: str, network: str, sandboxed: bool,
    league_limits: ResourceLimits, freeze: bool,
) -> LeagueBot:
    keys = checker.mapping(entry, key, BOT_KEYS, (), what="a bot entry")
    sources = [source for source in BOT_SOURCES if source in keys]
    if len(sources) != 1:
        found = f"it has {' and '.join(sources)}" if sources else "it has none"
        raise checker.error(
            entry,
            key,
            "give exactly one of command (a program to start), address (a bot already running) "
            f"or path (a submission folder with {MANIFEST_NAME}); {found}",
        )
    source = sources[0]
    written: dict[str, Any] = {}
    name = None
    if "name" in keys:
        name = written["name"] = checker.name(keys["name"], f"{key}.name")
    elif source != "path":
        raise checker.error(entry, f"{key}.name", "missing; every bot needs a unique name (" + NAME_RULE + ")")
    if source == "address":
        for extra in ("cwd", "env", "limits", "network", "shared", "freeze"):
            if extra in keys:
                raise checker.error(
                    keys[extra], f"{key}.{extra}", "applies only to a bot the referee starts; this bot has an address"
                )
    if source == "path" and "cwd" in keys:
        raise checker.error(keys["cwd"], f"{key}.cwd", "a submission always runs in its own folder; remove cwd")
    env = checker.environment(keys["env"], f"{key}.env") if "env" in keys else {}
    limits = checker.limits(keys["limits"], f"{key}.limits", league_limits) if "limits" in keys else league_limits
    if env:
        written["env"] = dict(env)
    if "limits" in keys:
        written["limits"] = dataclasses.asdict(limits)
    if "network" in keys:
        network = written["network"] = _network(checker, keys, f"{key}.network", network, transport, sandboxed)
    shared: tuple[str, ...] = ()
    if "shared" in keys:
        shared = tuple(str(path) for path in checker.folders(keys["shared"], f"{key}.shared", folder))
        written["shared"] = [item.value for item in keys["shared"].value]
    if "freeze" in keys:
        freeze = written["freeze"] = checker.boolean(keys["freeze"], f"{key}.freeze")
    sandbox = {"network": network, "sandbox": sandboxed, "shared": shared, "freeze": freeze}
    declared_at = f"{checker.label}:{entry.start_mark.line + 1}"

    if source == "address":
        address = written["address"] = checker.address(keys["address"], f"{key}.address")
        spec = BotSpec(name=name, address=address, transport=transport)
        return LeagueBot(spec=spec, submission=None, declared_at=declared_at, written=written)

    if source == "command":
        written_command = checker.command(keys["command"], f"{key}.command")
        written["command"] = list(written_command)
        cwd = folder
        if "cwd" in keys:
            written["cwd"] = checker.text(keys["cwd"], f"{key}.cwd")
            cwd = _resolve(folder, written["cwd"])
            if not cwd.is_dir():
                shown = _shown(keys["cwd"])
                raise checker.error(keys["cwd"], f"{key}.cwd", f"{shown} is not a folder (looked for {cwd})")
        command, problem = resolve_command(written_command, cwd, env)
        if problem:
            raise checker.error(
                keys["command"], f"{key}.command", f"{_command_text(keys['command'])} could not be started ({problem})"
            )
        spec = BotSpec(name=name, command=command, cwd=str(cwd), env=env, limits=limits, transport=transport, **sandbox)
        return LeagueBot(spec=spec, submission=None, declared_at=declared_at, written=written)

    path_text = written["path"] = checker.text(keys["path"], f"{key}.path")
    submission = _load_submission(_resolve(folder, path_text), env, checker, keys["path"], f"{key}.path")
    written["submission"] = {
        "name": submission.name,
        "version": submission.version,
        "build": submission.build,
        "run": list(submission.run),
    }
    command, _ = resolve_command(submission.run, submission.folder, env)
    spec = BotSpec(
        name=name or submission.name,
        command=command,
        cwd=str(submission.folder),
        env=env,
        limits=limits,
        transport=transport,
        folders=(str(submission.folder),),
        **sandbox,
    )
    return LeagueBot(spec=spec, submission=submission, declared_at=declared_at, written=written)


def _load_submission(
    folder: Path, env: Mapping[str, str], league_checker: _Checker, path_node: yaml.Node, key: str
) -> Submission:
    """Read a submission folder's ``bot.yaml``; raise :class:`LeagueError` naming the problem and its line.

    The run program is checked here when it is a bare name (looked up on
    ``PATH``) or when there is no build; a program the build makes
    (``./target/bot``) is checked after the build (:mod:`referee.submissions`).
    """
    if not folder.is_dir():
        raise league_checker.error(path_node, key, f"{_shown(path_node)} is not a folder (looked for {folder})")
    manifest_path = folder / MANIFEST_NAME
    if not manifest_path.is_file():
        raise league_checker.error(
            path_node,
            key,
            f"{_shown(path_node)} has no {MANIFEST_NAME} (looked for {manifest_path}); a submission folder holds "
            f"{MANIFEST_NAME} with name, version, run and, optionally, build",
        )
    return _read_manifest(folder, _manifest_label(folder, league_checker, path_node), env)


def load_submission(folder: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Submission:
    """Read the ``bot.yaml`` of the submission folder ``folder`` (as ``referee check-bot DIR`` is given it);
    raise :class:`LeagueError` naming the file, line and key of a problem, as a league file's bots are told."""
    shown = os.fspath(folder)
    path = Path(os.path.abspath(shown))
    if not path.is_dir():
        found = "is a file" if path.exists() else "does not exist"
        raise LeagueError(f"{shown}: {found}; give a submission folder, holding {MANIFEST_NAME}")
    if not (path / MANIFEST_NAME).is_file():
        raise LeagueError(
            f"{shown}: no {MANIFEST_NAME} (looked for {path / MANIFEST_NAME}); a submission folder holds "
            f"{MANIFEST_NAME} with name, version, run and, optionally, build (docs/bot-protocol.md shows one)"
        )
    return _read_manifest(path, os.path.join(shown, MANIFEST_NAME), env or {})


def _read_manifest(folder: Path, label: str, env: Mapping[str, str]) -> Submission:
    """Read and check ``folder``'s manifest, named ``label`` in messages."""
    manifest_path = folder / MANIFEST_NAME
    text = _read_text(manifest_path, label, "the submission manifest")
    root = _compose(text, label)
    checker = _Checker(label)
    if root is None:
        raise LeagueError(f"{label}:1: the manifest is empty; write name, version, run and, optionally, build")
    keys = checker.mapping(root, "", MANIFEST_KEYS, MANIFEST_REQUIRED, what=MANIFEST_NAME, rules=MANIFEST_RULES)
    name = checker.name(keys["name"], "name")
    version = checker.text(keys["version"], "version")
    build = checker.text(keys["build"], "build") if "build" in keys else None
    run = checker.command(keys["run"], "run")
    # With a build, files the run command names may be made by it: build_submissions checks them after it.
    _, problem = resolve_command(run, folder, env, files=build is None)
    if problem:
        raise checker.error(keys["run"], "run", f"{_command_text(keys['run'])} could not be started ({problem})")
    return Submission(folder=folder, manifest=label, name=name, version=version, build=build, run=run)


def resolve_command(
    command: tuple[str, ...], cwd: Path, env: Mapping[str, str], files: bool = True
) -> tuple[tuple[str, ...], str | None]:
    """Return ``command`` ready to run in ``cwd``, and why it cannot start (``None`` when it can).

    ``python``/``python3`` become ``sys.executable``; a program with a slash
    becomes an absolute path resolved against ``cwd``; a bare name is looked
    up on ``PATH`` (the bot's own, if its ``env`` sets one) and kept as written.
    With ``files``, files in ``cwd`` are checked too: a program with a slash
    must be an executable file, and when the program is an interpreter
    (:data:`INTERPRETERS`) whose first argument is not an option, that
    argument is its script and must be a file.
    """
    program, arguments = command[0], command[1:]
    if program in PYTHON_PROGRAMS:
        resolved = (sys.executable, *arguments)
    elif "/" in program:
        path = _resolve(cwd, program)
        resolved = (str(path), *arguments)
        if files and not path.exists():
            return resolved, f"no such file: {program}, looked for {path}"
        if files and (path.is_dir() or not os.access(path, os.X_OK)):
            return resolved, f"not an executable file: {path}"
    elif shutil.which(program, path=env.get("PATH", os.environ.get("PATH"))) is None:
        return command, f"no such program: {program}"
    else:
        resolved = command
    if files and arguments and not arguments[0].startswith("-") and INTERPRETERS.match(os.path.basename(program)):
        script = _resolve(cwd, arguments[0])
        if not script.is_file():
            found = "a folder" if script.is_dir() else "no such file"
            interpreter = os.path.basename(program)
            return resolved, f"{found}: {arguments[0]}, the script {interpreter} runs, looked for {script}"
    return resolved, None


def _resolve(folder: Path, text: str) -> Path:
    return Path(os.path.normpath(folder / os.path.expanduser(text)))


_HOST_NAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")


def address_problem(text: str) -> str | None:
    """Why ``text`` cannot be a bot server's address (what gRPC connects to), or None when it can."""
    if text.startswith("unix:"):
        return None if len(text) > len("unix:") and "\0" not in text else "unix: needs the socket's path after it"
    host, colon, port = text.rpartition(":")
    if not colon or not host:
        return "no port: it needs HOST:PORT"
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        return f"port {port!r} is not a number from 1 to 65535"
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return f"{host} is not an IPv6 address"
        return None
    try:
        ipaddress.IPv4Address(host)
        return None
    except ValueError:
        pass
    if not _HOST_NAME.match(host) or host.replace(".", "").isdigit():
        return f"{host!r} is not a host name or an IP address"
    return None


def unstartable_limits(league: League) -> list[str]:
    """Warnings for ``referee validate``: limits under which no bot the referee starts can get going."""
    # Measured with the sample Python bot: it starts at memory_mb 20, processes 12 (a gRPC server's threads
    # count) and open_files 16, and is killed at 16, 8 and 8.
    floors = (
        ("memory_mb", 20, "an interpreter and its gRPC server"),
        ("processes", 12, "a gRPC server's threads count as processes"),
        ("open_files", 16, "an interpreter and its gRPC server"),
    )
    warnings = []
    for bot in league.bots:
        if not bot.spec.command and bot.submission is None:
            continue
        for key, floor, why in floors:
            value = getattr(bot.spec.limits, key, None) if getattr(bot.spec, "limits", None) else None
            if value is not None and value < floor:
                warnings.append(f"{league.source}: warning: bot {bot.name}: limits.{key} is {value}; the sample Python "
                                f"bot needs {floor} to start ({why}): a bot held below what it needs fails to start "
                                "in every game")  # fmt: skip
    if league.timing.startup_timeout_ms < 200:
        warnings.append(f"{league.source}: warning: startup_timeout_ms is {league.timing.startup_timeout_ms}, below "
                        "200: no bot process starts, listens and answers its handshake that fast, so every game "
                        "would be forfeited")  # fmt: skip
    return warnings


def unchecked_runs(league: League) -> list[str]:
    """Notes for ``referee validate``: run commands naming files that only the submission's build can make.

    Loading a league cannot check them (the build has not run); the run
    checks them after the build and leaves the bot out if they are missing.
    """
    notes = []
    for bot in league.bots:
        submission = bot.submission
        if submission is None or submission.build is None:
            continue
        _, problem = resolve_command(submission.run, submission.folder, bot.spec.env)
        if problem:
            notes.append(
                f"{submission.manifest}: note: run: {json.dumps(shlex.join(submission.run))} cannot start before "
                f"the build ({problem}); it is checked again once {bot.name}'s build has run"
            )
    return notes


def _manifest_label(folder: Path, league_checker: _Checker, path_node: yaml.Node) -> str:
    """Name the manifest as the user would type it: relative to where the league file was named from."""
    if os.path.isabs(os.path.expanduser(path_node.value)):
        return str(folder / MANIFEST_NAME)
    league_dir = os.path.dirname(league_checker.label)
    return os.path.normpath(os.path.join(league_dir, os.path.expanduser(path_node.value), MANIFEST_NAME))


def _command_text(node: yaml.Node) -> str:
    if isinstance(node, yaml.SequenceNode):
        return json.dumps(shlex.join(item.value for item in node.value))
    return json.dumps(node.value)


def _shown(node: yaml.Node) -> str:
    """A value as a message shows it: text in quotes, numbers and booleans as written, else its kind."""
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if len(node.value) > SHOWN_LENGTH:  # a runaway value: its start and its length
        shown = f"{node.value[: SHOWN_LENGTH // 2]}... ({len(node.value):,} characters)"
        return json.dumps(shown, ensure_ascii=False) if node.tag == "tag:yaml.org,2002:str" else shown
    if node.tag == "tag:yaml.org,2002:str":
        return json.dumps(node.value, ensure_ascii=False)
    if node.tag == "tag:yaml.org,2002:null":
        return "an empty value"
    return node.value


_TOO_LONG = object()  # what _Checker.value returns for an integer too long to convert


class _Checker:
    """Reads YAML nodes of one file into values, raising :class:`LeagueError` at the first problem."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._constructor = yaml.constructor.SafeConstructor()

    def error(self, node: yaml.Node | None, key: str, message: str) -> LeagueError:
        return LeagueError(self.located(node, key, message))

    def located(self, node: yaml.Node | None, key: str, message: str) -> str:
        """``message`` prefixed with the file, the line of ``node`` and ``key``, as every finding is told."""
        line = node.start_mark.line + 1 if node is not None else 1
        return f"{self.label}:{line}: {key + ': ' if key else ''}{message}"

    def value(self, node: yaml.ScalarNode) -> Any:
        try:
            return self._constructor.construct_object(node, deep=True)
        except ValueError:  # an integer of more digits than Python converts: no value of ours is that big
            return _TOO_LONG

    def mapping(
        self, node: yaml.Node, key: str, allowed: tuple[str, ...], required: tuple[str, ...], what: str = "",
        rules: Mapping[str, str] | None = None,
    ) -> dict[str, yaml.Node]:
        """Return a mapping's value nodes by key, after checking for unknown, repeated and missing keys
        (``rules``: what a required key holds, said when it is missing)."""
        if not isinstance(node, yaml.MappingNode):
            what = what or key
            raise self.error(node, key, f"{_shown(node)} is not a mapping; {what} takes keys: {', '.join(allowed)}")
        prefix = f"{key}." if key else ""
        found: dict[str, yaml.Node] = {}
        lines: dict[str, int] = {}
        for key_node, value_node in node.value:
            name = key_node.value if isinstance(key_node, yaml.ScalarNode) else _shown(key_node)
            if name not in allowed:
                close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
                hint = f'did you mean "{close[0]}"? ' if close else ""
                raise self.error(key_node, prefix + name, f"unknown key; {hint}allowed keys: {', '.join(allowed)}")
            if name in found:
                raise self.error(
                    key_node, prefix + name, f"appears twice (first on line {lines[name]}); write each key once"
                )
            found[name] = value_node
            lines[name] = key_node.start_mark.line + 1
        for name in required:
            if name not in found:
                rule = f" ({name}: {rules[name]})" if rules and name in rules else ""
                raise self.error(node, prefix + name, f"missing; {what or key} needs {', '.join(required)}{rule}")
        return found

    def text(self, node: yaml.Node, key: str) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, key, f"{_shown(node)} is not text; write a single value")
        if node.tag != "tag:yaml.org,2002:str":
            hint = f'; to use {node.value} as text, quote it: "{node.value}"' if node.value else "; write a value"
            raise self.error(node, key, f"{_shown(node)} is not text{hint}")
        if not node.value:
            raise self.error(node, key, "is empty; write a value")
        return node.value

    def address(self, node: yaml.Node, key: str) -> str:
        """A running bot's address: ``HOST:PORT`` (a name, an IPv4 address or ``[IPv6]``) or ``unix:/PATH``."""
        text = self.text(node, key)
        problem = address_problem(text)
        if problem:
            raise self.error(node, key, f"{_shown(node)} is not an address ({problem}); give HOST:PORT of a bot "
                                        "server already running (e.g. 127.0.0.1:50051), or unix:/PATH of its socket")
        return text

    def name(self, node: yaml.Node, key: str) -> str:
        name = self.text(node, key)
        if not NAME_PATTERN.match(name):
            raise self.error(node, key, f"{_shown(node)} is not a valid name; use {NAME_RULE}")
        return name

    def boolean(self, node: yaml.Node, key: str) -> bool:
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        if type(value) is not bool:
            raise self.error(node, key, f"{_shown(node)} is not allowed; write true or false")
        return value

    def choice(self, node: yaml.Node, key: str, choices: tuple[str, ...]) -> str:
        value = node.value if isinstance(node, yaml.ScalarNode) else None
        if value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6) if value is not None else []
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            raise self.error(node, key, f"{_shown(node)} is not allowed{hint}; allowed: {', '.join(choices)}")
        return value

    def integer(self, node: yaml.Node, key: str, minimum: int | None = None, maximum: int | None = None) -> int:
        """Read a whole number within ``minimum`` and ``maximum`` (either may be None: no bound)."""
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        if minimum is not None and maximum is not None:
            allowed = f"a whole number from {minimum} to {maximum}"
        elif minimum is not None:
            allowed = f"a whole number of at least {minimum}"
        else:
            allowed = "a whole number"
        if value is _TOO_LONG:
            raise self.error(node, key, f"{_shown(node)} is too large; write {allowed}")
        if type(value) is not int:  # bool is an int subclass, "yes" is not a number, and 2.0 is not whole
            raise self.error(node, key, f"{_shown(node)} is not an integer; write {allowed}")
        if minimum is not None and value < minimum:
            raise self.error(node, key, f"{value} is too small; write {allowed}")
        if maximum is not None and value > maximum:
            raise self.error(node, key, f"{_shown(node)} is too large; write {allowed}")
        return value

    def optional_integer(
        self, keys: dict[str, yaml.Node], name: str, default: int, minimum: int, prefix: str = "",
        maximum: int | None = None,
    ) -> int:  # fmt: skip
        return self.integer(keys[name], prefix + name, minimum, maximum) if name in keys else default

    def real(self, node: yaml.Node, key: str, low: float, high: float, inclusive: bool = True) -> float:
        """Read a number (whole or not) from ``low`` to ``high``, the ends allowed only when ``inclusive``."""
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        within = "from {} to {}" if inclusive else "between {} and {} (exclusive)"
        allowed = "a number " + within.format(f"{low:g}", f"{high:g}")
        if type(value) not in (int, float) or not (low <= value <= high if inclusive else low < value < high):
            raise self.error(node, key, f"{_shown(node)} is not allowed; write {allowed}")
        return float(value)

    def number(self, node: yaml.Node, key: str, maximum: int | None = None) -> float:
        """Read a number of seconds above 0 (and at most ``maximum``)."""
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        allowed = "a number of seconds above 0" + (f" and at most {maximum}" if maximum is not None else "")
        if type(value) not in (int, float) or not value > 0 or (maximum is not None and not value <= maximum):
            raise self.error(node, key, f"{_shown(node)} is not allowed; write {allowed}")
        return float(value)

    def command(self, node: yaml.Node, key: str) -> tuple[str, ...]:
        """Read a command: one string split like a shell would, or a list of strings."""
        if isinstance(node, yaml.SequenceNode):
            argv = tuple(self.text(item, f"{key}[{index}]") for index, item in enumerate(node.value))
        elif isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str":
            try:
                argv = tuple(shlex.split(node.value))
            except ValueError as error:
                raise self.error(node, key, f"{_shown(node)} cannot be split into words ({error})") from None
        else:
            raise self.error(node, key, f"{_shown(node)} is not a command; write a string or a list of strings")
        if not argv:
            raise self.error(node, key, "is empty; write the program to run and its arguments")
        return argv

    def environment(self, node: yaml.Node, key: str) -> dict[str, str]:
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, key, f"{_shown(node)} is not a mapping; write VARIABLE: value lines")
        env: dict[str, str] = {}
        for key_node, value_node in node.value:
            variable = self.text(key_node, key)
            value = self.value(value_node) if isinstance(value_node, yaml.ScalarNode) else None
            if type(value) not in (str, int, float):
                shown = _shown(value_node)
                raise self.error(value_node, f"{key}.{variable}", f"{shown} is not allowed; write text or a number")
            env[variable] = value_node.value
        return env

    def limits(self, node: yaml.Node, key: str, defaults: ResourceLimits) -> ResourceLimits:
        """Read ``limits:``: each key a whole number (at least 1) or ``none`` (no limit); the rest from ``defaults``."""
        keys = self.mapping(node, key, LIMIT_KEYS, ())
        values = {}
        for name, value in keys.items():
            if isinstance(value, yaml.ScalarNode) and value.value in ("none", "null", "~", ""):
                values[name] = None
            else:
                values[name] = self.integer(value, f"{key}.{name}", minimum=1)
        return dataclasses.replace(defaults, **values)

    def folders(self, node: yaml.Node, key: str, base: Path) -> list[Path]:
        """Read a list of existing folders, relative to ``base``."""
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, key, f"{_shown(node)} is not a list; write a list of folders, e.g. [data]")
        folders = []
        for index, item in enumerate(node.value):
            path = _resolve(base, self.text(item, f"{key}[{index}]"))
            if not path.is_dir():
                raise self.error(item, f"{key}[{index}]", f"{_shown(item)} is not a folder (looked for {path})")
            folders.append(path)
        return folders


# ----- what the results depend on ----------------------------------------------------


def league_identity(league: League) -> dict[str, Any]:
    """The league as its results depend on it, as plain JSON data: ``rules``, ``rounds`` and ``bots``.

    ``rules`` is everything that changes how any game is played: the game,
    seed, table size, format, time limits, turn limit, fault policy, restarts,
    network, freezing (when it is off) and the bots' default resource limits.
    ``bots`` is every bot as the league file declares it, in order
    (its entry as written, with its submission's manifest), whether or not
    its build succeeds. ``rounds`` and ``bots`` may grow between runs: more
    rounds or bots appended at the end only add games
    (:func:`referee.league.league_changes`). Not included, because results
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
        "bots": [{"league_name": bot.name, **bot.written} for bot in league.bots],
    }


def league_fingerprint(league: League) -> str:
    """A SHA-256 hex digest of the league's rules (see :func:`league_identity`): what no finished league may change.

    Rounds and bots are not in it: a league grows by them.
    """
    text = json.dumps(league_identity(league)["rules"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
