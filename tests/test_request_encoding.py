"""The referee's fast paths equal their references: request bytes, reading replies, decision log lines.

The referee encodes each DecisionRequest straight from the game's state
(``RequestEncoder``) rather than through ``Game.observation``, reads a reply's
action by its bytes, and writes decision log lines without ``json``. Each is
checked here against the plain way: the message built field by field from
``Game.observation`` (the one place that decides what a seat may see), the
field-by-field reader, and ``json.dumps`` of the record.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from referee.cards import DECK, Card
from referee.faults import default_action
from referee.games import GAMES
from referee.games.base import Action, ActionKind, action
from referee.gamelog import GameLog, decision_record
from referee.protocol import (
    MalformedMessage, RequestEncoder, action_from_pb, action_to_pb, decision_request_to_pb, game_end_to_pb,
)  # fmt: skip
from referee.v2 import bot_pb2 as pb

# Decision numbers and banks that cross the varint sizes (1, 2 and 3 bytes).
NUMBER_STEPS = (1, 1, 1, 126, 16_255)
BANKS = (0, 5, 127, 128, 10_000, 16_384)


def table_sizes() -> list[tuple[str, int]]:
    return [
        (name, players) for name, game in GAMES.items() for players in range(game.min_players, game.max_players + 1)
    ]


@pytest.mark.parametrize(("game_name", "players"), table_sizes())
def test_every_request_and_game_end_encoded_from_the_game_equals_the_reference(
    game_name: str, players: int
) -> None:
    checked = 0
    for seed in range(12):
        rng = random.Random(f"{game_name}/{players}/{seed}")
        game = GAMES[game_name](players, seed, turn_limit=rng.choice((3, 40, 200)))
        game_id = "" if seed == 0 else f"league-{game_name}-{seed}"
        move_time_ms = rng.choice((1, 1000, 200_000))
        encoder = RequestEncoder(game, game_id, move_time_ms)
        events_sent = [0] * players
        number = 0
        while not game.is_over:
            seat = game.current_seat
            number += rng.choice(NUMBER_STEPS)
            bank_ms = rng.choice(BANKS)
            default = default_action(game) if seed % 2 else None
            encoded = encoder.request(number, bank_ms, events_sent[seat], default)
            expected = decision_request_to_pb(game, game_id, number, events_sent[seat], move_time_ms, bank_ms, default)
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
    actions = [action(kind) for kind in (ActionKind.DRAW, ActionKind.TAKE, ActionKind.STOP, ActionKind.PASS,
                                         ActionKind.KNOCK)]  # fmt: skip
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
        (pb.Action(kind=pb.ACTION_KIND_DISCARD, card=pb.Card(rank=15, suit=pb.SUIT_CLUBS)), "rank 15, suit 1 is not a card"),
        (pb.Action(kind=pb.ACTION_KIND_EXCHANGE, card=pb.Card(rank=2, suit=pb.SUIT_CLUBS)), "needs a centre slot"),
        (pb.Action(kind=pb.ACTION_KIND_EXCHANGE, card=pb.Card(rank=2, suit=pb.SUIT_CLUBS), slot=3),
         "must be 0, 1 or 2, got 3"),
    ],
)
def test_a_malformed_action_still_says_why(message: pb.Action, reason: str) -> None:
    with pytest.raises(MalformedMessage, match=reason):
        action_from_pb(message)


@pytest.mark.parametrize("default", [False, True])
@pytest.mark.parametrize("drew", [None, Card.parse("QS")])
@pytest.mark.parametrize("ms", [0.0, 0.0004, 1.5, 123.4567, 10_000.0])
def test_a_decision_log_line_is_its_record_in_json(tmp_path: Path, default: bool, drew: Card | None, ms: float) -> None:
    legal = (action(ActionKind.EXCHANGE, Card.parse("10H"), 2), action(ActionKind.EXCHANGE_ALL, Card.parse("AS")),
             action(ActionKind.KNOCK))  # fmt: skip
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
