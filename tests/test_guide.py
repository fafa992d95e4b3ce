"""docs/bot-protocol.md, the bot authors' guide, held true: every code block in it is checked, and bots
written from it alone (tests/authors/: Go in module mode, Node.js without the kit) pass `check-bot DIR`.

Each code block is extracted and given to the one check that knows its kind (a block no check knows fails):
the worked exchange is matched against the stream a real game sends its seat, commands are parsed by the
referee's own command line, the Go recipes and the Node.js options are the files the sample bots and the
authors' bots build with, the bot.yaml is the one a test builds, the stream's outline names the protocol's
messages.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import shlex
import shutil
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from google.protobuf import text_format

from referee.apps.check_report import Report
from referee.apps.replay_to import Answer, ReplayReport, _summary
from referee.cli import _parse
from referee.leaguefile.config import MANIFEST_KEYS
from referee.play.inprocess import InProcessBot, sample_decide
from referee.play.match import Match
from referee.play.session import handshake_message
from referee.protocol.clock import Timing
from referee.protocol.faults import FaultPolicy
from referee.protocol.setup import GameSetup
from referee.v2 import bot_pb2 as pb
from tests.bot_kits import CANONICAL_PROTO, NPM_ENV, REFEREE, ROOT, SAMPLE_BOTS, go_environment, missing_programs
from tests.test_go_bot import LIBRARIES as GO_LIBRARIES
from tests.test_go_bot import PROGRAMS as GO_PROGRAMS

GUIDE = ROOT / "docs" / "bot-protocol.md"
AUTHORS = ROOT / "tests" / "authors"
FENCE = re.compile(r"^( *)```(\S*)[^\n]*\n(.*?)^\1```[ \t]*$", re.MULTILINE | re.DOTALL)


def guide_blocks() -> list[tuple[int, str, str]]:
    """Every fenced code block of the guide: its line, its language (or ""), its text (unindented)."""
    text = GUIDE.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, match.start()) + 1, match[2], textwrap.dedent(match[3])) for match in FENCE.finditer(text)
    ]


def code_lines(text: str) -> list[str]:
    """A Makefile's lines, its comments and blank lines left out."""
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


# ----- the checks, one per kind of block ---------------------------------------------------------


def check_outline(text: str) -> None:
    """The stream's outline names the messages each side sends, as the protocol calls them."""
    fields = {
        "->": pb.PlayRequest.DESCRIPTOR.oneofs_by_name["message"].fields,
        "<-": pb.PlayResponse.DESCRIPTOR.oneofs_by_name["message"].fields,
    }
    named = re.findall(r"^(->|<-) (\w+)", text, re.MULTILINE)
    assert len(named) == 7
    for side, name in named:
        assert name in {field.name for field in fields[side]}, (side, name)


def check_manifest(text: str) -> None:
    """The bot.yaml with every key is the manifest of tests/authors/go, which test_go_authors_bot builds."""
    assert tuple(yaml.safe_load(text)) == MANIFEST_KEYS
    assert text == (AUTHORS / "go" / "bot.yaml").read_text()


def check_go(text: str) -> None:
    """Go code the guide shows is code of the Go bot written from it."""
    source = (AUTHORS / "go" / "main.go").read_text()
    assert textwrap.indent(text, "\t") in source


def check_js(text: str) -> None:
    """The proto-loader options are the Node.js kit's, and the Node.js bot written from the guide's."""
    line = text.strip()
    assert line in (SAMPLE_BOTS / "node" / "kit" / "index.js").read_text()
    assert line in (AUTHORS / "node" / "bot.js").read_text()


def check_gopath_makefile(text: str) -> None:
    assert code_lines(text) == code_lines((SAMPLE_BOTS / "go" / "Makefile").read_text())


def check_module_makefile(text: str) -> None:
    assert text == (AUTHORS / "go" / "Makefile").read_text()


def check_go_mod(text: str) -> None:
    assert text == (AUTHORS / "go" / "go.mod").read_text()


def check_commands(text: str) -> None:
    """Every command parses as the referee (or apt-get, with the packages `make system-deps` installs) takes it."""
    makefile = (ROOT / "Makefile").read_text()
    system = set(
        " ".join(re.findall(r"^(?:CPP|GO)_PACKAGES := ((?:.*\\\n)*.*)", makefile, re.MULTILINE))
        .replace("\\\n", " ")
        .split()
    )
    for command in text.replace("\\\n", " ").splitlines():
        words = shlex.split(command)
        if words[0] == "apt-get":
            packages = {word for word in words[2:] if not word.startswith("-")}
            go = set(
                re.search(r"^GO_PACKAGES := ((?:.*\\\n)*.*)", makefile, re.MULTILINE)[1].replace("\\\n", " ").split()
            )
            assert go <= packages <= system, packages - system
            continue
        assert words[0] == "referee", command
        _parse(words[1:])  # a usage error exits (SystemExit) and fails the test


def check_replay_output(text: str) -> None:
    """replay-to's report, as its own functions write it."""
    first = Answer(41, 3, "discard 7D", "discard QS", 1.2, 0.8, False)
    same = [Answer(number, 1, "draw", "draw", 1.0, 1.0, True) for number in range(1, 58)]
    report = ReplayReport("r3-t012-s1", 2, "mine", answers=[*same, first])
    assert text.splitlines() == [first.line(), _summary(report)]


class _Recording(InProcessBot):
    """Seat 2 of the guide's game: the heuristic sample bot, each message it is sent and sends written down."""

    def __init__(self, name: str, setup: GameSetup, fail_at: int | None = None) -> None:
        decide = sample_decide("heuristic")

        def deciding(view):
            if view.legal_actions and self.asked == fail_at:
                raise TypeError("x is undefined")
            return decide(view)

        super().__init__(name, deciding)
        self.asked = 0
        self.sequence = 0
        self.lines: list[str] = []
        self.sent(handshake=handshake_message(setup))
        self.replied(self.servicer.handshake_response(handshake_message(setup)))

    def sent(self, **message) -> None:
        self.sequence += 1
        self.lines.append(
            "-> " + text_format.MessageToString(pb.PlayRequest(sequence=self.sequence, **message), as_one_line=True)
        )

    def replied(self, reply: pb.PlayResponse) -> None:
        self.lines.append("<- " + text_format.MessageToString(reply, as_one_line=True))

    def game_start(self, message: pb.GameStart) -> None:
        self.sent(game_start=message)
        super().game_start(message)

    def fault_notice(self, message: pb.FaultNotice) -> None:
        self.sent(fault_notice=message)
        super().fault_notice(message)

    def game_end(self, body: bytes) -> None:
        self.sent(game_end=pb.GameEnd.FromString(body))
        super().game_end(body)

    async def answer(self, request: pb.DecisionRequest) -> pb.PlayResponse:
        self.asked = request.decision_number
        self.sent(decision_request=request)
        reply = await super().answer(request)
        self.replied(reply)
        return reply


def worked_game(fail_at: int | None = None) -> str:
    """The stream seat 2 exchanges in the guide's game (``referee play --game stop_the_bus --seed 7``, heuristic,
    random, heuristic), as one line of text format; ``fail_at``: its decide raises at that decision."""
    assert (
        'run_bot(decide, name="heuristic", version="1.0")' in (SAMPLE_BOTS / "python" / "heuristic_bot.py").read_text()
    )
    players = ["heuristic_bot#0", "random_bot#1", "heuristic_bot#2"]
    setup = GameSetup("stop_the_bus", 3, Timing())
    recording = _Recording("heuristic", setup, fail_at)
    seats = [
        InProcessBot(players[0], sample_decide("heuristic")),
        InProcessBot(players[1], sample_decide("random")),
        recording,
    ]
    match = Match("stop_the_bus", seats, seed=7, game_id="play-7", policy=FaultPolicy(), players=players)
    asyncio.run(match.play())
    return " ".join(recording.lines)


def check_exchange(text: str) -> None:
    """A piece of the worked exchange is what the game's seat 2 is sent and sends (``...`` stands for the rest)."""
    pattern = r"\s+".join(".*?" if part == "..." else re.escape(part) for part in text.split())
    assert any(re.search(pattern, stream) for stream in _worked_streams()), text


_STREAMS: list[str] = []


def _worked_streams() -> list[str]:
    """The guide's game, and the same game with seat 2 failing at decision 9 (the guide's fault notice)."""
    if not _STREAMS:
        _STREAMS.extend([worked_game(), worked_game(fail_at=9)])
    return _STREAMS


def check_problem_lines(text: str) -> None:
    """check-bot's problems, as its report words them: a crash in every game of Stop the Bus (2 at each size)."""
    report = Report(io.StringIO())
    output = " (its output is in /tmp/check-bot-x1y2/stop_the_bus-2-process-1.log)"
    for seats in range(2, 10):
        for game in (1, 2):
            report.games += 1
            where = f"stop_the_bus at {seats} seats, game {game} (seat 1, seed {1000 * seats + game})"
            report.problem(
                "1 crash fault: process exit code 3; the bot forfeited the game",
                where=where,
                particulars=output,
                in_a_game=True,
            )
    lines = report.lines()
    assert text.splitlines() == [
        f"{len(lines)} problem{'s' if len(lines) > 1 else ''}:",
        *(f"  - {line}" for line in lines),
    ]


def check_python_bot(text: str) -> None:
    """A Python bot of the guide plays whole games of its game at every table size, in the referee's own process."""
    namespace: dict[str, object] = {"__name__": "guide"}
    exec(compile(text, "docs/bot-protocol.md", "exec"), namespace)  # the guide's own code, as an author copies it
    decide = namespace["decide"]
    # A bot that asks for its clock (the search bot) is given one, as the kit gives it: a short move time.
    timed = "timed=True" in text
    for players in (2, 5, 9) if timed else range(2, 10):  # a search thinks its move time out: a few sizes
        seats = [
            InProcessBot(f"guide-{players}", decide, timed=timed),
            *(InProcessBot(f"random-{n}", sample_decide("random")) for n in range(players - 1)),
        ]  # type: ignore[arg-type]
        match = Match(
            "stop_the_bus",
            seats,
            seed=players,
            game_id=f"guide-{players}",
            policy=FaultPolicy(),
            timing=Timing(move_time_ms=10) if timed else Timing(),
        )
        result = asyncio.run(match.play())
        assert not result.forfeits and not any(result.faults), (players, result.faults)


CHECKS: list[tuple[str, Callable[[str, str], bool], Callable[[str], None]]] = [
    ("Python bot", lambda lang, text: lang == "python" and "run_bot(decide" in text, check_python_bot),
    (
        "check-bot problems",
        lambda lang, text: lang == "text" and " problem" in text.splitlines()[0],
        check_problem_lines,
    ),
    ("outline", lambda lang, text: text.startswith("-> handshake  "), check_outline),
    ("bot.yaml", lambda lang, text: lang == "yaml", check_manifest),
    ("Go code", lambda lang, text: lang == "go", check_go),
    ("Node.js options", lambda lang, text: lang == "js", check_js),
    ("GOPATH Makefile", lambda lang, text: lang == "make" and "GO111MODULE := off" in text, check_gopath_makefile),
    ("module Makefile", lambda lang, text: lang == "make" and "-mod=vendor" in text, check_module_makefile),
    ("go.mod", lambda lang, text: text.startswith("module "), check_go_mod),
    ("commands", lambda lang, text: lang == "sh", check_commands),
    ("replay-to output", lambda lang, text: text.startswith("decision "), check_replay_output),
    (
        "worked exchange",
        lambda lang, text: lang == "" and bool(re.match(r"\s*(-> sequence|<- |events \{)", text)),
        check_exchange,
    ),
]


@pytest.mark.parametrize(("line", "lang", "text"), guide_blocks(), ids=lambda value: str(value)[:20])
def test_every_code_block_of_the_guide_is_checked(line: int, lang: str, text: str) -> None:
    kinds = [(name, check) for name, matches, check in CHECKS if matches(lang, text)]
    assert len(kinds) == 1, (
        f"docs/bot-protocol.md:{line}: a block of {[name for name, _ in kinds] or 'no kind'}; give it a check here"
    )
    kinds[0][1](text)


def test_the_guide_has_every_kind_of_block_it_is_checked_for() -> None:
    found = {name for line, lang, text in guide_blocks() for name, matches, _ in CHECKS if matches(lang, text)}
    assert found == {name for name, _, _ in CHECKS}


# ----- bots written from the guide alone ------------------------------------------------------------


def _go_missing() -> str | None:
    missing = missing_programs(GO_PROGRAMS)
    gocode = Path("/usr/share/gocode/src")
    packages = [package for directory, package in GO_LIBRARIES.items() if not (gocode / directory).is_dir()]
    return missing or (
        f"Go libraries missing under {gocode}: install {' '.join(packages)} (as root: make system-deps)"
        if packages
        else None
    )


def _node_missing() -> str | None:
    missing = [program for program in ("node", "npm") if shutil.which(program) is None]
    return (
        f"{', '.join(missing)} not on PATH: install Node.js 18+ and npm (apt-get install -y nodejs npm)"
        if missing
        else None
    )


def check_submission(folder: Path, tmp_path: Path, environment: dict[str, str]) -> subprocess.CompletedProcess:
    """An author's folder, with bot.proto copied in as the guide says, passes check-bot DIR in both games."""
    submission = tmp_path / folder.name
    shutil.copytree(folder, submission)
    (submission / "proto" / "referee" / "v2").mkdir(parents=True)
    shutil.copy(CANONICAL_PROTO, submission / "proto" / "referee" / "v2" / "bot.proto")
    checked = subprocess.run(
        [
            *REFEREE,
            "check-bot",
            "--seats",
            "3",
            "--games",
            "1",
            "--build-cache",
            str(tmp_path / "cache"),
            str(submission),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment,
    )
    report = checked.stdout + checked.stderr
    assert checked.returncode == 0, report
    assert "build ok" in checked.stdout and "no problems found" in checked.stdout, report
    for game in ("stop_the_bus", "bastard_brag"):
        assert f"- {game} at 3 seats, game 1" in checked.stdout, report
    return checked


@pytest.mark.skipif(_go_missing() is not None, reason=_go_missing() or "")
def test_a_go_bot_written_from_the_guide_in_module_mode_passes_check_bot(tmp_path: Path) -> None:
    checked = check_submission(AUTHORS / "go", tmp_path, go_environment())
    assert "handshake ok: my-bot 1.0" in checked.stdout


@pytest.mark.skipif(_node_missing() is not None, reason=_node_missing() or "")
def test_a_node_bot_written_from_the_guide_without_the_kit_passes_check_bot(tmp_path: Path) -> None:
    checked = check_submission(AUTHORS / "node", tmp_path, {**os.environ, **NPM_ENV})
    assert "handshake ok: node-author 1.0" in checked.stdout
