"""The v2 stream carries every public fact in band: a bot can rebuild a game's whole public history from it.

Spy bots (tests/bad_bots/spy.py, real processes) record every PlayRequest the
referee sends them. From those recordings alone each seat rebuilds the game's
public events, showdown hands included, and the result is checked against the
engine replaying the game's log; a gap in the events' sequence numbers is
detected.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from referee.play.kit import GameHistory, SequenceGap
from referee.protocol.messages import EVENT_KIND_TO_PB, HAND_ENDING_TO_PB, card_from_pb
from referee.records.gamelog import read_log, replay
from referee.v2 import bot_pb2 as pb
from tests.conftest import Bots, play


def recorded_streams(record_dir: Path) -> list[list[pb.PlayRequest]]:
    """Every spy process's messages, in the order it received them."""
    streams = []
    for path in sorted(record_dir.glob("spy-*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        streams.append([pb.PlayRequest.FromString(base64.b64decode(json.loads(line)["message"])) for line in lines])
    return streams


def events_of(stream: list[pb.PlayRequest]) -> list[pb.Event]:
    """The public events a stream carried, in the order they came."""
    events = []
    for request in stream:
        kind = request.WhichOneof("message")
        if kind == "decision_request":
            events.extend(request.decision_request.events)
        elif kind == "game_end":
            events.extend(request.game_end.events)
    return events


@pytest.mark.parametrize(("game", "players"), [("stop_the_bus", 3), ("bastard_brag", 4)])
def test_each_seat_rebuilds_the_whole_public_history_from_its_stream(
    bots: Bots, tmp_path: Path, game: str, players: int
) -> None:
    record_dir = tmp_path / "records"
    record_dir.mkdir()
    specs = [bots.bad("spy.py", "--record-dir", str(record_dir), name=f"spy-{seat}") for seat in range(players)]
    log_path = tmp_path / "game.jsonl"
    result = play(game, specs, seed=5, log_path=log_path)
    assert not any(result.faults) and not result.forfeits
    log = read_log(log_path)
    engine = replay(log)
    hand_records = {record["hand"]: record for record in log if record["type"] == "hand"}

    streams = recorded_streams(record_dir)
    assert len(streams) == players
    seats = set()
    for stream in streams:
        # The stream's own order: numbered from 1 without a gap, the handshake first, the game's end last.
        assert [request.sequence for request in stream] == list(range(1, len(stream) + 1))
        kinds = [request.WhichOneof("message") for request in stream]
        assert kinds[:2] == ["handshake", "game_start"] and kinds[-1] == "game_end"
        assert set(kinds[2:-1]) == {"decision_request"}
        seat = stream[1].game_start.seat
        seats.add(seat)
        assert list(stream[1].game_start.players) == result.players
        assert list(stream[-1].game_end.placements) == result.placements

        # Every event exactly once, in order, numbered 1..N, equal to the engine's.
        history = GameHistory(stream[1].game_start.game_id)
        for event in events_of(stream):
            history.add(event)
        assert len(history.events) == len(engine.events)
        for message, event in zip(history.events, engine.events, strict=True):
            assert message.kind == EVENT_KIND_TO_PB[event.kind]
            assert (message.hand_number, message.seat if message.HasField("seat") else None) == (
                event.hand_number,
                event.seat,
            )

        # Every showdown's revealed hands, in band, equal the log's hand results.
        showdowns = history.showdowns()
        assert len(showdowns) == sum(1 for record in hand_records.values() if record["loser"] is not None)
        for showdown in showdowns:
            record = hand_records[showdown.hand_number]
            assert showdown.seat == record["loser"]
            revealed = {
                str(hand.seat): " ".join(str(card_from_pb(card)) for card in hand.cards)
                for hand in showdown.showdown.hands
            }
            assert revealed == record["hands"]
            assert {str(hand.seat): hand.rank_name for hand in showdown.showdown.hands} == record["ranks"]
            assert showdown.showdown.ending == HAND_ENDING_TO_PB[engine.hand_results[showdown.hand_number - 1].ended_by]
            assert [state.lives for state in showdown.showdown.seats] == record["lives"]
    assert seats == set(range(players))


def test_a_gap_in_the_events_is_detected_by_its_sequence_number(bots: Bots, tmp_path: Path) -> None:
    record_dir = tmp_path / "records"
    record_dir.mkdir()
    specs = [bots.bad("spy.py", "--record-dir", str(record_dir), name=f"spy-{seat}") for seat in range(3)]
    play("stop_the_bus", specs, seed=9)
    events = events_of(recorded_streams(record_dir)[0])
    assert len(events) > 10
    for missing in (0, 5, len(events) - 1):
        history = GameHistory("gap")
        received = events[:missing] + events[missing + 1 :]
        if missing == len(events) - 1:
            for event in received:
                history.add(event)  # the last one lost is noticed only when a later one would come
            assert len(history.events) == len(events) - 1
            continue
        with pytest.raises(SequenceGap, match=f"event {missing + 2} arrived where {missing + 1} was due"):  # noqa: PT012
            for event in received:
                history.add(event)


def test_a_seat_hears_of_the_game_first_even_when_it_is_over_before_its_turn(bots: Bots, tmp_path: Path) -> None:
    # The seat to act first is sent its GameStart at once, the others while it thinks. Two bots that crash
    # at their first decision end the game; wherever the spy sits, its stream still tells the game in order.
    asked = []
    for spy_seat in range(3):
        record_dir = tmp_path / f"records-{spy_seat}"
        record_dir.mkdir()
        specs = [bots.bad("crash.py", "--at", "1", name=f"crash-{seat}") for seat in range(3)]
        specs[spy_seat] = bots.bad("spy.py", "--record-dir", str(record_dir), name="spy")
        result = play("stop_the_bus", specs, seed=3, first_dealer=0)
        assert sorted(result.forfeits) == sorted(set(range(3)) - {spy_seat})
        (stream,) = recorded_streams(record_dir)
        kinds = [request.WhichOneof("message") for request in stream]
        assert kinds[:2] == ["handshake", "game_start"] and kinds[-1] == "game_end"
        assert [request.sequence for request in stream] == list(range(1, len(stream) + 1))
        assert stream[1].game_start.seat == spy_seat
        asked.append(kinds.count("decision_request"))
    assert 0 in asked and any(asked)  # a spy that was never asked, and one that was


def test_a_game_over_before_any_decision_still_starts_before_it_ends(bots: Bots, tmp_path: Path) -> None:
    # The other bot cannot start, so the game is over (and void) before anyone is asked: the spy's GameStart
    # is sent with its GameEnd, not before a decision.
    record_dir = tmp_path / "records"
    record_dir.mkdir()
    specs = [bots.bad("spy.py", "--record-dir", str(record_dir), name="spy"), bots.bad("exit_at_start.py", name="gone")]
    result = play("stop_the_bus", specs, seed=3)
    assert result.void and result.decisions == 0
    (stream,) = recorded_streams(record_dir)
    assert [request.WhichOneof("message") for request in stream] == ["handshake", "game_start", "game_end"]
    assert stream[2].game_end.is_void
