"""Tests of the league file: loading, defaults, paths, every validation message, submissions' manifests."""

from __future__ import annotations

import json
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from referee.common.errors import RefereeError
from referee.engine.seeding import seed_commitment
from referee.leaguefile.config import (
    LEAGUE_KEYS,
    LeagueError,
    league_fingerprint,
    league_identity,
    league_without_sandbox,
    load_league,
    unchecked_runs,
)
from referee.leaguefile.schedule import Gauntlet, RoundRobin, Sampled
from referee.play.processes import ResourceLimits
from referee.protocol.clock import Timing
from referee.protocol.faults import FaultPolicy, PolicyMode
from tests.cli import referee_in_process

ROOT = Path(__file__).resolve().parent.parent
TOURNAMENTS = ROOT / "tournaments"

TWO_BOTS = """\
bots:
  - name: alice
    command: python alice.py
  - name: bob
    command: python bob.py
"""


# The script a `python SCRIPT` command runs, in either form of command (a string, or a list).
PYTHON_SCRIPT = re.compile(r"""(?:^|[\s\[,"])python3?[,\s]+["']?([^\s,\]"'-][^\s,\]"']*)""", re.MULTILINE)


def write(path: Path, text: str) -> Path:
    """Write a league file or manifest, and an empty file for each script its python commands run.

    As in a real league folder, the scripts exist (the league checks them);
    tests of a missing script delete theirs.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    for script in PYTHON_SCRIPT.findall(text):
        script_path = path.parent / script
        if not script_path.exists():
            script_path.parent.mkdir(parents=True, exist_ok=True)
            script_path.write_text("")
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
    assert league.concurrency is None  # auto: one game per CPU
    assert league.output == tmp_path / "results" / "test-league"
    assert league.transport == "unix"
    assert league.freeze is True and "freeze" not in league_identity(league)["rules"]  # as leagues before it
    assert league.build_timeout_s == 300
    assert league.on_build_failure == "skip"
    assert league.bot_names == ("alice", "bob")
    alice = league.bot("alice")
    assert alice.submission is None
    assert alice.spec.command == (sys.executable, "alice.py")
    assert alice.spec.cwd == str(tmp_path)
    assert alice.spec.limits == ResourceLimits()
    assert alice.spec.freeze is True
    assert alice.declared_at == f"{tmp_path / 'league.yaml'}:6"
    assert league.game_setup.num_players == 2


def test_every_key_is_read(tmp_path):
    body = """\
        rounds: 3
        move_time_ms: 250
        time_bank_ms: 0
        grace_ms: 20
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
        sandbox: bubblewrap
        freeze: false
        build_timeout_s: 12.5
        build_network: none
        on_build_failure: stop
        spectator_delay_s: 2.5
        static_replays: true
        keep_logs: 500
        format: round-robin
    """
    bots = """\
        bots:
          - name: alice
            command: [python3, alice.py, --level, "3"]
            env: {LEVEL: 3, MODE: fast}
            limits: {memory_mb: 512, cpu_seconds: 60, open_files: 64}
            freeze: true
          - name: bob
            address: 127.0.0.1:50051
    """
    path = league_file(tmp_path, body, bots)
    assert set(LEAGUE_KEYS) <= set(path.read_text().replace(":", " ").split())
    league = load_league(path)
    assert league.rounds == 3
    assert league.timing == Timing(move_time_ms=250, time_bank_ms=0, grace_ms=20, startup_timeout_ms=5000)
    assert league.turn_limit == 50
    assert league.fault_policy == FaultPolicy(PolicyMode.DEFAULT_ACTION, 5)
    assert league.max_restarts == 0
    assert league.concurrency == 4
    assert league.output == tmp_path / "out" / "here"
    assert league.transport == "tcp"
    assert league.network == "host"
    assert league.sandbox is True
    assert league.freeze is False and league_identity(league)["rules"]["freeze"] is False
    assert league.build_timeout_s == 12.5
    assert league.build_network == "none"
    assert league.on_build_failure == "stop"
    assert league.spectator_delay_s == 2.5
    assert league.static_replays is True
    assert league.keep_logs == 500 and "keep_logs" not in league_identity(league)["rules"]  # the results never change
    assert league.format == RoundRobin()
    alice, bob = league.bots
    assert alice.spec.command == (sys.executable, "alice.py", "--level", "3")
    assert alice.spec.env == {"LEVEL": "3", "MODE": "fast"}
    assert alice.spec.limits == ResourceLimits(memory_mb=512, cpu_seconds=60, open_files=64)
    assert alice.spec.transport == "tcp"
    assert alice.spec.freeze is True and alice.written["freeze"] is True  # the bot's own, over the league's
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
            env: {{PATH: "{tmp_path / "tools"}"}}
          - name: bob
            command: python bob.py
    """
    league = load_league(league_file(tmp_path, "", bots))
    assert league.bot("alice").spec.command == ("my-bot", "--level", "2")


# ----- validation messages: file, line, key and what is allowed -------------------------


def test_unknown_key_names_the_allowed_keys_and_suggests_the_closest(tmp_path):
    path = league_file(tmp_path, "round: 2\n")
    assert load_error(path) == (
        f'{path}:5: round: unknown key; did you mean "rounds"? allowed keys: {", ".join(LEAGUE_KEYS)}'
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
    # The unknown key's own message, at its line, going straight from the key to every key allowed.
    assert load_error(path).startswith(f"{path}:5: colour: unknown key; allowed keys: name, game, seed, table_size, ")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("rounds: three", 'rounds: "three" is not an integer; write a whole number from 1 to 9007199254740991'),
        ("rounds: 0", "rounds: 0 is too small; write a whole number from 1 to 9007199254740991"),
        ("rounds: 2.5", "rounds: 2.5 is not an integer; write a whole number from 1 to 9007199254740991"),
        ("move_time_ms: [1, 2]", "move_time_ms: a list is not an integer; write a whole number from 1 to 4294967295"),
        ("max_restarts: -1", "max_restarts: -1 is too small; write a whole number from 0 to 4294967295"),
        ("concurrency: yes", "concurrency: yes is not an integer; write a whole number from 1 to 1024"),
        (
            "build_timeout_s: 0",
            "build_timeout_s: 0 is not allowed; write a number of seconds above 0 and at most 4294967",
        ),
        ("transport: udp", 'transport: "udp" is not allowed; allowed: unix, tcp'),
        ("freeze: sometimes", 'freeze: "sometimes" is not allowed; write true or false'),
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
    assert load_error(path) == (
        f"{path}:3: seed: true is not an integer; "
        "write a whole number from -9223372036854775808 to 18446744073709551615"
    )


def test_missing_required_key(tmp_path):
    path = league_file(tmp_path, "", header="name: l\ngame: stop_the_bus\ntable_size: 2\n")
    assert load_error(path) == (f"{path}:1: seed: missing; the league file needs name, game, seed, table_size, bots")


def test_missing_bot_name(tmp_path):
    bots = """\
        bots:
          - command: python alice.py
          - name: bob
            command: python bob.py
    """
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f'{path}:6: bots[0].name: missing; every bot needs a unique name (ASCII letters (a-z, A-Z), digits, ".", '
        '"_" and "-", starting with a letter or digit)'
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
        f"{path}:4: table_size: {table_size} player{'s' if table_size != 1 else ''} is outside the range of {game}; "
        f"allowed: {allowed}"
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
        f'{path}:7: bots[0].command: "python \'alice.py" cannot be split into words (No closing quotation)'
    )


def test_a_list_command_must_hold_strings(tmp_path):
    bots = "bots:\n  - name: alice\n    command: [python, alice.py, 3]\n  - name: bob\n    command: python b.py\n"
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == f'{path}:7: bots[0].command[2]: 3 is not text; to use 3 as text, quote it: "3"'


def test_cwd_must_be_a_folder(tmp_path):
    bots = "bots:\n  - name: alice\n    command: python a.py\n    cwd: nowhere\n"
    path = league_file(tmp_path, "", bots + "  - name: bob\n    command: python b.py\n")
    assert load_error(path) == (f'{path}:8: bots[0].cwd: "nowhere" is not a folder (looked for {tmp_path / "nowhere"})')


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


# ----- numbers and their ranges ---------------------------------------------------------

UINT32 = "from 1 to 4294967295"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("move_time_ms: 1.0e+20", f"move_time_ms: 1.0e+20 is not an integer; write a whole number {UINT32}"),
        ("move_time_ms: 1e20", f'move_time_ms: "1e20" is not an integer; write a whole number {UINT32}'),
        ("move_time_ms: 4294967296", f"move_time_ms: 4294967296 is too large; write a whole number {UINT32}"),
        ("move_time_ms: 1000.0", f"move_time_ms: 1000.0 is not an integer; write a whole number {UINT32}"),
        (
            "time_bank_ms: 99999999999999",
            "time_bank_ms: 99999999999999 is too large; write a whole number from 0 to 4294967295",
        ),
        (
            "startup_timeout_ms: 5000000000",
            f"startup_timeout_ms: 5000000000 is too large; write a whole number {UINT32}",
        ),
        ("turn_limit: 4294967296", f"turn_limit: 4294967296 is too large; write a whole number {UINT32}"),
        ("turn_limit: 0", f"turn_limit: 0 is too small; write a whole number {UINT32}"),
        ("concurrency: 100000000", "concurrency: 100000000 is too large; write a whole number from 1 to 1024"),
        (
            "max_restarts: 4294967296",
            "max_restarts: 4294967296 is too large; write a whole number from 0 to 4294967295",
        ),
        (
            "rounds: 9007199254740992",
            "rounds: 9007199254740992 is too large; write a whole number from 1 to 9007199254740991",
        ),
        (
            "build_timeout_s: .inf",
            "build_timeout_s: .inf is not allowed; write a number of seconds above 0 and at most 4294967",
        ),
        (
            "build_timeout_s: .nan",
            "build_timeout_s: .nan is not allowed; write a number of seconds above 0 and at most 4294967",
        ),
    ],
)
def test_every_number_is_refused_outside_its_range_at_its_line(tmp_path, line, expected):
    path = league_file(tmp_path, "rounds: 1\n" + line + "\n" if not line.startswith("rounds") else line + "\n")
    assert load_error(path) == f"{path}:{line_of(path, line)}: {expected}"


def test_the_largest_values_of_the_ranges_are_accepted(tmp_path):
    body = """\
        move_time_ms: 4294967295
        time_bank_ms: 4294967295
        startup_timeout_ms: 4294967295
        turn_limit: 4294967295
        max_restarts: 4294967295
        concurrency: 1024
        build_timeout_s: 4294967
        fault_policy: {max_faults: 4294967295}
    """
    header = "name: l\ngame: stop_the_bus\nseed: 18446744073709551615\ntable_size: 2\n"
    league = load_league(league_file(tmp_path, body, header=header))
    assert league.timing.move_time_ms == league.timing.time_bank_ms == league.turn_limit == 2**32 - 1
    assert league.concurrency == 1024 and league.seed == 2**64 - 1 and league.fault_policy.max_faults == 2**32 - 1


@pytest.mark.parametrize(
    ("seed", "expected"),
    [
        ("18446744073709551616", "18446744073709551616 is too large"),
        ("-9223372036854775809", "-9223372036854775809 is too small"),
        ("1" * 5000, "1" * 30 + "... (5,000 characters) is too large"),
    ],
)
def test_a_seed_must_fit_64_bits(tmp_path, seed, expected):
    path = league_file(tmp_path, "", header=f"name: l\ngame: stop_the_bus\nseed: {seed}\ntable_size: 2\n")
    assert load_error(path) == (
        f"{path}:3: seed: {expected}; write a whole number from -9223372036854775808 to 18446744073709551615"
    )


def test_max_faults_has_its_range_too(tmp_path):
    path = league_file(tmp_path, "fault_policy:\n  max_faults: 4294967296\n")
    assert load_error(path) == (
        f"{path}:6: fault_policy.max_faults: 4294967296 is too large; write a whole number {UINT32}"
    )


def test_a_league_of_more_games_than_a_schedule_can_number_is_refused_at_rounds(tmp_path):
    bots = "bots:\n" + "".join(f"  - name: b{n}\n    command: python b{n}.py\n" for n in range(30))
    header = "name: l\ngame: stop_the_bus\nseed: 1\ntable_size: 6\n"
    path = league_file(tmp_path, "rounds: 9000000000\n", bots, header=header)
    assert load_error(path) == (
        f"{path}:5: rounds: the league would play 32,063,850,000,000,000 games, more than the "
        "9,007,199,254,740,991 a schedule can number; use fewer rounds, or format: {type: sampled, games_per_bot: N} "
        "for a large field"
    )


def test_a_huge_league_is_counted_at_once(tmp_path):
    """rounds: 100000000 used to list the schedule in memory; now it is counted (a timeout here means a listing)."""
    path = league_file(tmp_path, "rounds: 100000000\n", header="name: l\ngame: stop_the_bus\nseed: 1\ntable_size: 2\n")
    league = load_league(path)
    assert league.schedule().count == 200_000_000


# ----- the format -----------------------------------------------------------------------

SIX_BOTS = "bots:\n" + "".join(
    f"  - name: {name}\n    command: python {name}.py\n" for name in ("alice", "bob", "carol", "dave", "erin", "frank")
)


def format_league(tmp_path: Path, format_text: str, extra: str = "", table_size: int = 3) -> Path:
    header = f"name: l\ngame: stop_the_bus\nseed: 1\ntable_size: {table_size}\n"
    return league_file(tmp_path, extra + format_text + "\n", SIX_BOTS, header=header)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("format: round-robin", RoundRobin()),
        ("format: {type: round-robin}", RoundRobin()),
        ("format: {type: sampled, games_per_bot: 9}", Sampled(9)),
        ("format: {type: sampled, games_per_bot: 9, rotations: auto}", Sampled(9)),
        ("format: {type: sampled, games_per_bot: 9, rotations: 1}", Sampled(9, 1)),
        ("format: {type: sampled, games_per_bot: 9, rotations: 3}", Sampled(9, 3)),
        ("format:\n  type: gauntlet\n  candidates: [bob, erin]", Gauntlet(("bob", "erin"))),
        ("format: {type: gauntlet, candidates: [bob], games_per_candidate: 30}", Gauntlet(("bob",), 30)),
    ],
)
def test_the_format_is_read(tmp_path, text, expected):
    assert load_league(format_league(tmp_path, text)).format == expected


ROTATIONS = "write auto or a whole number from 1 to 3 (the seat rotations of a table of 3)"
SAMPLED_9 = "format: {type: sampled, games_per_bot: 9, rotations: "


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        (
            "format: samples",
            "format",
            '"samples" is not allowed (did you mean "sampled"?); allowed: round-robin, sampled, gauntlet, sprt',
        ),
        ("format: sampled", "format", "sampled needs games_per_bot; write format: {type: sampled, games_per_bot: 30}"),
        (
            "format: {type: swiss}",
            "format.type",
            '"swiss" is not allowed; allowed: round-robin, sampled, gauntlet, sprt',
        ),
        ("format: {games_per_bot: 3}", "format.games_per_bot", "unknown key; allowed keys: type"),
        ("format: {type: sampled}", "format.games_per_bot", "missing; format sampled needs type, games_per_bot"),
        ("format: {type: round-robin, games_per_bot: 3}", "format.games_per_bot", "unknown key; allowed keys: type"),
        (
            "format: {type: sampled, games_per_bot: 2}",
            "format.games_per_bot",
            "2 is fewer than one table's games: a table of 3 plays 3 games, one per seat rotation, so write 3 or more "
            "(a multiple of 3, or it is rounded to one)",
        ),
        (f"{SAMPLED_9}0}}", "format.rotations", "0 is out of range; " + ROTATIONS),
        (f"{SAMPLED_9}4}}", "format.rotations", "4 is out of range; " + ROTATIONS),
        (f"{SAMPLED_9}2.0}}", "format.rotations", "2.0 is not allowed; " + ROTATIONS),
        (f"{SAMPLED_9}yes}}", "format.rotations", "yes is not allowed; " + ROTATIONS),
        (f"{SAMPLED_9}all}}", "format.rotations", '"all" is not allowed; ' + ROTATIONS),
        (f"{SAMPLED_9}[2]}}", "format.rotations", "a list is not allowed; " + ROTATIONS),
        (
            "format: {type: sampled, games_per_bot: 1, rotations: 2}",
            "format.games_per_bot",
            "1 is fewer than one table's games: a table plays 2 games, one per seat rotation it plays "
            "(format.rotations), so write 2 or more (a multiple of 2, or it is rounded to one)",
        ),
        (
            "format: {type: gauntlet, candidates: [bob], rotations: 2}",
            "format.rotations",
            "unknown key; allowed keys: type, candidates, games_per_candidate",
        ),
        (
            "format: {type: sampled, games_per_bot: 2.5}",
            "format.games_per_bot",
            "2.5 is not an integer; write a whole number from 1 to 9007199254740991",
        ),
        ("format: {type: gauntlet}", "format.candidates", "missing; format gauntlet needs type, candidates"),
        (
            "format: {type: gauntlet, candidates: []}",
            "format.candidates",
            "a list is not allowed; list one or more bot names, e.g. [alice]",
        ),
        (
            "format: {type: gauntlet, candidates: [alise]}",
            "format.candidates[0]",
            '"alise" is not a bot of this league (did you mean "alice"?); '
            "a candidate is one of the bots listed under bots",
        ),
        (
            "format: {type: gauntlet, candidates: [bob, bob]}",
            "format.candidates[1]",
            '"bob" is listed twice; list each candidate once',
        ),
        (
            "format: {type: gauntlet, candidates: [a1, a2, a3, a4, a5]}",
            "format.candidates[0]",
            '"a1" is not a bot of this league; a candidate is one of the bots listed under bots',
        ),
        (
            "format: {type: gauntlet, candidates: [alice, bob, carol, dave, erin]}",
            "format",
            "each table seats a candidate and 2 field bots, but the field (the bots that are not candidates) has 1",
        ),
    ],
)
def test_format_mistakes_are_refused_at_their_line(tmp_path, text, key, message):
    path = format_league(tmp_path, text)
    assert load_error(path) == f"{path}:{line_of(path, 'format')}: {key}: {message}"


@pytest.mark.parametrize(
    "text",
    [
        "format: {type: sampled, games_per_bot: 9}",
        "format: {type: gauntlet, candidates: [bob], games_per_candidate: 9}",
    ],
)
def test_rounds_is_refused_where_the_format_sets_the_length(tmp_path, text):
    path = format_league(tmp_path, text, extra="rounds: 2\n")
    length = "games_per_bot" if "sampled" in text else "games_per_candidate"
    kind = "sampled" if "sampled" in text else "gauntlet"
    assert load_error(path) == (
        f"{path}:5: rounds: 2 is not allowed with format {kind}: it plays one round, as long as format.{length} "
        f"says; remove rounds and raise {length} for a longer league"
    )


def test_a_sampled_league_of_too_many_bots_is_refused(tmp_path):
    bots = "bots:\n" + "".join(f"  - name: b{n}\n    address: 127.0.0.1:{1000 + n}\n" for n in range(2001))
    path = league_file(tmp_path, "format: {type: sampled, games_per_bot: 2}\n", bots)
    assert load_error(path) == f"{path}:5: format: a sampled schedule takes at most 2000 bots, got 2001"


def test_the_candidates_of_a_league(tmp_path):
    league = load_league(format_league(tmp_path, "format: {type: gauntlet, candidates: [erin, bob]}"))
    assert league.candidates == ("erin", "bob")
    assert load_league(format_league(tmp_path, "format: round-robin")).candidates == ()


def test_the_format_is_in_the_fingerprint_unless_it_is_the_default(tmp_path):
    default = league_fingerprint(load_league(format_league(tmp_path, "")))
    assert league_fingerprint(load_league(format_league(tmp_path, "format: round-robin"))) == default
    sampled = league_fingerprint(load_league(format_league(tmp_path, "format: {type: sampled, games_per_bot: 9}")))
    longer = league_fingerprint(load_league(format_league(tmp_path, "format: {type: sampled, games_per_bot: 12}")))
    gauntlet = league_fingerprint(load_league(format_league(tmp_path, "format: {type: gauntlet, candidates: [bob]}")))
    every = "format: {type: sampled, games_per_bot: 9, rotations: 3}"
    every_rotation = league_fingerprint(load_league(format_league(tmp_path, every)))
    assert len({default, sampled, longer, gauntlet, every_rotation}) == 5


# ----- programs and scripts that do not exist -------------------------------------------


@pytest.mark.parametrize(
    ("command", "script"),
    [
        ("python bots/alice.py", "bots/alice.py"),
        ("[python3, -u, alice.py]", None),  # an option first: the script is not looked for
        ("node bot.js --fast", "bot.js"),
        ("sh run.sh", "run.sh"),
        ('sh -c "exit 0"', None),
    ],
)
def test_a_script_that_does_not_exist_is_reported_at_its_line(tmp_path, command, script):
    bots = f"bots:\n  - name: alice\n    command: {command}\n  - name: bob\n    command: python bob.py\n"
    if (script or "").startswith(("bot.js", "run.sh")) and shutil.which(command.split()[0]) is None:
        pytest.skip(f"{command.split()[0]} is not installed")
    path = league_file(tmp_path, "", bots)
    for made in tmp_path.rglob("alice.py"):
        made.unlink()  # write() made the scripts python runs
    if script is None:
        load_league(path)
        return
    program = command.split()[0]
    assert load_error(path) == (
        f"{path}:7: bots[0].command: {json.dumps(command)} could not be started (no such file: {script}, the script "
        f"{program} runs, looked for {tmp_path / script})"
    )


def test_a_submissions_script_is_checked_unless_its_build_may_make_it(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nrun: python bot.py\n")
    (tmp_path / "sub" / "bot.py").unlink()
    path = league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n")
    assert load_error(path) == (
        f'{tmp_path / "sub" / "bot.yaml"}:3: run: "python bot.py" could not be started (no such file: bot.py, '
        f"the script python runs, looked for {tmp_path / 'sub' / 'bot.py'})"
    )
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nbuild: make\nrun: python dist/bot.py\n")
    (tmp_path / "sub" / "dist" / "bot.py").unlink()
    league = load_league(path)
    assert unchecked_runs(league) == [
        f'{tmp_path / "sub" / "bot.yaml"}: note: run: "python dist/bot.py" cannot start before the build (no such '
        f"file: dist/bot.py, the script python runs, looked for {tmp_path / 'sub' / 'dist' / 'bot.py'}); it is "
        "checked again once sub's build has run"
    ]


# ----- files that are not UTF-8 or not YAML --------------------------------------------


def test_a_league_file_that_is_not_utf8_gives_the_line(tmp_path):
    path = tmp_path / "league.yaml"
    text = "name: l\ngame: stop_the_bus\nseed: 1\ntable_size: 2\nbots:\n  - name: caf\xe9\n"
    path.write_bytes(text.encode("latin-1"))
    assert load_error(path) == (
        f"{path}:6: the league file is not UTF-8 text: byte 14 of the line, 0xe9, is not UTF-8 (invalid "
        "continuation byte); save the file as UTF-8"
    )


def test_a_manifest_that_is_not_utf8_gives_the_line(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bot.yaml").write_bytes(b"name: sub\nversion: '\xff'\nrun: python bot.py\n")
    path = league_file(tmp_path, "", TWO_BOTS + "  - path: sub\n")
    assert load_error(path).startswith(f"{tmp_path / 'sub' / 'bot.yaml'}:2: the submission manifest is not UTF-8 text")


def test_a_character_yaml_does_not_allow_gives_the_line(tmp_path):
    path = league_file(tmp_path, "rounds: 1\x01\n")
    assert load_error(path) == f"{path}:5: invalid YAML: character U+0001 is not allowed in a YAML file"


# ----- referee validate, as a user runs it (its main, in this process: tests/cli.py) --------------------


def referee(*args: str) -> subprocess.CompletedProcess:
    return referee_in_process(*args)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("move_time_ms: 1.0e+20", "move_time_ms: 1.0e+20 is not an integer"),
        ("time_bank_ms: 99999999999999", "time_bank_ms: 99999999999999 is too large"),
        ("concurrency: 100000000", "concurrency: 100000000 is too large"),
    ],
)
def test_validate_refuses_values_that_cannot_run_in_one_line(tmp_path, line, message):
    path = league_file(tmp_path, line + "\n")
    done = referee("validate", str(path))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"referee validate: {path}:5: {message}" + done.stderr.split(message, 1)[1]
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_validate_counts_a_huge_league_and_warns_about_it(tmp_path):
    path = league_file(tmp_path, "rounds: 100000000\n")
    done = referee("validate", str(path))
    assert done.returncode == 0
    assert done.stdout == (
        f"{path}: valid: league 'test-league', stop_the_bus, 2 bots, tables of 2, round-robin: "
        "200,000,000 games: 1 table x 2 rotations x 100,000,000 rounds\n"
    )
    assert done.stderr.startswith(f"{path}: warning: the league plays 200,000,000 games, more than 100,000;")


SECRET_SEED_HEADER = "name: test-league\ngame: stop_the_bus\nseed: 16045690984503098046\ntable_size: 2\n"


def test_validate_does_not_warn_about_a_small_league(tmp_path):
    done = referee("validate", str(league_file(tmp_path, "rounds: 50000\n", header=SECRET_SEED_HEADER)))
    assert done.returncode == 0 and done.stderr == "" and "100,000 games" in done.stdout


def test_a_guessable_seed_is_warned_about_with_its_line_and_a_secret_one_is_not(tmp_path):
    path = league_file(tmp_path, "")
    done = referee("validate", str(path))
    assert done.returncode == 0
    assert done.stderr.startswith(f"{path}:{line_of(path, 'seed: 42')}: seed: warning: 42 can be guessed")
    assert "referee seed" in done.stderr
    fresh = referee("seed")
    seed = int(fresh.stdout.split("\n")[0].removeprefix("seed: "))
    assert seed >= 2**32 and fresh.stdout.split("\n")[1] == f"commitment: {seed_commitment(seed)}"
    path.write_text(path.read_text().replace("seed: 42", f"seed: {seed}"))
    assert referee("validate", str(path)).stderr == ""
    assert referee("seed", "--check", str(seed)).stdout == f"commitment: {seed_commitment(seed)}\n"


def test_validate_says_how_a_sampled_league_is_played(tmp_path):
    path = format_league(tmp_path, "format: {type: sampled, games_per_bot: 10, rotations: 3}")
    done = referee("validate", str(path))
    assert done.returncode == 0 and "warning: 1 can be guessed" in done.stderr
    assert done.stdout.endswith("sampled: 18 games: 6 tables x 3 rotations; each bot at 3 tables (9 games)\n")


def test_validate_says_when_tables_play_fewer_rotations_so_that_every_pair_meets(tmp_path):
    # Six bots at tables of 3, 10 games each: 3 tables of every rotation would be 1.2 meetings a pair, too few for
    # every pair to meet; 5 tables of 2 rotations are 2.
    path = format_league(tmp_path, "format: {type: sampled, games_per_bot: 10}")
    done = referee("validate", str(path))
    assert done.returncode == 0 and "warning: 1 can be guessed" in done.stderr
    assert done.stdout.splitlines()[-2:] == [
        f"{path}: valid: league 'l', stop_the_bus, 6 bots, tables of 3, sampled: 20 games: 10 tables x 2 of 3 "
        "rotations; each bot at 5 tables (10 games)",
        f"{path}: tables play 2 of 3 seat rotations so that every pair of bots meets (rotations: 3 keeps full "
        "duplicate deals)",
    ]


def test_a_bad_rotations_is_refused_on_its_own_line(tmp_path):
    path = format_league(tmp_path, "format:\n  type: sampled\n  games_per_bot: 9\n  rotations: 7")
    assert load_error(path) == (
        f"{path}:{line_of(path, 'rotations')}: format.rotations: 7 is out of range; "
        "write auto or a whole number from 1 to 3 (the seat rotations of a table of 3)"
    )


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
    assert load_error(path) == (
        f"{tmp_path / 'sub' / 'bot.yaml'}:1: run: missing; bot.yaml needs name, version, run (run: the command that "
        "starts the bot, in its folder: a string split as a shell would, or a list of strings)"
    )


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


# ----- the files in tournaments/ and the sample bots' manifests -------------------------

NEEDS_NODE = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")


# The ladder files are not league files: tests/test_ladder.py loads them.
LEAGUE_FILES = sorted(path for path in TOURNAMENTS.glob("*.yaml") if not path.name.startswith("ladder"))


@pytest.mark.parametrize("path", LEAGUE_FILES, ids=lambda path: path.name)
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
    assert len(league.schedule()) == 12
    assert league.timing.move_time_ms == 1000
    assert league.concurrency == 2
    assert league.output == ROOT / "results" / "demo"
    assert league.bot("heuristic").submission.folder == ROOT / "sample_bots" / "python"
    assert league.bot("node").submission.build.startswith("npm ci --no-audit --no-fund")


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
    assert league.bot("alice").spec.network == "none"
    assert league.bot("bob").spec.network == "host"
    default = load_league(league_file(tmp_path, ""))  # in the sandbox, no network unless a league asks for it
    assert default.network == "none" and all(bot.spec.network == "none" for bot in default.bots)


def test_network_is_part_of_the_fingerprint(tmp_path):
    host = league_fingerprint(load_league(league_file(tmp_path, "network: host\n")))
    none = league_fingerprint(load_league(league_file(tmp_path, "network: none\n")))
    assert host != none


def test_network_none_with_tcp_is_refused_at_its_line(tmp_path):
    path = league_file(tmp_path, "transport: tcp\nnetwork: none\n")
    error = load_error(path)
    assert f"{path}:{line_of(path, 'network: none')}: network: none needs transport: unix" in error


def test_build_network_reaches_each_submission_and_none_needs_the_sandbox(tmp_path):
    submission(tmp_path / "sub", "name: sub\nversion: '1'\nbuild: make\nrun: python bot.py\n")
    bots = TWO_BOTS + "  - path: sub\n"
    assert load_league(league_file(tmp_path, "", bots)).bot("sub").build_network == "outside"  # builds fetch packages
    league = load_league(league_file(tmp_path, "build_network: none\n", bots))
    assert league.build_network == "none" and league.bot("sub").build_network == "none"
    assert league_without_sandbox(league).bot("sub").build_network == "host"  # --no-sandbox: the host's network
    path = league_file(tmp_path, "sandbox: none\nbuild_network: none\n", bots)
    assert load_error(path) == (
        f"{path}:{line_of(path, 'build_network')}: build_network: none needs the sandbox, which sandbox: none turns "
        "off (a build without it has the host's network); remove one of them"
    )


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
    assert (
        f"{path}:{line_of(path, 'network: none')}: bots[1].network: applies only to a bot the referee starts" in error
    )


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("nowhere", "no port: it needs HOST:PORT"),
        ("127.0.0.1:0", "port '0' is not a number from 1 to 65535"),
        ("127.0.0.1:http", "port 'http' is not a number from 1 to 65535"),
        ("bad host:5000", "'bad host' is not a host name or an IP address"),
        ("[::zz]:5000", "[::zz] is not an IPv6 address"),
        ("unix:", "unix: needs the socket's path after it"),
    ],
)
def test_an_address_that_is_not_one_is_refused(tmp_path, address, why):
    bots = f"bots:\n  - name: alice\n    address: '{address}'\n  - name: bob\n    command: python b.py\n"
    path = league_file(tmp_path, "", bots)
    assert load_error(path) == (
        f'{path}:7: bots[0].address: "{address}" is not an address ({why}); give HOST:PORT of a bot server already '
        "running (e.g. 127.0.0.1:50051), or unix:/PATH of its socket"
    )


@pytest.mark.parametrize("address", ["127.0.0.1:50051", "bots.example:443", "[::1]:7000", "unix:/run/bot.sock"])
def test_addresses_of_every_form_are_taken(tmp_path, address):
    bots = f"bots:\n  - name: alice\n    address: '{address}'\n  - name: bob\n    command: python b.py\n"
    assert load_league(league_file(tmp_path, "", bots)).bot("alice").spec.address == address


def test_validate_warns_of_limits_under_which_no_bot_starts(tmp_path, capsys):
    from referee.cli import main

    path = league_file(tmp_path, "limits: {processes: 4, memory_mb: 8}\nstartup_timeout_ms: 50\n")
    assert main(["validate", str(path)]) == 0
    warnings = capsys.readouterr().err
    assert "bot alice: limits.processes is 4; the sample Python bot needs 12 to start" in warnings
    assert "bot bob: limits.memory_mb is 8; the sample Python bot needs 20 to start" in warnings
    assert "startup_timeout_ms is 50, below 200" in warnings


def test_concurrency_on_the_command_line_is_capped_as_in_a_league_file(tmp_path, capsys):
    from referee.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(league_file(tmp_path, "")), "--concurrency", "99999"])
    assert exit_info.value.code == 2
    assert "--concurrency: must be from 1 to 1024 games at once" in capsys.readouterr().err


def test_a_name_outside_ascii_is_refused_saying_so(tmp_path):
    bots = "bots:\n  - name: Zoë\n    command: python a.py\n  - name: bob\n    command: python b.py\n"
    assert "use ASCII letters (a-z, A-Z), digits" in load_error(league_file(tmp_path, "", bots))


def test_freezing_is_the_leagues_to_turn_off_and_a_bots_to_turn_back_on(tmp_path):
    bots = """\
    bots:
      - name: alice
        command: python alice.py
      - name: bob
        command: python bob.py
        freeze: true
      - name: remote
        address: 127.0.0.1:50051
    """
    league = load_league(league_file(tmp_path, "freeze: false\n", bots))
    assert [bot.spec.freeze for bot in league.bots[:2]] == [False, True]  # a bot at an address is not ours to freeze
    path = league_file(tmp_path, "", bots + "    freeze: false\n")
    assert f"{path}:{line_of(path, 'freeze: false')}: bots[2].freeze: applies only to a bot the referee starts" in (
        load_error(path)
    )


# ----- referee validate on a ladder file ------------------------------------------------------


def validate(path: Path) -> subprocess.CompletedProcess:
    """``referee validate PATH``, as a user runs it (its main, in this process: tests/cli.py)."""
    return referee_in_process("validate", str(path))


def ladder_file(tmp_path: Path, body: str = "") -> Path:
    """A ladder file with its submissions folder: alice's folder holds bot.yaml, bob's not yet; a file and a hidden
    folder beside them are no authors'."""
    submissions = tmp_path / "subs"
    for author in ("alice", "bob", ".git"):
        (submissions / author).mkdir(parents=True)
    (submissions / "alice" / "bot.yaml").write_text("name: alice\nversion: '1'\nrun: python bot.py\n")
    (submissions / "README.txt").write_text("one folder per author\n")
    header = "name: season\ngame: stop_the_bus\nseed: 42\ntable_size: 3\nsubmissions: subs\n"
    return write(tmp_path / "ladder.yaml", header + textwrap.dedent(body))


def test_validate_reads_a_ladder_file_as_a_ladder_and_says_what_it_is(tmp_path):
    path = ladder_file(tmp_path, "placement_games: 4\ncheck_games: 2\nlimits: {memory_mb: 8}\n")
    done = validate(path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"{path}: valid: ladder 'season', stop_the_bus, tables of 3: each new version is checked in 2 games, then "
        "plays 4 placement games; the submissions folder is looked at every 5 s",
        f"{path}: submissions {tmp_path / 'subs'}: 2 author folders: alice, bob (no bot.yaml yet)",
    ]
    # The warnings a league file gets, where they apply: its seed, and limits under which no version starts.
    warnings = done.stderr.splitlines()
    assert warnings[0].startswith(f"{path}:3: seed: warning: 42 can be guessed")
    assert warnings[1].startswith(f"{path}: warning: every version: limits.memory_mb is 8; the sample Python bot")
    assert len(warnings) == 2
    (tmp_path / "subs" / "alice").rename(tmp_path / "alice")
    (tmp_path / "subs" / "bob").rmdir()
    assert validate(path).stdout.splitlines()[1] == (
        f"{path}: submissions {tmp_path / 'subs'}: no author folder yet (each author submits a folder named for "
        "them, holding bot.yaml)"
    )
    example = validate(ROOT / "tournaments" / "ladder.example.yaml")
    assert example.returncode == 0 and ": valid: ladder 'ladder-example', stop_the_bus" in example.stdout


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("placement_games: -1", "placement_games: -1 is too small"),
        ("rounds: 3", "rounds: unknown key"),
        ("poll_s: soon", 'poll_s: "soon" is not allowed'),
        ("draw: sideways", 'draw: "sideways" is not allowed; allowed: unsure, even'),
    ],
)
def test_validate_names_the_file_line_and_key_of_a_broken_ladder_file(tmp_path, line, message):
    path = ladder_file(tmp_path, "check_games: 1\n" + line + "\n")
    done = validate(path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"referee validate: {path}:7: {message}"), done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
