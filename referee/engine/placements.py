"""What a seat's lives are worth: its expected place, when every later hand's loser is a seat drawn at random.

One model, used wherever a life is given a value: the luck of the cards (:mod:`referee.records.luck`, what a
hand's loss costs each seat) and the search bot (``sample_bots/python/search_bot.py``, the value of a hand's
end, through the public face ``referee.placements``).

A seat's losses left (:func:`losses_left`) is how many more hands it may lose before it is out. Between any two
seats still in, each hand lost by one of the two is equally likely to be lost by either, whatever the other
seats do (they change when, not which of the two goes first): the chance one outlasts the other is the
problem of points with a fair coin (:func:`outlasts`), and a seat's expected number of opponents finished
above is the sum of those chances (:func:`places_above`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import cache

__all__ = ["losses_left", "outlasts", "placement_scores", "places_above"]


def losses_left(game: str, lives: int, floating: bool) -> int:
    """How many more lost hands a seat still in ``game`` survives (Stop the Bus counts the floating life)."""
    if game == "stop_the_bus":
        return 1 if floating else lives + 1
    return lives


@cache
def outlasts(mine: int, theirs: int) -> float:
    """The chance a seat with ``mine`` losses left outlasts one with ``theirs`` (both at least 1), each hand's
    loser a fair coin between them: the other ``theirs`` losses come before ``mine`` of ours."""
    return float(sum(math.comb(theirs - 1 + lost, lost) / 2 ** (theirs + lost) for lost in range(mine)))


def places_above(mine: int, theirs: Iterable[int]) -> float:
    """The expected number of opponents, each with its losses left in ``theirs`` (all still in), that a seat
    with ``mine`` losses left (0: out now, above none of them) finishes above."""
    if mine <= 0:
        return 0.0
    return sum(outlasts(mine, left) for left in theirs)


def placement_scores(left: Sequence[int], out_order: Sequence[int]) -> list[float]:
    """Each seat's expected placement score (1 first, 0 last) from its losses ``left`` (0: out, and then its
    place in ``out_order``, the seats out in the order they left)."""
    seats = len(left)
    out_rank = {seat: index for index, seat in enumerate(out_order)}
    scores = []
    for seat in range(seats):
        still_in = [left[other] for other in range(seats) if other != seat and left[other]]
        if left[seat]:
            above = places_above(left[seat], still_in) + (seats - 1 - len(still_in))
        else:
            above = sum(
                float(out_rank.get(seat, -1) > out_rank.get(other, -1))
                for other in range(seats)
                if other != seat and not left[other]
            )
        scores.append(above / (seats - 1))
    return scores
