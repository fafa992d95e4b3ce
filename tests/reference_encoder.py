"""The reference encoder: a DecisionRequest and a GameEnd built field by field through the protobuf library.

The referee writes these messages with the hand-written codec of
:mod:`referee.protocol.codec`; the tests hold its bytes equal to these, and the tests
of the bot kits and ``bench/overhead.py`` build requests with them.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer

from referee.common.errors import GameOverError
from referee.engine.games.bastard_brag import FACE_UP_SLOT, BastardBragObservation
from referee.engine.games.game import Action, EventKind, Game, HandResult, Observation
from referee.engine.games.stop_the_bus import StopTheBusObservation
from referee.protocol.messages import (
    EVENT_KIND_TO_PB,
    GAME_TO_PB,
    HAND_ENDING_TO_PB,
    PHASE_TO_PB,
    SUIT_OFFSET,
    action_to_pb,
    card_to_pb,
    out_of_game_after,
    showdown_result,
)
from referee.v2 import bot_pb2 as pb


def fill_showdown(message: pb.Showdown, result: HandResult, out_of_game: frozenset[int]) -> None:
    """Write what a hand's showdown revealed: its ending, every hand compared, every seat after."""
    message.ending = HAND_ENDING_TO_PB[result.ended_by]
    for seat, cards in sorted(result.hands.items()):
        revealed = message.hands.add(seat=seat, rank_name=str(result.ranks[seat]))
        for card in cards:
            revealed.cards.add(rank=card.rank, suit=card.suit + SUIT_OFFSET)
    for seat, lives in enumerate(result.lives_after):
        message.seats.add(seat=seat, lives=lives, floating=result.floating_after[seat], in_game=seat not in out_of_game)


def fill_event(message: pb.Event, game: Game, index: int) -> None:
    """Write the game's ``events[index]`` into an ``Event`` message, numbered ``index + 1``."""
    event = game.events[index]
    message.sequence = index + 1
    message.hand_number = event.hand_number
    message.kind = EVENT_KIND_TO_PB[event.kind]
    if event.seat is not None:
        message.seat = event.seat
    if event.card is not None:
        card_to_pb(event.card, message.card)
    if event.taken is not None:
        card_to_pb(event.taken, message.taken)
    if event.slot is not None:
        message.slot = event.slot
    if event.count is not None:
        message.count = event.count
    if event.kind is EventKind.SHOWDOWN:
        fill_showdown(message.showdown, showdown_result(game, event), out_of_game_after(game, event.hand_number))


def fill_events(
    target: RepeatedCompositeFieldContainer[pb.Event], game: Game, first: int, stop: int | None = None
) -> None:
    """Append the game's events ``first`` up to ``stop`` (default: all) to a repeated ``Event`` field."""
    for index in range(first, len(game.events) if stop is None else stop):
        fill_event(target.add(), game, index)


def fill_seats(
    target: RepeatedCompositeFieldContainer[pb.SeatState],
    lives: Sequence[int],
    floating: Sequence[bool],
    in_game: Sequence[bool],
    in_hand: Sequence[bool],
) -> None:
    """Append every seat's public state to a repeated ``SeatState`` field."""
    for seat in range(len(lives)):
        target.add(seat=seat, lives=lives[seat], floating=floating[seat], in_game=in_game[seat], in_hand=in_hand[seat])


def fill_observation(message: pb.Observation, obs: Observation) -> None:
    """Write ``obs`` into an ``Observation`` message (legal actions and events are sent apart)."""
    message.game = GAME_TO_PB[obs.game]
    message.seat = obs.seat
    message.num_players = obs.num_players
    message.hand_number = obs.hand_number
    message.dealer = obs.dealer
    message.phase = PHASE_TO_PB[obs.phase]
    hand = message.hand
    for card in obs.hand:
        hand.add(rank=card.rank, suit=card.suit + SUIT_OFFSET)
    fill_seats(message.seats, obs.lives, obs.floating, obs.in_game, obs.in_hand)
    if obs.ender is not None:
        message.ender = obs.ender
    message.turns_this_hand = obs.turns_this_hand
    message.turn_limit = obs.turn_limit
    if isinstance(obs, StopTheBusObservation):
        view = message.stop_the_bus
        if obs.discard_top is not None:
            card_to_pb(obs.discard_top, view.discard_top)
        view.stock_count = obs.stock_count
        view.discard_count = obs.discard_count
        if obs.drawn_card is not None:
            card_to_pb(obs.drawn_card, view.drawn_card)
            view.took_discard = obs.took_discard
    elif isinstance(obs, BastardBragObservation):
        centre = message.bastard_brag.centre
        for slot, shown in enumerate(obs.centre):
            entry = centre.add(slot=slot, face_up=slot == FACE_UP_SLOT)
            if shown is not None:
                card_to_pb(shown, entry.card)


def decision_request_to_pb(
    game: Game,
    game_id: str,
    decision_number: int,
    first_event: int,
    move_time_ms: int,
    time_bank_ms: int,
    default: Action | None = None,
    last_charged_ms: int = 0,
) -> pb.DecisionRequest:
    """The reference DecisionRequest for the game's current seat, built from ``Game.observation``: its clock is
    the move time, the bank left and what the seat's previous decision was charged (``last_charged_ms``).

    :class:`referee.protocol.codec.RequestEncoder` writes the same bytes faster; a test holds them equal.
    """
    seat = game.current_seat
    if seat is None:
        raise GameOverError("the game is over: no seat is asked for a decision")
    obs = game.observation(seat)
    message = pb.DecisionRequest(
        game_id=game_id,
        decision_number=decision_number,
        seat=seat,
        move_time_ms=move_time_ms,
        time_bank_ms=time_bank_ms,
        last_charged_ms=last_charged_ms,
    )
    fill_observation(message.observation, obs)
    fill_events(message.events, game, first_event)
    for act in obs.legal_actions:
        action_to_pb(act, message.legal_actions.add())
    if default is not None:
        action_to_pb(default, message.default_action)
    return message


def game_end_to_pb(game: Game, game_id: str, first_event: int, is_void: bool) -> pb.GameEnd:
    """The reference GameEnd of a game that is over, for a seat whose messages so far carried the events
    before ``first_event``.

    :meth:`referee.protocol.codec.RequestEncoder.game_end` writes the same bytes faster; a test holds them equal.
    """
    result = game.result()
    message = pb.GameEnd(
        game_id=game_id,
        placements=result.placements,
        hands_played=result.hands_played,
        forfeited=result.forfeited,
        is_void=is_void,
    )
    fill_events(message.events, game, first_event)
    return message
