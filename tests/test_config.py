"""Tests of the league file: loading, defaults, paths, every validation message, submissions and their builds."""

from __future__ import annotations

import json
import shutil
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

from referee.bots import ResourceLimits
from referee.session import Timing
from referee.config import (
    LEAGUE_KEYS,
    BuildResult,
    LeagueError,
    build_submissions,
    league_fingerprint,
    load_league,
)
from referee.errors import RefereeError
from referee.faults import FaultPolicy, PolicyMode
from referee.schedule import schedule

ROOT = Path(__file__).resolve().parent.parent
TOURNAMENTS = ROOT / "tournaments"

TWO_BOTS = """\
bots:
  - name: alice
    command: python alice.py
  - name: bob
    command: python bob.py
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def league_file(tmp_path: Path, body: str, bots: str = TWO_BOTS, header: str | None = None) -> Path:
    """Write a league file: a header of required keys (or ``header``), ``body``, then ``bots``."""
    if header is None:
        header = "name: test-league\ngame: stop_the_bus\nseed: 42\ntable_size: 2\n"
    return write(tmp_path / "league.yaml", header + textwrap.dedent(body) + textwrap.dedent(bots))


def line_of(path: Path, fragment: str) -> int:
    """The 1-based number of the first line of ``path`` containing ``fragment``."""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if fragment in line:
            return number
    raise AssertionError(f"{fragment!r} is not in {path}")


def load_error(path: Path) -> str:
    with pytest.raises(LeagueError) as caught:
        load_league(path)
    return str(caught.value)


def make_executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def submission(folder: Path, manifest: str) -> Path:
    write(folder / "bot.yaml", manifest)
    return folder


# ----- a valid file ---------------------------------------------------------------------


def test_minimal_file_loads_with_every_default(tmp_path):
    league = load_league(league_file(tmp_path, ""))
    assert league.name == "test-league"
    assert league.game == "stop_the_bus"
    assert league.seed == 42
    assert league.table_size == 2
    assert league.rounds == 1
    assert league.timing == Timing()
    assert league.turn_limit == 200
    assert league.fault_policy == FaultPolicy(PolicyMode.FORFEIT, 3)
    assert league.max_restarts == 3
    assert league.concurrency == 1
    assert league.output == tmp_path / "results" / "test-league"
    assert league.transport == "unix"
    assert league.build_timeout_s == 300
    assert league.on_build_failure == "skip"
    assert league.bot_names == ("alice", "bob")
    alice = league.bot("alice")
    assert alice.submission is None
    assert alice.spec.command == (sys.executable, "alice.py")
    assert alice.spec.cwd == str(tmp_path)
    assert alice.spec.limits == ResourceLimits()
    assert alice.declared_at == f"{tmp_path / 'league.yaml'}:6"
    assert league.game_setup.num_players == 2


def test_every_key_is_read(tmp_path):
    body = """\
        rounds: 3
        move_time_ms: 250
        time_bank_ms: 0
        startup_timeout_ms: 5000
        turn_limit: 50
        fault_policy:
          mode: default_action
          max_faults: 5
        max_restarts: 0
        concurrency: 4
        output: out/here
        transport: tcp
        network: host
        build_timeout_s: 12.5
        on_build_failure: stop
    """
    bots = """\
        bots:
          - name: alice
            command: [python3, alice.py, --level, "3"]
            env: {LEVEL: 3, MODE: fast}
            limits: {memory_mb: 512, cpu_seconds: 60, open_files: 64}
          - name: bob
            address: 127.0.0.1:50051
    """
    path = league_file(tmp_path, body, bots)
    assert set(LEAGUE_KEYS) <= set(path.read_text().replace(":", " ").split())
    league = load_league(path)
    assert league.rounds == 3
    assert league.timing == Timing(move_time_ms=250, time_bank_ms=0, startup_timeout_ms=5000)
    assert league.turn_limit == 50
    assert league.fault_policy == FaultPolicy(PolicyMode.DEFAULT_ACTION, 5)
    assert league.max_restarts == 0
    assert league.concurrency == 4
    assert league.output == tmp_path / "out" / "here"
    assert league.transport == "tcp"
    assert league.network == "host"
    assert league.build_timeout_s == 12.5
    assert league.on_build_failure == "stop"
    alice, bob = league.bots
    assert alice.spec.command == (sys.executable, "alice.py", "--level", "3")
    assert alice.spec.env == {"LEVEL": "3", "MODE": "fast"}
    assert alice.spec.limits == ResourceLimits(memory_mb=512, cpu_seconds=60, open_files=64)
    assert alice.spec.transport == "tcp"
    assert bob.spec.address == "127.0.0.1:50051"
    assert bob.spec.command == ()


def test_python_means_the_referees_interpreter_but_other_programs_are_kept(tmp_path):
    bots = """\
        bots:
          - name: alice
            command: python alice.py
          - name: bob
            command: python3 bob.py
          - name: carol
            command: sh -c "exit 0"
    """
    league = load_league(league_file(tmp_path, "", bots))
    assert [bot.spec.command[0] for bot in league.bots] == [sys.executable, sys.executable, "sh"]
    assert league.bot("carol").spec.command == ("sh", "-c", "exit 0")


# ----- paths ----------------------------------------------------------------------------


def test_relative_paths_resolve_against_the_league_folder_not_the_current_directory(tmp_path, monkeypatch):
    leagues = tmp_path / "leagues"
    make_executable(leagues / "bots" / "bin" / "carol")
    bots = """\
        bots:
          - name: alice
            command: python alice.py
          - name: carol
            command: ./bin/carol --fast
            cwd: bots
          - path: ../submissions/dave
    """
    submission(tmp_path / "submissions" / "dave", "name: dave\nversion: '1'\nrun: python dave.py\n")
    header = "name: l\ngame: stop_the_bus\nseed: 1\ntable_size: 2\noutput: ../out\n"
    write(leagues / "league.yaml", header + textwrap.dedent(bots))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    league = load_league(leagues / "league.yaml")
    assert league.output == tmp_path / "out"
    assert league.bot("alice").spec.cwd == str(leagues)
    carol = league.bot("carol").spec
    assert carol.cwd == str(leagues / "bots")
    assert carol.command == (str(leagues / "bots" / "bin" / "carol"), "--fast")
    dave = league.bot("dave")
    assert dave.spec.cwd == str(tmp_path / "submissions" / "dave")
    assert dave.spec.command == (sys.executable, "dave.py")
    assert dave.submission.folder == tmp_path / "submissions" / "dave"


def test_a_bare_program_is_looked_up_on_the_bots_own_path(tmp_path):
    make_executable(tmp_path / "tools" / "my-bot")
    bots = f"""\
        bots:
          - name: alice
            command: my-bot --level 2
            env: {{PATH: "{tmp_path / 'tools'}"}}
          - name: bob
            command: python bob.py
    """
    league = load_league(league_file(tmp_path, "", bots))
    assert league.bot("alice").spec.command == ("my-bot", "--level", "2")


# ----- validation messages: file, line, key and what is allowed -------------------------


def test_unknown_key_names_the_allowed_keys_and_suggests_the_closest(tmp_path):
    path = league_file(tmp_path, "round: 2\n")
    assert load_error(path) == (
        f"{path}:5: round: unknown key; did you mean \"rounds\"? allowed keys: {', '.join(LEAGUE_KEYS)}"
    )


def test_unknown_key_inside_fault_policy(tmp_path):
    path = league_file(tmp_path, "fault_policy:\n  mdoe: forfeit\n")
    assert load_error(path) == (
        f'{path}:6: fault_policy.mdoe: unknown key; did you mean "mode"? allowed keys: mode, max_faults'
    )


def test_unknown_key_in_a_bot_entry(tmp_path):
    bots = """\
        bots:
          - name: alice
            comand: python alice.py
          - name: bob
            command: python bob.py
    """
    path = league_file(tmp_path, "", bots)
    message = load_error(path)
    assert message.startswith(f'{path}:{line_of(path, "comand")}: bots[0].comand: unknown key; did you mean "command"?')
    assert "allowed keys: name, command, address, path, cwd, env, limits" in message


def test_unknown_key_without_a_close_match_has_no_suggestion(tmp_path):
    path = league_file(tmp_path, "colour: blue\n")
    assert "did you mean" not in load_error(path)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("rounds: three", 'rounds: "three" is not an integer; write a whole number of at least 1'),
        ("rounds: 0", "rounds: 0 is too small; write a whole number of at least 1"),
        ("rounds: 2.5", "rounds: 2.5 is not an integer; write a whole number of at least 1"),
        ("move_time_ms: [1, 2]", "move_time_ms: a list is not an integer; write a whole number of at least 1"),
        ("max_restarts: -1", "max_restarts: -1 is too small; write a whole number of at least 0"),
        ("concurrency: yes", "concurrency: yes is not an integer; write a whole number of at least 1"),
        ("build_timeout_s: 0", "build_timeout_s: 0 is not allowed; write a number of seconds above 0"),
        ("transport: udp", 'transport: "udp" is not allowed; allowed: unix, tcp'),
        ("on_build_failure: ignore", 'on_build_failure: "ignore" is not allowed; allowed: skip, stop'),
        ("output: 7", 'output: 7 is not text; to use 7 as text, quote it: "7"'),
        (
            "fault_policy: forfeit",
            'fault_policy: "forfeit" is not a mapping; fault_policy takes keys: mode, max_faults',
        ),
    ],
)
def test_wrong_types_and_values_name_the_value_and_what_is_allowed(tmp_path, line, expected):
    path = league_file(tmp_path, line + "\n")
    assert load_error(path) == f"{path}:5: {expected}"


def test_wrong_value_inside_a_nested_mapping(tmp_path):
    path = league_file(tmp_path, "fault_policy:\n  mode: default\n  max_faults: 0\n")
    assert load_error(path) == (
        f'{path}:6: fault_policy.mode: "default" is not allowed (did you mean "default_action"?); '
        "allowed: forfeit, default_action"
    )


def test_unknown_game_suggests_the_closest(tmp_path):
    path = league_file(tmp_path, "", header="name: l\ngame: stop_the_buss\nseed: 1\ntable_size: 2\n")
    assert load_error(path) == (
        f'{path}:2: game: "stop_the_buss" is not allowed (did you mean "stop_the_bus"?); '
        "allowed: stop_the_bus, bastard_brag"
    )


def test_seed_must_be_an_integer_not_a_boolean(tmp_path):
    path = league_file(tmp_path, "", header="name: l\ngame: stop_the_bus\nseed: true\ntable_size: 2\n")
    assert load_error(path) == f"{path}:3: seed: true is not an integer; write a whole number"


def test_missing_required_key(tmp_path):
    path = league_file(tmp_path, "", header="name: l\ngame: stop_the_bus\ntable_size: 2\n")
    assert load_error(path) == (
        f"{path}:1: seed: missing; the league file needs name, game, seed, table_size, bots"
    )


def test_missing_bot_name(tmp_path):
    bots = """\
        bots:
          - command: python alice.py
          - name: bob
            command: python bob.py
    """
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f'{path}:6: bots[0].name: missing; every bot needs a unique name (letters, digits, ".", "_" and "-", '
        "starting with a letter or digit)"
    )


@pytest.mark.parametrize("bad_name", ['"two words"', '"a,b"', '"-dash"', '""'])
def test_bot_names_are_restricted_to_a_safe_alphabet(tmp_path, bad_name):
    bots = f"""\
        bots:
          - name: {bad_name}
            command: python alice.py
          - name: bob
            command: python bob.py
    """
    path = league_file(tmp_path, "", bots)
    assert load_error(path).startswith(f"{path}:6: bots[0].name: ")


def test_a_name_that_yaml_reads_as_a_number_must_be_quoted(tmp_path):
    path = league_file(tmp_path, "", header="name: 2026\ngame: stop_the_bus\nseed: 1\ntable_size: 2\n")
    assert load_error(path) == f'{path}:1: name: 2026 is not text; to use 2026 as text, quote it: "2026"'


@pytest.mark.parametrize(
    ("game", "table_size", "allowed"),
    [("stop_the_bus", 10, "2 to 9"), ("stop_the_bus", 1, "2 to 9"), ("bastard_brag", 2, "3 to 10")],
)
def test_table_size_outside_the_games_range(tmp_path, game, table_size, allowed):
    path = league_file(tmp_path, "", header=f"name: l\ngame: {game}\nseed: 1\ntable_size: {table_size}\n")
    assert load_error(path) == (
        f"{path}:4: table_size: {table_size} players is outside the range of {game}; allowed: {allowed}"
    )


def test_fewer_bots_than_seats(tmp_path):
    path = league_file(tmp_path, "", header="name: l\ngame: stop_the_bus\nseed: 1\ntable_size: 3\n")
    assert load_error(path) == (
        f"{path}:6: bots: 2 bots cannot fill a table of 3 (table_size); list at least 3 bots or lower table_size"
    )


def test_bots_must_be_a_list(tmp_path):
    path = league_file(tmp_path, "", bots="bots:\n  alice: python alice.py\n")
    assert load_error(path) == f"{path}:6: bots: a mapping is not a list; list the bots, one entry each"


def test_duplicate_bot_names(tmp_path):
    bots = """\
        bots:
          - name: alice
            command: python alice.py
          - name: bob
            command: python bob.py
          - name: alice
            command: python other.py
    """
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f'{path}:10: bots[2].name: "alice" is already the name of bots[0] (line 6); '
        "bot names must be unique, so give this entry its own name"
    )


def test_duplicate_name_taken_from_a_manifest_says_so(tmp_path):
    submission(tmp_path / "sub", "name: alice\nversion: '1'\nrun: python bot.py\n")
    bots = """\
        bots:
          - name: alice
            command: python alice.py
          - path: sub
    """
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f'{path}:8: bots[1].name: "alice" (from {tmp_path / "sub" / "bot.yaml"}) is already the name of '
        "bots[0] (line 6); bot names must be unique, so give this entry its own name"
    )


def test_a_program_that_does_not_exist(tmp_path):
    bots = """\
        bots:
          - name: alice
            command: python alice.py
          - name: bob
            command: python bob.py
          - name: carol
            command: pyhton bot.py
    """
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f'{path}:11: bots[2].command: "pyhton bot.py" could not be started (no such program: pyhton)'
    )


def test_a_program_with_a_slash_is_looked_for_relative_to_the_bots_cwd(tmp_path):
    make_executable(tmp_path / "bin" / "bot")  # exists beside the league file, but not in cwd
    (tmp_path / "work").mkdir()
    bots = """\
        bots:
          - name: alice
            command: [./bin/bot, --fast]
            cwd: work
          - name: bob
            command: python bob.py
    """
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f'{path}:7: bots[0].command: "./bin/bot --fast" could not be started '
        f"(no such file: ./bin/bot, looked for {tmp_path / 'work' / 'bin' / 'bot'})"
    )


def test_a_program_that_is_not_executable(tmp_path):
    (tmp_path / "bot").write_text("not a program")
    bots = """\
        bots:
          - name: alice
            command: ./bot
          - name: bob
            command: python bob.py
    """
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f'{path}:7: bots[0].command: "./bot" could not be started (not an executable file: {tmp_path / "bot"})'
    )


@pytest.mark.parametrize(
    ("entry", "found"),
    [
        ("command: python a.py\n    address: 127.0.0.1:5000", "it has command and address"),
        ("command: python a.py\n    path: sub", "it has command and path"),
        ("cwd: .", "it has none"),
    ],
)
def test_exactly_one_of_command_address_or_path(tmp_path, entry, found):
    bots = f"bots:\n  - name: alice\n    {entry}\n  - name: bob\n    command: python bob.py\n"
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f"{path}:6: bots[0]: give exactly one of command (a program to start), address (a bot already running) "
        f"or path (a submission folder with bot.yaml); {found}"
    )


def test_an_address_bot_takes_no_cwd(tmp_path):
    bots = "bots:\n  - name: alice\n    address: 127.0.0.1:5000\n    cwd: .\n  - name: bob\n    command: python b.py\n"
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f"{path}:8: bots[0].cwd: applies only to a bot the referee starts; this bot has an address"
    )


def test_a_command_that_cannot_be_split(tmp_path):
    bots = "bots:\n  - name: alice\n    command: python 'alice.py\n  - name: bob\n    command: python b.py\n"
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f"{path}:7: bots[0].command: \"python 'alice.py\" cannot be split into words (No closing quotation)"
    )


def test_a_list_command_must_hold_strings(tmp_path):
    bots = "bots:\n  - name: alice\n    command: [python, alice.py, 3]\n  - name: bob\n    command: python b.py\n"
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == f'{path}:7: bots[0].command[2]: 3 is not text; to use 3 as text, quote it: "3"'


def test_cwd_must_be_a_folder(tmp_path):
    bots = "bots:\n  - name: alice\n    command: python a.py\n    cwd: nowhere\n"
    path = league_file(tmp_path, "", bots + "  - name: bob\n    command: python b.py\n")
    assert load_error(path) == (
        f'{path}:8: bots[0].cwd: "nowhere" is not a folder (looked for {tmp_path / "nowhere"})'
    )


def test_limits_must_be_positive_whole_numbers(tmp_path):
    bots = "bots:\n  - name: alice\n    command: python a.py\n    limits: {memory_mb: 0}\n"
    path = league_file(tmp_path, "", bots + "  - name: bob\n    command: python b.py\n")
    assert load_error(path) == (
        f"{path}:8: bots[0].limits.memory_mb: 0 is too small; write a whole number of at least 1"
    )


def test_env_values_must_be_text_or_numbers(tmp_path):
    bots = "bots:\n  - name: alice\n    command: python a.py\n    env:\n      LEVEL: [1, 2]\n"
    path = league_file(tmp_path, "", bots + "  - name: bob\n    command: python b.py\n")
    assert load_error(path) == f"{path}:9: bots[0].env.LEVEL: a list is not allowed; write text or a number"


def test_bad_yaml_syntax_gives_its_line(tmp_path):
    path = league_file(tmp_path, "rounds: [1, 2\nturn_limit: 5\n")
    message = load_error(path)
    assert message.startswith(f"{path}:6: invalid YAML: ")
    assert "while parsing a flow sequence" in message


def test_a_key_written_twice(tmp_path):
    path = league_file(tmp_path, "rounds: 1\nrounds: 2\n")
    assert load_error(path) == f"{path}:6: rounds: appears twice (first on line 5); write each key once"


def test_an_empty_file(tmp_path):
    path = write(tmp_path / "league.yaml", "# nothing yet\n")
    assert load_error(path) == (
        f"{path}:1: the league file is empty; see tournaments/league.example.yaml for every key"
    )


def test_a_file_that_is_not_a_mapping(tmp_path):
    path = write(tmp_path / "league.yaml", "- name: l\n")
    assert load_error(path).startswith(f"{path}:1: a list is not a mapping; the league file takes keys: name, game,")


def test_a_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    assert load_error(path) == f"{path}: cannot read the league file: No such file or directory"


def test_league_error_is_a_referee_error():
    assert issubclass(LeagueError, RefereeError)


# ----- submissions ----------------------------------------------------------------------


def submission_league(tmp_path: Path, build: str, on_build_failure: str = "skip", extra: str = "") -> Path:
    """A league of two plain bots and the submission ``sub`` with the given build command."""
    manifest = f"name: sub\nversion: '2.0'\nbuild: {json.dumps(build)}\nrun: python bot.py\n"
    submission(tmp_path / "sub", manifest)
    bots = TWO_BOTS + "  - path: sub\n" + extra
    return league_file(tmp_path, f"on_build_failure: {on_build_failure}\nbuild_timeout_s: 20\n", bots)


def test_a_submission_reads_its_manifest(tmp_path):
    league = load_league(submission_league(tmp_path, "true"))
    sub = league.bot("sub")
    assert sub.submission.name == "sub"
    assert sub.submission.version == "2.0"
    assert sub.submission.build == "true"
    assert sub.submission.run == ("python", "bot.py")
    assert sub.spec.command == (sys.executable, "bot.py")
    assert sub.spec.cwd == str(tmp_path / "sub")


def test_the_league_entry_can_rename_a_submission(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nrun: python bot.py\n")
    bots = TWO_BOTS + "  - path: sub\n  - name: sub-again\n    path: sub\n"
    league = load_league(league_file(tmp_path, "", bots))
    assert league.bot_names == ("alice", "bob", "sub", "sub-again")


def test_a_submission_path_that_is_not_a_folder(tmp_path):
    path = league_file(tmp_path, "", TWO_BOTS + "  - path: submissions/alice\n")
    assert load_error(path) == (
        f'{path}:10: bots[2].path: "submissions/alice" is not a folder '
        f"(looked for {tmp_path / 'submissions' / 'alice'})"
    )


def test_a_submission_folder_without_a_manifest(tmp_path):
    (tmp_path / "sub").mkdir()
    path = league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n")
    assert load_error(path) == (
        f'{path}:10: bots[2].path: "sub" has no bot.yaml (looked for {tmp_path / "sub" / "bot.yaml"}); '
        "a submission folder holds bot.yaml with name, version, run and, optionally, build"
    )


def test_manifest_errors_name_the_manifest_and_its_line(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: 1.0\nrun: python bot.py\n")
    path = league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n")
    assert load_error(path) == (
        f'{tmp_path / "sub" / "bot.yaml"}:2: version: 1.0 is not text; to use 1.0 as text, quote it: "1.0"'
    )


def test_manifest_label_is_relative_when_the_league_was_named_relatively(tmp_path, monkeypatch):
    submission(tmp_path / "subs" / "x", "name: x\nversion: '1'\nrun: python bot.py\nbiuld: make\n")
    league_file(tmp_path, "", TWO_BOTS + "  - path: subs/x\n")
    monkeypatch.chdir(tmp_path)
    assert load_error(Path("league.yaml")) == (
        'subs/x/bot.yaml:4: biuld: unknown key; did you mean "build"? allowed keys: name, version, build, run'
    )


def test_manifest_missing_run(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: '1'\n")
    path = league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n")
    assert load_error(path) == f"{tmp_path / 'sub' / 'bot.yaml'}:1: run: missing; bot.yaml needs name, version, run"


def test_manifest_run_program_on_path_is_checked_at_load(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nbuild: make\nrun: nodee bot.js\n")
    path = league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n")
    assert load_error(path) == (
        f'{tmp_path / "sub" / "bot.yaml"}:4: run: "nodee bot.js" could not be started (no such program: nodee)'
    )


def test_a_submission_takes_no_cwd(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nrun: python bot.py\n")
    path = league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n    cwd: .\n")
    assert load_error(path) == f"{path}:11: bots[2].cwd: a submission always runs in its own folder; remove cwd"


def test_a_build_runs_in_the_submission_folder_and_logs_its_output(tmp_path):
    path = submission_league(tmp_path, "echo compiled > built.txt && echo building")
    league = load_league(path)
    built, results = build_submissions(league, tmp_path / "logs")
    assert (tmp_path / "sub" / "built.txt").read_text() == "compiled\n"
    assert built == league
    assert len(results) == 1
    result = results[0]
    assert isinstance(result, BuildResult)
    assert (result.bot, result.ok) == ("sub", True)
    assert result.message.startswith("sub: built in ")
    log = (tmp_path / "logs" / "build-sub.log").read_text()
    assert "building" in log
    assert str(tmp_path / "logs" / "build-sub.log") in result.message


def test_a_build_may_make_the_run_program(tmp_path):
    manifest = "name: sub\nversion: '1'\nbuild: printf '#!/bin/sh\\n' > bot && chmod +x bot\nrun: ./bot --fast\n"
    submission(tmp_path / "sub", manifest)
    league = load_league(league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n"))  # ./bot does not exist yet
    assert league.bot("sub").spec.command == (str(tmp_path / "sub" / "bot"), "--fast")
    _, results = build_submissions(league, tmp_path / "logs")
    assert results[0].ok


def test_a_build_that_does_not_make_the_run_program_fails(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nbuild: 'true'\nrun: ./bot\n")
    league = load_league(league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n"))
    built, results = build_submissions(league, tmp_path / "logs")
    assert not results[0].ok
    assert results[0].message == (
        f'sub ({tmp_path / "sub" / "bot.yaml"}): build "true" succeeded, but its run command "./bot" cannot be '
        f"started (no such file: ./bot, looked for {tmp_path / 'sub' / 'bot'})"
    )
    assert built.bot_names == ("alice", "bob")


def test_a_failed_build_is_reported_and_skipped(tmp_path):
    league = load_league(submission_league(tmp_path, "echo 'error: compiler says no' >&2; exit 3"))
    built, results = build_submissions(league, tmp_path / "logs")
    [result] = results
    assert (result.bot, result.ok) == ("sub", False)
    assert "sub (" in result.message and 'build "echo' in result.message
    assert "failed with exit code 3" in result.message
    assert str(tmp_path / "logs" / "build-sub.log") in result.message
    assert result.message.endswith("ending:\n    error: compiler says no")
    assert built.bot_names == ("alice", "bob")
    assert league.bot_names == ("alice", "bob", "sub")  # the loaded league is unchanged


def test_a_failed_build_stops_the_league_when_asked(tmp_path):
    league = load_league(submission_league(tmp_path, "exit 2", on_build_failure="stop"))
    with pytest.raises(LeagueError) as caught:
        build_submissions(league, tmp_path / "logs")
    message = str(caught.value)
    assert message.startswith(f"{league.source}: 1 submission build failed and on_build_failure is stop")
    assert 'sub (' in message and "failed with exit code 2" in message


def test_skipping_a_failed_build_must_leave_enough_bots(tmp_path):
    header = "name: l\ngame: stop_the_bus\nseed: 1\ntable_size: 3\n"
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nbuild: exit 1\nrun: python bot.py\n")
    league = load_league(league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n", header=header))
    with pytest.raises(LeagueError) as caught:
        build_submissions(league, tmp_path / "logs")
    assert str(caught.value).startswith(
        f"{league.source}: after leaving out sub (build failed), 2 bots remain, too few for a table of 3:"
    )


def is_running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_build_that_outlasts_its_timeout_is_killed_with_everything_it_started(tmp_path):
    build = "sleep 30 & echo $! > child.pid; wait"
    submission(tmp_path / "sub", f"name: sub\nversion: '1'\nbuild: {json.dumps(build)}\nrun: python bot.py\n")
    path = league_file(tmp_path, "build_timeout_s: 0.5\n", TWO_BOTS + "  - path: sub\n")
    started = time.monotonic()
    _, results = build_submissions(load_league(path), tmp_path / "logs")
    assert time.monotonic() - started < 10
    assert not results[0].ok
    assert "did not finish within 0.5 s (build_timeout_s) and was killed" in results[0].message
    child = int((tmp_path / "sub" / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while is_running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not is_running(child)


def test_a_folder_shared_by_two_bots_is_built_once(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nbuild: echo run >> count.txt\nrun: python bot.py\n")
    bots = TWO_BOTS + "  - path: sub\n  - name: sub-2\n    path: sub\n"
    _, results = build_submissions(load_league(league_file(tmp_path, "", bots)), tmp_path / "logs")
    assert (tmp_path / "sub" / "count.txt").read_text() == "run\n"
    assert [(result.bot, result.ok) for result in results] == [("sub", True), ("sub-2", True)]


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="only a virtual environment puts its python first on PATH")
def test_python_in_a_build_is_the_referees_interpreter(tmp_path):
    build = "python -c 'import sys; open(\"exe.txt\", \"w\").write(sys.prefix)'"
    submission(tmp_path / "sub", f"name: sub\nversion: '1'\nbuild: {json.dumps(build)}\nrun: python bot.py\n")
    league = load_league(league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n"))
    _, results = build_submissions(league, tmp_path / "logs")
    assert results[0].ok, results[0].message
    assert (tmp_path / "sub" / "exe.txt").read_text() == sys.prefix


def test_submissions_without_a_build_need_no_building(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nrun: python bot.py\n")
    league = load_league(league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n"))
    assert build_submissions(league, tmp_path / "logs") == (league, [])


# ----- fingerprint ----------------------------------------------------------------------


def test_fingerprint_is_stable_and_ignores_where_the_league_folder_is(tmp_path):
    submission(tmp_path / "a" / "sub", "name: sub\nversion: '1'\nrun: python bot.py\n")
    path = league_file(tmp_path / "a", "", TWO_BOTS + "  - path: sub\n")
    fingerprint = league_fingerprint(load_league(path))
    assert fingerprint == league_fingerprint(load_league(path))
    assert len(fingerprint) == 64
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    assert league_fingerprint(load_league(tmp_path / "b" / "league.yaml")) == fingerprint


@pytest.mark.parametrize(
    "change",
    ["concurrency: 8\n", "output: elsewhere\n", "transport: tcp\n", "build_timeout_s: 5\n", "on_build_failure: stop\n"],
)
def test_fingerprint_ignores_what_cannot_change_results(tmp_path, change):
    before = league_fingerprint(load_league(league_file(tmp_path, "")))
    assert league_fingerprint(load_league(league_file(tmp_path, change))) == before


@pytest.mark.parametrize(
    ("change", "bots"),
    [
        ("rounds: 2\n", TWO_BOTS),
        ("move_time_ms: 500\n", TWO_BOTS),
        ("turn_limit: 100\n", TWO_BOTS),
        ("fault_policy: {mode: default_action}\n", TWO_BOTS),
        ("max_restarts: 1\n", TWO_BOTS),
        ("", TWO_BOTS.replace("alice.py", "alice2.py")),
        ("", TWO_BOTS.replace("name: bob", "name: robert")),
        ("", "bots:\n  - name: bob\n    command: python bob.py\n  - name: alice\n    command: python alice.py\n"),
        ("", TWO_BOTS.replace("command: python bob.py", "command: python bob.py\n    env: {LEVEL: 2}")),
    ],
)
def test_fingerprint_changes_with_what_can_change_results(tmp_path, change, bots):
    before = league_fingerprint(load_league(league_file(tmp_path, "")))
    assert league_fingerprint(load_league(league_file(tmp_path, change, bots))) != before


def test_fingerprint_changes_with_a_submissions_manifest(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nrun: python bot.py\n")
    path = league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n")
    before = league_fingerprint(load_league(path))
    submission(tmp_path / "sub", "name: sub\nversion: '2'\nrun: python bot.py\n")
    assert league_fingerprint(load_league(path)) != before


def test_fingerprint_changes_when_a_failed_build_leaves_a_bot_out(tmp_path):
    league = load_league(submission_league(tmp_path, "exit 1"))
    built, _ = build_submissions(league, tmp_path / "logs")
    assert league_fingerprint(built) != league_fingerprint(league)


# ----- the files in tournaments/ and the sample bots' manifests -------------------------

NEEDS_NODE = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")


@pytest.mark.parametrize("path", sorted(TOURNAMENTS.glob("*.yaml")), ids=lambda path: path.name)
def test_every_tournament_file_loads(path):
    if "sample_bots/node" in path.read_text() and shutil.which("node") is None:
        pytest.skip("Node.js is not installed, and this league plays the Node.js bot")
    league = load_league(path)
    assert len(league.bots) >= league.table_size


def test_the_example_shows_every_key():
    text = (TOURNAMENTS / "league.example.yaml").read_text()
    written = {line.split(":")[0].strip(" -#") for line in text.splitlines() if ":" in line}
    expected = {*LEAGUE_KEYS, "mode", "max_faults", "name", "command", "address", "path", "cwd", "env", "limits"}
    expected |= {"memory_mb", "cpu_seconds", "open_files"}
    assert expected <= written


@NEEDS_NODE
def test_the_demo_league():
    league = load_league(TOURNAMENTS / "demo.yaml")
    assert league.game == "stop_the_bus"
    assert league.table_size == 3
    assert len(league.bots) == 4
    assert len(schedule(league)) == 12
    assert league.timing.move_time_ms == 1000
    assert league.concurrency == 2
    assert league.output == ROOT / "results" / "demo"
    assert league.bot("heuristic").submission.folder == ROOT / "sample_bots" / "python"
    assert league.bot("node").submission.build == "npm ci --no-audit --no-fund"


def test_the_python_sample_manifest_runs_the_heuristic_bot_with_the_referees_python(tmp_path):
    league = load_league(league_file(tmp_path, "", TWO_BOTS + f"  - path: {ROOT / 'sample_bots' / 'python'}\n"))
    heuristic = league.bot("heuristic")
    assert heuristic.spec.command == (sys.executable, "heuristic_bot.py")
    assert (Path(heuristic.spec.cwd) / "heuristic_bot.py").is_file()
    assert heuristic.submission.build is None


@pytest.mark.parametrize("program", ["python", "python3"])
def test_the_python_rewrite_applies_only_to_the_program(tmp_path, program):
    bots = f"bots:\n  - name: alice\n    command: {program} python\n  - name: bob\n    command: python bob.py\n"
    league = load_league(league_file(tmp_path, "", bots))
    assert league.bot("alice").spec.command == (sys.executable, "python")


def test_a_bare_program_is_looked_up_on_the_referees_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    bots = "bots:\n  - name: alice\n    command: sh a.sh\n  - name: bob\n    command: python bob.py\n"
    path = league_file(tmp_path, "", bots)
    assert load_error(path).endswith("could not be started (no such program: sh)")


# ----- network isolation ---------------------------------------------------------------


def test_network_none_isolates_every_bot_and_a_bot_may_override_it(tmp_path):
    bots = """\
    bots:
      - name: alice
        command: python alice.py
      - name: bob
        command: python bob.py
        network: host
    """
    league = load_league(league_file(tmp_path, "network: none\n", bots))
    assert league.network == "none"
    assert league.bot("alice").spec.isolate_network is True
    assert league.bot("bob").spec.isolate_network is False
    default = load_league(league_file(tmp_path, ""))
    assert default.network == "host" and not any(bot.spec.isolate_network for bot in default.bots)


def test_network_is_part_of_the_fingerprint(tmp_path):
    host = league_fingerprint(load_league(league_file(tmp_path, "network: host\n")))
    none = league_fingerprint(load_league(league_file(tmp_path, "network: none\n")))
    assert host != none


def test_network_none_with_tcp_is_refused_at_its_line(tmp_path):
    path = league_file(tmp_path, "transport: tcp\nnetwork: none\n")
    error = load_error(path)
    assert f"{path}:{line_of(path, 'network: none')}: network: none needs transport: unix" in error


def test_a_bad_network_value_names_the_choices(tmp_path):
    path = league_file(tmp_path, "network: off\n")
    error = load_error(path)
    assert f"{path}:{line_of(path, 'network: off')}: network:" in error and "host" in error and "none" in error


def test_an_address_bot_cannot_have_a_network_setting(tmp_path):
    bots = """\
    bots:
      - name: alice
        command: python alice.py
      - name: remote
        address: 127.0.0.1:50051
        network: none
    """
    path = league_file(tmp_path, "", bots)
    error = load_error(path)
    assert f"{path}:{line_of(path, 'network: none')}: bots[1].network: applies only to a bot the referee starts" in error
