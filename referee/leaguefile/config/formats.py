"""Reading ``format:``: round-robin, sampled, gauntlet or sprt and its settings; and the league's size, counted."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping

import yaml

from referee.leaguefile.config.reader import Checker, shown
from referee.leaguefile.config.schema import (
    FORMAT,
    FORMAT_EXAMPLES,
    FORMAT_KEYS,
    FORMAT_REQUIRED,
    MAX_GAMES,
    Key,
    by_name,
)
from referee.leaguefile.schedule import FORMATS, Format, Gauntlet, RoundRobin, Sampled, Sprt
from referee.leaguefile.schedule.sprt import HYPOTHESIS_KEYS
from referee.records.sequential import Measure

_SAMPLED = by_name(FORMAT[Sampled.type])
_GAUNTLET = by_name(FORMAT[Gauntlet.type])
_SPRT = by_name(FORMAT[Sprt.type])


def read_format(
    checker: Checker,
    node: yaml.Node | None,
    table_size: int,
    bot_names: tuple[str, ...],
    new_versions: Mapping[str, str] | None = None,
) -> Format:
    """Read ``format:``: a type (``round-robin`` may be written alone) and that type's settings.

    ``bot_names`` are the bots of the schedule; ``new_versions`` each bot that replaces another (it plays in the
    seats of the first version of its line), with that first version.
    """
    new_versions = new_versions or {}
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
        raise AssertionError("format without a type was not refused")
    kind = checker.choice(type_node, "format.type", tuple(FORMATS))
    keys = checker.mapping(node, "format", FORMAT_KEYS[kind], FORMAT_REQUIRED[kind], what=f"format {kind}")
    if kind == RoundRobin.type:
        return RoundRobin()
    if kind == Sampled.type:
        rotations = _rotations(checker, keys["rotations"], table_size) if "rotations" in keys else None
        return Sampled(_games(checker, keys, _SAMPLED["games_per_bot"], table_size, rotations), rotations)
    if kind == Sprt.type:
        return _sprt(checker, node, keys, table_size, bot_names, new_versions)
    candidates = _candidates(checker, keys["candidates"], bot_names, new_versions)
    games = None
    if "games_per_candidate" in keys:
        games = _games(checker, keys, _GAUNTLET["games_per_candidate"], table_size)
    return Gauntlet(candidates, games)


def _games(
    checker: Checker, keys: dict[str, yaml.Node], schema: Key, table_size: int, rotations: int | None = None
) -> int:
    """Read a number of games (``schema`` gives its range): at least one table's."""
    games: int = checker.key(keys, schema, "format.")
    node, key = keys[schema.name], f"format.{schema.name}"
    if rotations is not None and games < rotations:
        raise checker.error(
            node,
            key,
            f"{games} is fewer than one table's games: a table plays {rotations} games, one per seat rotation it "
            f"plays (format.rotations), so write {rotations} or more (a multiple of {rotations}, or it is rounded "
            "to one)",
        )
    if rotations is None and games < table_size:
        raise checker.error(
            node,
            key,
            f"{games} is fewer than one table's games: a table of {table_size} plays {table_size} games, one per "
            f"seat rotation, so write {table_size} or more (a multiple of {table_size}, or it is rounded to one)",
        )
    return games


def _rotations(checker: Checker, node: yaml.Node, table_size: int) -> int | None:
    """Read ``format.rotations``: ``auto`` (None) or how many of a table's seat rotations it plays."""
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str" and node.value == "auto":
        return None
    allowed = f"write auto or a whole number from 1 to {table_size} (the seat rotations of a table of {table_size})"
    value = checker.value(node) if isinstance(node, yaml.ScalarNode) else None
    if type(value) is not int:  # bool is an int subclass, 2.0 is not whole, "all" is not a number
        raise checker.error(node, "format.rotations", f"{shown(node)} is not allowed; {allowed}")
    if not 1 <= value <= table_size:
        raise checker.error(node, "format.rotations", f"{value} is out of range; {allowed}")
    return value


def _sprt(
    checker: Checker,
    node: yaml.Node,
    keys: dict[str, yaml.Node],
    table_size: int,
    bot_names: tuple[str, ...],
    new_versions: Mapping[str, str],
) -> Sprt:
    """Read a duel: two candidates, one pair of hypotheses (Elo or score difference), error rates, a bound."""
    candidates = _candidates(checker, keys["candidates"], bot_names, new_versions)
    if len(candidates) != 2:
        raise checker.error(
            keys["candidates"],
            "format.candidates",
            f"{len(candidates)} bot{'' if len(candidates) == 1 else 's'} listed; a duel has exactly two candidates, "
            "A and B, e.g. [new, old] (A's advantage over B is what the test measures)",
        )
    pairs = [measure for measure, pair in HYPOTHESIS_KEYS.items() if any(key in keys for key in pair)]
    if not pairs:
        raise checker.error(
            node,
            "format",
            "a duel needs its hypotheses: elo0 and elo1 (Elo), or difference0 and difference1 "
            f"(mean score difference); write format: {FORMAT_EXAMPLES[Sprt.type]}",
        )
    if len(pairs) > 1:
        extra = next(key for key in HYPOTHESIS_KEYS[Measure.SCORE_DIFFERENCE] if key in keys)
        raise checker.error(
            keys[extra],
            f"format.{extra}",
            "give either elo0 and elo1 or difference0 and difference1, not both: a test measures one of them",
        )
    measure = pairs[0]
    first, second = HYPOTHESIS_KEYS[measure]
    for key, other in ((first, second), (second, first)):
        if key not in keys:
            raise checker.error(keys[other], f"format.{key}", f"missing; {other} needs {key} (H0 and H1)")
    h0: float = checker.key(keys, _SPRT[first], "format.")
    h1: float = checker.key(keys, _SPRT[second], "format.")
    if not h0 < h1:
        raise checker.error(
            keys[second],
            f"format.{second}",
            f"{keys[second].value} is not above {first} ({keys[first].value}); H1 ({second}) is the larger advantage "
            f"of {candidates[0]} over {candidates[1]}, H0 ({first}) the smaller, e.g. {first}: 0, {second}: "
            + ("10" if measure is Measure.ELO else "0.05"),
        )
    rates: dict[str, float] = {key: checker.key(keys, _SPRT[key], "format.") for key in ("alpha", "beta")}
    if rates["alpha"] + rates["beta"] >= 1.0:
        raise checker.error(
            keys.get("beta", keys.get("alpha")),
            "format.beta" if "beta" in keys else "format.alpha",
            f"alpha {rates['alpha']:g} plus beta {rates['beta']:g} is 1 or more; the two error rates must add up "
            "to less than 1 (0.05 each is usual)",
        )
    max_games: int = checker.key(keys, _SPRT["max_games"], "format.")
    if "max_games" in keys and max_games < table_size:
        raise checker.error(
            keys["max_games"],
            "format.max_games",
            f"{max_games} is fewer than one deal's games: a deal at a table of {table_size} plays {table_size} "
            f"games, one per seat rotation, so write {table_size} or more (it is rounded down to whole deals)",
        )
    adjust_for_luck: bool = checker.key(keys, _SPRT["adjust_for_luck"], "format.")
    return Sprt(
        (candidates[0], candidates[1]), measure, h0, h1, rates["alpha"], rates["beta"], max_games, adjust_for_luck
    )


def _candidates(
    checker: Checker, node: yaml.Node, bot_names: tuple[str, ...], new_versions: Mapping[str, str]
) -> tuple[str, ...]:
    key = "format.candidates"
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise checker.error(
            node, key, f"{shown(node)} is not allowed; list one or more bot names, e.g. [{bot_names[0]}]"
        )
    candidates: list[str] = []
    for index, item in enumerate(node.value):
        name = checker.name(item, f"{key}[{index}]")
        if name in new_versions:
            first = new_versions[name]
            raise checker.error(
                item,
                f"{key}[{index}]",
                f"{json.dumps(name)} is a new version of {first} (replaces): it plays in {first}'s seats, so a "
                f"candidate is named by the first version of its line, and its new versions are candidates with it; "
                f"list {first}",
            )
        if name not in bot_names:
            close = difflib.get_close_matches(name, bot_names, n=1, cutoff=0.6)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            raise checker.error(
                item,
                f"{key}[{index}]",
                f"{json.dumps(name)} is not a bot of this league{hint}; "
                "a candidate is one of the bots listed under bots",
            )
        if name in candidates:
            raise checker.error(
                item, f"{key}[{index}]", f"{json.dumps(name)} is listed twice; list each candidate once"
            )
        candidates.append(name)
    return tuple(candidates)


def check_size(
    checker: Checker,
    keys: dict[str, yaml.Node],
    league_format: Format,
    bot_names: tuple[str, ...],
    table_size: int,
    rounds: int,
    seed: int,
) -> None:
    """Check that a schedule can be made and that its game count stays within MAX_GAMES, without making it."""
    format_node = keys.get("format", keys["bots"])
    one_round = isinstance(league_format, Sampled | Sprt) or (
        isinstance(league_format, Gauntlet) and league_format.games_per_candidate is not None
    )
    if one_round and rounds != 1:
        length = {Sampled.type: "games_per_bot", Sprt.type: "max_games"}.get(league_format.type, "games_per_candidate")
        raise checker.error(
            keys["rounds"],
            "rounds",
            f"{rounds} is not allowed with format {league_format.type}: it plays one round, as long as "
            f"format.{length} says; remove rounds and raise {length} for a longer league",
        )
    try:
        games = league_format.schedule(bot_names, table_size, rounds, seed).count
    except ValueError as error:
        raise checker.error(format_node, "format" if "format" in keys else "bots", str(error)) from None
    if games > MAX_GAMES:
        where = "rounds" if rounds > 1 else ("format" if "format" in keys else "bots")
        raise checker.error(
            keys.get(where, format_node),
            where,
            f"the league would play {games:,} games, more than the {MAX_GAMES:,} a schedule can number; "
            "use fewer rounds, or format: {type: sampled, games_per_bot: N} for a large field",
        )
