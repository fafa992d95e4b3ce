"""The placement model: what a seat's lives are worth, as the luck of the cards and the search bot value them."""

from __future__ import annotations

import itertools
from functools import cache

import pytest

from referee.engine.placements import losses_left, outlasts, placement_scores, places_above


@cache
def places_above_by_every_hand(mine: int, theirs: tuple[int, ...]) -> float:
    """The same expectation computed the long way: every later hand's loser drawn at random among all the seats
    still in (this one included), each hand followed to the end."""
    if mine <= 0 or not theirs:
        return 0.0
    total = places_above_by_every_hand(mine - 1, theirs)
    for index, left in enumerate(theirs):
        rest = theirs[:index] + theirs[index + 1 :]
        if left == 1:
            total += 1.0 + places_above_by_every_hand(mine, rest)
        else:
            total += places_above_by_every_hand(mine, tuple(sorted((*rest, left - 1))))
    return total / (len(theirs) + 1)


def test_two_seats_race_as_the_problem_of_points() -> None:
    assert outlasts(1, 1) == 0.5
    assert outlasts(2, 1) == 0.75  # the other must lose once before this seat loses twice
    assert outlasts(1, 2) == 0.25
    assert outlasts(3, 2) + outlasts(2, 3) == pytest.approx(1.0)
    assert places_above(0, (3, 3)) == 0.0
    # Equal lives, an even share of the places above; more lives, more places.
    assert places_above(3, (3, 3, 3)) == pytest.approx(1.5)
    assert places_above(1, (2, 3)) < places_above(2, (2, 3)) < places_above(3, (2, 3))


@pytest.mark.parametrize("opponents", [1, 2, 3, 4])
def test_pairwise_races_give_the_whole_tables_expectation(opponents: int) -> None:
    # The sum of pairwise races is exact: the other seats change when two seats lose, never which loses first.
    for mine in range(5):
        for theirs in itertools.combinations_with_replacement(range(1, 5), opponents):
            assert places_above(mine, theirs) == pytest.approx(places_above_by_every_hand(mine, theirs)), (mine, theirs)


def test_placement_scores_share_out_the_places() -> None:
    for left in ((1, 2, 3), (4, 4, 4, 1), (2, 0, 1)):
        out = [seat for seat, losses in enumerate(left) if not losses]
        scores = placement_scores(left, out)
        assert sum(scores) == pytest.approx(len(left) / 2)  # the places 0, 1/(n-1), ..., 1 shared out
    assert placement_scores((3, 3, 3), []) == pytest.approx([0.5, 0.5, 0.5])
    assert placement_scores((1, 0, 0), [2, 1]) == pytest.approx([1.0, 0.5, 0.0])  # out second, above the first out


def test_losses_left_counts_the_floating_life_in_stop_the_bus_alone() -> None:
    assert losses_left("stop_the_bus", 3, False) == 4
    assert losses_left("stop_the_bus", 0, True) == 1
    assert losses_left("bastard_brag", 2, False) == 2
