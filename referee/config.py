"""The league file: read it, check every key, and build the submissions it names.

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
- a submission (``path``) runs in its own folder, with its ``bot.yaml`` run
  command.

``python``. A command whose program is exactly ``python`` or ``python3``
runs with the interpreter running the referee (``sys.executable``), so that
Python bots get the referee's virtual environment and its ``referee.botkit``.
Build commands (run by a shell) find the same interpreter first on ``PATH``.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from referee.bots import BotSpec, ResourceLimits
from referee.session import GameSetup, Timing
from referee.faults import FaultPolicy, PolicyMode
from referee.games import GAMES

from referee.errors import LeagueError


MANIFEST_NAME = "bot.yaml"
PYTHON_PROGRAMS = ("python", "python3")
TRANSPORTS = ("unix", "tcp")
NETWORKS = ("host", "none")  # none: each bot in a network namespace of its own
BUILD_FAILURE_ACTIONS = ("skip", "stop")
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
NAME_RULE = 'letters, digits, ".", "_" and "-", starting with a letter or digit'
BUILD_LOG_TAIL_LINES = 10

_DEFAULT_TIMING = Timing()
LEAGUE_KEYS = (
    "name", "game", "seed", "table_size", "rounds", "move_time_ms", "time_bank_ms", "startup_timeout_ms",
    "turn_limit", "fault_policy", "max_restarts", "concurrency", "output", "transport", "network", "build_timeout_s",
    "on_build_failure", "bots",
)  # fmt: skip
LEAGUE_REQUIRED = ("name", "game", "seed", "table_size", "bots")
BOT_KEYS = ("name", "command", "address", "path", "cwd", "env", "limits", "network")
BOT_SOURCES = ("command", "address", "path")
FAULT_POLICY_KEYS = ("mode", "max_faults")
LIMIT_KEYS = ("memory_mb", "cpu_seconds", "open_files")
MANIFEST_KEYS = ("name", "version", "build", "run")
MANIFEST_REQUIRED = ("name", "version", "run")


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
    written: Mapping[str, Any]  # the entry as written, plus its manifest: what the fingerprint hashes

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
    concurrency: int  # games played at once
    output: Path  # absolute
    transport: str
    network: str  # the league's default for its bots: "host" or "none"
    build_timeout_s: float
    on_build_failure: str
    bots: tuple[LeagueBot, ...]

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)

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


class BuildResult(NamedTuple):
    """How one submission's build went: the bot, whether it can play, and what to tell the organiser."""

    bot: str
    ok: bool
    message: str


# ----- loading ---------------------------------------------------------------------


def load_league(path: str | os.PathLike[str]) -> League:
    """Read and check a league file; raise :class:`LeagueError` naming the file, line and key of any problem."""
    source = Path(path)
    label = str(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as error:
        raise LeagueError(f"{label}: cannot read the league file: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise LeagueError(
            f"{label}: the league file is not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None
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
    seed = checker.integer(keys["seed"], "seed")
    table_node = keys["table_size"]
    table_size = checker.integer(table_node, "table_size")
    if not game_class.min_players <= table_size <= game_class.max_players:
        raise checker.error(
            table_node,
            "table_size",
            f"{table_size} players is outside the range of {game}; "
            f"allowed: {game_class.min_players} to {game_class.max_players}",
        )
    rounds = checker.optional_integer(keys, "rounds", 1, minimum=1)
    timing = Timing(
        move_time_ms=checker.optional_integer(keys, "move_time_ms", _DEFAULT_TIMING.move_time_ms, minimum=1),
        time_bank_ms=checker.optional_integer(keys, "time_bank_ms", _DEFAULT_TIMING.time_bank_ms, minimum=0),
        startup_timeout_ms=checker.optional_integer(
            keys, "startup_timeout_ms", _DEFAULT_TIMING.startup_timeout_ms, minimum=1
        ),
    )
    turn_limit = checker.optional_integer(keys, "turn_limit", GameSetup.turn_limit, minimum=1)
    fault_policy = _fault_policy(checker, keys.get("fault_policy"))
    max_restarts = checker.optional_integer(keys, "max_restarts", 3, minimum=0)
    concurrency = checker.optional_integer(keys, "concurrency", 1, minimum=1)
    output = folder / "results" / name
    if "output" in keys:
        output = _resolve(folder, checker.text(keys["output"], "output"))
    transport = checker.choice(keys["transport"], "transport", TRANSPORTS) if "transport" in keys else "unix"
    network = checker.choice(keys["network"], "network", NETWORKS) if "network" in keys else "host"
    if network == "none" and transport == "tcp":
        raise checker.error(
            keys["network"], "network", "none needs transport: unix; a bot with no network cannot be reached over TCP"
        )
    build_timeout_s = 300.0
    if "build_timeout_s" in keys:
        build_timeout_s = checker.number(keys["build_timeout_s"], "build_timeout_s")
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
        bot = _bot(checker, entry, key, folder, transport, network)
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
    if len(bots) < table_size:
        raise checker.error(
            bots_node,
            "bots",
            f"{len(bots)} bot{'' if len(bots) == 1 else 's'} cannot fill a table of {table_size} (table_size); "
            f"list at least {table_size} bots or lower table_size",
        )
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
        build_timeout_s=build_timeout_s,
        on_build_failure=on_build_failure,
        bots=tuple(bots),
    )


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
    except yaml.YAMLError as error:
        raise LeagueError(f"{label}: invalid YAML: {error}") from None


def _fault_policy(checker: _Checker, node: yaml.Node | None) -> FaultPolicy:
    if node is None:
        return FaultPolicy()
    keys = checker.mapping(node, "fault_policy", FAULT_POLICY_KEYS, ())
    mode = PolicyMode.FORFEIT
    if "mode" in keys:
        mode = PolicyMode(checker.choice(keys["mode"], "fault_policy.mode", tuple(m.value for m in PolicyMode)))
    max_faults = checker.optional_integer(keys, "max_faults", FaultPolicy.max_faults, minimum=1, prefix="fault_policy.")
    return FaultPolicy(mode=mode, max_faults=max_faults)


def _bot(checker: _Checker, entry: yaml.Node, key: str, folder: Path, transport: str, network: str) -> LeagueBot:
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
        for extra in ("cwd", "env", "limits", "network"):
            if extra in keys:
                raise checker.error(
                    keys[extra], f"{key}.{extra}", "applies only to a bot the referee starts; this bot has an address"
                )
    if source == "path" and "cwd" in keys:
        raise checker.error(keys["cwd"], f"{key}.cwd", "a submission always runs in its own folder; remove cwd")
    env = checker.environment(keys["env"], f"{key}.env") if "env" in keys else {}
    limits = checker.limits(keys["limits"], f"{key}.limits") if "limits" in keys else ResourceLimits()
    if env:
        written["env"] = dict(env)
    if "limits" in keys:
        written["limits"] = dataclasses.asdict(limits)
    if "network" in keys:
        network = written["network"] = checker.choice(keys["network"], f"{key}.network", NETWORKS)
        if network == "none" and transport == "tcp":
            raise checker.error(
                keys["network"], f"{key}.network",
                "none needs transport: unix; a bot with no network cannot be reached over TCP",
            )  # fmt: skip
    isolate_network = network == "none"
    declared_at = f"{checker.label}:{entry.start_mark.line + 1}"

    if source == "address":
        address = written["address"] = checker.text(keys["address"], f"{key}.address")
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
        spec = BotSpec(
            name=name, command=command, cwd=str(cwd), env=env, limits=limits, transport=transport,
            isolate_network=isolate_network,
        )  # fmt: skip
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
        isolate_network=isolate_network,
    )
    return LeagueBot(spec=spec, submission=submission, declared_at=declared_at, written=written)


def _load_submission(
    folder: Path, env: Mapping[str, str], league_checker: _Checker, path_node: yaml.Node, key: str
) -> Submission:
    """Read a submission folder's ``bot.yaml``; raise :class:`LeagueError` naming the problem and its line.

    The run program is checked here when it is a bare name (looked up on
    ``PATH``) or when there is no build; a program the build makes
    (``./target/bot``) is checked by :func:`build_submissions` after the build.
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
    label = _manifest_label(folder, league_checker, path_node)
    try:
        text = manifest_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise LeagueError(f"{label}: cannot read the submission manifest: {error}") from None
    root = _compose(text, label)
    checker = _Checker(label)
    if root is None:
        raise LeagueError(f"{label}:1: the manifest is empty; write name, version, run and, optionally, build")
    keys = checker.mapping(root, "", MANIFEST_KEYS, MANIFEST_REQUIRED, what=MANIFEST_NAME)
    name = checker.name(keys["name"], "name")
    version = checker.text(keys["version"], "version")
    build = checker.text(keys["build"], "build") if "build" in keys else None
    run = checker.command(keys["run"], "run")
    program = run[0]
    if build is None or "/" not in program:
        _, problem = resolve_command(run, folder, env)
        if problem:
            raise checker.error(keys["run"], "run", f"{_command_text(keys['run'])} could not be started ({problem})")
    return Submission(folder=folder, manifest=label, name=name, version=version, build=build, run=run)


def resolve_command(
    command: tuple[str, ...], cwd: Path, env: Mapping[str, str]
) -> tuple[tuple[str, ...], str | None]:
    """Return ``command`` ready to run in ``cwd``, and why it cannot start (``None`` when it can).

    ``python``/``python3`` become ``sys.executable``; a program with a slash
    becomes an absolute path resolved against ``cwd``; a bare name is looked
    up on ``PATH`` (the bot's own, if its ``env`` sets one) and kept as written.
    """
    program, arguments = command[0], command[1:]
    if program in PYTHON_PROGRAMS:
        return (sys.executable, *arguments), None
    if "/" in program:
        path = _resolve(cwd, program)
        resolved = (str(path), *arguments)
        if not path.exists():
            return resolved, f"no such file: {program}, looked for {path}"
        if path.is_dir() or not os.access(path, os.X_OK):
            return resolved, f"not an executable file: {path}"
        return resolved, None
    if shutil.which(program, path=env.get("PATH", os.environ.get("PATH"))) is None:
        return command, f"no such program: {program}"
    return command, None


def _resolve(folder: Path, text: str) -> Path:
    return Path(os.path.normpath(folder / os.path.expanduser(text)))


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
    if node.tag == "tag:yaml.org,2002:str":
        return json.dumps(node.value, ensure_ascii=False)
    if node.tag == "tag:yaml.org,2002:null":
        return "an empty value"
    return node.value


class _Checker:
    """Reads YAML nodes of one file into values, raising :class:`LeagueError` at the first problem."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._constructor = yaml.constructor.SafeConstructor()

    def error(self, node: yaml.Node | None, key: str, message: str) -> LeagueError:
        line = node.start_mark.line + 1 if node is not None else 1
        return LeagueError(f"{self.label}:{line}: {key + ': ' if key else ''}{message}")

    def value(self, node: yaml.ScalarNode) -> Any:
        return self._constructor.construct_object(node, deep=True)

    def mapping(
        self, node: yaml.Node, key: str, allowed: tuple[str, ...], required: tuple[str, ...], what: str = ""
    ) -> dict[str, yaml.Node]:
        """Return a mapping's value nodes by key, after checking for unknown, repeated and missing keys."""
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
                raise self.error(node, prefix + name, f"missing; {what or key} needs {', '.join(required)}")
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

    def name(self, node: yaml.Node, key: str) -> str:
        name = self.text(node, key)
        if not NAME_PATTERN.match(name):
            raise self.error(node, key, f"{_shown(node)} is not a valid name; use {NAME_RULE}")
        return name

    def choice(self, node: yaml.Node, key: str, choices: tuple[str, ...]) -> str:
        value = node.value if isinstance(node, yaml.ScalarNode) else None
        if value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6) if value is not None else []
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            raise self.error(node, key, f"{_shown(node)} is not allowed{hint}; allowed: {', '.join(choices)}")
        return value

    def integer(self, node: yaml.Node, key: str, minimum: int | None = None) -> int:
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        allowed = "a whole number" + (f" of at least {minimum}" if minimum is not None else "")
        if type(value) is not int:  # bool is an int subclass, and "yes" is not a number
            raise self.error(node, key, f"{_shown(node)} is not an integer; write {allowed}")
        if minimum is not None and value < minimum:
            raise self.error(node, key, f"{value} is too small; write {allowed}")
        return value

    def optional_integer(
        self, keys: dict[str, yaml.Node], name: str, default: int, minimum: int, prefix: str = ""
    ) -> int:
        return self.integer(keys[name], prefix + name, minimum) if name in keys else default

    def number(self, node: yaml.Node, key: str) -> float:
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        if type(value) not in (int, float) or not value > 0:
            raise self.error(node, key, f"{_shown(node)} is not allowed; write a number of seconds above 0")
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

    def limits(self, node: yaml.Node, key: str) -> ResourceLimits:
        keys = self.mapping(node, key, LIMIT_KEYS, ())
        return ResourceLimits(**{name: self.integer(value, f"{key}.{name}", minimum=1) for name, value in keys.items()})


# ----- fingerprint -------------------------------------------------------------------


def league_fingerprint(league: League) -> str:
    """Return a SHA-256 hex digest of everything in the league that can change a game's record.

    That is the game, seed, table size, rounds, time limits, turn limit,
    fault policy, restarts, and every bot (in order) as written, with its
    submission's manifest. Not included, because results do not depend on
    them: the name, output, concurrency, transport and build settings. Paths
    are hashed as written, so moving the league folder keeps the fingerprint.
    """
    document = {
        "game": league.game,
        "seed": league.seed,
        "table_size": league.table_size,
        "rounds": league.rounds,
        "move_time_ms": league.timing.move_time_ms,
        "time_bank_ms": league.timing.time_bank_ms,
        "startup_timeout_ms": league.timing.startup_timeout_ms,
        "turn_limit": league.turn_limit,
        "fault_policy": {"mode": league.fault_policy.mode.value, "max_faults": league.fault_policy.max_faults},
        "max_restarts": league.max_restarts,
        "network": league.network,
        "bots": [{"league_name": bot.name, **bot.written} for bot in league.bots],
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ----- submissions -------------------------------------------------------------------


def build_submissions(league: League, log_dir: str | os.PathLike[str]) -> tuple[League, list[BuildResult]]:
    """Run each submission's build once, in its folder; return the league of bots that can play, and a result per build.

    Output goes to ``log_dir/build-<bot>.log``. A build fails when its command
    exits non-zero, outlasts ``build_timeout_s``, or leaves no run program.
    With ``on_build_failure: skip`` failed bots are left out (a
    :class:`LeagueError` if too few remain for a table); with ``stop`` a
    :class:`LeagueError` lists every failure.
    """
    log_dir = Path(log_dir)
    results: list[BuildResult] = []
    built: dict[Path, BuildResult] = {}
    for bot in league.bots:
        submission = bot.submission
        if submission is None or submission.build is None:
            continue
        earlier = built.get(submission.folder)
        if earlier is not None:
            outcome = "built" if earlier.ok else "failed"
            message = f"{bot.name}: same folder as {earlier.bot}, so the same build ({outcome}; see {earlier.bot})"
            results.append(BuildResult(bot.name, earlier.ok, message))
            continue
        log_dir.mkdir(parents=True, exist_ok=True)
        result = _build(bot, submission, log_dir / f"build-{bot.name}.log", league.build_timeout_s)
        built[submission.folder] = result
        results.append(result)
    failed = [result for result in results if not result.ok]
    if not failed:
        return league, results
    if league.on_build_failure == "stop":
        raise LeagueError(
            f"{league.source}: {len(failed)} submission build{'s' if len(failed) > 1 else ''} failed and "
            "on_build_failure is stop (set it to skip to play without them):\n"
            + "\n".join(result.message for result in failed)
        )
    failed_names = {result.bot for result in failed}
    kept = tuple(bot for bot in league.bots if bot.name not in failed_names)
    if len(kept) < league.table_size:
        raise LeagueError(
            f"{league.source}: after leaving out {', '.join(sorted(failed_names))} (build failed), "
            f"{len(kept)} bots remain, too few for a table of {league.table_size}:\n"
            + "\n".join(result.message for result in failed)
        )
    return dataclasses.replace(league, bots=kept), results


def _build(bot: LeagueBot, submission: Submission, log_path: Path, timeout_s: float) -> BuildResult:
    env = {**os.environ, **bot.spec.env}
    if sys.prefix != sys.base_prefix:  # in a virtual environment: `python` in a build means this interpreter
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    described = f"{bot.name} ({submission.manifest}): build {json.dumps(submission.build)}"
    started = time.monotonic()
    with open(log_path, "wb") as log:
        log.write(f"$ {submission.build}\n# in {submission.folder}\n".encode())
        log.flush()
        try:
            process = subprocess.Popen(
                submission.build,
                shell=True,
                cwd=submission.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so a timeout kills everything it started
            )
        except OSError as error:
            return BuildResult(bot.name, False, f"{described} could not be started: {error}")
        try:
            returncode = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return BuildResult(
                bot.name,
                False,
                f"{described} did not finish within {timeout_s:g} s (build_timeout_s) and was killed; "
                f"its output is in {log_path}{_log_tail(log_path)}",
            )
    elapsed = time.monotonic() - started
    if returncode != 0:
        how = f"exit code {returncode}" if returncode > 0 else f"signal {-returncode}"
        return BuildResult(
            bot.name,
            False,
            f"{described} failed with {how} after {elapsed:.1f} s; its output is in {log_path}{_log_tail(log_path)}",
        )
    _, problem = resolve_command(submission.run, submission.folder, bot.spec.env)
    if problem:
        return BuildResult(
            bot.name,
            False,
            f"{described} succeeded, but its run command {json.dumps(shlex.join(submission.run))} "
            f"cannot be started ({problem})",
        )
    return BuildResult(bot.name, True, f"{bot.name}: built in {elapsed:.1f} s (output in {log_path})")


def _log_tail(log_path: Path) -> str:
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[2:]  # past the header
    tail = [line for line in lines if line.strip()][-BUILD_LOG_TAIL_LINES:]
    return ", ending:\n" + "\n".join("    " + line for line in tail) if tail else " (no output)"
