"""Information hiding end to end: a spy bot never receives a card its seat may not know.

A spy (``tests/bad_bots/spy.py``) plays leagues of both games against the
sample bots, in every seat, over real gRPC, and records every message its
stream carries: the handshake, each game's start, every DecisionRequest and
each game's end. Each
game's log (seed, first dealer, every decision's action) is then replayed
through the engine step by step, and at each of the spy's decisions the cards
its seat may know are derived from the rules (docs/rules.md, "What players
know" and "What each seat is shown"), from the engine's full state and the
actions played, never from ``Game.observation``:

- its own hand;
- every card that has lain face up in the current hand: the discard pile's
  cards, discards taken, the centre's face-up cards, cards exchanged face up;
- in Bastard Brag, a face-down centre card it put there itself, while it
  stays in that slot;
- cards shown at a hand's showdown (the SHOWDOWN event's revealed hands).

Knowledge is of cards *in a hand*: every hand is a fresh deck, so a card
public in hand 2 says nothing of where it lies in hand 3. A card in a public
event may therefore only be one that was public in that event's hand (by the
time of the message), and a card anywhere else in a request (the observation,
the legal actions, the default action) only one the seat knows in the
current hand. Every Card message anywhere in every recorded message is
checked, found by walking all fields, so a card added to a new field is
checked too.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from referee.apps.league import GAME_LOG_DIR, run_league
from referee.engine.cards import DECK, Card, format_cards, parse_cards
from referee.engine.games import BastardBrag, Game, StopTheBus, game_class
from referee.engine.games.game import Action, ActionKind
from referee.leaguefile.config import load_league
from referee.leaguefile.lanes import LANES_DIR
from referee.protocol.messages import GAME_TO_PB, card_to_pb
from referee.records.gamelog import log_files
from referee.v2 import bot_pb2 as pb
from tests.conftest import BAD_BOTS, SAMPLE_BOTS, Bots

SPY = "spy"
FACE_UP_SLOT = 2
FACE_DOWN_SLOTS = (0, 1)
# Opponents in the order they join the spy at a table; names must be unique, programs may repeat.
OPPONENTS = [
    ("heuristic", "heuristic"),
    ("random", "random"),
    ("heuristic-2", "heuristic"),
    ("random-2", "random"),
    ("heuristic-3", "heuristic"),
]


@dataclass(frozen=True)
class LeagueSetup:
    """One league for the spy: every rotation seats it in every seat once a round."""

    game: str
    table_size: int
    rounds: int
    seed: int

    @property
    def games(self) -> int:
        return self.table_size * self.rounds  # one table: the spy and its opponents

    def __str__(self) -> str:
        return f"{self.game}-{self.table_size}p"


# 27 games of Stop the Bus and 24 of Bastard Brag, at the smallest table and a larger one: the spy in every seat
# at least twice.
LEAGUES = [
    LeagueSetup("stop_the_bus", 2, 6, seed=101),
    LeagueSetup("stop_the_bus", 5, 3, seed=102),
    LeagueSetup("bastard_brag", 3, 4, seed=103),
    LeagueSetup("bastard_brag", 6, 2, seed=104),
]


# ----- the cards in a message -------------------------------------------------------------------


def cards_in(message, path: str = "") -> Iterator[tuple[str, pb.Card]]:
    """Every Card message anywhere inside ``message``, with its field path (``events[2].taken``)."""
    if message.DESCRIPTOR is pb.Card.DESCRIPTOR:
        yield path, message
        return
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        name = f"{path}.{descriptor.name}" if path else descriptor.name
        if descriptor.is_repeated:
            for index, item in enumerate(value):
                yield from cards_in(item, f"{name}[{index}]")
        else:
            yield from cards_in(value, name)


def card_of(message: pb.Card) -> Card | None:
    """The engine's card for a Card message, or ``None`` if it holds no valid card."""
    if 2 <= message.rank <= 14 and 1 <= message.suit <= 4:
        return DECK[(message.rank - 2) * 4 + message.suit - 1]
    return None


def shown_card(message, name: str) -> Card | None:
    """The card in field ``name`` of ``message``, or ``None`` when the field is unset."""
    return card_of(getattr(message, name)) if message.HasField(name) else None


def event_index(path: str) -> int | None:
    """``2`` for a path inside ``events[2]``; ``None`` outside the events."""
    if not path.startswith("events["):
        return None
    return int(path[len("events[") : path.index("]")])


# ----- the truth: a game replayed from its log ------------------------------------------------


class Truth:
    """One game replayed through the engine from its log, with what each seat may know at each moment."""

    def __init__(self, start: dict) -> None:
        decks = [parse_cards(deck) for deck in start["decks"]] if start.get("decks") else None
        self.game: Game = game_class(start["game"])(
            start["num_players"],
            start["seed"],
            first_dealer=start["first_dealer"],
            decks=decks,
            turn_limit=start["turn_limit"],
        )
        self.is_brag = isinstance(self.game, BastardBrag)
        self.face_up: dict[int, set[Card]] = defaultdict(set)  # hand number -> every card face up in it so far
        # Bastard Brag, the current hand: the seat that put the card now in each face-down slot (None: the deal).
        self.placed_by: list[int | None] = [None, None]
        # Bastard Brag, the current hand: card -> (seat that put it face down, seat that then took it).
        self.taken_from_under: dict[Card, tuple[int, int]] = {}
        self._note_face_up()

    # ----- replaying ------------------------------------------------------------------

    def play(self, act: Action) -> None:
        """Apply the current seat's action, tracking what it shows and what it hides."""
        game = self.game
        hand, seat = game.hand_number, game.current_seat
        if (
            act.kind is ActionKind.DISCARD
            or act.kind is ActionKind.EXCHANGE_ALL
            or (act.kind is ActionKind.EXCHANGE and act.slot == FACE_UP_SLOT)
        ):
            # The card played lies face up (noted here too, as the action may end the hand).
            self.face_up[hand].add(act.card)
        if self.is_brag and act.kind is ActionKind.EXCHANGE and act.slot in FACE_DOWN_SLOTS:
            self._take_from_under(act.slot, seat)
            self.placed_by[act.slot] = seat
        elif act.kind is ActionKind.EXCHANGE_ALL:
            for slot in FACE_DOWN_SLOTS:
                self._take_from_under(slot, seat)
            self.placed_by = [seat, seat]
        game.apply(act)
        self._after(hand)

    def forfeit(self, seat: int, reason: str) -> None:
        hand = self.game.hand_number
        self.game.forfeit(seat, reason)
        self._after(hand)

    def _take_from_under(self, slot: int, taker: int) -> None:
        placer = self.placed_by[slot]
        if placer is not None and placer != taker:
            self.taken_from_under[self.game.centre[slot]] = (placer, taker)

    def _after(self, hand_before: int) -> None:
        if self.game.hand_number != hand_before:
            self.placed_by = [None, None]
            self.taken_from_under = {}
        self._note_face_up()

    def _note_face_up(self) -> None:
        game = self.game
        if isinstance(game, StopTheBus):
            self.face_up[game.hand_number].update(game.discard_pile)
        else:
            self.face_up[game.hand_number].add(game.centre[FACE_UP_SLOT])

    # ----- knowledge -------------------------------------------------------------------

    def may_know(self, seat: int) -> set[Card]:
        """Every card ``seat`` may know in the current hand, by the rules."""
        game = self.game
        known = set(game.hands[seat]) | self.face_up[game.hand_number]
        if self.is_brag:
            known |= {game.centre[slot] for slot in FACE_DOWN_SLOTS if self.placed_by[slot] == seat}
        return known

    def lost_track_of(self, seat: int) -> list[Card]:
        """Bastard Brag: cards ``seat`` put face down that another seat took, and that ``seat`` may not know now."""
        known = self.may_know(seat)
        return [
            card
            for card, (placer, taker) in self.taken_from_under.items()
            if placer == seat and card in self.game.hands[taker] and card not in known
        ]

    def revealed(self, hand: int) -> set[Card]:
        """The cards shown at the showdown of ``hand`` (none before it ends)."""
        results = self.game.hand_results
        if hand > len(results):
            return set()
        return {card for cards in results[hand - 1].hands.values() for card in cards}

    def public(self, hand: int) -> set[Card]:
        """Every card of ``hand`` that everybody may know: what lay face up, and the showdown."""
        return self.face_up[hand] | self.revealed(hand)

    def whereabouts(self, card: Card) -> str:
        """Where ``card`` lies now in the current hand, for messages."""
        game = self.game
        for seat, hand in enumerate(game.hands):
            if card in hand:
                if card in self.taken_from_under:
                    placer, taker = self.taken_from_under[card]
                    return f"in seat {seat}'s hand, taken from face down where seat {placer} had put it"
                return f"in seat {seat}'s hand"
        if isinstance(game, StopTheBus):
            if card in game.stock:
                return "in the stock"
            if card in game.discard_pile:
                return "in the discard pile"
        else:
            if card in game.centre[:FACE_UP_SLOT]:
                slot = game.centre.index(card)
                placer = self.placed_by[slot]
                by = "the deal" if placer is None else f"seat {placer}"
                return f"face down in centre slot {slot}, put there by {by}"
            if card in game.set_aside:
                return "set aside, undealt"
        if card in game.out_of_play:
            return "out of play with a forfeited hand"
        return "nowhere in this hand"


# ----- the checks ---------------------------------------------------------------------------------


def unknowable_cards(request: pb.DecisionRequest, truth: Truth, seat: int) -> list[str]:
    """Every card ``request`` names that ``seat`` may not know there, with the field and where it lies."""
    current_hand = truth.game.hand_number
    known = truth.may_know(seat)
    problems = []
    for path, message in cards_in(request):
        card = card_of(message)
        if card is None:
            problems.append(f"{path}: rank {message.rank}, suit {message.suit} is not a card")
            continue
        index = event_index(path)
        if index is not None:
            hand = request.events[index].hand_number
            if card not in truth.public(hand):
                where = truth.whereabouts(card) if hand == current_hand else f"hand {hand} is over"
                problems.append(f"{path}: {card}, in a public event of hand {hand}, was never public ({where})")
        elif card not in known:
            problems.append(f"{path}: {card}, which seat {seat} may not know ({truth.whereabouts(card)})")
    return problems


def misshown(request: pb.DecisionRequest, truth: Truth, seat: int) -> list[str]:
    """Every way ``request`` shows ``seat`` its own hand, or the table, other than as they are."""
    game = truth.game
    obs = request.observation
    problems = []
    if (request.seat, obs.seat) != (seat, seat):
        problems.append(f"seat {request.seat} (observation.seat {obs.seat}) instead of {seat}")
    if obs.hand_number != game.hand_number:
        problems.append(f"hand {obs.hand_number} instead of {game.hand_number}")
    shown = [card_of(card) for card in obs.hand]
    if None in shown or sorted(shown) != sorted(game.hands[seat]):
        problems.append(
            f"observation.hand is {[str(card) for card in shown]}, the seat holds {format_cards(game.hands[seat])}"
        )
    # Each place of the table view: (what the request shows there, what lies there for this seat to see).
    if isinstance(game, StopTheBus):
        view = obs.stop_the_bus
        places = {
            "discard_top": (shown_card(view, "discard_top"), game.discard_pile[-1] if game.discard_pile else None),
            # It is this seat's decision, so a pending draw or take is its own.
            "drawn_card": (shown_card(view, "drawn_card"), game.pending[1] if game.pending else None),
            "took_discard": (view.took_discard, game.pending is not None and game.pending[0].kind is ActionKind.TAKE),
        }
    else:
        slots = {entry.slot: entry for entry in obs.bastard_brag.centre}
        if sorted(slots) != [0, 1, 2] or len(obs.bastard_brag.centre) != 3:
            problems.append(f"observation.bastard_brag.centre has slots {sorted(slots)}, not 0, 1, 2")
        places = {
            f"centre slot {slot}": (
                shown_card(slots[slot], "card") if slot in slots else None,
                game.centre[slot] if slot == FACE_UP_SLOT or truth.placed_by[slot] == seat else None,
            )
            for slot in range(3)
        }
    for place, (shown, expected) in places.items():
        if shown != expected:
            problems.append(f"observation {place} shows {shown}, expected {expected}")
    return problems


def other_message_problems(message: pb.PlayRequest, truth: Truth) -> list[str]:
    """Every card a message other than a decision request names beyond what the game made public.

    A game's start and a fault notice name no card (the bots here make no
    fault); a game's end names cards only in its public events, each public
    in its hand (every hand is over by then: its showdown's hands are public).
    """
    kind = message.WhichOneof("message")
    problems = []
    for path, card_message in cards_in(message):
        card = card_of(card_message)
        index = event_index(path.removeprefix(f"{kind}."))
        if kind != "game_end" or index is None:
            problems.append(f"{kind}: {path}: {card} in a message that shows no card")
            continue
        hand = message.game_end.events[index].hand_number
        if card not in truth.public(hand):
            problems.append(f"{kind}: {path}: {card}, in a public event of hand {hand}, was never public")
    return problems


def showdown_problems(event: pb.Event, truth: Truth) -> list[str]:
    """A showdown event whose revealed hands are not exactly those the showdown compared."""
    hand = event.hand_number
    shown = {
        entry.seat: format_cards(sorted(card_of(card) for card in entry.cards))
        for entry in event.showdown.hands
        if all(card_of(card) for card in entry.cards)
    }
    expected = {seat: format_cards(sorted(cards)) for seat, cards in truth.game.hand_results[hand - 1].hands.items()}
    return (
        [] if shown == expected else [f"showdown of hand {hand} shows hands {shown}; the showdown compared {expected}"]
    )


# ----- what the spy recorded --------------------------------------------------------------------


@dataclass
class Recording:
    """Everything the spy processes of one league were given."""

    processes: int
    handshakes: list[pb.Handshake] = field(default_factory=list)
    decisions: dict[str, dict[int, pb.DecisionRequest]] = field(default_factory=lambda: defaultdict(dict))
    others: dict[str, list[pb.PlayRequest]] = field(default_factory=lambda: defaultdict(list))  # starts, ends, notices


def read_spy_records(directories: list[Path]) -> Recording:
    files = sorted(path for directory in directories for path in directory.glob("spy-*.jsonl"))
    recording = Recording(processes=len(files))
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            message = pb.PlayRequest.FromString(base64.b64decode(json.loads(line)["message"]))
            kind = message.WhichOneof("message")
            if kind == "handshake":
                recording.handshakes.append(message.handshake)
            elif kind == "decision_request":
                request = message.decision_request
                asked = recording.decisions[request.game_id]
                assert request.decision_number not in asked, f"decision {request.decision_number} asked twice"
                asked[request.decision_number] = request
            else:
                recording.others[getattr(message, kind).game_id].append(message)
    return recording


@dataclass
class PlayedLeague:
    setup: LeagueSetup
    logs: list[Path]
    recording: Recording


@pytest.fixture(scope="module", params=LEAGUES, ids=str)
def league(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlayedLeague]:
    """One league with the spy, played once for every test of this module, with conftest's leak checks."""
    setup: LeagueSetup = request.param
    folder = tmp_path_factory.mktemp(str(setup))
    socket_root = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))  # short: a Unix socket path has 108 bytes
    bots = Bots(socket_root)
    records = folder / "spy"
    records.mkdir()
    entries = [(SPY, bots.command(BAD_BOTS / "spy.py", "--record-dir", str(records)))]
    entries += [
        (name, bots.command(SAMPLE_BOTS / f"{program}_bot.py")) for name, program in OPPONENTS[: setup.table_size - 1]
    ]
    lines = [
        f"name: spy-{setup}",
        f"game: {setup.game}",
        f"seed: {setup.seed}",
        f"table_size: {setup.table_size}",
        f"rounds: {setup.rounds}",
        "move_time_ms: 2000",  # roomy, so that a busy machine causes no faults
        "time_bank_ms: 20000",
        "startup_timeout_ms: 10000",
        "concurrency: 2",
        # Under default_action every request carries a default action, which is checked too.
        "fault_policy: {mode: default_action, max_faults: 3}",
        "bots:",
    ]
    for name, command in entries:
        lines += [f"  - name: {name}", f"    command: {json.dumps(command)}"]
        lines.append(f"    env: {{REFEREE_TEST_MARKER: {bots.marker}}}")
        if name == SPY:
            lines.append(f"    shared: [{json.dumps(str(records))}]")  # where it records, from its sandbox
    league_path = folder / "league.yaml"
    league_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = folder / "results"
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(tempfile, "tempdir", str(socket_root))
            summary = asyncio.run(run_league(load_league(league_path), output=output))
        assert summary.played == setup.games
        # The spy's processes of lanes after the first recorded into their lane's copy of its folder (referee.leaguefile.lanes).
        lanes = sorted((output / LANES_DIR / SPY).glob("lane-*/*"))
        yield PlayedLeague(setup, log_files(output / GAME_LOG_DIR), read_spy_records([records, *lanes]))
    finally:
        leftovers = bots.leftovers()
        bots.kill_leftovers()
        remaining_dirs = sorted(path.name for path in socket_root.iterdir())
        shutil.rmtree(socket_root, ignore_errors=True)
    assert not leftovers, "bot processes outlived the league:\n" + "\n".join(leftovers)
    assert not remaining_dirs, f"private socket directories were not removed: {remaining_dirs}"


# ----- replaying a game with the spy's messages --------------------------------------------------


@dataclass
class Audit:
    """What checking one league found, and how much it checked."""

    leaks: list[str] = field(default_factory=list)
    misshown: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    spy_seats: set[int] = field(default_factory=set)
    decisions: int = 0
    notifications: int = 0  # game starts and ends
    showdowns: int = 0
    cards: int = 0
    drawn_from_stock: int = 0  # Stop the Bus: requests showing the spy a card it drew from the stock
    own_face_down: int = 0  # Bastard Brag: requests showing the spy a face-down card it put there
    lost_track: int = 0  # Bastard Brag: requests after another seat took a card the spy had put face down


def read_log(path: Path) -> list[dict]:
    from referee.records.gamelog import read_log as read_game_log

    return read_game_log(path)


def spy_decisions(log: list[dict]) -> Iterator[tuple[int, Truth]]:
    """Replay a game log; before each decision asked of the spy, yield its number and the truth then."""
    truth = Truth(log[0])
    spy = log[0]["players"].index(SPY)
    seen: set[int] = set()
    for record in log[1:]:
        kind, number = record["type"], record.get("n")
        if kind in ("decision", "fault") and record["seat"] == spy and number is not None and number not in seen:
            seen.add(number)  # a fault comes before the default action or forfeit that follows it
            yield number, truth
        if kind == "decision":
            assert record["seat"] == truth.game.current_seat, f"decision {number}: not this seat's turn"
            truth.play(Action.parse(record["action"]))
        elif kind == "forfeit":
            truth.forfeit(record["seat"], record["reason"])
    assert truth.game.is_over
    yield -1, truth  # the game's end: its other messages are checked against the whole game


def audit(league: PlayedLeague) -> Audit:
    found = Audit()
    decisions, notifications = dict(league.recording.decisions), dict(league.recording.others)
    for path in league.logs:
        log = read_log(path)
        game_id, spy = log[0]["game_id"], log[0]["players"].index(SPY)
        found.spy_seats.add(spy)
        asked = dict(decisions.pop(game_id, {}))
        for number, truth in spy_decisions(log):
            if number == -1:
                break
            request = asked.pop(number, None)
            if request is None:
                found.missing.append(f"{game_id}: decision {number} was never recorded by the spy")
                continue
            where = f"{game_id} decision {number} (hand {truth.game.hand_number}, seat {spy})"
            found.leaks += [f"{where}: {problem}" for problem in unknowable_cards(request, truth, spy)]
            found.misshown += [f"{where}: {problem}" for problem in misshown(request, truth, spy)]
            found.decisions += 1
            found.cards += sum(1 for _ in cards_in(request))
            view = request.observation
            found.drawn_from_stock += view.stop_the_bus.HasField("drawn_card") and not view.stop_the_bus.took_discard
            found.own_face_down += any(
                slot.HasField("card") for slot in view.bastard_brag.centre if slot.slot != FACE_UP_SLOT
            )
            found.lost_track += bool(truth.lost_track_of(spy))
            for event in request.events:
                if event.kind == pb.EVENT_KIND_SHOWDOWN:
                    found.showdowns += 1
                    found.leaks += [f"{where}: {problem}" for problem in showdown_problems(event, truth)]
        found.missing += [f"{game_id}: decision {number} recorded, but not the spy's in the log" for number in asked]
        notes = notifications.pop(game_id, [])
        kinds = [note.WhichOneof("message") for note in notes]
        if kinds != ["game_start", "game_end"]:
            found.missing.append(f"{game_id}: other messages {kinds}, expected a game start and a game end")
        for note in notes:
            found.leaks += [f"{game_id}: {problem}" for problem in other_message_problems(note, truth)]
            if note.WhichOneof("message") == "game_end":
                for event in note.game_end.events:
                    if event.kind == pb.EVENT_KIND_SHOWDOWN:
                        found.showdowns += 1
                        found.leaks += [f"{game_id} game end: {problem}" for problem in showdown_problems(event, truth)]
            found.cards += sum(1 for _ in cards_in(note))
            found.notifications += 1
    found.missing += [f"{game_id}: decisions recorded for a game with no log" for game_id in decisions]
    found.missing += [f"{game_id}: notifications recorded for a game with no log" for game_id in notifications]
    return found


@pytest.fixture(scope="module")
def checked(league: PlayedLeague) -> Audit:
    return audit(league)


# ----- the tests ------------------------------------------------------------------------------------


def test_the_spy_played_every_game_in_every_seat_and_recorded_every_message(
    league: PlayedLeague, checked: Audit
) -> None:
    setup = league.setup
    assert len(league.logs) == setup.games
    assert checked.spy_seats == set(range(setup.table_size))
    assert checked.missing == []
    assert checked.decisions >= setup.games * 3
    assert checked.notifications == setup.games * 2  # started, over
    # Every seat is shown every showdown once (three lives: at least three showdowns a game).
    assert checked.showdowns >= setup.games * 3
    handshakes = league.recording.handshakes
    assert len(handshakes) == league.recording.processes >= 1
    for handshake in handshakes:
        assert (handshake.game, handshake.num_players) == (GAME_TO_PB[setup.game], setup.table_size)
        assert list(cards_in(handshake)) == []


def test_no_message_to_the_spy_names_a_card_its_seat_may_not_know(league: PlayedLeague, checked: Audit) -> None:
    assert checked.leaks == [], f"{len(checked.leaks)} leaks, the first:\n" + "\n".join(checked.leaks[:20])
    assert checked.cards > checked.decisions  # the walk found the cards: at least the hand of every request
    # The cases where hiding matters most were reached, so the check above is not empty.
    if league.setup.game == "stop_the_bus":
        assert checked.drawn_from_stock > 0
    else:
        assert checked.own_face_down > 0
        assert checked.lost_track > 0


def test_the_spy_is_shown_exactly_its_own_hand_and_the_table(league: PlayedLeague, checked: Audit) -> None:
    assert checked.misshown == [], "\n".join(checked.misshown[:20])


# ----- the checker can fail -------------------------------------------------------------------------


def first_spy_decision(league: PlayedLeague) -> tuple[pb.DecisionRequest, Truth, int]:
    """The first request of the league's first game, with the truth at that moment."""
    log = read_log(league.logs[0])
    game_id, spy = log[0]["game_id"], log[0]["players"].index(SPY)
    number, truth = next(spy_decisions(log))
    return league.recording.decisions[game_id][number], truth, spy


def another_seats_hidden_card(truth: Truth, spy: int) -> Card:
    """A card in another seat's hand that the spy may not know."""
    game, known = truth.game, truth.may_know(spy)
    return next(card for seat in game.seats_in_game if seat != spy for card in game.hands[seat] if card not in known)


def undealt_card(truth: Truth, spy: int) -> Card:
    """A card nobody has seen: in the stock, or set aside in Bastard Brag."""
    game, known = truth.game, truth.may_know(spy)
    undealt = game.stock if isinstance(game, StopTheBus) else game.set_aside
    return next(card for card in undealt if card not in known)


def leak_into_event(request: pb.DecisionRequest, card: Card) -> str:
    event = request.events.add(kind=pb.EVENT_KIND_DISCARD, hand_number=request.observation.hand_number, seat=0)
    card_to_pb(card, event.card)
    return f"events[{len(request.events) - 1}].card"


def leak_into_legal_action(request: pb.DecisionRequest, card: Card) -> str:
    card_to_pb(card, request.legal_actions.add(kind=pb.ACTION_KIND_DISCARD).card)
    return f"legal_actions[{len(request.legal_actions) - 1}].card"


def leak_into_default_action(request: pb.DecisionRequest, card: Card) -> str:
    request.default_action.kind = pb.ACTION_KIND_EXCHANGE
    card_to_pb(card, request.default_action.card)
    return "default_action.card"


def leak_into_view(request: pb.DecisionRequest, card: Card) -> str:
    """The view's hidden place: the drawn card, or a face-down centre slot."""
    if request.observation.WhichOneof("view") == "stop_the_bus":
        card_to_pb(card, request.observation.stop_the_bus.drawn_card)
        return "observation.stop_the_bus.drawn_card"
    card_to_pb(card, request.observation.bastard_brag.centre[0].card)
    return "observation.bastard_brag.centre[0].card"


def leak_into_hand(request: pb.DecisionRequest, card: Card) -> str:
    card_to_pb(card, request.observation.hand.add())
    return f"observation.hand[{len(request.observation.hand) - 1}]"


LEAKS = [leak_into_event, leak_into_legal_action, leak_into_default_action, leak_into_view, leak_into_hand]


@pytest.mark.parametrize("hidden", ["another seat's card", "an undealt card"], ids=["other-seat", "undealt"])
@pytest.mark.parametrize("leak", LEAKS, ids=lambda leak: leak.__name__)
def test_the_checker_flags_a_card_leaked_into_a_recorded_request(league: PlayedLeague, leak, hidden: str) -> None:
    request, truth, spy = first_spy_decision(league)
    assert unknowable_cards(request, truth, spy) == []
    card = another_seats_hidden_card(truth, spy) if hidden == "another seat's card" else undealt_card(truth, spy)
    doctored = pb.DecisionRequest()
    doctored.CopyFrom(request)
    path = leak(doctored, card)
    problems = unknowable_cards(doctored, truth, spy)
    assert len(problems) == 1 and problems[0].startswith(f"{path}: {card}"), problems
    if leak is leak_into_hand:
        assert any("observation.hand is" in problem for problem in misshown(doctored, truth, spy))


@pytest.mark.parametrize("league", [setup for setup in LEAGUES if setup.game == "bastard_brag"], indirect=True, ids=str)
def test_the_checker_flags_a_card_the_seat_put_face_down_once_taken_by_another(league: PlayedLeague) -> None:
    for path in league.logs:
        log = read_log(path)
        spy = log[0]["players"].index(SPY)
        for number, truth in spy_decisions(log):
            lost = truth.lost_track_of(spy) if number != -1 else []
            if lost:
                request = league.recording.decisions[log[0]["game_id"]][number]
                doctored = pb.DecisionRequest()
                doctored.CopyFrom(request)
                where = leak_into_view(doctored, lost[0])
                problems = unknowable_cards(doctored, truth, spy)
                assert problems == [f"{where}: {lost[0]}, which seat {spy} may not know ({truth.whereabouts(lost[0])})"]
                assert "taken from face down where seat" in problems[0]
                return
    pytest.fail("the spy never lost track of a card it put face down")


def test_the_checker_flags_a_showdown_showing_other_cards_than_it_compared(league: PlayedLeague) -> None:
    log = read_log(league.logs[0])
    *_, (_, truth) = spy_decisions(log)
    game_id = log[0]["game_id"]
    requests = [*league.recording.decisions[game_id].values()]
    showdown = next(event for request in requests for event in request.events if event.kind == pb.EVENT_KIND_SHOWDOWN)
    assert showdown_problems(showdown, truth) == []
    hand = showdown.hand_number
    unseen = next(card for card in DECK if card not in truth.public(hand))
    doctored = pb.Event()
    doctored.CopyFrom(showdown)
    card_to_pb(unseen, doctored.showdown.hands[0].cards[0])
    assert showdown_problems(doctored, truth)[0].startswith(f"showdown of hand {hand} shows hands")
    # In a game's end, a card that was never public is flagged where it lies.
    end = next(note for note in league.recording.others[game_id] if note.WhichOneof("message") == "game_end")
    assert other_message_problems(end, truth) == []
    doctored_end = pb.PlayRequest()
    doctored_end.CopyFrom(end)
    card_to_pb(unseen, doctored_end.game_end.events.add(kind=pb.EVENT_KIND_DISCARD, hand_number=hand).card)
    problems = other_message_problems(doctored_end, truth)
    assert len(problems) == 1 and f"{unseen}, in a public event of hand {hand}, was never public" in problems[0]
    start = next(note for note in league.recording.others[game_id] if note.WhichOneof("message") == "game_start")
    assert other_message_problems(start, truth) == []
