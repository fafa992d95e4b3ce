"""Reading YAML with line numbers: every value checked against its key, every problem told as ``FILE:LINE: KEY: ...``.

Line numbers come from the YAML nodes (``yaml.compose``), so every message
points at the line to fix; an unknown key says which known one was meant.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml

from referee.common.errors import LeagueError
from referee.leaguefile.commands import resolve_path
from referee.leaguefile.config.schema import LIMITS, NAME_PATTERN, NAME_RULE, Key, names
from referee.play.sandbox import ResourceLimits

Choice = TypeVar("Choice", bound=str)  # one of a key's choices, as the code names them (a Literal)

SHOWN_LENGTH = 60  # a longer value is shown by its start and length in messages


def read_text(path: Path, label: str, what: str) -> str:
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


def compose(text: str, label: str) -> yaml.Node | None:
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


def command_text(node: yaml.Node) -> str:
    if isinstance(node, yaml.SequenceNode):
        return json.dumps(shlex.join(item.value for item in node.value))
    return json.dumps(node.value)


def shown(node: yaml.Node) -> str:
    """A value as a message shows it: text in quotes, numbers and booleans as written, else its kind."""
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if len(node.value) > SHOWN_LENGTH:  # a runaway value: its start and its length
        start = f"{node.value[: SHOWN_LENGTH // 2]}... ({len(node.value):,} characters)"
        return json.dumps(start, ensure_ascii=False) if node.tag == "tag:yaml.org,2002:str" else start
    if node.tag == "tag:yaml.org,2002:str":
        return json.dumps(node.value, ensure_ascii=False)
    if node.tag == "tag:yaml.org,2002:null":
        return "an empty value"
    return str(node.value)


TOO_LONG = object()  # what Checker.value returns for an integer too long to convert


class Checker:
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
            return TOO_LONG

    def mapping(
        self,
        node: yaml.Node,
        key: str,
        allowed: tuple[str, ...],
        required: tuple[str, ...],
        what: str = "",
        rules: Mapping[str, str] | None = None,
    ) -> dict[str, yaml.Node]:
        """Return a mapping's value nodes by key, after checking for unknown, repeated and missing keys
        (``rules``: what a required key holds, said when it is missing)."""
        if not isinstance(node, yaml.MappingNode):
            what = what or key
            raise self.error(node, key, f"{shown(node)} is not a mapping; {what} takes keys: {', '.join(allowed)}")
        prefix = f"{key}." if key else ""
        found: dict[str, yaml.Node] = {}
        lines: dict[str, int] = {}
        for key_node, value_node in node.value:
            name = key_node.value if isinstance(key_node, yaml.ScalarNode) else shown(key_node)
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

    def key(self, keys: Mapping[str, yaml.Node], key: Key, prefix: str = "") -> Any:
        """Read ``key`` of a mapping's ``keys`` as the schema says (its kind, range or choices), or its default."""
        if key.name not in keys:
            return key.default
        node, where = keys[key.name], prefix + key.name
        if key.kind == "integer":
            low, high = key.minimum, key.maximum
            return self.integer(node, where, None if low is None else int(low), None if high is None else int(high))
        if key.kind == "real":
            assert key.minimum is not None and key.maximum is not None, key
            return self.real(node, where, key.minimum, key.maximum, inclusive=not key.exclusive)
        if key.kind == "seconds":
            return self.number(node, where, None if key.maximum is None else int(key.maximum))
        if key.kind == "choice":
            return self.choice(node, where, key.choices)
        if key.kind == "boolean":
            return self.boolean(node, where)
        if key.kind == "name":
            return self.name(node, where)
        if key.kind == "text":
            return self.text(node, where)
        if key.kind == "command":
            return self.command(node, where)
        raise TypeError(f"{key.name}: a {key.kind} is read by its own function, not Checker.key")

    def text(self, node: yaml.Node, key: str) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, key, f"{shown(node)} is not text; write a single value")
        if node.tag != "tag:yaml.org,2002:str":
            hint = f'; to use {node.value} as text, quote it: "{node.value}"' if node.value else "; write a value"
            raise self.error(node, key, f"{shown(node)} is not text{hint}")
        if not node.value:
            raise self.error(node, key, "is empty; write a value")
        return str(node.value)

    def name(self, node: yaml.Node, key: str) -> str:
        name = self.text(node, key)
        if not NAME_PATTERN.match(name):
            raise self.error(node, key, f"{shown(node)} is not a valid name; use {NAME_RULE}")
        return name

    def boolean(self, node: yaml.Node, key: str) -> bool:
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        if not isinstance(value, bool):
            raise self.error(node, key, f"{shown(node)} is not allowed; write true or false")
        return value

    def choice(self, node: yaml.Node, key: str, choices: tuple[Choice, ...]) -> Choice:
        value = node.value if isinstance(node, yaml.ScalarNode) else None
        if value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6) if value is not None else []
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            raise self.error(node, key, f"{shown(node)} is not allowed{hint}; allowed: {', '.join(choices)}")
        return choices[choices.index(value)]

    def integer(self, node: yaml.Node, key: str, minimum: int | None = None, maximum: int | None = None) -> int:
        """Read a whole number within ``minimum`` and ``maximum`` (either may be None: no bound)."""
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        if minimum is not None and maximum is not None:
            allowed = f"a whole number from {minimum} to {maximum}"
        elif minimum is not None:
            allowed = f"a whole number of at least {minimum}"
        else:
            allowed = "a whole number"
        if value is TOO_LONG:
            raise self.error(node, key, f"{shown(node)} is too large; write {allowed}")
        if isinstance(value, bool) or not isinstance(value, int):  # "yes" is not a number, and 2.0 is not whole
            raise self.error(node, key, f"{shown(node)} is not an integer; write {allowed}")
        if minimum is not None and value < minimum:
            raise self.error(node, key, f"{value} is too small; write {allowed}")
        if maximum is not None and value > maximum:
            raise self.error(node, key, f"{shown(node)} is too large; write {allowed}")
        return value

    def real(self, node: yaml.Node, key: str, low: float, high: float, inclusive: bool = True) -> float:
        """Read a number (whole or not) from ``low`` to ``high``, the ends allowed only when ``inclusive``."""
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        within = "from {} to {}" if inclusive else "between {} and {} (exclusive)"
        allowed = "a number " + within.format(f"{low:g}", f"{high:g}")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not (low <= value <= high if inclusive else low < value < high)
        ):
            raise self.error(node, key, f"{shown(node)} is not allowed; write {allowed}")
        return float(value)

    def number(self, node: yaml.Node, key: str, maximum: int | None = None) -> float:
        """Read a number of seconds above 0 (and at most ``maximum``)."""
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        allowed = "a number of seconds above 0" + (f" and at most {maximum}" if maximum is not None else "")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not value > 0
            or (maximum is not None and not value <= maximum)
        ):
            raise self.error(node, key, f"{shown(node)} is not allowed; write {allowed}")
        return float(value)

    def command(self, node: yaml.Node, key: str) -> tuple[str, ...]:
        """Read a command: one string split like a shell would, or a list of strings."""
        if isinstance(node, yaml.SequenceNode):
            argv = tuple(self.text(item, f"{key}[{index}]") for index, item in enumerate(node.value))
        elif isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str":
            try:
                argv = tuple(shlex.split(node.value))
            except ValueError as error:
                raise self.error(node, key, f"{shown(node)} cannot be split into words ({error})") from None
        else:
            raise self.error(node, key, f"{shown(node)} is not a command; write a string or a list of strings")
        if not argv:
            raise self.error(node, key, "is empty; write the program to run and its arguments")
        return argv

    def environment(self, node: yaml.Node, key: str) -> dict[str, str]:
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, key, f"{shown(node)} is not a mapping; write VARIABLE: value lines")
        env: dict[str, str] = {}
        for key_node, value_node in node.value:
            variable = self.text(key_node, key)
            value = self.value(value_node) if isinstance(value_node, yaml.ScalarNode) else None
            if type(value) not in (str, int, float):
                written_value = shown(value_node)
                raise self.error(
                    value_node, f"{key}.{variable}", f"{written_value} is not allowed; write text or a number"
                )
            env[variable] = value_node.value
        return env

    def limits(self, node: yaml.Node, key: str, defaults: ResourceLimits) -> ResourceLimits:
        """Read ``limits:``: each key a whole number (at least 1) or ``none`` (no limit); the rest from ``defaults``."""
        keys = self.mapping(node, key, names(LIMITS), ())
        values: dict[str, int | None] = {}
        for name, value in keys.items():
            if isinstance(value, yaml.ScalarNode) and value.value in ("none", "null", "~", ""):
                values[name] = None
            else:
                values[name] = self.integer(value, f"{key}.{name}", minimum=1)
        return dataclasses.replace(defaults, **values)

    def folders(self, node: yaml.Node, key: str, base: Path) -> list[Path]:
        """Read a list of existing folders, relative to ``base``."""
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, key, f"{shown(node)} is not a list; write a list of folders, e.g. [data]")
        folders = []
        for index, item in enumerate(node.value):
            path = resolve_path(base, self.text(item, f"{key}[{index}]"))
            if not path.is_dir():
                raise self.error(item, f"{key}[{index}]", f"{shown(item)} is not a folder (looked for {path})")
            folders.append(path)
        return folders
