"""Seeded random streams: every random choice the referee makes comes from here.

There is no global random state anywhere in the referee. A :class:`SeedStream`
is a deterministic sequence of numbers named by a seed and a few labels, so
that anyone can re-derive it in any language:

1. The stream's key is ``SHA-256("brag-referee:" + ":".join([seed, *labels]))``
   over the UTF-8 text, where the seed and each label are written in decimal
   or as given (for example ``brag-referee:7:hand:3:deck``).
2. Block ``i`` (``i`` = 0, 1, 2, ...) is ``SHA-256(key + i as 8 bytes,
   big-endian)``; each block gives four unsigned 64-bit numbers, read
   big-endian from bytes 0-7, 8-15, 16-23 and 24-31, used in that order.
3. ``randbelow(n)`` takes the next number ``x``; if ``x >= 2**64 - (2**64 % n)``
   it is thrown away and the next one taken (so every result is equally
   likely); otherwise the result is ``x % n``.

The engine names its streams (see the game modules): the deck of hand ``h``
of a game with seed ``s`` comes from ``SeedStream.derive(s, "hand", h,
"deck")`` shuffled as :func:`referee.engine.cards.shuffled_deck` describes.
"""

from __future__ import annotations

import hashlib
import operator
import struct
from collections.abc import Callable, Iterable, Iterator
from functools import cache

_PREFIX = "brag-referee:"
_TWO_64 = 1 << 64


class SeedStream:
    """A reproducible stream of random integers derived from a seed and labels."""

    __slots__ = ("_block", "_key", "_pending")

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._block = 0
        self._pending: list[int] = []

    def copy(self) -> SeedStream:
        """Return an independent stream at the same point: both give the same numbers from here on."""
        twin = SeedStream(self._key)
        twin._block = self._block
        twin._pending = self._pending.copy()
        return twin

    @classmethod
    def derive(cls, seed: int | str, *labels: int | str) -> SeedStream:
        """Return the stream named by ``seed`` and ``labels`` (see the module doc)."""
        return cls(derive_key(seed, *labels))

    def next_u64(self) -> int:
        """Return the next unsigned 64-bit number of the stream."""
        if not self._pending:
            block = self._block
            counter = _COUNTERS[block] if block < len(_COUNTERS) else block.to_bytes(8, "big")
            self._block = block + 1
            # Reversed so that pop() hands them out in order 0, 1, 2, 3.
            self._pending = list(_BLOCK_NUMBERS(_sha256(self._key + counter).digest()))[::-1]
        return self._pending.pop()

    def take(self, count: int) -> list[int]:
        """Return the next ``count`` numbers of the stream, as ``count`` calls of :meth:`next_u64` would."""
        return self._take(count)[0]

    def _take(self, count: int) -> tuple[list[int], bool]:
        """Return :meth:`take`'s numbers, and whether one of them may be ``2**64 - 64`` or more: ``False`` means
        none is; ``True`` (rarely) that :meth:`randbelow_each` must check each."""
        pending = self._pending
        numbers = pending[::-1][:count]
        del pending[len(pending) - len(numbers) :]
        maybe_high = bool(numbers) and max(numbers) >= _KEPT_BY_SMALL_BOUNDS
        if len(numbers) < count:
            # The blocks still needed, hashed one after another (each a copy of the key's hash given its
            # counter) and read in one go: a shuffle needs 13.
            key, block = self._key, self._block
            blocks = (count - len(numbers) + 3) // 4
            if block + blocks <= len(_COUNTERS):
                counters = _COUNTERS[block : block + blocks]
            else:
                counters = tuple(number.to_bytes(8, "big") for number in range(block, block + blocks))
            keyed = _sha256(key)
            digests = []
            for counter in counters:
                block_hash = keyed.copy()
                block_hash.update(counter)
                digests.append(block_hash.digest())
            data = b"".join(digests)
            # A number of 2**64 - 64 or more begins with seven 0xff bytes: where no seven lie in a row, none is.
            maybe_high = maybe_high or _SEVEN_FF in data
            numbers += _unpacker(blocks)(data)
            self._block = block + blocks
        if len(numbers) > count:  # keep the rest of the last block for later, in the order next_u64 pops them
            self._pending = numbers[count:][::-1]
            del numbers[count:]
        return numbers, maybe_high

    def randbelow_each(self, bounds: Iterable[int]) -> list[int]:
        """Return ``[self.randbelow(n) for n in bounds]``, faster."""
        return list(self.randbelow_iter(bounds))

    def randbelow_iter(self, bounds: Iterable[int]) -> Iterator[int]:
        """Return an iterator of :meth:`randbelow_each`'s numbers, each worked out as it is read (a shuffle needs
        51, one swap each). The stream's numbers are all taken at the call: the stream is where
        ``randbelow_each`` would leave it, however much of the iterator is read."""
        if isinstance(bounds, range) and bounds:  # a shuffle's: its least and greatest bound are its two ends
            low, high = sorted((bounds[0], bounds[-1]))
        else:
            bounds = list(bounds)
            low, high = (min(bounds), max(bounds)) if bounds else (1, 1)
        numbers, maybe_high = self._take(len(bounds))  # what they take when no number is thrown away, nearly always
        if numbers and not maybe_high and low > 0 and high <= _SMALL_BOUND:
            return map(operator.mod, numbers, bounds)
        position = 0
        results = []
        for n in bounds:
            limit = _LIMITS.get(n) or _limit(n)
            while True:
                if position < len(numbers):
                    x = numbers[position]
                    position += 1
                else:  # a number was thrown away: the rest come from the stream, in order
                    x = self.next_u64()
                if x < limit:
                    break
            results.append(x % n)
        return iter(results)

    def randbelow(self, n: int) -> int:
        """Return a uniformly chosen integer in ``range(n)``; ``n`` must be positive."""
        limit = _LIMITS.get(n) or _limit(n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n


_sha256 = hashlib.sha256
_SEVEN_FF = b"\xff" * 7
_COUNTERS = tuple(number.to_bytes(8, "big") for number in range(64))  # the first blocks' numbers, as hashed
_BLOCK_NUMBERS = struct.Struct(">4Q").unpack  # a block's four numbers, in order


@cache
def _unpacker(blocks: int) -> Callable[[bytes], tuple[int, ...]]:
    """Read the 64-bit numbers of ``blocks`` digests laid end to end, in order (four to a block, big-endian)."""
    return struct.Struct(f">{4 * blocks}Q").unpack


def _limit(n: int) -> int:
    """The numbers ``randbelow(n)`` keeps are those below this."""
    if not 0 < n <= _TWO_64:
        raise ValueError(f"randbelow needs a bound in 1..2**64, got {n}")
    return _TWO_64 - (_TWO_64 % n)


_SMALL_BOUND = 64
_LIMITS = {n: _limit(n) for n in range(1, _SMALL_BOUND + 1)}
# Every bound up to 64 keeps every number below this (2**64 % n < n), so a shuffle's numbers need no check.
_KEPT_BY_SMALL_BOUNDS = _TWO_64 - _SMALL_BOUND


def derive_key(seed: int | str, *labels: int | str) -> bytes:
    """Return the 32-byte key of the stream named by ``seed`` and ``labels``."""
    template = _KEY_TEXTS.get(len(labels)) or _key_text(len(labels))
    return _sha256((template % (seed, *labels)).encode("utf-8")).digest()


_KEY_TEXTS: dict[int, str] = {}


def _key_text(labels: int) -> str:
    """The text a key hashes, for ``labels`` labels, as a %-template (``%s`` writes each as ``str`` would): one
    formatting instead of a join over ``str`` of each (every hand's deck derives a key)."""
    template = _KEY_TEXTS[labels] = _PREFIX + "%s" + ":%s" * labels
    return template


def derive_seed(seed: int | str, *labels: int | str) -> int:
    """Return a 63-bit integer seed derived from ``seed`` and ``labels``.

    Used to give each game of a league its own seed from the league's seed
    and the game's identity: the first number of the named stream, shifted
    right by one bit so that it fits a signed 64-bit field.
    """
    return SeedStream.derive(seed, *labels).next_u64() >> 1


SEED_RANGE = (-(2**63), 2**64 - 1)  # a seed fits 64 bits, signed or not (the league file, the records)
SEED_COMMITMENT_PREFIX = "brag-referee-seed:"
GUESSABLE_SEED_BELOW = 2**32  # a league seed nearer 0 than this can be found by trying them all


def seed_commitment(seed: int) -> str:
    """A commitment to a league seed: ``SHA-256("brag-referee-seed:" + seed in decimal)`` in hex.

    Published while a league runs (its pages show it instead of the seed), it
    lets anyone check afterwards that the seed revealed is the one the league
    was played with, without telling a bot the seed before the end. It hides
    the seed only if the seed cannot be guessed: one of 64 random bits
    (``referee seed``), not a date or a small number.
    """
    return hashlib.sha256(f"{SEED_COMMITMENT_PREFIX}{seed}".encode()).hexdigest()


def is_guessable(seed: int) -> bool:
    """Whether a bot could find ``seed`` by trying every seed against the cards it is dealt."""
    return -GUESSABLE_SEED_BELOW < seed < GUESSABLE_SEED_BELOW
