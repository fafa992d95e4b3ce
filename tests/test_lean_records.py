"""A game's line in games.jsonl keeps each decision's time as its bin: a few hundred bytes, and what the standings need."""

from __future__ import annotations

import json
import random
import statistics

import pytest

from referee.records.results import GameRecord, RecordError, bin_midpoint, latency_bin
from referee.records.standings import LATENCY_RELATIVE_ERROR, compute_standings


def runner_record(index: int, times: list[list[float]]) -> dict:
    """A record as the runner hands it to the results file: every decision's charged time, by seat."""
    return {
        "index": index,
        "game_id": f"r1-t{index:03d}-s0",
        "round": 1,
        "table": index,
        "rotation": 0,
        "seed": "9199337050513282444",
        "seats": ["heuristic", "node", "random"],
        "game": "stop_the_bus",
        "finish_order": [0, 1, 2],
        "hands_played": 10,
        "decisions": sum(map(len, times)),
        "faults": [{}, {}, {}],
        "forfeits": {},
        "timing": {
            "started": "2026-12-07T13:53:03.148+00:00",
            "wall_s": 0.251,
            "latency_ms": [[round(time, 3) for time in seat] for seat in times],
        },
    }


def line(record: dict) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode()


def sample_times(seed: int) -> list[list[float]]:
    """A game of Stop the Bus's decision times: about 28 a seat, a millisecond or two, a few slow ones."""
    rng = random.Random(seed)
    return [[rng.lognormvariate(0.4, 0.6) for _ in range(rng.randint(12, 36))] for _ in range(3)]


def test_a_record_keeps_each_decision_as_its_bin_in_a_few_hundred_bytes() -> None:
    for seed in range(20):
        given = runner_record(seed, sample_times(seed))
        times = given["timing"]["latency_ms"]
        written = GameRecord.of(given).to_json()
        assert "latency_ms" not in written["timing"], "the times themselves are the log's"
        # A few hundred bytes: each decision a step of a digit or two, where its time took five or six characters.
        steps, every_time = (json.dumps(part, separators=(",", ":")) for part in (
            written["timing"]["latency_bins"], given["timing"]["latency_ms"]
        ))  # fmt: skip
        assert len(steps) < 0.5 * len(every_time), (steps, every_time)
        assert len(line(written)) < 600
        read = GameRecord.of(json.loads(line(written)))
        assert read.latency_bins == tuple(tuple(sorted(map(latency_bin, seat))) for seat in times)
        for seat, bins in zip(times, read.latency_bins, strict=True):
            for time, bin_index in zip(sorted(seat), bins, strict=True):
                assert bin_midpoint(bin_index) == pytest.approx(time, rel=LATENCY_RELATIVE_ERROR)


def test_old_records_with_every_time_give_the_same_standings_as_lean_ones() -> None:
    old = [runner_record(index, sample_times(index)) for index in range(12)]
    lean = [GameRecord.of(record).to_json() for record in old]
    assert compute_standings(old) == compute_standings(lean)
    rows = {row.bot: row for row in compute_standings(lean).rows}
    every = [time for record in old for time in record["timing"]["latency_ms"][0]]
    assert rows["heuristic"].decisions == len(every)
    assert rows["heuristic"].median_ms == pytest.approx(statistics.median(every), rel=LATENCY_RELATIVE_ERROR)
    p99 = statistics.quantiles(every, n=100, method="inclusive")[98]
    assert rows["heuristic"].p99_ms == pytest.approx(p99, rel=LATENCY_RELATIVE_ERROR)


@pytest.mark.parametrize(
    ("bins", "message"),
    [
        ([[3, -1], [], []], r"latency_bins\[0\] is \[3, -1\]; expected a first bin, then steps of 0 or more"),
        ([[1600, 30], [], []], r"every bin below 1620"),
        ([[1.5], [], []], r"latency_bins\[0\] is \[1.5\]"),
        ([[], []], r"timing.latency_bins is .*one list of bin steps per seat \(3\)"),
    ],
)
def test_a_record_with_bins_that_are_no_bins_is_refused_naming_them(bins: list, message: str) -> None:
    record = runner_record(0, [[], [], []])
    record["timing"] = {"latency_bins": bins}
    with pytest.raises(RecordError, match=message):
        GameRecord.of(record)
    if len(bins) == 3:  # a reader that leaves the times out checks only their shape, paying nothing for each
        assert GameRecord.of(record, latencies=False).latency_bins is None
