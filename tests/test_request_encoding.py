"""The referee's fast paths equal their references: request bytes, reading replies, decision log lines.

The referee encodes each DecisionRequest straight from the game's state
(``referee.protocol.codec.RequestEncoder``) rather than through ``Game.observation``, reads a reply's
decision and action from its bytes, and writes decision log lines without
``json``. Each is checked here against the plain way: the message built field
by field from ``Game.observation`` (the one place that decides what a seat may
see), the protobuf library's reading of the reply, and ``json.dumps`` of the
record.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from google.protobuf.message import DecodeError
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import DECK, Card
from referee.engine.games import GAMES
from referee.engine.games.game import Action, ActionKind, action
from referee.protocol.clock import TimeControl
from referee.protocol.codec import RequestEncoder, decision_from_bytes
from referee.protocol.messages import MalformedMessage, action_from_pb, action_to_pb
from referee.records.gamelog import GameLog, decision_record
from referee.v2 import bot_pb2 as pb
from tests.reference_encoder import decision_request_to_pb, game_end_to_pb

# Decision numbers, banks and charges that cross the varint sizes (1, 2 and 3 bytes).
NUMBER_STEPS = (1, 1, 1, 126, 16_255)
BANKS = (0, 5, 127, 128, 10_000, 16_384)


def table_sizes() -> list[tuple[str, int]]:
    return [
        (name, players) for name, game in GAMES.items() for players in range(game.min_players, game.max_players + 1)
    ]


@pytest.mark.parametrize(("game_name", "players"), table_sizes())
def test_every_request_and_game_end_encoded_from_the_game_equals_the_reference(game_name: str, players: int) -> None:
    checked = 0
    for seed in range(12):
        rng = random.Random(f"{game_name}/{players}/{seed}")
        game = GAMES[game_name](players, seed, turn_limit=rng.choice((3, 40, 200)))
        game_id = "" if seed == 0 else f"league-{game_name}-{seed}"
        move_time_ms = rng.choice((1, 1000, 200_000))
        encoder = RequestEncoder(game, game_id)
        events_sent = [0] * players
        number = 0
        while not game.is_over:
            seat = game.current_seat
            number += rng.choice(NUMBER_STEPS)
            bank_ms = rng.choice(BANKS)
            default = game.default_action() if seed % 2 else None
            last_charged_ms = rng.choice(BANKS)
            clock = TimeControl(move_time_ms, bank_ms, 50, last_charged_ms)
            encoded = encoder.request(number, clock, events_sent[seat], default)
            expected = decision_request_to_pb(
                game, game_id, number, events_sent[seat], move_time_ms, bank_ms, default, last_charged_ms
            )
            assert encoded == expected.SerializeToString(), (
                f"seed {seed}, decision {number}, seat {seat}:\n{pb.DecisionRequest.FromString(encoded)}\n"
                f"expected:\n{expected}"
            )
            events_sent[seat] = len(game.events)
            checked += 1
            if rng.random() < 0.02 and sum(game.in_game) > 1:
                game.forfeit(seat, "a fault")  # mid-turn too: cards leave play, the pile may empty
                continue
            game.apply(rng.choice(game.legal_actions()))
        for seat in range(players):  # each seat's GameEnd carries the events since its last request
            for is_void in (False, True):
                expected = game_end_to_pb(game, game_id, events_sent[seat], is_void)
                assert encoder.game_end(events_sent[seat], is_void) == expected.SerializeToString(), (
                    f"seed {seed}, game end of seat {seat}:\n{expected}"
                )
    assert checked > 100


def every_action() -> list[Action]:
    actions = [
        action(kind) for kind in (ActionKind.DRAW, ActionKind.TAKE, ActionKind.STOP, ActionKind.PASS, ActionKind.KNOCK)
    ]
    for card in DECK:
        actions += [action(ActionKind.DISCARD, card), action(ActionKind.EXCHANGE_ALL, card)]
        actions += [action(ActionKind.EXCHANGE, card, slot) for slot in (0, 1, 2)]
    return actions


def test_every_action_reads_back_as_itself() -> None:
    for act in every_action():
        sent = pb.Decision.FromString(pb.Decision(action=action_to_pb(act)).SerializeToString())
        assert action_from_pb(sent.action) is act


def test_an_action_with_stray_fields_reads_as_before() -> None:
    # Fields a kind does not use are ignored, as they always were; only the lookup by bytes misses.
    draw = pb.Action(kind=pb.ACTION_KIND_DRAW, card=pb.Card(rank=5, suit=pb.SUIT_HEARTS), slot=1)
    assert action_from_pb(draw) is action(ActionKind.DRAW)
    discard = pb.Action(kind=pb.ACTION_KIND_DISCARD, card=pb.Card(rank=14, suit=pb.SUIT_SPADES), slot=0)
    assert action_from_pb(discard) is action(ActionKind.DISCARD, Card.parse("AS"))


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (pb.Action(), "empty action"),
        (pb.Action(kind=99), "unknown action kind 99"),
        (pb.Action(kind=pb.ACTION_KIND_DISCARD), "needs a card"),
        (
            pb.Action(kind=pb.ACTION_KIND_DISCARD, card=pb.Card(rank=15, suit=pb.SUIT_CLUBS)),
            "rank 15, suit 1 is not a card",
        ),
        (pb.Action(kind=pb.ACTION_KIND_EXCHANGE, card=pb.Card(rank=2, suit=pb.SUIT_CLUBS)), "needs a centre slot"),
        (
            pb.Action(kind=pb.ACTION_KIND_EXCHANGE, card=pb.Card(rank=2, suit=pb.SUIT_CLUBS), slot=3),
            "must be 0, 1 or 2, got 3",
        ),
    ],
)
def test_a_malformed_action_still_says_why(message: pb.Action, reason: str) -> None:
    with pytest.raises(MalformedMessage, match=reason):
        action_from_pb(message)


# ----- a reply's decision, read from its bytes ------------------------------------------

# Decision numbers whose varints take 1 to 5 bytes, up to the largest a uint32 holds.
REPLY_NUMBERS = (1, 127, 128, 16_383, 16_384, 2_097_152, 268_435_456, 2**32 - 1)
DRAW = action(ActionKind.DRAW)


def reply_bytes(number: int, act: Action | None = None, error: str = "") -> bytes:
    """A PlayResponse holding a decision, as the protobuf library writes it."""
    decision = pb.Decision(decision_number=number, error=error)
    if act is not None:
        action_to_pb(act, decision.action)
    return pb.PlayResponse(decision=decision).SerializeToString()


def library_read(data: bytes) -> tuple[int, Action] | None:
    """What the protobuf library reads in ``data``: a decision's number and action, if that is what it holds."""
    try:
        message = pb.PlayResponse.FromString(data)
    except DecodeError:
        return None
    if message.WhichOneof("message") != "decision" or message.decision.error:
        return None
    try:
        return message.decision.decision_number, action_from_pb(message.decision.action)
    except MalformedMessage:
        return None


def test_every_decision_a_library_writes_is_read_from_its_bytes() -> None:
    for number in REPLY_NUMBERS:
        for act in every_action():
            read = decision_from_bytes(reply_bytes(number, act))
            assert read == (number, act) and read[1] is act


def _out_of_order() -> bytes:
    """A decision whose action comes before its number: valid protobuf, though no library writes it so."""
    body = _length_delimited(2, action_to_pb(DRAW).SerializeToString()) + bytes((0x08, 5))
    return _length_delimited(2, body)


def _length_delimited(field: int, body: bytes) -> bytes:
    return bytes((field << 3 | 2, len(body))) + body


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="empty"),
        pytest.param(reply_bytes(5), id="no-action"),
        pytest.param(reply_bytes(0, DRAW), id="number-0-left-out"),
        pytest.param(reply_bytes(5, DRAW, error="RuntimeError: no"), id="action-and-error"),
        pytest.param(reply_bytes(5, error="RuntimeError: no"), id="error"),
        pytest.param(_out_of_order(), id="action-before-number"),
        pytest.param(reply_bytes(5, DRAW) + bytes((0x18, 1)), id="unknown-field-after"),
        pytest.param(
            _length_delimited(2, bytes((0x08, 0x80, 0x80, 0x80, 0x80, 0x10)) + _length_delimited(2, bytes((0x08, 1)))),
            id="number-over-32-bits",
        ),
        pytest.param(
            pb.PlayResponse(
                decision=pb.Decision(decision_number=5, action=pb.Action(kind=pb.ACTION_KIND_DRAW, slot=1))
            ).SerializeToString(),
            id="stray-field-in-action",
        ),
        pytest.param(
            pb.PlayResponse(decision=pb.Decision(decision_number=5, action=pb.Action(kind=99))).SerializeToString(),
            id="unknown-action-kind",
        ),
        pytest.param(pb.PlayResponse(handshake=pb.HandshakeResponse(name="x")).SerializeToString(), id="handshake"),
        pytest.param(reply_bytes(5, DRAW)[:-1], id="cut-short"),
    ],
)
def test_any_other_reply_is_left_to_the_library(data: bytes) -> None:
    assert decision_from_bytes(data) is None


@settings(max_examples=3000, deadline=None)
@given(data=st.data())
def test_whatever_the_bytes_a_decision_read_from_them_is_what_the_library_reads(data: st.DataObject) -> None:
    number = data.draw(st.sampled_from(REPLY_NUMBERS) | st.integers(min_value=0, max_value=2**32 - 1))
    raw = bytearray(reply_bytes(number, data.draw(st.sampled_from(every_action()))))
    for _ in range(data.draw(st.integers(min_value=0, max_value=3))):
        index = data.draw(st.integers(min_value=0, max_value=len(raw)))
        byte = data.draw(st.integers(min_value=0, max_value=255))
        change = data.draw(st.sampled_from(("set", "cut", "insert")))
        if change == "set" and index < len(raw):
            raw[index] = byte
        elif change == "cut":
            del raw[index:]
        elif change == "insert":
            raw.insert(index, byte)
    read = decision_from_bytes(bytes(raw))
    if read is not None:
        assert read == library_read(bytes(raw))


@pytest.mark.parametrize("default", [False, True])
@pytest.mark.parametrize("drew", [None, Card.parse("QS")])
@pytest.mark.parametrize("ms", [0.0, 0.0004, 1.5, 123.4567, 10_000.0])
def test_a_decision_log_line_is_its_record_in_json(tmp_path: Path, default: bool, drew: Card | None, ms: float) -> None:
    legal = (
        action(ActionKind.EXCHANGE, Card.parse("10H"), 2),
        action(ActionKind.EXCHANGE_ALL, Card.parse("AS")),
        action(ActionKind.KNOCK),
    )
    holding = (Card.parse("2C"), Card.parse("10H"), Card.parse("AS"))
    path = tmp_path / "game.jsonl"
    log = GameLog(path)
    log.decision(1234, 7, 3, holding, legal, legal[1], ms, ms * 2, default, drew)
    log.close()
    record = decision_record(1234, 7, 3, holding, legal, legal[1], ms, ms * 2, default, drew)
    assert path.read_text(encoding="utf-8") == json.dumps(record, separators=(",", ":")) + "\n"


def test_a_log_caught_up_between_records_keeps_them_in_order(tmp_path: Path) -> None:
    legal = (action(ActionKind.KNOCK), action(ActionKind.EXCHANGE_ALL, Card.parse("AS")))
    holding = (Card.parse("2C"), Card.parse("10H"), Card.parse("AS"))
    path = tmp_path / "game.jsonl"
    log = GameLog(path)
    expected = []
    for number in range(1, 4):
        marker = {"type": "hand", "hand": number}
        log.write(marker)
        log.decision(number, number, 0, holding, legal, legal[number % 2], 1.0, 2.0, False, None)
        expected += [marker, decision_record(number, number, 0, holding, legal, legal[number % 2], 1.0, 2.0)]
        if number != 2:  # the second round is left for close() to format
            log.catch_up()
    log.close()
    assert [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] == expected
