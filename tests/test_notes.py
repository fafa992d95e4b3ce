"""A bot's private notes (Decision.note): capped, never a fault, kept apart from the game's log, shown to whom they
belong (``referee show --notes``, check-bot); the Python kit's ``note()``.

What the server shows of them, and to whom, is held in tests/test_nothing_early.py (every answer to a visitor and to
two authors, with a planted leak) and tests/test_author_pages_in_browser.py (the author's replay in Chromium).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from referee.engine.games import StopTheBus
from referee.play.kit import BotServicer, note
from referee.protocol.faults import FaultKind
from referee.protocol.messages import CUT_MARK, GAME_NOTE_BYTES, NOTE_BYTES, cut_note
from referee.records.gamelog import log_text
from referee.records.notes import GameNotes, notes_beside, read_notes
from tests.conftest import PYTHON, Bots, play
from tests.reference_encoder import decision_request_to_pb

TWO_BYTES = "é"  # two bytes of UTF-8: a cut at an odd count falls inside it


def test_a_note_is_cut_at_a_character_to_1024_bytes_and_marked() -> None:
    kept, cut = cut_note("x" + TWO_BYTES * 600)  # 1,201 bytes: byte 1,024 is the first half of an é
    assert cut and kept == "x" + TWO_BYTES * 511 and len(kept.encode()) == 1023
    assert cut_note(TWO_BYTES * 512) == (TWO_BYTES * 512, False)  # exactly 1,024 bytes: kept whole
    notes = GameNotes("g", ["a", "b"])
    notes.take(1, 0, "x" + TWO_BYTES * 600)
    notes.take(2, 1, "short")
    assert notes.notes == [(1, 0, "x" + TWO_BYTES * 511 + CUT_MARK), (2, 1, "short")]
    assert (notes.seats[0].kept, notes.seats[0].cut, notes.seats[0].bytes) == (1, 1, 1023)


def test_a_seats_notes_stop_at_64_kb_a_game_and_the_rest_are_counted_not_kept() -> None:
    notes = GameNotes("g", ["a", "b"])
    for n in range(1, 101):
        notes.take(n, 0, "y" * 1000)
        notes.take(n, 1, "z")
    own = [text for _, seat, text in notes.notes if seat == 0]
    assert len(own) == 66  # 65 whole notes of 1,000 bytes, then the 536 bytes left of the 66th
    assert own[-1] == "y" * (GAME_NOTE_BYTES - 65_000) + CUT_MARK
    assert sum(len(text.removesuffix(CUT_MARK)) for text in own) == GAME_NOTE_BYTES
    assert (notes.seats[0].kept, notes.seats[0].cut, notes.seats[0].dropped) == (66, 1, 34)
    assert (notes.seats[1].kept, notes.seats[1].dropped) == (100, 0)  # the other seat has its own 64 KB


def test_the_python_kit_joins_a_decisions_notes_cuts_them_and_forgets_them_after(tmp_path: Path) -> None:
    def decide(obs):
        note("first thought")
        note(TWO_BYTES * 2000)
        return obs.legal_actions[0]

    servicer = BotServicer(decide, "noting", "1", ["stop_the_bus"])
    game = StopTheBus(2, seed=5)
    request = decision_request_to_pb(game, "g", 1, 0, 1000, 1000)
    first = servicer.decision_response(request).decision
    assert first.note.startswith("first thought\n" + TWO_BYTES) and len(first.note.encode()) <= NOTE_BYTES
    servicer._decide = lambda obs: obs.legal_actions[0]  # a decision that notes nothing sends nothing
    note("made outside decide: not the next decision's")
    assert servicer.decision_response(request).decision.note == ""


def test_a_bot_flooding_notes_plays_on_and_its_notes_are_capped_and_kept_apart_from_the_log(
    tmp_path: Path, bots: Bots
) -> None:
    log = tmp_path / "flood.jsonl"
    # 100 KB a note, a hundred times the cap; neither bot stops the bus, so the game is long enough to reach 64 KB.
    flooder = bots.bad("noter.py", "--bytes", "100000", "--patient", name="flooder")
    quiet = [bots.bad("noter.py", "--bytes", "10", "--patient", name="quiet")]
    result = play("stop_the_bus", [flooder, *quiet], seed=11, log_path=log, notes_path=notes_beside(log))
    assert all(not faults for faults in result.faults), result.faults  # a note is never a fault
    assert "flood-note" not in log.read_text()  # nothing of a note in the game's log
    notes = read_notes(tmp_path / "notes" / "flood.jsonl")  # beside the log, in a folder of their own
    decided = len(result.latencies_ms[0])
    flooded, counts = notes.by_seat[0], notes.seats[0]
    assert decided > GAME_NOTE_BYTES // NOTE_BYTES + 1, "the game is long enough to reach the game's cap"
    assert all(len(text.removesuffix(CUT_MARK).encode()) <= NOTE_BYTES for text in flooded.values())
    assert all(text.endswith(CUT_MARK) for text in flooded.values())
    assert all("flood-note" in text for text in list(flooded.values())[:-1])  # the last: what room was left
    assert sum(len(text.removesuffix(CUT_MARK).encode()) for text in flooded.values()) <= GAME_NOTE_BYTES
    assert counts.kept == len(flooded) and counts.kept + counts.dropped == decided and counts.dropped > 0
    assert len(notes.by_seat[1]) == len(result.latencies_ms[1])  # the others' notes, whole, each its own cap
    assert all(not text.endswith(CUT_MARK) for text in notes.by_seat[1].values())


def test_a_faulting_replys_note_is_kept_and_referee_show_tells_it_under_the_fault(tmp_path: Path, bots: Bots) -> None:
    log = tmp_path / "fault.jsonl"
    noter = bots.bad("noter.py", "--at", "2", "--bytes", "4", name="noter")
    other = bots.bad("noter.py", "--bytes", "4", name="other")
    result = play("stop_the_bus", [noter, other], seed=3, log_path=log, notes_path=notes_beside(log))
    assert result.faults[0][FaultKind.ILLEGAL] == 1
    shown = subprocess.run(
        [PYTHON, "-m", "referee", "show", str(log), "--notes"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    fault = next(index for index, line in enumerate(shown) if "fault" in line and "illegal" in line)
    # The note the illegal reply carried (it starts with its decision's number), under the fault, once.
    assert shown[fault + 1].startswith("    note of seat 0: ") and "flood-note" in shown[fault + 1], shown[
        fault : fault + 2
    ]
    number = shown[fault + 1].removeprefix("    note of seat 0: ").split()[0]
    assert sum(line.startswith(f"    note of seat 0: {number} ") for line in shown) == 1
    plain = subprocess.run([PYTHON, "-m", "referee", "show", str(log)], capture_output=True, text=True, check=True)
    assert "flood-note" not in plain.stdout  # without --notes, none
    assert "flood-note" not in log_text(log)


def test_notes_read_back_for_an_author_are_their_own_seats_alone(tmp_path: Path) -> None:
    notes = GameNotes("g", ["ann-v1", "bob-v1", "ann-v2"])
    for n, seat in enumerate((0, 1, 2, 1), 1):
        notes.take(n, seat, f"seat {seat} thinks")
    path = tmp_path / "g.jsonl.zst"
    notes.write(path)
    read = read_notes(path)
    assert read.by_decision() == {1: (0, "seat 0 thinks"), 2: (1, "seat 1 thinks"), 3: (2, "seat 2 thinks"),
                                  4: (1, "seat 1 thinks")}  # fmt: skip
    anns = read.of_seats({0, 2})
    assert anns.by_decision() == {1: (0, "seat 0 thinks"), 3: (2, "seat 2 thinks")}
    assert anns.seats[1].kept == 0 and read.seats[1].kept == 2  # bob's counts are not shown to ann either
