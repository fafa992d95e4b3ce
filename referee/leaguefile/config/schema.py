"""Every key of a league file and of a submission's ``bot.yaml``: its value, range, default and help, written once.

The loader reads each key by its :class:`Key` (the allowed and required
keys of every mapping, each number's range, each choice's values), and
:mod:`referee.leaguefile.config.keys` makes from the same tables the key table of
docs/leagues.md and the key index of ``tournaments/league.example.yaml``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

from referee.engine.games import GAMES
from referee.engine.seeding import SEED_RANGE
from referee.leaguefile.schedule import Gauntlet, RoundRobin, Sampled, Sprt
from referee.leaguefile.schedule.sprt import DEFAULT_ERROR_RATE, DEFAULT_MAX_GAMES, MAX_ELO
from referee.play.processes import NETWORKS, TRANSPORTS
from referee.play.sandbox import DEFAULT_LIMITS
from referee.play.sandbox.build import BUILD_NETWORKS
from referee.protocol.clock import Timing
from referee.protocol.faults import FaultPolicy, PolicyMode
from referee.protocol.setup import GameSetup
from referee.protocol.standing import ACTIVE, BOT_STATUSES

MANIFEST_NAME = "bot.yaml"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
NAME_RULE = 'ASCII letters (a-z, A-Z), digits, ".", "_" and "-", starting with a letter or digit'

# The ranges of numbers (see docs/leagues.md, "Validation"):
UINT32_MAX = 2**32 - 1  # move_time_ms, time_bank_ms and turn_limit travel in the protocol's uint32 fields
MAX_CONCURRENCY = 1024  # games at once; each holds table_size bot processes (see docs/leagues.md)
MAX_GAMES = 2**53 - 1  # a game's index stays exact in every JSON reader of games.jsonl
MAX_SPECTATOR_DELAY_S = 3600.0  # an hour: a competition's broadcast delay, not a way to hide a game
MAX_BUILD_TIMEOUT_S = UINT32_MAX // 1000  # the longest time limit in milliseconds, in whole seconds
MANY_GAMES = 100_000  # `referee validate` warns above this many games (a day or more on one machine)

REQUIRED: Any = object()  # the default of a key that must be given

# What a key holds. The scalar kinds are read by Checker.key from the schema alone; the others (a format,
# limits, a list of bots or folders, an address, an environment) by their own readers.
Kind = Literal[
    "integer",
    "real",
    "seconds",
    "choice",
    "boolean",
    "name",
    "text",
    "command",
    "format",
    "mapping",
    "limits",
    "list",
    "folders",
    "address",
    "environment",
]


@dataclass(frozen=True)
class Key:
    """One key of a mapping: what it holds (``kind``), its range or choices, its default and a line of help."""

    name: str
    kind: Kind
    help: str
    default: Any = REQUIRED
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive: bool = False  # a real number's range leaves out its ends
    choices: tuple[str, ...] = ()
    shown_default: str | None = None  # the default as people read it, where the value alone would mislead
    value: str | None = None  # what may be written, where the kind and range alone do not say it

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def allowed(self) -> str:
        """What may be written, in a few words: ``1 to 4294967295``, ``unix | tcp``, ``true | false``."""
        if self.value is not None:
            return self.value
        if self.choices:
            return " | ".join(self.choices)
        if self.kind == "boolean":
            return "true | false"
        if self.kind in ("name", "text"):
            return f"a {self.kind}"
        if self.kind == "seconds":
            return "above 0" + (f", at most {_number(self.maximum)}" if self.maximum is not None else "")
        if self.kind in ("integer", "real"):
            if self.maximum is None:
                return f"{_number(self.minimum)} or more"
            within = "between {} and {}" if self.exclusive else "{} to {}"
            return within.format(_number(self.minimum), _number(self.maximum))
        return self.kind

    def default_text(self) -> str:
        """The default as the docs show it: ``required``, or the value."""
        if self.shown_default is not None:
            return self.shown_default
        if self.required:
            return "required"
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        if self.default is None:
            return "none"
        return _number(self.default) if isinstance(self.default, int | float) else str(self.default)


def _number(value: float | None) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def names(keys: tuple[Key, ...]) -> tuple[str, ...]:
    return tuple(key.name for key in keys)


def required(keys: tuple[Key, ...]) -> tuple[str, ...]:
    return tuple(key.name for key in keys if key.required)


def by_name(keys: tuple[Key, ...]) -> dict[str, Key]:
    return {key.name: key for key in keys}


_TIMING = Timing()
_GAMES = " or ".join(f"{name} ({game.min_players}-{game.max_players} players)" for name, game in GAMES.items())
SANDBOXES = ("bubblewrap", "none")  # none: bots run without a sandbox (for bots the organiser trusts)
BuildFailureAction = Literal["skip", "stop"]  # a failed build leaves its bot out, or stops the league
BUILD_FAILURE_ACTIONS: tuple[BuildFailureAction, ...] = get_args(BuildFailureAction)

LEAGUE: tuple[Key, ...] = (
    Key("name", "name", "the league's name: letters, digits, \".\", \"_\" and \"-\""),
    Key("game", "choice", f"the game: {_GAMES}", choices=tuple(GAMES)),
    Key("seed", "integer", "the league seed: every deal derives from it; keep it secret (`referee seed`)",
        minimum=SEED_RANGE[0], maximum=SEED_RANGE[1], value="a whole number of 64 bits"),
    Key("table_size", "integer", "players in every game, within the game's range", minimum=None,
        value="a whole number within the game's range"),
    Key("format", "format", "how tables are made (see Formats)", default="round-robin",
        value="round-robin | {type: ..., ...}"),
    Key("rounds", "integer", "times the whole schedule is played, each with fresh deals", default=1,
        minimum=1, maximum=MAX_GAMES),
    Key("move_time_ms", "integer", "time for each decision, in milliseconds", default=_TIMING.move_time_ms,
        minimum=1, maximum=UINT32_MAX),
    Key("time_bank_ms", "integer", "a reserve for the whole game: time over move_time_ms comes out of it",
        default=_TIMING.time_bank_ms, minimum=0, maximum=UINT32_MAX),
    Key("grace_ms", "integer", "an allowance for transport, in milliseconds", default=_TIMING.grace_ms,
        minimum=0, maximum=UINT32_MAX),
    Key("startup_timeout_ms", "integer", "time a started bot has to listen and answer the handshake",
        default=_TIMING.startup_timeout_ms, minimum=1, maximum=UINT32_MAX),
    Key("turn_limit", "integer", "turns in one hand before a forced showdown", default=GameSetup.turn_limit,
        minimum=1, maximum=UINT32_MAX),
    Key("fault_policy", "mapping", "what happens to a bot that faults: mode, max_faults", default=None,
        shown_default="mode: forfeit", value="{mode: ..., max_faults: N}"),
    Key("max_restarts", "integer", "restarts of a crashed bot over the whole league", default=3,
        minimum=0, maximum=UINT32_MAX),
    Key("concurrency", "integer", "games played at the same time; results do not depend on it", default=None,
        minimum=1, maximum=MAX_CONCURRENCY, shown_default="auto", value=f"auto | 1 to {MAX_CONCURRENCY}"),
    Key("output", "text", "where results go, relative to the league file's folder", default=None,
        shown_default="results/NAME", value="a path"),
    Key("transport", "choice", "where a started bot listens: a Unix socket, or TCP on 127.0.0.1",
        default="unix", choices=TRANSPORTS),
    Key("network", "choice", "the network a bot in its sandbox may use (tcp needs host)", default="none",
        choices=NETWORKS, shown_default="none (host without the sandbox)"),
    Key("sandbox", "choice", "bots run in a sandbox; none for bots you trust", default="bubblewrap",
        choices=SANDBOXES),
    Key("limits", "limits", "resource limits of each bot's process tree (a bot's own override them)",
        default=DEFAULT_LIMITS, shown_default="see limits", value="{KEY: N | none, ...}"),
    Key("freeze", "boolean", "bots are frozen while not on move", default=True),
    Key("build_timeout_s", "seconds", "seconds a submission's build may take", default=300.0,
        maximum=MAX_BUILD_TIMEOUT_S),
    Key("build_network", "choice", "the network a submission's build has in its sandbox: the machine's without its "
        "loopback (outside: packages are fetched, no service of this machine is reached), none (loopback only), or "
        "the machine's own (host)", default="outside", choices=BUILD_NETWORKS,
        shown_default="outside (host without the sandbox)"),
    Key("on_build_failure", "choice", "a failed build leaves its bot out (skip) or stops the league",
        default="skip", choices=BUILD_FAILURE_ACTIONS),
    Key("static_replays", "boolean", "each game's replay page written as a file as the game ends (a folder opened "
        "from disk); else referee serve makes it from the game's log when asked", default=False),
    Key("spectator_delay_s", "real", "seconds that spectators of a game in play see it late (referee serve)",
        default=0.0, minimum=0, maximum=MAX_SPECTATOR_DELAY_S),
    Key("keep_logs", "integer", "the game logs kept: those of each bot's last N games and last N games with a "
        "fault (referee.records.retention); records of every game are kept", default=None, minimum=1, maximum=MAX_GAMES,
        shown_default="every game's log"),
    Key("bots", "list", "the bots, at least table_size of them", value="a list of bot entries"),
)  # fmt: skip

BOT: tuple[Key, ...] = (
    Key("name", "name", "the bot's unique name (for a submission, bot.yaml's by default)", default=None,
        shown_default="required, but bot.yaml's for a path"),
    Key("command", "command", "a program the referee starts (one of command, address, path)", default=None,
        shown_default="", value="a string or a list"),
    Key("address", "address", "a bot server already running (one of command, address, path)", default=None,
        shown_default="", value="HOST:PORT | unix:/PATH"),
    Key("path", "text", f"a submission folder holding {MANIFEST_NAME} (one of command, address, path)",
        default=None, shown_default="", value="a folder"),
    Key("cwd", "text", "the folder a command runs in", default=None, shown_default="the league's folder",
        value="a folder"),
    Key("env", "environment", "extra environment variables (text or numbers)", default=None, shown_default="",
        value="{VARIABLE: value, ...}"),
    Key("limits", "limits", "this bot's limits, key by key over the league's", default=None,
        shown_default="the league's", value="{KEY: N | none, ...}"),
    Key("network", "choice", "this bot's network, over the league's", default=None, choices=NETWORKS,
        shown_default="the league's"),
    Key("shared", "folders", "folders this bot may also write; other bots do not see them", default=None,
        shown_default="", value="a list of folders"),
    Key("freeze", "boolean", "frozen while not on move, over the league's", default=None,
        shown_default="the league's"),
    Key("status", "choice", "withdrawn: plays no new game, its games count; disqualified: its games count for no one",
        default=ACTIVE, choices=BOT_STATUSES),
    Key("reason", "text", "why the bot is withdrawn or disqualified (the pages show it)", default=None,
        shown_default=""),
    Key("replaces", "name", "a bot of this file whose games still to play this one plays (a new version)",
        default=None, shown_default="", value="a bot's name"),
)  # fmt: skip
BOT_SOURCES = ("command", "address", "path")
ADDRESS_ONLY = ("cwd", "env", "limits", "network", "shared", "freeze")  # keys a bot with an address may not have

FAULT_POLICY: tuple[Key, ...] = (
    Key("mode", "choice", "forfeit: the bot leaves the game; default_action: a neutral move is played for it",
        default=FaultPolicy.mode.value, choices=tuple(mode.value for mode in PolicyMode)),
    Key("max_faults", "integer", "faults in one game before a forfeit, under default_action",
        default=FaultPolicy.max_faults, minimum=1, maximum=UINT32_MAX),
)  # fmt: skip

_TYPE = Key("type", "choice", "the format")
_CANDIDATES = Key("candidates", "list", "bots of the league", value="[NAME, ...]")
FORMAT: dict[str, tuple[Key, ...]] = {
    RoundRobin.type: (_TYPE,),
    Sampled.type: (
        _TYPE,
        Key("games_per_bot", "integer", "about how many games each bot plays", minimum=1, maximum=MAX_GAMES),
        Key("rotations", "integer", "seat rotations a table plays", default=None, shown_default="auto",
            value="auto | 1 to table_size"),
    ),
    Gauntlet.type: (
        _TYPE,
        _CANDIDATES,
        Key("games_per_candidate", "integer", "games of each candidate against drawn tables of the field",
            default=None, minimum=1, maximum=MAX_GAMES, shown_default="every combination"),
    ),
    Sprt.type: (
        _TYPE,
        Key("candidates", "list", "A and B, the two bots the duel tests", value="[A, B]"),
        Key("elo0", "real", "H0: A is elo0 Elo stronger than B", default=None, minimum=-MAX_ELO, maximum=MAX_ELO,
            shown_default=""),
        Key("elo1", "real", "H1: A is elo1 Elo stronger than B (above elo0)", default=None, minimum=-MAX_ELO,
            maximum=MAX_ELO, shown_default=""),
        Key("difference0", "real", "H0 as A's mean score minus B's (instead of elo0)", default=None,
            minimum=-1.0, maximum=1.0, exclusive=True, shown_default=""),
        Key("difference1", "real", "H1 as A's mean score minus B's (instead of elo1)", default=None,
            minimum=-1.0, maximum=1.0, exclusive=True, shown_default=""),
        Key("alpha", "real", "the chance of accepting H1 when H0 holds", default=DEFAULT_ERROR_RATE,
            minimum=0.0, maximum=1.0, exclusive=True),
        Key("beta", "real", "the chance of accepting H0 when H1 holds", default=DEFAULT_ERROR_RATE,
            minimum=0.0, maximum=1.0, exclusive=True),
        Key("max_games", "integer", "the most games played without a verdict", default=DEFAULT_MAX_GAMES,
            minimum=1, maximum=MAX_GAMES),
        Key("adjust_for_luck", "boolean", "test on scores with the luck of the cards taken out "
            "(docs/statistics.md, 'Luck')", default=False),
    ),
}  # fmt: skip
FORMAT_EXAMPLES = {
    Sampled.type: "{type: sampled, games_per_bot: 30}",
    Gauntlet.type: "{type: gauntlet, candidates: [NAME]}",
    Sprt.type: "{type: sprt, candidates: [A, B], elo0: 0, elo1: 10}",
}

LIMITS: tuple[Key, ...] = tuple(
    Key(name, "integer", text, default=getattr(DEFAULT_LIMITS, name), minimum=1, value="N | none")
    for name, text in (
        (
            "memory_mb",
            "memory of all the bot's processes together (and its files in its writable places, and so their number)",
        ),
        ("processes", "processes and threads at once"),
        ("cpu_seconds", "CPU time of all its processes over the bot process's life (many games)"),
        ("open_files", "open files, per process"),
        (
            "output_mb",
            (
                "its log (it keeps the first `output_mb` MB of the bot's output) and each of its writable "
                "places (`/tmp`, `/scratch`, `/dev/shm`, its socket folder)"
            ),
        ),
    )
)

MANIFEST: tuple[Key, ...] = (
    Key("name", "name", f"the bot's name: {NAME_RULE}"),
    Key("version", "text", 'text, e.g. "1.2" (quote a number)'),
    Key("build", "text", "a shell command run once in the folder's copy before the league", default=None),
    Key("run", "command", "the command that starts the bot, in its folder: a string split as a shell would, "
        "or a list of strings"),
)  # fmt: skip

LEAGUE_KEYS = names(LEAGUE)
LEAGUE_REQUIRED = required(LEAGUE)
BOT_KEYS = names(BOT)
FAULT_POLICY_KEYS = names(FAULT_POLICY)
FORMAT_KEYS = {kind: names(keys) for kind, keys in FORMAT.items()}
FORMAT_REQUIRED = {kind: required(keys) for kind, keys in FORMAT.items()}  # sprt also needs one pair of hypotheses
MANIFEST_KEYS = names(MANIFEST)
MANIFEST_REQUIRED = required(MANIFEST)
MANIFEST_RULES = {key.name: key.help for key in MANIFEST if key.required}  # said when a required key is missing
