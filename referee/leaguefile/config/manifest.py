"""A submission: a folder holding ``bot.yaml`` (its name, version, build and run commands), read and checked."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from referee.common.errors import LeagueError
from referee.leaguefile.commands import resolve_command
from referee.leaguefile.config.reader import Checker, command_text, compose, read_text, shown
from referee.leaguefile.config.schema import (
    MANIFEST,
    MANIFEST_KEYS,
    MANIFEST_NAME,
    MANIFEST_REQUIRED,
    MANIFEST_RULES,
    by_name,
)

_KEYS = by_name(MANIFEST)


@dataclass(frozen=True)
class Submission:
    """A bot submitted as a folder holding ``bot.yaml``: its name, version, build and run commands."""

    folder: Path  # absolute
    manifest: str  # the bot.yaml path as shown in messages
    name: str
    version: str
    build: str | None  # a shell command run once in the folder before the league
    run: tuple[str, ...]  # as written in bot.yaml


def submission_of_entry(
    folder: Path, env: Mapping[str, str], league_checker: Checker, path_node: yaml.Node, key: str
) -> Submission:
    """Read a submission folder's ``bot.yaml``; raise :class:`LeagueError` naming the problem and its line.

    The run program is checked here when it is a bare name (looked up on
    ``PATH``) or when there is no build; a program the build makes
    (``./target/bot``) is checked after the build (:mod:`referee.leaguefile.submissions`).
    """
    if not folder.is_dir():
        raise league_checker.error(path_node, key, f"{shown(path_node)} is not a folder (looked for {folder})")
    manifest_path = folder / MANIFEST_NAME
    if not manifest_path.is_file():
        raise league_checker.error(
            path_node,
            key,
            f"{shown(path_node)} has no {MANIFEST_NAME} (looked for {manifest_path}); a submission folder holds "
            f"{MANIFEST_NAME} with name, version, run and, optionally, build",
        )
    return read_manifest(folder, manifest_label(folder, league_checker, path_node), env)


def load_submission(folder: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Submission:
    """Read the ``bot.yaml`` of the submission folder ``folder`` (as ``referee check-bot DIR`` is given it);
    raise :class:`LeagueError` naming the file, line and key of a problem, as a league file's bots are told."""
    given = os.fspath(folder)
    path = Path(os.path.abspath(given))
    if not path.is_dir():
        found = "is a file" if path.exists() else "does not exist"
        raise LeagueError(f"{given}: {found}; give a submission folder, holding {MANIFEST_NAME}")
    if not (path / MANIFEST_NAME).is_file():
        raise LeagueError(
            f"{given}: no {MANIFEST_NAME} (looked for {path / MANIFEST_NAME}); a submission folder holds "
            f"{MANIFEST_NAME} with name, version, run and, optionally, build (docs/bot-protocol.md shows one)"
        )
    return read_manifest(path, os.path.join(given, MANIFEST_NAME), env or {})


def read_manifest(folder: Path, label: str, env: Mapping[str, str]) -> Submission:
    """Read and check ``folder``'s manifest, named ``label`` in messages."""
    manifest_path = folder / MANIFEST_NAME
    text = read_text(manifest_path, label, "the submission manifest")
    root = compose(text, label)
    checker = Checker(label)
    if root is None:
        raise LeagueError(f"{label}:1: the manifest is empty; write name, version, run and, optionally, build")
    keys = checker.mapping(root, "", MANIFEST_KEYS, MANIFEST_REQUIRED, what=MANIFEST_NAME, rules=MANIFEST_RULES)
    name: str = checker.key(keys, _KEYS["name"])
    version: str = checker.key(keys, _KEYS["version"])
    build: str | None = checker.key(keys, _KEYS["build"])
    run: tuple[str, ...] = checker.key(keys, _KEYS["run"])
    # With a build, files the run command names may be made by it: build_submissions checks them after it.
    _, problem = resolve_command(run, folder, env, files=build is None)
    if problem:
        raise checker.error(keys["run"], "run", f"{command_text(keys['run'])} could not be started ({problem})")
    return Submission(folder=folder, manifest=label, name=name, version=version, build=build, run=run)


def manifest_label(folder: Path, league_checker: Checker, path_node: yaml.Node) -> str:
    """Name the manifest as the user would type it: relative to where the league file was named from."""
    if os.path.isabs(os.path.expanduser(path_node.value)):
        return str(folder / MANIFEST_NAME)
    league_dir = os.path.dirname(league_checker.label)
    return os.path.normpath(os.path.join(league_dir, os.path.expanduser(path_node.value), MANIFEST_NAME))
