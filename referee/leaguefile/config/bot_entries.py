"""A league's bots: each entry read (a command, an address or a submission) and what each one's sandbox hides."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from referee.common.errors import LeagueError
from referee.leaguefile.commands import resolve_command, resolve_path
from referee.leaguefile.config.manifest import Submission, submission_of_entry
from referee.leaguefile.config.reader import Checker, command_text, shown
from referee.leaguefile.config.schema import ADDRESS_ONLY, BOT, BOT_KEYS, BOT_SOURCES, MANIFEST_NAME, NAME_RULE, by_name
from referee.play import sandbox
from referee.play.processes import NETWORKS, BotSpec, Network, Transport
from referee.play.sandbox import ResourceLimits
from referee.play.sandbox.build import BuildNetwork
from referee.protocol.standing import ACTIVE, DISQUALIFIED, WITHDRAWN, BotStatus

_KEYS = by_name(BOT)


@dataclass(frozen=True)
class LeagueBot:
    """One bot of the league: how to start or reach it, and where the league file declares it."""

    spec: BotSpec  # ready for referee.play.processes: program resolved, cwd absolute, transport set
    submission: Submission | None
    declared_at: str  # "FILE:LINE" of the bot's entry
    written: Mapping[str, Any]  # the entry as written, plus its manifest: what league_identity keeps
    # A season's changes: a withdrawn bot plays no new game and its games count; a disqualified bot's games
    # count for no one. ``replaces``: the bot whose place this one takes in the games still to be played.
    status: BotStatus = ACTIVE
    status_reason: str = ""
    replaces: str | None = None
    author: str | None = None  # whose line of versions the bot is in (a ladder's author); None: its own line
    build_network: BuildNetwork = "host"  # the network its submission's build has in its sandbox

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def plays(self) -> bool:
        """Whether the bot plays new games: neither withdrawn nor disqualified."""
        return self.status == ACTIVE


def read_network(
    checker: Checker, keys: dict[str, yaml.Node], key: str, default: Network, transport: Transport, sandboxed: bool
) -> Network:
    """The ``network`` of the league or of a bot: checked against the transport and the sandbox."""
    name = key.rsplit(".", 1)[-1]
    if name not in keys:
        if transport == "tcp" and default == "none":
            node = keys.get("transport")
            where = "transport" if node is not None else key
            raise checker.error(
                node,
                where,
                "tcp needs network: host (a bot in its sandbox has no network by default, so the "
                "referee could not reach it over TCP); add network: host, or use transport: unix",
            )
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


def hide_from_each_other(bots: list[LeagueBot], output: Path, league_file: Path) -> list[LeagueBot]:
    """Give each started bot what its sandbox shows and must mask; refuse a command that names what it must not see.

    Masked: the league's output and file, and each other bot's own paths
    (:func:`referee.play.sandbox.hidden_from_each`). A command's own files are
    what it names (:func:`referee.play.sandbox.command_folders`), and its cwd
    only when the league file gives one (the default is the league's folder);
    a file it names in another bot's folder is shown alone.
    """
    competition = [(str(output), "the league's output"), (str(league_file.resolve()), "the league file")]
    owners = [
        sandbox.Owner(bot.name, bot.spec.cwd or "", tuple(_own_paths(bot)), _private_paths(bot))
        for bot in bots
        if bot.spec.command
    ]
    hidden = sandbox.hidden_from_each(owners, competition)
    hidden_bots = []
    for index, bot in enumerate(bots):
        spec = bot.spec
        if not spec.command:
            hidden_bots.append(bot)
            continue
        folders = spec.folders
        if bot.submission is None:
            cwd = _cwd(bot)
            named = sandbox.named_paths(spec.command, cwd)
            if "cwd" in bot.written:
                named.append((bot.written["cwd"], cwd))
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
            folders = tuple(
                sandbox.command_folders(spec.command, cwd, given_cwd, bare_cwd=not given_cwd, hidden=others)
            )
        spec = dataclasses.replace(
            spec,
            folders=folders,
            hidden=tuple(path for path, _ in hidden[bot.name]),
            hidden_whose=dict(hidden[bot.name]),
        )
        hidden_bots.append(dataclasses.replace(bot, spec=spec))
    return hidden_bots


def _own_paths(bot: LeagueBot) -> list[tuple[str, str]]:
    """A started bot's own paths, which the others must not see: its submission folder, or its cwd and what its
    command names; and its shared folders."""
    spec = bot.spec
    if bot.submission is not None:
        own = [(str(bot.submission.folder), "submission folder")]
    else:
        cwd = _cwd(bot)
        own = [(cwd, "folder (its cwd)"), *((path, "own files") for path in sandbox.own_paths(spec.command, cwd))]
    return [*own, *((folder, "shared folder") for folder in spec.shared)]


def _cwd(bot: LeagueBot) -> str:
    """A started bot's folder: every bot the referee starts has one (read_bot gives it)."""
    if bot.spec.cwd is None:
        raise ValueError(f"bot {bot.name} has a command but no cwd")
    return bot.spec.cwd


def _private_paths(bot: LeagueBot) -> tuple[str, ...]:
    """A bot's own paths that no other bot may share: its submission folder, its shared folders."""
    submission = (str(bot.submission.folder),) if bot.submission is not None else ()
    return (*submission, *bot.spec.shared)


def read_bot(
    checker: Checker,
    entry: yaml.Node,
    key: str,
    folder: Path,
    transport: Transport,
    network: Network,
    sandboxed: bool,
    league_limits: ResourceLimits,
    freeze: bool,
    build_network: BuildNetwork = "host",
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
    name: str | None = None
    if "name" in keys:
        name = written["name"] = checker.name(keys["name"], f"{key}.name")
    elif source != "path":
        raise checker.error(entry, f"{key}.name", "missing; every bot needs a unique name (" + NAME_RULE + ")")
    if source == "address":
        for extra in ADDRESS_ONLY:
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
        network = written["network"] = read_network(checker, keys, f"{key}.network", network, transport, sandboxed)
    shared: tuple[str, ...] = ()
    if "shared" in keys:
        shared = tuple(str(path) for path in checker.folders(keys["shared"], f"{key}.shared", folder))
        written["shared"] = [item.value for item in keys["shared"].value]
    if "freeze" in keys:
        freeze = written["freeze"] = checker.boolean(keys["freeze"], f"{key}.freeze")
    declared_at = f"{checker.label}:{entry.start_mark.line + 1}"
    season = read_season(checker, keys, key)

    if source == "address":
        assert name is not None  # a bot without a path has a name: checked above
        address = written["address"] = read_address(checker, keys["address"], f"{key}.address")
        spec = BotSpec(name=name, address=address, transport=transport)
        return LeagueBot(spec=spec, submission=None, declared_at=declared_at, written=written, **season)

    if source == "command":
        assert name is not None  # a bot without a path has a name: checked above
        written_command = checker.command(keys["command"], f"{key}.command")
        written["command"] = list(written_command)
        cwd = folder
        if "cwd" in keys:
            written["cwd"] = checker.text(keys["cwd"], f"{key}.cwd")
            cwd = resolve_path(folder, written["cwd"])
            if not cwd.is_dir():
                written_cwd = shown(keys["cwd"])
                raise checker.error(keys["cwd"], f"{key}.cwd", f"{written_cwd} is not a folder (looked for {cwd})")
        command, problem = resolve_command(written_command, cwd, env)
        if problem:
            raise checker.error(
                keys["command"], f"{key}.command", f"{command_text(keys['command'])} could not be started ({problem})"
            )
        spec = BotSpec(
            name=name,
            command=command,
            cwd=str(cwd),
            env=env,
            limits=limits,
            transport=transport,
            network=network,
            sandbox=sandboxed,
            shared=shared,
            freeze=freeze,
        )
        return LeagueBot(spec=spec, submission=None, declared_at=declared_at, written=written, **season)

    path_text = written["path"] = checker.text(keys["path"], f"{key}.path")
    submission = submission_of_entry(resolve_path(folder, path_text), env, checker, keys["path"], f"{key}.path")
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
        network=network,
        sandbox=sandboxed,
        shared=shared,
        freeze=freeze,
    )
    return LeagueBot(
        spec=spec,
        submission=submission,
        declared_at=declared_at,
        written=written,
        build_network=build_network,
        **season,
    )


def season_entries(bots: Iterable[LeagueBot]) -> dict[str, dict[str, str]]:
    """``league.json``'s ``entries``: each bot with a season's field set, and those fields (defaults left out)."""
    entries = {}
    for bot in bots:
        fields = {"status": bot.status if bot.status != ACTIVE else None, "reason": bot.status_reason or None}
        fields |= {"replaces": bot.replaces, "author": bot.author}
        entry = {key: value for key, value in fields.items() if value is not None}
        if entry:
            entries[bot.name] = entry
    return entries


def entry_changes(before: Mapping[str, Mapping[str, Any]], after: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What changed in the bots' season entries, one line each: ``bot-x withdrawn (reason)``, ``bot-y replaces bot-x``."""
    lines = []
    for name, entry in after.items():
        was = before.get(name, {})
        if entry.get("replaces") and entry.get("replaces") != was.get("replaces"):
            lines.append(f"{name} replaces {entry['replaces']}")
        status, reason = entry.get("status", ACTIVE), entry.get("reason")
        if (status, reason) != (was.get("status", ACTIVE), was.get("reason")) and status != ACTIVE:
            lines.append(f"{name} {status}" + (f" ({reason})" if reason else ""))
    for name, was in before.items():
        if was.get("status", ACTIVE) != ACTIVE and after.get(name, {}).get("status", ACTIVE) == ACTIVE:
            lines.append(f"{name} active again")
    return lines


def read_season(checker: Checker, keys: Mapping[str, yaml.Node], key: str) -> dict[str, Any]:
    """A bot entry's season keys (``status``, ``reason``, ``replaces``) as :class:`LeagueBot`'s fields."""
    status: str = checker.key(keys, _KEYS["status"], f"{key}.")
    reason: str = checker.key(keys, _KEYS["reason"], f"{key}.") or ""
    if reason and status == ACTIVE:
        raise checker.error(
            keys["reason"],
            f"{key}.reason",
            f"says why a bot is {WITHDRAWN} or {DISQUALIFIED}; add status: or remove it",
        )
    return {"status": status, "status_reason": reason, "replaces": checker.key(keys, _KEYS["replaces"], f"{key}.")}


def read_address(checker: Checker, node: yaml.Node, key: str) -> str:
    """A running bot's address: ``HOST:PORT`` (a name, an IPv4 address or ``[IPv6]``) or ``unix:/PATH``."""
    text = checker.text(node, key)
    problem = address_problem(text)
    if problem:
        raise checker.error(
            node,
            key,
            f"{shown(node)} is not an address ({problem}); give HOST:PORT of a bot "
            "server already running (e.g. 127.0.0.1:50051), or unix:/PATH of its socket",
        )
    return text


_HOST_NAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


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
