"""The referee's fast paths equal their references: request bytes, reading replies, decision log lines, notifications.

The referee encodes each DecisionRequest straight from the game's state
(``RequestEncoder``) rather than through ``Game.observation``, reads a reply's
action by its bytes, writes decision log lines without ``json``, and sends
notifications without waiting for them. Each is checked here against the
plain way: the message built field by field from ``Game.observation`` (the
one place that decides what a seat may see), the field-by-field reader,
``json.dumps`` of the record, and every notification arriving, in order.
"""

from __future__ import annotations

import base64
import json
import random
from collections import defaultdict
from pathlib import Path

import pytest

from referee.cards import DECK, Card
from referee.faults import default_action
from referee.games import GAMES, Game
from referee.games.base import Action, ActionKind, action
from referee.match import GameLog, decision_record
from referee.protocol import (
    MalformedMessage,
    RequestEncoder,
    action_from_pb,
    action_to_pb,
    fill_events,
    fill_observation,
)
from referee.v1 import bot_pb2 as pb
from tests.conftest import Bots, play

# Decision numbers and banks that cross the varint sizes (1, 2 and 3 bytes).
NUMBER_STEPS = (1, 1, 1, 126, 16_255)
BANKS = (0, 5, 127, 128, 10_000, 16_384)


def reference_request(
    game: Game, game_id: str, number: int, move_time_ms: int, bank_ms: int, first_event: int, default: Action | None
) -> pb.DecisionRequest:
    """The request as built before the fast path: field by field, from ``Game.observation``."""
    seat = game.current_seat
    obs = game.observation(seat)
    request = pb.DecisionRequest(
        game_id=game_id, hand_number=obs.hand_number, decision_number=number, seat=seat,
        move_time_ms=move_time_ms, time_bank_ms=bank_ms,
    )  # fmt: skip
    fill_observation(request.observation, obs)
    fill_events(request.events, game.events[first_event:])
    for act in obs.legal_actions:
        action_to_pb(act, request.legal_actions.add())
    if default is not None:
        action_to_pb(default, request.default_action)
    return request


def table_sizes() -> list[tuple[str, int]]:
    return [
        (name, players) for name, game in GAMES.items() for players in range(game.min_players, game.max_players + 1)
    ]


@pytest.mark.parametrize(("game_name", "players"), table_sizes())
def test_every_request_encoded_from_the_game_equals_the_reference_from_its_observation(
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
            expected = reference_request(game, game_id, number, move_time_ms, bank_ms, events_sent[seat], default)
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
        sent = pb.DecisionReply.FromString(pb.DecisionReply(action=action_to_pb(act)).SerializeToString())
        assert action_from_pb(sent.action) is act


def test_an_action_with_stray_fields_reads_as_before() -> None:
    # Fields a kind does not use are ignored, as they always were; only the lookup by bytes misses.
    draw = pb.Action(kind=pb.DRAW, card=pb.Card(rank=5, suit=pb.HEARTS), slot=1)
    assert action_from_pb(draw) is action(ActionKind.DRAW)
    discard = pb.Action(kind=pb.DISCARD, card=pb.Card(rank=14, suit=pb.SPADES), slot=0)
    assert action_from_pb(discard) is action(ActionKind.DISCARD, Card.parse("AS"))


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (pb.Action(), "empty action"),
        (pb.Action(kind=99), "unknown action kind 99"),
        (pb.Action(kind=pb.DISCARD), "needs a card"),
        (pb.Action(kind=pb.DISCARD, card=pb.Card(rank=15, suit=pb.CLUBS)), "rank 15, suit 1 is not a card"),
        (pb.Action(kind=pb.EXCHANGE, card=pb.Card(rank=2, suit=pb.CLUBS)), "needs a centre slot"),
        (pb.Action(kind=pb.EXCHANGE, card=pb.Card(rank=2, suit=pb.CLUBS), slot=3), "must be 0, 1 or 2, got 3"),
    ],
)
def test_a_malformed_action_still_says_why(message: pb.Action, reason: str) -> None:
    with pytest.raises(MalformedMessage, match=reason):
        action_from_pb(message)


@pytest.mark.parametrize("default", [False, True])
@pytest.mark.parametrize("ms", [0.0, 0.0004, 1.5, 123.4567, 10_000.0])
def test_a_decision_log_line_is_its_record_in_json(tmp_path: Path, default: bool, ms: float) -> None:
    legal = (action(ActionKind.EXCHANGE, Card.parse("10H"), 2), action(ActionKind.EXCHANGE_ALL, Card.parse("AS")),
             action(ActionKind.KNOCK))  # fmt: skip
    path = tmp_path / "game.jsonl"
    log = GameLog(path)
    log.write_decision(1234, 7, 3, legal, legal[1], ms, default)
    log.close()
    record = decision_record(1234, 7, 3, legal, legal[1], ms, default)
    assert path.read_text(encoding="utf-8") == json.dumps(record, separators=(",", ":")) + "\n"


@pytest.mark.parametrize(("game", "players"), [("stop_the_bus", 3), ("bastard_brag", 4)])
def test_each_seat_gets_every_notification_in_order_before_the_game_ends(
    bots: Bots, tmp_path: Path, game: str, players: int
) -> None:
    # Hand results are sent while the game goes on, not waited for one by one; still each seat
    # gets them all, in order, and the game over last, before play_game stops the bots.
    record_dir = tmp_path / "records"
    record_dir.mkdir()
    specs = [bots.bad("spy.py", "--record-dir", str(record_dir), name=f"spy-{seat}") for seat in range(players)]
    result = play(game, specs, seed=5)
    assert not any(result.faults) and not result.forfeits
    kinds_by_seat: dict[int, list[str]] = defaultdict(list)
    hands_by_seat: dict[int, list[int]] = defaultdict(list)
    for path in record_dir.glob("spy-*.jsonl"):
        seat = None
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry["call"] != "notify":
                continue
            note = pb.Notification.FromString(base64.b64decode(entry["message"]))
            kind = note.WhichOneof("kind")
            if kind == "game_started":
                seat = note.game_started.seat
            kinds_by_seat[seat].append(kind)
            if kind == "hand_result":
                hands_by_seat[seat].append(note.hand_result.hand_number)
    assert sorted(kinds_by_seat) == list(range(players))
    for seat in range(players):
        assert kinds_by_seat[seat] == ["game_started"] + ["hand_result"] * result.hands_played + ["game_over"]
        assert hands_by_seat[seat] == list(range(1, result.hands_played + 1))
