"""A bot that remembers every card it is shown and guesses, from its memory, what the referee hides.

It plays Stop the Bus (drawing from the stock, discarding at random, stopping
after three rounds), and remembers, for every hand of every game its process
plays, the hand it was dealt in its seat and each card it drew from the stock
with the stock's position. A hand is known again by its deal event (the
hand's number, its dealer and its first face-up card: the same in every
rotation of a table, which share the seed), checked against its own new hand
(no card of it may be one the memory gives another seat).

Then it guesses: on its first decision of each hand, every opponent's dealt
hand (from a remembered deal when it has one, else three unseen cards at
random), and before each draw, the card it will draw (likewise). Each guess
goes to stderr, its log, as a line ``REMEMBER {json}``:

- ``{"game", "process"}`` at each game's start (``process``: a token of this process);
- ``{"guess": "hand", "game", "hand", "seat", "cards", "memory"}``;
- ``{"guess": "stock", "game", "n", "card", "memory"}`` (``n``: the decision that draws it).

With ``--memory-dir DIR`` (a folder shared with it) it also keeps its memory
there, one file per process, and reads every process's at each game's start:
what it learned outlives the process, as a bot's learning in its ``shared:``
folder does.

A test scores the guesses against the game logs: with one process per lane
(referee.leaguefile.lanes) a guess is right about as often as chance allows.
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from referee.engine.cards import DECK
from referee.engine.games import Action, Observation
from referee.engine.games.game import ActionKind, EventKind
from referee.play.kit import BotServicer, bot_address, serve

STOP_AFTER_ROUNDS = 3


@dataclass
class Deal:
    """What one hand of one game showed this process: the dealt hands it saw and the stock cards it drew."""

    game: str
    dealt: dict[int, frozenset[str]] = field(default_factory=dict)  # seat -> cards dealt there
    stock: dict[int, str] = field(default_factory=dict)  # position in the stock (draws before it) -> card


class Rememberer(BotServicer):
    def __init__(self, memory_dir: str | None) -> None:
        super().__init__(self.choose, "rememberer", "1.0", ("stop_the_bus",), on_game_start=self.started)
        self.memory_dir = Path(memory_dir) if memory_dir else None
        self.process = secrets.token_hex(6)
        self.memory: dict[tuple, list[Deal]] = {}  # (players, hand number, dealer, first face-up card) -> deals
        self.game_id = ""
        self.deals: dict[int, Deal] = {}  # this game's, by hand number
        self.drawing: tuple[int, int] | None = None  # (hand, stock position) of a draw whose card is not yet seen
        self.number = 0
        self.random = random.Random()

    def started(self, message) -> None:
        self.game_id = message.game_id
        self.deals = {}
        self.drawing = None
        self.random = random.Random(f"{message.game_id}/{self.process}")
        report({"game": message.game_id, "process": self.process})
        if self.memory_dir is not None:
            self.read_memories()

    def read_memories(self) -> None:
        """Take in what every process left in the memory folder (this one's own included: it is already known)."""
        known = {(key, deal.game) for key, deals in self.memory.items() for deal in deals}
        for path in sorted(self.memory_dir.glob("memory-*.json")):
            try:
                entries = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # being written
            for entry in entries:
                key = tuple(entry["key"])
                if (key, entry["game"]) not in known:
                    dealt = {int(seat): frozenset(cards) for seat, cards in entry["dealt"].items()}
                    stock = {int(position): card for position, card in entry["stock"].items()}
                    self.memory.setdefault(key, []).append(Deal(entry["game"], dealt, stock))

    def write_memory(self) -> None:
        if self.memory_dir is None:
            return
        entries = [
            {"key": list(key), **asdict(deal), "dealt": {seat: sorted(cards) for seat, cards in deal.dealt.items()}}
            for key, deals in self.memory.items()
            for deal in deals
        ]
        path = self.memory_dir / f"memory-{self.process}.json"
        temporary = path.with_suffix(".part")
        temporary.write_text(json.dumps(entries), encoding="utf-8")
        temporary.replace(path)

    def decision_response(self, request):
        self.number = request.decision_number
        return super().decision_response(request)

    def choose(self, obs: Observation) -> Action:
        deal_event = next(event for event in obs.hand_events if event.kind is EventKind.DEAL)
        key = (obs.num_players, obs.hand_number, deal_event.seat, str(deal_event.card))
        hand = frozenset(map(str, obs.hand))
        deal = self.deals.get(obs.hand_number)
        if deal is None:  # this hand's first decision: the cards held are the cards dealt
            deal = self.deals[obs.hand_number] = Deal(self.game_id, {obs.seat: hand})
            self.memory.setdefault(key, []).append(deal)
            self.guess_hands(obs, self.recall(key, obs.seat, hand), hand | {str(deal_event.card)})
            self.write_memory()
        kinds = {action.kind: action for action in obs.legal_actions}
        if self.drawing is not None and obs.drawn_card is not None and not obs.took_discard:
            drawn_hand, position = self.drawing
            if drawn_hand == obs.hand_number:
                deal.stock[position] = str(obs.drawn_card)
                self.write_memory()
        self.drawing = None
        if ActionKind.DISCARD in kinds:
            return self.random.choice([action for action in obs.legal_actions if action.kind is ActionKind.DISCARD])
        if ActionKind.STOP in kinds and obs.turns_this_hand >= STOP_AFTER_ROUNDS * obs.num_players:
            return kinds[ActionKind.STOP]
        if ActionKind.DRAW in kinds:
            self.guess_stock(obs, self.recall(key, obs.seat, hand), hand)
            return kinds[ActionKind.DRAW]
        return obs.legal_actions[0]

    def recall(self, key: tuple, seat: int, hand: frozenset[str]) -> Deal | None:
        """All that other games with this hand's key showed, from those whose other seats' cards are not in ``hand``."""
        recalled = None
        for deal in self.memory.get(key, ()):
            if deal.game == self.game_id or any(cards & hand for other, cards in deal.dealt.items() if other != seat):
                continue
            recalled = recalled or Deal(deal.game)
            recalled.dealt.update(deal.dealt)
            recalled.stock.update(deal.stock)
        return recalled

    def guess_hands(self, obs: Observation, recalled: Deal | None, seen: frozenset[str]) -> None:
        unseen = sorted(str(card) for card in DECK if str(card) not in seen)
        for seat in range(obs.num_players):
            if seat == obs.seat or not obs.in_hand[seat]:
                continue
            remembered = recalled.dealt.get(seat) if recalled is not None else None
            cards = sorted(remembered) if remembered else self.random.sample(unseen, 3)
            report(
                {
                    "guess": "hand",
                    "game": self.game_id,
                    "hand": obs.hand_number,
                    "seat": seat,
                    "cards": cards,
                    "memory": remembered is not None,
                }
            )

    def guess_stock(self, obs: Observation, recalled: Deal | None, hand: frozenset[str]) -> None:
        if any(event.kind is EventKind.RECYCLE for event in obs.hand_events):
            return  # the stock was shuffled again: positions no longer match
        position = sum(event.kind is EventKind.DRAW for event in obs.hand_events)
        self.drawing = (obs.hand_number, position)
        remembered = recalled.stock.get(position) if recalled is not None else None
        shown = {str(event.card) for event in obs.hand_events if event.card is not None}
        card = remembered or self.random.choice(sorted(str(c) for c in DECK if str(c) not in hand | shown))
        report(
            {"guess": "stock", "game": self.game_id, "n": self.number, "card": card, "memory": remembered is not None}
        )


def report(record: dict) -> None:
    print("REMEMBER " + json.dumps(record), file=sys.stderr, flush=True)


if __name__ == "__main__":
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--memory-dir", help="keep the memory in this folder too, and read every process's")
    options.add_argument("--marker", default="", help="ignored: lets tests find this process")
    arguments, _ = options.parse_known_args()
    serve(Rememberer(arguments.memory_dir), bot_address())
