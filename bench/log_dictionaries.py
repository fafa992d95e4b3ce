"""Train the Zstandard dictionaries game logs are compressed with (referee/records/log_dictionaries/GAME.N.zdict).

Run once per dictionary version, and never again for a version shipped: a log names the dictionary it was
compressed with by its id, and is read with that one (referee.records.gamelog). It plays games of each game at every
table size between the Python sample bots (random and heuristic, in the referee's process, as check-bot's
opponents play), each logged as a league logs it, trains a dictionary per game on half of them, and reports
what it does to the other half against compression without one.

    .venv/bin/python bench/log_dictionaries.py --version 2                       # write GAME.2.zdict: minutes
    .venv/bin/python bench/log_dictionaries.py --version 2 --game bastard_brag   # one game's alone
    .venv/bin/python bench/log_dictionaries.py --version 2 --check               # train and report, write nothing

Version 1 (stop_the_bus.1.zdict, id 1001; bastard_brag.1.zdict, id 2001) was trained with the defaults here:
held out, a Stop the Bus log 7.5 times smaller (6.1 KB without the dictionary, 5.1 KB with it, at every table
size), a Bastard Brag log 11 times (7.0 and 5.9 KB); see docs/performance.md, "Game logs on disk".
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.engine.games import game_class  # noqa: E402
from referee.play.inprocess import sample_bot  # noqa: E402
from referee.play.match import Match  # noqa: E402
from referee.protocol.clock import Timing  # noqa: E402
from referee.records.gamelog import COMPRESSION_LEVEL, DICTIONARY_DIR  # noqa: E402

DICTIONARY_BYTES = 112_640  # zstd --train's default size: larger gave little more on these logs
# Ids by game and version: 1000 * (the game's place below) + version; zstd keeps ids from 2**31 for a registry.
GAMES = ("stop_the_bus", "bastard_brag")
SEED = 20261207


async def play_logs(game: str, per_size: int, folder: Path) -> list[bytes]:
    """About ``per_size`` games of ``game`` at tables of four (more at smaller tables, fewer at bigger ones), between
    random and heuristic sample bots: their logs."""
    cls = game_class(game)
    chooser = random.Random(f"{SEED}-{game}")
    logs = []
    for size in range(cls.min_players, cls.max_players + 1):
        # Fewer games at big tables, whose logs are long: each size then weighs about alike in what is trained on,
        # rather than the tables of nine or ten, seldom played, making most of it.
        for number in range(max(2, round(per_size * 4 / size))):
            kinds = [chooser.choice(("random", "heuristic")) for _ in range(size)]
            bots = [sample_bot(kind, f"{kind}-{seat}") for seat, kind in enumerate(kinds)]
            path = folder / f"{game}-{size}-{number}.jsonl"
            match = Match(game, bots, seed=chooser.getrandbits(63), game_id=f"r1-t{number:03d}-s{size}",
                          timing=Timing(), log_path=path)  # fmt: skip
            await match.play()
            logs.append(path.read_bytes())
    return logs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", type=int, required=True, help="the dictionaries' version, N in GAME.N.zdict")
    parser.add_argument("--per-size", type=int, default=40, help="games at tables of four (4/N times as many at N)")
    parser.add_argument("--check", action="store_true", help="train and report; write no dictionary")
    parser.add_argument("--game", choices=GAMES, action="append", help="only this game's (default: both)")
    args = parser.parse_args()
    for place, game in enumerate(GAMES, start=1):
        if args.game and game not in args.game:
            continue
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            logs = asyncio.run(play_logs(game, args.per_size, Path(scratch)))
        random.Random(SEED).shuffle(logs)
        training, held_out = logs[::2], logs[1::2]
        dict_id = 1000 * place + args.version
        dictionary = zstandard.train_dictionary(
            DICTIONARY_BYTES, training, dict_id=dict_id, level=19, steps=8, threads=-1
        )
        raw = sum(map(len, held_out))
        plain = sum(len(zstandard.ZstdCompressor(level=COMPRESSION_LEVEL).compress(log)) for log in held_out)
        with_dictionary = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL, dict_data=dictionary)
        packed = sum(len(with_dictionary.compress(log)) for log in held_out)
        print(
            f"{game}: {len(logs)} logs in {time.perf_counter() - started:.0f} s, {raw / len(held_out):.0f} B each; "
            f"held out, level {COMPRESSION_LEVEL}: {plain / len(held_out):.0f} B without a dictionary, "
            f"{packed / len(held_out):.0f} B with it ({raw / packed:.1f} times smaller); dictionary {dict_id}"
        )
        if not args.check:
            path = DICTIONARY_DIR / f"{game}.{args.version}.zdict"
            if path.exists():
                sys.exit(f"{path}: already shipped; logs name it by its id, so it never changes (give a new --version)")
            DICTIONARY_DIR.mkdir(exist_ok=True)
            path.write_bytes(dictionary.as_bytes())
            print(f"  written to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
