"""`referee replay-to`: a league's game replayed to a bot from one seat, as real processes over real gRPC.

A league of three bots is run once: a spy (tests/bad_bots/spy.py, which records every message its stream
carries and plays a legal action chosen from the game id and the decision number), the heuristic sample
bot, and a bot that plays as the spy does but makes an illegal move on its second decision, under the
default-action policy. Its game logs are then replayed: to the bot that played a seat (no difference, and
the spy receives the very messages it received in the league), and to other bots (the first decision
that differs is named, with the fault a recorded fault would be now).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from referee.records.gamelog import log_files, read_log
from referee.v2 import bot_pb2 as pb
from tests.conftest import BAD_BOTS, PYTHON, SAMPLE_BOTS, Bots

REFEREE = [PYTHON, "-m", "referee.cli"]


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished league's output folder (its spy's recordings in records/)."""
    folder = tmp_path_factory.mktemp("league")
    records = folder / "records"
    records.mkdir()
    (folder / "league.yaml").write_text(f"""\
name: replays
game: stop_the_bus
seed: 21
table_size: 3
concurrency: 1
fault_policy: {{mode: default_action}}
output: {folder / "out"}
bots:
  - name: spy
    command: python {BAD_BOTS / "spy.py"} --record-dir {records}
    shared: [{records}]
  - name: heuristic
    command: python {SAMPLE_BOTS / "heuristic_bot.py"}
  - name: illegal
    command: python {BAD_BOTS / "bad_reply.py"} --mode illegal --at 2
""")
    completed = subprocess.run(
        [*REFEREE, "run", str(folder / "league.yaml"), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(folder)},
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return folder


def replay(
    bots: Bots, log: Path, seat: int, command: list[str], *options: str
) -> tuple[subprocess.CompletedProcess, dict]:
    completed = subprocess.run(
        [*REFEREE, "replay-to", str(log), "--seat", str(seat), "--json", *options, "--", *command],
        capture_output=True,
        text=True,
        timeout=120,
        env=bots.subprocess_env(),
    )
    assert "Traceback" not in completed.stderr, completed.stderr
    report = json.loads(completed.stdout)
    if report["logs"] is not None:  # kept, where a bot answered otherwise: it is there, and the test removes it
        assert Path(report["logs"]).is_file() and f"the bot's output is kept in {report['logs']}" in completed.stderr
        shutil.rmtree(Path(report["logs"]).parent)
    return completed, report


def game_with(league: Path, kind: str | None = None) -> tuple[Path, list[dict]]:
    """A game log of the league (one with a fault of ``kind``, if given) and its records."""
    for path in log_files(league / "out" / "games"):
        records = read_log(path)
        if kind is None or any(record["type"] == "fault" and record["kind"] == kind for record in records):
            return path, records
    raise AssertionError(f"no game of the league has a {kind} fault")


def seat_of(records: list[dict], name: str) -> int:
    return records[0]["players"].index(name)


def streams(folder: Path) -> list[list[pb.PlayRequest]]:
    """Each spy process's messages in the order received, their sequence numbers cleared."""
    found = []
    for path in sorted(folder.glob("spy-*.jsonl")):
        messages = [
            pb.PlayRequest.FromString(base64.b64decode(json.loads(line)["message"]))
            for line in path.read_text().splitlines()
        ]
        for message in messages:
            message.ClearField("sequence")
        found.append(messages)
    return found


def game_messages(stream: list[pb.PlayRequest], game_id: str) -> list[pb.PlayRequest]:
    """The handshake, then the messages of game ``game_id``, from its game_start to its game_end."""
    start = next(
        index
        for index, message in enumerate(stream)
        if message.WhichOneof("message") == "game_start" and message.game_start.game_id == game_id
    )
    end = next(index for index in range(start, len(stream)) if stream[index].WhichOneof("message") == "game_end")
    return [stream[0], *stream[start : end + 1]]


def test_a_game_replayed_to_the_bot_that_played_it_differs_nowhere_and_is_the_stream_it_was_sent(
    bots: Bots, league: Path, tmp_path: Path
) -> None:
    log, records = game_with(league, "illegal")  # a fault in the game: its notice went to the faulting seat only
    seat = seat_of(records, "spy")
    spy = bots.command(BAD_BOTS / "spy.py", "--record-dir", str(tmp_path))
    completed, report = replay(bots, log, seat, spy, "--share", str(tmp_path))
    assert completed.returncode == 0, completed.stderr
    decided = [record for record in records if record["type"] == "decision" and record["seat"] == seat]
    assert report["decisions"] == len(decided) > 5 and report["differences"] == 0
    assert [answer["recorded"] for answer in report["answers"]] == [record["action"] for record in decided]
    assert "the bot answered every one as recorded" in completed.stderr
    game_id = records[0]["game_id"]
    (league_stream,) = [
        stream
        for stream in streams(league / "records")
        if any(
            message.game_start.game_id == game_id for message in stream if message.WhichOneof("message") == "game_start"
        )
    ]
    (replayed,) = streams(tmp_path)
    sent = game_messages(league_stream, game_id)
    assert [message.WhichOneof("message") for message in sent[:2]] == ["handshake", "game_start"]
    assert replayed == sent


def test_a_game_replayed_to_another_bot_names_the_first_decision_that_differs(bots: Bots, league: Path) -> None:
    log, records = game_with(league)
    seat = seat_of(records, "heuristic")
    completed, report = replay(bots, log, seat, bots.command(SAMPLE_BOTS / "random_bot.py"))
    assert completed.returncode == 1
    first = report["first_difference"]
    assert report["differences"] >= 1 and not first["same"]
    answers = report["answers"]
    assert all(answer["same"] for answer in answers[: answers.index(first)])
    recorded = next(record for record in records if record["type"] == "decision" and record["n"] == first["number"])
    assert (recorded["seat"], recorded["action"]) == (seat, first["recorded"]) and first["now"] != first["recorded"]
    assert (
        f"the first: decision {first['number']} (hand {first['hand']}): recorded {first['recorded']}"
        in completed.stderr
    )
    assert report["logs"] is not None


def test_a_recorded_fault_is_the_same_fault_again_and_a_bot_that_plays_instead_is_told_of_it(
    bots: Bots, league: Path, tmp_path: Path
) -> None:
    log, records = game_with(league, "illegal")
    seat = seat_of(records, "illegal")
    (fault,) = [record for record in records if record["type"] == "fault"]
    again, report = replay(bots, log, seat, bots.command(BAD_BOTS / "bad_reply.py", "--mode", "illegal", "--at", "2"))
    assert again.returncode == 0, again.stderr
    (faulted,) = [answer for answer in report["answers"] if answer["fault"]]
    assert (faulted["number"], faulted["fault"]["kind"], faulted["same"]) == (fault["n"], "illegal", True)
    # The spy chooses as that bot does, but plays legally where it made its illegal move: only that differs.
    spy = bots.command(BAD_BOTS / "spy.py", "--record-dir", str(tmp_path))
    instead, report = replay(bots, log, seat, spy, "--share", str(tmp_path))
    assert instead.returncode == 1
    assert report["differences"] == 1 and report["first_difference"]["number"] == fault["n"]
    assert report["first_difference"]["recorded"] == f"illegal fault: {fault['detail']}"
    # The game went on as recorded: the bot was told of the fault, and of the default action played for it.
    (notice,) = [
        message.fault_notice for message in streams(tmp_path)[0] if message.WhichOneof("message") == "fault_notice"
    ]
    assert (notice.decision_number, notice.kind, notice.forfeited) == (fault["n"], pb.FAULT_KIND_ILLEGAL, False)
    assert notice.HasField("replaced_by")


def test_what_cannot_be_replayed_is_one_line(bots: Bots, league: Path, tmp_path: Path) -> None:
    log, _ = game_with(league)
    random_bot = bots.command(SAMPLE_BOTS / "random_bot.py")
    not_a_log = tmp_path / "x.jsonl"
    not_a_log.write_text('{"type": "deal"}\n')
    for path, seat, words in ((log, 3, "--seat 3: r1-t001-s"), (not_a_log, 0, "not a game log")):
        completed = subprocess.run(
            [*REFEREE, "replay-to", str(path), "--seat", str(seat), "--", *random_bot],
            capture_output=True,
            text=True,
            timeout=60,
            env=bots.subprocess_env(),
        )
        assert completed.returncode == 1 and words in completed.stderr, completed.stderr
        assert len(completed.stderr.strip().splitlines()) == 1
    usage = subprocess.run([*REFEREE, "replay-to", str(log), "--seat", "0"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "give a submission folder" in usage.stderr
