"""Tests of the seeded random streams against the algorithm documented in referee/engine/seeding.py."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from referee.engine.seeding import SeedStream, derive_seed

TWO_64 = 1 << 64


def reference_u64s(text: str, count: int) -> list[int]:
    """Return the first ``count`` numbers of the stream keyed by ``text``, re-derived from the module doc."""
    key = hashlib.sha256(("brag-referee:" + text).encode("utf-8")).digest()
    numbers: list[int] = []
    block = 0
    while len(numbers) < count:
        digest = hashlib.sha256(key + block.to_bytes(8, "big")).digest()
        numbers.extend(int.from_bytes(digest[offset : offset + 8], "big") for offset in range(0, 32, 8))
        block += 1
    return numbers[:count]


def draw_u64s(stream: SeedStream, count: int) -> list[int]:
    return [stream.next_u64() for _ in range(count)]


# --- derive ---------------------------------------------------------------------------------------


def test_stream_follows_documented_key_and_blocks():
    # The module doc's own example name; 10 numbers span three SHA-256 blocks.
    stream = SeedStream.derive(7, "hand", 3, "deck")
    assert draw_u64s(stream, 10) == reference_u64s("7:hand:3:deck", 10)


def test_derive_is_deterministic():
    first = draw_u64s(SeedStream.derive(12345, "game", 2), 50)
    second = draw_u64s(SeedStream.derive(12345, "game", 2), 50)
    assert first == second


def test_integer_and_decimal_text_name_the_same_stream():
    # The doc says seed and labels are written "in decimal or as given".
    assert draw_u64s(SeedStream.derive(7, "hand", 3), 8) == draw_u64s(SeedStream.derive("7", "hand", "3"), 8)


@pytest.mark.parametrize(
    "other_name",
    [
        (8, "hand", 3, "deck"),  # different seed
        (7, "hand", 4, "deck"),  # different hand number
        (7, "hand", 3, "dealer"),  # different purpose
        (7, "hand", 3),  # fewer labels
        (7, "hand", 3, "deck", 0),  # more labels
        (7, "deck", 3, "hand"),  # same labels, other order
    ],
)
def test_labels_name_different_streams(other_name):
    base = draw_u64s(SeedStream.derive(7, "hand", 3, "deck"), 8)
    assert draw_u64s(SeedStream.derive(*other_name), 8) != base


def test_streams_are_independent_of_each_other():
    # Drawing from one stream must not move another stream of the same name.
    untouched = SeedStream.derive(1, "x")
    busy = SeedStream.derive(1, "x")
    draw_u64s(busy, 5)
    assert draw_u64s(untouched, 5) == reference_u64s("1:x", 5)


def test_next_u64_is_unsigned_64_bit():
    assert all(0 <= value < TWO_64 for value in draw_u64s(SeedStream.derive(3, "range"), 400))


# --- randbelow ------------------------------------------------------------------------------------


@pytest.mark.parametrize("bound", [2, 3, 6, 52, 1000, 2**40 + 7])
def test_randbelow_stays_in_range(bound):
    stream = SeedStream.derive(99, "range", bound)
    assert all(0 <= stream.randbelow(bound) < bound for _ in range(500))


def test_randbelow_one_is_always_zero():
    stream = SeedStream.derive(5, "one")
    assert [stream.randbelow(1) for _ in range(100)] == [0] * 100


@pytest.mark.parametrize("bound", [0, -1, -52])
def test_randbelow_rejects_non_positive_bound(bound):
    with pytest.raises(ValueError, match=rf"bound in 1\.\.2\*\*64, got {bound}"):
        SeedStream.derive(5, "bad").randbelow(bound)


def reference_randbelow(text: str, bound: int, count: int) -> list[int]:
    """Return ``count`` draws below ``bound`` from the stream keyed by ``text``, per the module doc."""
    limit = TWO_64 - (TWO_64 % bound)
    # Twice the numbers needed is plenty: no bound used here rejects more than a quarter.
    results = [x % bound for x in reference_u64s(text, 2 * count) if x < limit]
    assert len(results) >= count
    return results[:count]


@pytest.mark.parametrize("bound", [2, 7, 52, 10**18 + 3])
def test_randbelow_matches_documented_algorithm(bound):
    stream = SeedStream.derive(21, "draws", bound)
    assert [stream.randbelow(bound) for _ in range(200)] == reference_randbelow(f"21:draws:{bound}", bound, 200)


def test_randbelow_rejects_numbers_at_or_above_the_limit():
    # n = 3 * 2**62 makes limit = 2**64 - (2**64 % n) = n: a quarter of all numbers
    # are thrown away, and every kept number x is its own result (x % n == x).
    bound = 3 << 62
    raw = reference_u64s("4:reject", 200)
    kept = [x for x in raw if x < bound]
    assert len(kept) < len(raw), "the chosen stream must exercise a rejection"
    stream = SeedStream.derive(4, "reject")
    assert [stream.randbelow(bound) for _ in range(len(kept))] == kept


def test_randbelow_is_roughly_uniform():
    # Loose chi-square: 5 degrees of freedom, 40 is far beyond the 1e-6 tail (about 35.9).
    bound, draws = 6, 60_000
    stream = SeedStream.derive(2024, "uniform")
    counts = Counter(stream.randbelow(bound) for _ in range(draws))
    expected = draws / bound
    chi_square = sum((counts[value] - expected) ** 2 / expected for value in range(bound))
    assert set(counts) == set(range(bound))
    assert chi_square < 40


# --- derive_seed ----------------------------------------------------------------------------------


def test_derive_seed_is_first_number_shifted_right():
    assert derive_seed(7, "league", "game", 12) == reference_u64s("7:league:game:12", 1)[0] >> 1


def test_derive_seed_is_deterministic_and_fits_63_bits():
    seeds = [derive_seed(2024, "game", number) for number in range(300)]
    assert seeds == [derive_seed(2024, "game", number) for number in range(300)]
    assert all(0 <= seed < (1 << 63) for seed in seeds)
    assert len(set(seeds)) == len(seeds)
    # 300 values confined to 63 bits should still reach the top bit's half now and then.
    assert max(seeds) >= 1 << 62


def test_derive_seed_depends_on_every_part():
    base = derive_seed(1, "game", 1)
    assert derive_seed(2, "game", 1) != base
    assert derive_seed(1, "game", 2) != base
    assert derive_seed(1, "match", 1) != base


@pytest.mark.parametrize("start", [0, 1, 3, 4, 5])  # numbers already taken: mid-block and on a block's edge
def test_take_and_randbelow_each_give_what_one_call_at_a_time_gives(start):
    # Bounds near 2**64 throw away about half their numbers, so the fast path's fallback is exercised too.
    bounds = [52, 7, 2**63 + 1, 1, 2**64, 2**63 + 5, 3, *range(52, 1, -1), 2**63 + 1, 9]
    one_at_a_time, at_once = SeedStream.derive(5, "x"), SeedStream.derive(5, "x")
    for _ in range(start):
        one_at_a_time.next_u64(), at_once.next_u64()
    assert at_once.randbelow_each(bounds) == [one_at_a_time.randbelow(bound) for bound in bounds]
    assert at_once.take(6) == [one_at_a_time.next_u64() for _ in range(6)]
    assert at_once.next_u64() == one_at_a_time.next_u64()  # and the stream goes on the same
    with pytest.raises(ValueError, match=r"bound in 1\.\.2"):
        at_once.randbelow_each([3, 0])
