"""A bot session's races, played in memory on a fake stream and a fake clock (referee.play.fakes).

Each test scripts the bot's side message by message and moves the time by
hand, so the order of a reply, a deadline and a stream's end is the test's to
choose, to the microsecond, and the whole file runs in well under a second.
What only a real process shows (signals, the sandbox, the freezer, how a
process exits, gRPC's own framing) stays in test_faults.py, with one real
bot per fault kind.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable

import grpc
import pytest

from referee.engine.games import Action
from referee.play.fakes import FakeClock, FakeStream, FakeTransport, decision_bytes, settle
from referee.play.match import Match
from referee.play.processes import BotSpec
from referee.play.session import WALL_CAP_EXTRA_SECONDS, WALL_CAP_FACTOR, BotSession, Reply
from referee.protocol.clock import TimeControl, Timing
from referee.protocol.faults import COULD_NOT_DECIDE, STREAM_BROKE, V1_MOVED, BotFault, FaultKind
from referee.protocol.messages import GAME_TO_PB, PROTOCOL_VERSION, action_from_pb
from referee.protocol.setup import GameSetup
from referee.v2 import bot_pb2 as pb

# 500 ms to move, 250 ms of bank, 50 ms of grace: a decision is a timeout once 800 ms are charged.
TIMING = Timing(move_time_ms=500, time_bank_ms=250, grace_ms=50)
LIMIT_S = 0.8
MICROSECOND = 1e-6
SETUP = GameSetup("stop_the_bus", 3, TIMING)


class Fakes:
    """A session on a fake stream and a fake clock, and the two fakes the test moves."""

    def __init__(
        self, stream: FakeStream | None = None, refusal: str | None = None, *, charge_every_decision: bool = False
    ) -> None:
        self.clock = FakeClock()
        self.stream = stream if stream is not None else FakeStream()
        self.transport = FakeTransport(self.stream, refusal)
        self.session = BotSession(
            BotSpec(name="fake", address="fake:0"),
            transport=self.transport,
            clock=self.clock,
            charge_every_decision=charge_every_decision,
        )

    async def ask(self, number: int, clock: TimeControl | None = None) -> asyncio.Task[Reply]:
        """Ask decision ``number`` and let the request go out: its deadline is set from the clock's time now."""
        request = pb.DecisionRequest(decision_number=number).SerializeToString()
        task = asyncio.ensure_future(self.session.decide(request, number, clock or TimeControl.of(TIMING)))
        await settle()
        assert not task.done(), "the decision ended before the bot said anything"
        return task

    async def reply_now(self, data: bytes) -> None:
        """The bot's message arrives and is read, the clock standing still."""
        self.stream.send(data)
        await settle()


def play(scenario: Callable[[Fakes], Awaitable[None]], fakes: Callable[[], Fakes] = Fakes) -> None:
    """Start a session on fakes (past its handshake), run ``scenario`` on it, stop it."""

    async def main() -> None:
        bot = fakes()
        await bot.session.start(SETUP)
        try:
            await scenario(bot)
        finally:
            await bot.session.stop()

    asyncio.run(main())


def assert_fault(reply: Reply, kind: FaultKind, detail: str) -> None:
    assert reply.action is None and reply.fault is not None
    assert (reply.fault.kind, reply.fault.detail, reply.fault.bot) == (kind, detail, "fake")


# ----- in time ---------------------------------------------------------------------------------------------


def test_a_prompt_reply_is_the_decision_charged_its_wall_time() -> None:
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(1)
        assert bot.stream.kinds() == ["handshake", "decision_request"]
        assert bot.stream.decision_requests[0].decision_number == 1
        bot.clock.advance(0.2)
        bot.stream.reply(1, "draw")
        reply = await task
        assert reply == Reply(Action.parse("draw"), 200.0, 200.0)
        assert bot.clock.next_timer is None  # the deadline's timer went with the decision
        assert bot.session.usable and (bot.session.late_replies, bot.session.unasked_replies) == (0, 0)

    play(scenario)


def test_a_reply_a_microsecond_before_the_deadline_is_in_time() -> None:
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(1)
        bot.clock.advance(LIMIT_S - MICROSECOND)
        bot.stream.reply(1)
        reply = await task
        assert reply.fault is None and reply.action == Action.parse("draw")
        assert reply.charged_ms == pytest.approx(800 - 0.001)
        assert bot.session.healthy

    play(scenario)


def test_a_reply_read_on_the_deadline_before_its_timer_runs_is_in_time_and_charged_the_whole_limit() -> None:
    # An event loop runs the I/O that is ready before the timers due: a reply and its deadline due at the same
    # moment, the reply is read first and the decision is the bot's.
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(1)
        bot.clock.advance(LIMIT_S, fire=False)
        await bot.reply_now(decision_bytes(1, "draw"))
        bot.clock.advance(0)  # the deadline's timer, too late: nothing happens
        reply = await task
        assert reply == Reply(Action.parse("draw"), 800.0, 800.0)
        assert bot.session.healthy

    play(scenario)


def test_the_deadline_reached_with_the_limit_charged_is_a_timeout() -> None:
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(1)
        bot.clock.advance(LIMIT_S)
        await settle()
        assert task.done(), "no timeout on the deadline"
        reply = await task
        assert_fault(reply, FaultKind.TIMEOUT, "no reply after 800 ms charged (limit 800 ms; 800 ms on the wall clock)")
        assert (reply.charged_ms, reply.wall_ms) == (800.0, 800.0)
        assert not bot.session.healthy and bot.session.connected  # it may be wedged, but the stream is open

    play(scenario)


def test_a_reply_a_microsecond_past_the_deadline_is_a_timeout_and_is_then_dropped_without_a_second_fault() -> None:
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(1)
        bot.clock.advance(LIMIT_S + MICROSECOND)
        await bot.reply_now(decision_bytes(1))
        reply = await task
        assert_fault(reply, FaultKind.TIMEOUT, "no reply after 800 ms charged (limit 800 ms; 800 ms on the wall clock)")
        assert (bot.session.late_replies, bot.session.unasked_replies) == (1, 0)

    play(scenario)


# ----- the honest clock: what is charged ---------------------------------------------------------------------


def answered_late_by_the_referee(wall_s: float, fakes: Callable[[], Fakes] = Fakes) -> Reply:
    """A decision answered after ``wall_s`` of wall time, in which the referee ran 100 ms late: its reply."""
    replies: list[Reply] = []

    async def scenario(bot: Fakes) -> None:
        bot.clock.lag = 0.1
        task = await bot.ask(1)
        bot.clock.advance(wall_s)
        bot.stream.reply(1)
        replies.append(await task)

    play(scenario, fakes)
    (reply,) = replies
    assert reply.fault is None
    return reply


@pytest.mark.parametrize(
    ("wall_s", "charged_ms"),
    [
        (0.3, 300.0),  # within the move time the figures are not read: the wall time, lag and all
        (0.5, 500.0),  # ... up to the move time itself
        (0.6, 500.0),  # past it, the referee's lag (100 ms) is not charged
    ],
)
def test_the_referees_lag_is_discounted_only_past_the_move_time(wall_s: float, charged_ms: float) -> None:
    reply = answered_late_by_the_referee(wall_s)
    assert (reply.charged_ms, reply.wall_ms) == (pytest.approx(charged_ms), pytest.approx(wall_s * 1000))


@pytest.mark.parametrize("wall_s", [0.05, 0.3, 0.6])
def test_a_session_that_charges_every_decision_discounts_the_referees_lag_within_the_move_time_too(
    wall_s: float,
) -> None:
    # As check-bot's candidate is charged: every decision by the honest clock.
    reply = answered_late_by_the_referee(wall_s, lambda: Fakes(charge_every_decision=True))
    assert (reply.charged_ms, reply.wall_ms) == (
        pytest.approx(max(0.0, wall_s - 0.1) * 1000),
        pytest.approx(wall_s * 1000),
    )


def test_a_deadline_reached_with_less_than_the_limit_charged_waits_for_what_is_left() -> None:
    async def scenario(bot: Fakes) -> None:
        bot.clock.lag = 0.1  # the referee ran 100 ms late: 700 ms charged at the deadline, 100 ms left
        task = await bot.ask(1)
        bot.clock.advance(LIMIT_S)
        await settle()
        assert not task.done()
        assert bot.clock.next_timer == pytest.approx(0.9)  # the deadline again, for what is left
        bot.clock.advance(0.05)
        bot.stream.reply(1)
        reply = await task
        assert reply.fault is None and (reply.charged_ms, reply.wall_ms) == (pytest.approx(750), pytest.approx(850))

    play(scenario)


def test_the_second_deadline_is_a_timeout_once_the_limit_is_charged() -> None:
    async def scenario(bot: Fakes) -> None:
        bot.clock.lag = 0.1
        task = await bot.ask(1)
        bot.clock.advance(1.0)
        reply = await task
        assert_fault(reply, FaultKind.TIMEOUT, "no reply after 800 ms charged (limit 800 ms; 900 ms on the wall clock)")
        assert (reply.charged_ms, reply.wall_ms) == (pytest.approx(800), pytest.approx(900))

    play(scenario)


def test_however_little_is_charged_the_referee_waits_no_longer_than_its_wall_clock_cap() -> None:
    cap_s = LIMIT_S * WALL_CAP_FACTOR + WALL_CAP_EXTRA_SECONDS  # 4.4 s

    async def scenario(bot: Fakes) -> None:
        bot.clock.lag = 1000.0  # nothing is ever charged
        task = await bot.ask(1)
        bot.clock.advance(cap_s - 0.01)
        await settle()
        assert not task.done()
        bot.clock.advance(0.01)
        reply = await task
        assert_fault(
            reply,
            FaultKind.TIMEOUT,
            "no reply after 4400 ms on the wall clock (0 ms charged; the referee waits at most 3 x the 800 ms limit + 2 s)",
        )
        assert reply.wall_ms == pytest.approx(cap_s * 1000)

    play(scenario)


@pytest.mark.parametrize(("grace_ms", "timeout"), [(0, True), (250, False)])
def test_grace_is_the_only_allowance_past_move_time_and_bank(grace_ms: int, timeout: bool) -> None:
    # A reply 300 ms after the request, with 200 ms to move and 50 ms of bank: late by 50 ms, which only a grace covers.
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(1, TimeControl(move_time_ms=200, bank_ms=50, grace_ms=grace_ms))
        bot.clock.advance(0.3)
        bot.stream.reply(1)
        reply = await task
        if timeout:
            assert_fault(
                reply, FaultKind.TIMEOUT, "no reply after 250 ms charged (limit 250 ms; 250 ms on the wall clock)"
            )
        else:
            assert reply.fault is None and reply.charged_ms == pytest.approx(
                300
            )  # waiting is charged: the bot's choice

    play(scenario)


# ----- stale, late, duplicate and unasked replies ------------------------------------------------------------------


def test_a_reply_to_a_decision_not_asked_is_stale_and_the_answer_that_follows_is_dropped() -> None:
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(3)
        await bot.reply_now(decision_bytes(1003))
        reply = await task
        assert_fault(reply, FaultKind.STALE, "replied to decision 1003, but decision 3 was asked")
        assert bot.session.healthy  # the bot answers: nothing suggests it is wedged
        await bot.reply_now(decision_bytes(3))  # its answer to decision 3, after all
        assert (bot.session.late_replies, bot.session.unasked_replies) == (1, 0)

    play(scenario)


def test_a_reply_sent_twice_is_dropped_before_the_next_request() -> None:
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(1)
        bot.stream.reply(1, "draw")
        bot.stream.reply(1, "draw")
        assert (await task).fault is None
        await settle()
        assert (bot.session.late_replies, bot.session.unasked_replies) == (1, 0)

    play(scenario)


def test_a_reply_sent_twice_is_dropped_after_the_next_request_and_the_next_decision_is_the_bots() -> None:
    async def scenario(bot: Fakes) -> None:
        first = await bot.ask(1)
        await bot.reply_now(decision_bytes(1, "draw"))
        assert (await first).fault is None
        second = await bot.ask(2)
        await bot.reply_now(decision_bytes(1, "draw"))  # the duplicate, once decision 2 is asked
        assert not second.done()
        bot.stream.reply(2, "take")
        assert (await second) == Reply(Action.parse("take"), 0.0, 0.0)
        assert (bot.session.late_replies, bot.session.unasked_replies) == (1, 0)

    play(scenario)


def test_a_reply_when_no_decision_was_asked_is_dropped() -> None:
    async def scenario(bot: Fakes) -> None:
        await bot.reply_now(decision_bytes(7))
        await bot.reply_now(b"\xff\xff")  # not even a message: nothing waits for it to fail
        assert (bot.session.late_replies, bot.session.unasked_replies) == (0, 2)
        task = await bot.ask(1)
        bot.stream.reply(1)
        assert (await task).fault is None

    play(scenario)


def test_a_new_game_forgets_the_decisions_of_the_last_so_a_reply_to_one_is_stale() -> None:
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(2)
        bot.stream.reply(2)
        assert (await task).fault is None
        bot.session.game_start(pb.GameStart())  # decision numbers start again at 1
        task = await bot.ask(1)
        await bot.reply_now(decision_bytes(2))  # decision 2 of the last game: not one of this game's
        assert_fault(await task, FaultKind.STALE, "replied to decision 2, but decision 1 was asked")
        assert bot.stream.kinds() == ["handshake", "decision_request", "game_start", "decision_request"]

    play(scenario)


def test_a_second_thought_that_comes_after_the_fault_notice_is_dropped() -> None:
    async def scenario(bot: Fakes) -> None:
        first = await bot.ask(1)
        await bot.reply_now(pb.PlayResponse(decision=pb.Decision(decision_number=1)).SerializeToString())  # no action
        reply = await first
        assert reply.fault is not None and reply.fault.kind is FaultKind.MALFORMED
        bot.session.fault_notice(pb.FaultNotice(decision_number=1))
        await bot.session.flush()
        await bot.reply_now(decision_bytes(1))  # its second thought on decision 1, after the notice
        second = await bot.ask(2)
        bot.stream.reply(2)
        assert (await second).fault is None
        assert bot.stream.kinds() == ["handshake", "decision_request", "fault_notice", "decision_request"]
        assert (bot.session.late_replies, bot.session.unasked_replies) == (1, 0)

    play(scenario)


def test_after_a_timeout_the_late_reply_is_dropped_no_notice_is_written_and_the_next_decision_is_asked() -> None:
    # A bot that timed out may have stopped reading: the game's notices are not written to it (they could block),
    # but its next decision is, within a write timeout.
    async def scenario(bot: Fakes) -> None:
        first = await bot.ask(1)
        bot.clock.advance(LIMIT_S)
        assert (await first).fault is not None
        bot.session.fault_notice(pb.FaultNotice(decision_number=1))
        await bot.session.flush()
        await bot.reply_now(decision_bytes(1))
        second = await bot.ask(2)
        bot.stream.reply(2)
        assert (await second).fault is None
        assert bot.stream.kinds() == ["handshake", "decision_request", "decision_request"]
        assert (bot.session.late_replies, bot.session.unasked_replies) == (1, 0)

    play(scenario)


# ----- malformed replies --------------------------------------------------------------------------------------


def _action_bytes(number: int, kind: int) -> bytes:
    return pb.PlayResponse(
        decision=pb.Decision(decision_number=number, action=pb.Action(kind=kind))
    ).SerializeToString()


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        (b"\xff\xfe\xfd", "sent 3 bytes that are not a PlayResponse"),
        (pb.PlayResponse().SerializeToString(), "sent an empty PlayResponse (neither handshake nor decision)"),
        (
            pb.PlayResponse(handshake=pb.HandshakeResponse(protocol_versions=[2])).SerializeToString(),
            "sent a handshake response where a decision was asked",
        ),
        (decision_bytes(1, error="ValueError: no"), f"{COULD_NOT_DECIDE}: ValueError: no"),
        (pb.PlayResponse(decision=pb.Decision(decision_number=1)).SerializeToString(), "empty action"),
        (_action_bytes(1, 99), "unknown action kind 99"),
    ],
    ids=["garbage", "empty-response", "handshake", "error", "no-action", "unknown-kind"],
)
def test_a_malformed_reply_fails_the_decision_and_the_stream_stays_usable(data: bytes, detail: str) -> None:
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(1)
        await bot.reply_now(data)
        reply = await task
        assert reply.fault is not None and reply.fault.kind is FaultKind.MALFORMED
        assert detail in reply.fault.detail
        assert bot.session.usable
        task = await bot.ask(2)
        bot.stream.reply(2)
        assert (await task).fault is None

    play(scenario)


# ----- the stream ends --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("end", "kind", "detail"),
    [
        (lambda stream: stream.end(), FaultKind.CRASH, f"{STREAM_BROKE}: the bot closed its stream"),
        (
            lambda stream: stream.fail(grpc.StatusCode.UNAVAILABLE, "Socket closed"),
            FaultKind.CRASH,
            f"{STREAM_BROKE}: UNAVAILABLE: Socket closed",
        ),
        (
            lambda stream: stream.fail(grpc.StatusCode.RESOURCE_EXHAUSTED, "too big"),
            FaultKind.MALFORMED,
            "a reply over the 1048576 byte limit broke the stream",
        ),
    ],
    ids=["closed", "broken", "reply-too-big"],
)
def test_a_stream_that_ends_while_a_decision_waits_fails_it_and_every_decision_after(
    end: Callable[[FakeStream], None], kind: FaultKind, detail: str
) -> None:
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(1)
        bot.clock.advance(0.1)
        end(bot.stream)
        reply = await task
        assert_fault(reply, kind, detail)
        assert reply.wall_ms == pytest.approx(100)
        assert not bot.session.connected and not bot.session.usable
        bot.clock.advance(LIMIT_S)  # the deadline's timer is gone: no timeout on top
        written = len(bot.stream.requests)
        assert_fault(await bot.session.decide(b"", 2, TimeControl.of(TIMING)), kind, detail)
        assert len(bot.stream.requests) == written  # nothing is written on a stream that is gone
        bot.session.game_end(b"")
        assert len(bot.stream.requests) == written

    play(scenario)


def test_a_stream_that_breaks_at_the_deadline_is_a_crash_not_a_timeout() -> None:
    async def scenario(bot: Fakes) -> None:
        task = await bot.ask(1)
        bot.clock.advance(LIMIT_S, fire=False)
        bot.stream.end()
        await settle()
        bot.clock.advance(0)
        assert_fault(await task, FaultKind.CRASH, f"{STREAM_BROKE}: the bot closed its stream")

    play(scenario)


def test_a_write_on_a_stream_that_broke_is_a_crash() -> None:
    async def scenario(bot: Fakes) -> None:
        bot.stream.write_error = grpc.aio.AioRpcError(
            grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "broken pipe"
        )
        reply = await bot.session.decide(b"", 1, TimeControl.of(TIMING))
        assert_fault(reply, FaultKind.CRASH, f"{STREAM_BROKE}: UNAVAILABLE: broken pipe")
        assert not bot.session.usable

    play(scenario)


def test_the_referee_ends_its_side_first_and_a_bot_that_ends_its_own_closes_cleanly() -> None:
    async def scenario() -> None:
        bot = Fakes()
        await bot.session.start(SETUP)
        bot.session.game_end(b"")
        await bot.session.stop()
        assert bot.stream.kinds() == ["handshake", "game_end"]  # the last notice went out first
        assert bot.stream.done_writing_called and bot.stream.cancelled and bot.transport.closed
        assert (bot.session.late_replies, bot.session.unasked_replies) == (0, 0)
        await bot.session.stop()  # twice is fine

    asyncio.run(scenario())


# ----- the handshake --------------------------------------------------------------------------------------------


def _handshake(versions: list[int], games: list[int]) -> bytes:
    response = pb.HandshakeResponse(protocol_versions=versions, games=games)
    return pb.PlayResponse(handshake=response).SerializeToString()


@pytest.mark.parametrize(
    ("fakes", "detail"),
    [
        (
            lambda: Fakes(FakeStream(_handshake([7], [GAME_TO_PB["stop_the_bus"]]))),
            f"speaks protocol versions 7; this referee speaks version {PROTOCOL_VERSION}",
        ),
        (
            lambda: Fakes(FakeStream(_handshake([PROTOCOL_VERSION], [GAME_TO_PB["bastard_brag"]]))),
            "does not play stop_the_bus (it plays: bastard_brag)",
        ),
        (lambda: Fakes(FakeStream(b"\x01\x02")), "sent 2 bytes that are not a PlayResponse"),
    ],
    ids=["protocol-version", "game", "garbage"],
)
def test_a_handshake_reply_the_referee_cannot_play_with_is_a_handshake_fault(
    fakes: Callable[[], Fakes], detail: str
) -> None:
    async def scenario() -> None:
        bot = fakes()
        with pytest.raises(BotFault) as raised:
            await bot.session.start(SETUP)
        assert raised.value.kind is FaultKind.HANDSHAKE and detail in raised.value.detail
        assert bot.transport.closed  # start stops what it started

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("code", "refusal"),
    [
        (grpc.StatusCode.UNIMPLEMENTED, None),  # the stream itself says so
        (grpc.StatusCode.INTERNAL, "UNIMPLEMENTED: Method not found!"),  # the probe says so
    ],
)
def test_a_bot_that_refuses_the_stream_is_told_the_protocol_moved(code: grpc.StatusCode, refusal: str | None) -> None:
    async def scenario() -> None:
        stream = FakeStream(handshake=None)  # no handshake reply: the stream fails instead
        bot = Fakes(stream, refusal=refusal)
        stream.fail(code, "Method not found!")
        with pytest.raises(BotFault) as raised:
            await bot.session.start(SETUP)
        assert raised.value.kind is FaultKind.HANDSHAKE
        assert "UNIMPLEMENTED: Method not found!" in raised.value.detail and V1_MOVED in raised.value.detail

    asyncio.run(scenario())


# ----- a game on the fakes: what a decision is charged comes out of the seat's bank ---------------------------


class PromptBot(FakeStream):
    """A bot that answers each decision at once with its first legal action, after ``thinking[n]`` seconds
    on the clock for its ``n``-th decision (from 1), no time for the others."""

    def __init__(self, clock: FakeClock, thinking: dict[int, float]) -> None:
        super().__init__()
        self.clock = clock
        self.thinking = thinking

    async def write(self, request: bytes) -> None:
        await super().write(request)
        message = self.requests[-1]
        if message.HasField("decision_request"):
            asked = message.decision_request
            self.clock.advance(self.thinking.get(len(self.decision_requests), 0.0))
            self.send(decision_bytes(asked.decision_number, action_from_pb(asked.legal_actions[0])))


def test_in_a_game_what_a_decision_is_charged_beyond_the_move_time_comes_out_of_the_seats_bank() -> None:
    # 200 ms to move, 800 ms of bank: seat 1 thinks 500 ms on its first decision, 300 ms over the move time,
    # and its next request says 500 ms of bank are left; its other decisions cost nothing, and so spend nothing.
    timing = Timing(move_time_ms=200, time_bank_ms=800, grace_ms=50)

    async def main() -> None:
        clock = FakeClock()
        streams = [PromptBot(clock, {}), PromptBot(clock, {1: 0.5})]
        sessions = [
            BotSession(BotSpec(name=f"fake{seat}", address="fake:0"), transport=FakeTransport(stream), clock=clock)
            for seat, stream in enumerate(streams)
        ]
        try:
            for session in sessions:
                await session.start(GameSetup("stop_the_bus", 2, timing))
            match = Match("stop_the_bus", sessions, seed=5, game_id="g", timing=timing, turn_limit=12)
            result = await match.play()
        finally:
            for session in sessions:
                await session.stop()
        assert result.faults == [Counter(), Counter()] and result.latencies_ms[1][0] == pytest.approx(500)
        banks = [request.time_bank_ms for request in streams[1].decision_requests]
        assert len(banks) >= 3 and banks[:3] == [800, 500, 500], banks
        assert match.clocks[1].bank_ms == 500 and match.clocks[0].bank_ms == 800

    asyncio.run(main())
