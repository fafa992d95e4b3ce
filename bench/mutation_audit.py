"""A mutation audit of the test suite: deliberate bugs in the session, the clock, the match, the standings and
the sandbox, and whether the tests catch each, with the tests of two versions.

The code under test is always this checkout's (``--code REV``, default HEAD); the tests are taken from two
revisions: ``before`` (013936d, where the session's deadline, stale, late, duplicate-reply and close races
were tested only through real bot processes) and ``after`` (``--after REV``, default HEAD, where
referee/play/fakes.py fakes the transport and the clock and tests/test_session_races.py plays those races in
memory, and several real-process tests of tests/test_faults.py and tests/test_clock.py are gone). Each
mutant is one exact text in one file replaced by another (the text must occur exactly once), and the
tests chosen for its module (:data:`SELECTIONS`, the same for both suites where a file exists) run on a
fresh copy of the code with that one change:

- each copy is ``git archive`` of the code's revision, with the suite's tests/ in place of its own; the
  ``before`` tests get the one conftest.py change of 0d604e5 (a bot started from a copy is given the copy's
  PYTHONPATH, as its sandbox's clean environment would otherwise import the main checkout's referee);
- pytest runs in the copy, ``-x -q -p no:cacheprovider``, in a private mount namespace of its own
  (``unshare --mount``) where the copy is mounted over the checkout the virtual environment's editable
  install points at (the virtual environment itself mounted back in its place), and with ``PYTHONPATH``
  set to it: every process of the run (the tests, a ``referee`` command they start, a bot in its sandbox,
  whose environment is clean and which imports the referee through the editable install) runs the copy's
  code, while the checkout on disk, and every other process of the machine, see no change. Without it, the
  bots of a league file started by ``referee run`` or ``referee check-bot`` would find no ``referee``
  package in their sandbox (it shows the copy's, the editable install names the checkout's). This needs
  root (as the sandbox's tests do). The run loads this file's small plugin, which records the tests that fail and stops a test that runs far longer than it did on the
  unmutated code (``--test-timeout-factor``, at least ``--test-timeout-min`` seconds): such a test fails,
  and the mutant counts as killed, marked "timeout" (a hang is a bug caught); the whole run has a timeout
  too (``--run-timeout``), which also counts as killed;
- first, each suite's whole selection runs once on the unmutated copy (without ``-x``): every test that
  fails there is deselected from both suites' runs (a flaky test failing in one baseline alone credits
  neither suite), and a file that cannot even be collected is left out of its suite, so a kill means the
  mutation; each test's duration there sets its timeout. ``--deselect`` leaves out more, in both.

It prints a table (mutant, module, killed before?, killed after?, the time of each run) and the totals
(killed/total, the total test time of each suite), and writes the results as JSON with ``--json OUT``.

    nice -n 19 .venv/bin/python bench/mutation_audit.py --json audit.json          # both suites
    .venv/bin/python bench/mutation_audit.py --list                                  # the mutants
    nice -n 19 .venv/bin/python bench/mutation_audit.py --suite after --only stale   # some mutants, one suite
"""

from __future__ import annotations

import argparse
import compileall
import dataclasses
import functools
import importlib.util
import json
import os
import py_compile
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
BEFORE_REV = "013936d"  # the tests before the transport seam
CONFTEST_FIX_REV = "0d604e5"  # tests/conftest.py: bots started from a copy are given its PYTHONPATH
MODULES = (
    "session",
    "clock",
    "match",
    "standings",
    "sandbox",
    "visibility",
    "feeds",
    "site",
    "auth",
    "play",
    "luck",
    "sampling",
)


@dataclass(frozen=True)
class Mutant:
    """One deliberate bug: ``old`` (occurring exactly once in ``file``) replaced by ``new``."""

    name: str
    module: str  # a key of SELECTIONS
    file: str
    old: str
    new: str
    bug: str


SESSION = "referee/play/session.py"
CLOCK = "referee/protocol/clock.py"
MATCH = "referee/play/match.py"
STANDINGS = "referee/records/standings/tally.py"  # the figures kept as games are counted
VISIBILITY = "referee/records/visibility.py"
SPECTATORS = "referee/publish/spectators.py"
LUCK = "referee/records/luck.py"

MUTANTS: tuple[Mutant, ...] = (
    # ----- the session: the deadline, stale, late and duplicate replies, faults, the handshake, the close -----
    Mutant(
        "session-move-time-edge",
        "session",
        SESSION,
        "wall if wall <= pending.move_s else",
        "wall if wall < pending.move_s else",
        "a reply exactly at the move time is charged by the honest clock (lag discounted) instead of its wall time",
    ),
    Mutant(
        "session-deadline-edge",
        "session",
        SESSION,
        "if charged >= pending.limit_s or wall >= wall_cap:",
        "if charged > pending.limit_s or wall >= wall_cap:",
        "the deadline reached with exactly the limit charged is not a timeout (< vs <=)",
    ),
    Mutant(
        "session-rewait-whole-limit",
        "session",
        SESSION,
        "left = max(pending.limit_s - charged, 0.001)",
        "left = pending.limit_s",
        "a deadline reached with less than the limit charged waits a whole limit again, not what is left",
    ),
    Mutant(
        "session-stale-accepted",
        "session",
        SESSION,
        "if pending is not None and number == pending.number:",
        "if pending is not None:",
        "a reply to another decision number is taken as the answer (no stale fault)",
    ),
    Mutant(
        "session-duplicate-is-stale",
        "session",
        SESSION,
        "elif number in self._ended:",
        "elif number in self._ended and pending is None:",
        "a duplicate reply that arrives once the next decision is asked is a stale fault of that decision",
    ),
    Mutant(
        "session-late-after-fault-is-stale",
        "session",
        SESSION,
        "        except BotFault as fault:\n            self._ended.add(number)\n",
        "        except BotFault as fault:\n",
        "a decision that ended in a fault (a timeout) is not remembered: its late reply faults the next decision",
    ),
    Mutant(
        "session-answered-not-remembered",
        "session",
        SESSION,
        "waiter.set_result(chosen)\n                self._ended.add(number)",
        "waiter.set_result(chosen)",
        "an answered decision is not remembered: a second reply to it faults the next decision",
    ),
    Mutant(
        "session-new-game-remembers",
        "session",
        SESSION,
        "self._ended.clear()  # decision numbers start again at 1",
        "pass  # decision numbers start again at 1",
        "a new game keeps the last game's decision numbers: a reply to one of them is dropped, not stale",
    ),
    Mutant(
        "session-could-not-decide-is-crash",
        "session",
        SESSION,
        'raise BotFault(FaultKind.MALFORMED, f"{COULD_NOT_DECIDE}',
        'raise BotFault(FaultKind.CRASH, f"{COULD_NOT_DECIDE}',
        "a bot that says it could not decide is a crash, not a malformed reply (fault kind swapped)",
    ),
    Mutant(
        "session-no-action-is-stale",
        "session",
        SESSION,
        "raise BotFault(FaultKind.MALFORMED, str(error), bot) from None",
        "raise BotFault(FaultKind.STALE, str(error), bot) from None",
        "a reply naming no action there is (empty, unknown kind) is stale, not malformed (fault kind swapped)",
    ),
    Mutant(
        "session-empty-response-is-crash",
        "session",
        SESSION,
        'pending, FaultKind.MALFORMED, "sent an empty PlayResponse',
        'pending, FaultKind.CRASH, "sent an empty PlayResponse',
        "an empty PlayResponse is a crash, not a malformed reply (fault kind swapped)",
    ),
    Mutant(
        "session-protocol-version-unchecked",
        "session",
        SESSION,
        "if PROTOCOL_VERSION not in response.protocol_versions:",
        "if not response.protocol_versions:",
        "a bot that speaks another protocol version passes the handshake",
    ),
    Mutant(
        "session-game-unchecked",
        "session",
        SESSION,
        "if GAME_TO_PB[setup.game] not in response.games:",
        "if not response.games:",
        "a bot that does not play the game passes the handshake",
    ),
    Mutant(
        "session-handshake-fault-kind-kept",
        "session",
        SESSION,
        "raise BotFault(FaultKind.HANDSHAKE, fault.detail, self.name) from None",
        "raise fault from None",
        "a handshake reply that fails (garbage bytes) keeps its own fault kind instead of being a handshake fault",
    ),
    Mutant(
        "session-close-without-ending-its-side",
        "session",
        SESSION,
        "                    async with asyncio.timeout(CLOSE_GRACE_SECONDS):\n"
        "                        await self._call.done_writing()\n",
        "",
        "on stop the referee never ends its side of the stream: the bot is killed after the grace, never closing",
    ),
    # ----- the honest clock -----
    Mutant(
        "clock-grace-forgotten",
        "clock",
        CLOCK,
        "return self.move_time_ms + self.bank_ms + self.grace_ms",
        "return self.move_time_ms + self.bank_ms",
        "the limit leaves out the grace",
    ),
    Mutant(
        "clock-bank-forgotten",
        "clock",
        CLOCK,
        "return self.move_time_ms + self.bank_ms + self.grace_ms",
        "return self.move_time_ms + self.grace_ms",
        "the limit leaves out the time bank",
    ),
    Mutant(
        "clock-spend-whole-charge",
        "clock",
        CLOCK,
        "over = charged_ms - self.move_time_ms",
        "over = charged_ms",
        "the bank pays for the whole charge, the move time included",
    ),
    Mutant(
        "clock-bank-below-zero",
        "clock",
        CLOCK,
        "self.bank_ms = max(0, int(self.bank_ms - over))",
        "self.bank_ms = int(self.bank_ms - over)",
        "the bank can go below zero",
    ),
    Mutant(
        "clock-lag-charged",
        "clock",
        CLOCK,
        "charged = wall - lag - (stall or 0.0)",
        "charged = wall - (stall or 0.0)",
        "the referee's own lag is charged to the bot",
    ),
    Mutant(
        "clock-lag-before-the-decision",
        "clock",
        CLOCK,
        "if due < since or due < now - worst - horizon:",
        "if due < now - worst - horizon:",
        "the lag monitor counts lateness from before the decision began",
    ),
    # ----- the match: the fault policy, the clock's bank, faults, void games, the stream's events -----
    Mutant(
        "match-max-faults-off-by-one",
        "match",
        MATCH,
        "faults < self.policy.max_faults and bot.connected",
        "faults <= self.policy.max_faults and bot.connected",
        "default_action: the bot forfeits one fault after max_faults, not at it",
    ),
    Mutant(
        "match-policy-ignored",
        "match",
        MATCH,
        "self._default_policy = policy.mode is PolicyMode.DEFAULT_ACTION",
        "self._default_policy = False",
        "the default_action policy is not applied: every fault forfeits",
    ),
    Mutant(
        "match-bank-never-spent",
        "match",
        MATCH,
        "        clock.spend(reply.charged_ms)\n",
        "",
        "what a decision is charged beyond the move time is never taken out of the bank",
    ),
    Mutant(
        "match-illegal-is-malformed",
        "match",
        MATCH,
        "return BotFault(FaultKind.ILLEGAL,",
        "return BotFault(FaultKind.MALFORMED,",
        "an illegal action is a malformed fault (fault kind swapped)",
    ),
    Mutant(
        "match-void-with-one-bot",
        "match",
        MATCH,
        "if asked >= 2:",
        "if asked >= 1:",
        "a game where only one bot got to decide counts (is not void)",
    ),
    Mutant(
        "match-events-sent-again",
        "match",
        MATCH,
        "self._events_sent[seat] = len(game.events)",
        "self._events_sent[seat] = 0",
        "each request carries every event since the game began, not those since the seat's last message",
    ),
    Mutant(
        "match-startup-fault-forfeits-after-the-end",
        "match",
        MATCH,
        "if not game.is_over:\n                        self._forfeit(seat, Forfeit.of(bot))",
        "if True:\n                        self._forfeit(seat, Forfeit.of(bot))",
        "a seat that failed to start forfeits even once the game is over (the last seat left)",
    ),
    # ----- the standings: wins, placements, ties, void games, disqualified bots, head-to-head, latencies -----
    Mutant(
        "standings-second-is-a-win",
        "standings",
        STANDINGS,
        "bot.wins += int(place == 1)",
        "bot.wins += int(place <= 2)",
        "a second place counts as a win",
    ),
    Mutant(
        "standings-placement-off-by-one",
        "standings",
        STANDINGS,
        "bot.placement_total += place",
        "bot.placement_total += place - 1",
        "the average placement counts from 0",
    ),
    Mutant(
        "standings-void-counted",
        "standings",
        STANDINGS,
        "        if game.void:  # it ranks nobody and counts no game; its faults still show who failed\n"
        "            self.void.append((game.index, game.game_id, game.void))\n"
        "            return\n",
        "",
        "a void game counts as a game played, with its placements",
    ),
    Mutant(
        "standings-forfeits-inverted",
        "standings",
        STANDINGS,
        "bot.forfeits += int(seat in game.forfeits)",
        "bot.forfeits += int(seat not in game.forfeits)",
        "a bot's forfeits are the games it did not forfeit",
    ),
    Mutant(
        "standings-disqualified-kept",
        "standings",
        STANDINGS,
        "if self.disqualified.intersection(game.seats):",
        "if self.disqualified.issuperset(game.seats):",
        "a game that seats a disqualified bot still counts (unless all its bots are)",
    ),
    Mutant(
        "standings-tie-above",
        "standings",
        STANDINGS,
        "totals[1] += int(first_place < second_place)",
        "totals[1] += int(first_place <= second_place)",
        "paired candidates (a gauntlet's) tied on a deal: the first by name counts as finishing above",
    ),
    Mutant(
        "standings-head-to-head-not-mirrored",
        "standings",
        STANDINGS,
        "return compared.get((other, bot), unpaired).swapped()",
        "return compared.get((other, bot), unpaired)",
        "the head-to-head of the later name against the earlier is not mirrored",
    ),
    # ----- the sandbox: namespaces, the environment, limits, masks, the system call filter -----
    Mutant(
        "sandbox-network-shared",
        "sandbox",
        "referee/play/sandbox/bubblewrap.py",
        '    if not network_host:\n        options.append("--unshare-net")',
        '    if False:\n        options.append("--unshare-net")',
        "a bot without the host network still shares it (no network namespace)",
    ),
    Mutant(
        "sandbox-environment-leaked",
        "sandbox",
        "referee/play/sandbox/view.py",
        'env = {name: value for name, value in os.environ.items() if name in INHERITED_VARIABLES or name.startswith("LC_")}',
        "env = dict(os.environ)",
        "a bot inherits the referee's whole environment (its variables, secrets included)",
    ),
    Mutant(
        "sandbox-process-limit-dropped",
        "sandbox",
        "referee/play/sandbox/cgroups.py",
        "if limits.processes is not None and support.pids() is not None:",
        "if limits.processes is None and support.pids() is not None:",
        "the process limit (pids.max) is never written",
    ),
    Mutant(
        "sandbox-hidden-paths-shown",
        "sandbox",
        "referee/play/sandbox/masks.py",
        "if os.path.lexists(real) and real not in bound",
        "if False",
        "the competition's paths inside what a bot sees are not masked",
    ),
    Mutant(
        "sandbox-flock-allowed",
        "sandbox",
        "referee/play/sandbox/seccomp.py",
        '    "flock": errno.ENOLCK,\n',
        "",
        "the system call filter lets flock through: two bots can signal through a shared file's lock",
    ),
    # ----- what may be shown, and when (referee.records.visibility) and the feeds that ask it -----
    Mutant(
        "visibility-siblings-ignored",
        "visibility",
        VISIBILITY,
        "            if other is not self:\n",
        "            if False:\n",
        "a hand's frames are due once seen: the other games dealt alike, still to play that hand, are not waited for",
    ),
    Mutant(
        "visibility-frame-delay-left-out",
        "visibility",
        VISIBILITY,
        "        return due + self.deal.delay_s\n",
        "        return due\n",
        "a hand's frames are shown without the spectator delay",
    ),
    Mutant(
        "visibility-record-delay-left-out",
        "visibility",
        VISIBILITY,
        "            self._held[game_id] = progress.deal\n            if progress.deal.is_over() and progress.deal.shown_at is None:\n"
        "                self._close(progress.deal, progress.deal.last_end() + self.delay_s)",
        "            self._held[game_id] = progress.deal\n            if progress.deal.is_over() and progress.deal.shown_at is None:\n"
        "                self._close(progress.deal, progress.deal.last_end())",
        "a finished game is shown as its deal's last game ends, without the spectator delay",
    ),
    Mutant(
        "visibility-timed-games-left-out-of-the-file",
        "visibility",
        VISIBILITY,
        "            if deal.shown_at is None or deal.shown_at > now",
        "            if deal.shown_at is None",
        "the file leaves out games waiting for their delay: readers show them at once",
    ),
    Mutant(
        "visibility-time-not-read",
        "visibility",
        VISIBILITY,
        "        return when is not None and when <= self.at",
        "        return when is not None",
        "a reader shows a game as soon as its deal is over, whatever time the file gives",
    ),
    Mutant(
        "visibility-damaged-file-shows-all",
        "visibility",
        VISIBILITY,
        "            return cls(now, 0, {}, everything_held=True)  # being written",
        "            return cls(now)  # being written",
        "a damaged or half-written visibility.json holds nothing back",
    ),
    Mutant(
        "visibility-told-before-written",
        "visibility",
        VISIBILITY,
        "deal.shown_at <= now and deal.closed_at_change <= self._written:",
        "deal.shown_at <= now:",
        "games are told as shown (their replays written, the page rewritten) before the file on disk says so",
    ),
    Mutant(
        "visibility-unaccounted-records-read",
        "visibility",
        "referee/records/results.py",
        "            if limit is not None and offset > limit:\n                return",
        "            if False:\n                return",
        "a reader reads records appended after the rule it holds was written: a game just ended is shown",
    ),
    Mutant(
        "feeds-frame-hand-lowest",
        "feeds",
        SPECTATORS,
        'hand = max([view["hand"], *(event["hand"] for event in new)])',
        'hand = min([view["hand"], *(event["hand"] for event in new)])',
        "a frame that shows a new hand's deal waits only for the hand that ended before it",
    ),
    Mutant(
        "feeds-left-on-stop",
        "feeds",
        SPECTATORS,
        "        for watched in self._games.values():\n            watched.path.unlink(missing_ok=True)",
        "        for watched in self._games.values():\n            pass",
        "a league stopped leaves its games' partial feeds, listed, showing deals the resumed league plays again",
    ),
    Mutant(
        "feeds-stopped-game-kept",
        "feeds",
        "referee/backends/pool.py",
        "                watcher.stopped(game.game_id)  # played again from its start: its feed goes",
        "                watcher.finished(game.game_id)  # played again from its start: its feed goes",
        "a stopped game's feed is ended as if the game had finished, and stays listed",
    ),
    Mutant(
        "site-path-variants-redirected",
        "site",
        "referee/apps/site/app.py",
        "    app.router.redirect_slashes = False",
        "    app.router.redirect_slashes = True",
        "/games.jsonl/ is redirected to /games.jsonl: a path spelled another way is not 404",
    ),
    Mutant(
        "site-records-unfiltered",
        "site",
        "referee/apps/site/public_pages.py",
        'return public_game_record(record) if shown.game(str(record.get("game_id"))) else None',
        "return public_game_record(record)",
        "games.jsonl lists every record the rule accounts for, those held back too",
    ),
    Mutant(
        "site-author-output-unchecked",
        "site",
        "referee/apps/site/author_routes.py",
        "        return plain_name(game) and games.recorded(game, games.shown())",
        "        return plain_name(game)",
        "an author's bot's output in a game, and their private replay of it, are served while its deals are in play",
    ),
    Mutant(
        "site-replays-unchecked",
        "site",
        "referee/apps/site/season_folder.py",
        "        return game_id in self._ids and shown.game(game_id)",
        "        return game_id in self._ids",
        "a recorded game's replay and log are served while its deals are still in play",
    ),
    Mutant(
        "site-author-page-lists-held-games",
        "site",
        "referee/apps/site/season_folder.py",
        "if shown.game(game.game_id)]",
        "if True]",
        "an author's page lists (and faults) games whose deals are still in play",
    ),
    Mutant(
        "auth-success-forgives",
        "auth",
        "referee/apps/site/auth.py",
        "        if failures is None or failures.last < now - MAX_LOCKOUT_S - self.window_s:",
        "        if True:",
        "every failed sign-in starts its network's count afresh: no network is ever locked out",
    ),
    Mutant(
        "auth-exact-address",
        "auth",
        "referee/apps/site/auth.py",
        "IPV4_PREFIX = 24",
        "IPV4_PREFIX = 32",
        "failed sign-ins are counted per exact IPv4 address: a /24 walks around the lockout",
    ),
    Mutant(
        "auth-unbounded",
        "auth",
        "referee/apps/site/auth.py",
        "        while len(self._networks) > self.max_networks:",
        "        while False:",
        "the failure counts grow without bound, one entry a network",
    ),
    Mutant(
        "play-origin-unchecked",
        "play",
        "referee/apps/site/app.py",
        '    if "authorization" in connection.headers:\n        return None\n    host',
        "    if True:\n        return None\n    host",
        "a POST to /play/ (or a sign-in, an upload) from any site, or with no Origin, is taken",
    ),
    Mutant(
        "play-client-cap-off",
        "play",
        "referee/apps/site/offered.py",
        "        if mine >= MOST_GAMES_PER_CLIENT:",
        "        if False:",
        "one client takes every play table",
    ),
    # ----- the luck of the cards and the states sampled from a seat's view -----
    Mutant(
        "luck-drawn-card-out-of-pool",
        "luck",
        LUCK,
        "    return _luck_of_cards(game, seat, game.hands[seat], stock, (stock[-1],), model)",
        "    return _luck_of_cards(game, seat, game.hands[seat], stock[:-1] or stock, (stock[-1],), model)",
        "a draw's mean is taken over the stock without the card drawn: a wrong pool, a biased luck",
    ),
    Mutant(
        "luck-set-aside-missed",
        "luck",
        LUCK,
        "        return [centre[slot] for slot in sorted(self._unseen_slots)] + list(game.set_aside)  # type: ignore",
        "        return [centre[slot] for slot in sorted(self._unseen_slots)]  # type: ignore",
        "a centre card taken unseen is measured against the centre's unseen cards alone, not the set-aside deck",
    ),
    Mutant(
        "luck-face-up-slot-unseen",
        "luck",
        LUCK,
        '            self._unseen_slots = {0, 1} if game.name == "bastard_brag" else set()',
        '            self._unseen_slots = {0, 1, 2} if game.name == "bastard_brag" else set()',
        "the centre's face-up card is counted as a card nobody has seen",
    ),
    Mutant(
        "luck-taker-put-it-there",
        "luck",
        LUCK,
        "            self._unseen_slots.discard(act.slot if act.slot is not None else -1)",
        "            pass",
        "a face-down centre card its taker put there is counted as unseen when it is taken back",
    ),
    Mutant(
        "luck-deal-mean-biased",
        "luck",
        LUCK,
        "    even = {seat: 1.0 / len(outcomes) for seat in outcomes}",
        "    even = {seat: (1.0 + 0.1 * (seat == 0)) / (len(outcomes) + 0.1) for seat in outcomes}",
        "a deal's mean value favours seat 0: a biased luck",
    ),
    Mutant(
        "luck-discards-counted",
        "luck",
        LUCK,
        "            return game.stock  # type: ignore[attr-defined,no-any-return]",
        "            return game.discard_pile + game.stock  # type: ignore[attr-defined,no-any-return]",
        "a card out of play counted: a draw's mean is taken over the discard pile as well as the stock",
    ),
    Mutant(
        "luck-forfeited-counted-draw",
        "luck",
        LUCK,
        "            return game.stock  # type: ignore[attr-defined,no-any-return]",
        "            return game.out_of_play + game.stock  # type: ignore[attr-defined,no-any-return]",
        "a card out of play counted: a draw's mean is taken over the cards a forfeiting seat took out of play too",
    ),
    Mutant(
        "luck-forfeited-counted-centre",
        "luck",
        LUCK,
        "list(game.set_aside)  # type: ignore[attr-defined]\n",
        "list(game.set_aside) + game.out_of_play  # type: ignore[attr-defined]\n",
        "a card out of play counted: a centre card taken unseen may be one a forfeiting seat took out of play",
    ),
    Mutant(
        "luck-recycled-missed",
        "luck",
        LUCK,
        "            return game.stock  # type: ignore[attr-defined,no-any-return]",
        "            first = game.hand_events[0].card\n"
        "            return [card for card in game.stock[:-1] if card != first] + game.stock[-1:]  # type: ignore",
        "a recycled card missed: the deal's face-up card, recycled into the stock, is left out of a draw's mean",
    ),
    Mutant(
        "luck-exchange-all-laid-unseen",
        "luck",
        LUCK,
        "            self._unseen_slots.clear()",
        "            pass",
        "the face-down cards an exchange-all laid are counted as unseen when they are taken",
    ),
    Mutant(
        "sampling-unseen-weights-even",
        "sampling",
        "referee/engine/games/brag_sampling.py",
        "        return float(self.capacity[seat] - places[seat].bit_count())",
        "        return 1.0",
        "a seat showing a card never seen is as likely to hold it whatever number of unseen cards it has",
    ),
    Mutant(
        "sampling-resampling-fixed",
        "sampling",
        "referee/engine/games/brag_sampling.py",
        "        mark = self.rng.random() * step",
        "        mark = 0.0",
        "systematic resampling always starts at 0: the configurations first in order are kept too often",
    ),
    Mutant(
        "sampling-own-face-down-unseen",
        "sampling",
        "referee/engine/games/brag_sampling.py",
        "            if card is not None and card not in self.token_of:\n                by_place[self.slots[slot]]",
        "            if False:\n                by_place[self.slots[slot]]",
        "a face-down card the seat put there is counted as unseen: dealt anywhere, not left where the seat sees it",
    ),
    Mutant(
        "sampling-seen-counted-unseen",
        "sampling",
        "referee/engine/games/brag_sampling.py",
        "        withheld = set(self.token_of) | set(hand)",
        "        withheld = set(hand)",
        "a card seen this hand (one out of play among them) is counted among the cards never seen, and dealt again",
    ),
    Mutant(
        "sampling-forfeited-set-aside",
        "sampling",
        "referee/engine/games/brag_sampling.py",
        "        self.capacity[self.out] += self.capacity[seat]",
        "        pass",
        "a forfeiting seat's cards, out of play, are counted as set aside",
    ),
    Mutant(
        "sampling-set-aside-missed",
        "sampling",
        "referee/engine/games/brag_sampling.py",
        "        rng.shuffle(pool)",
        "        pool[-12:] = rng.sample(pool[-12:], len(pool[-12:]))",
        "the set-aside rest missed: the lowest cards never seen are always set aside, never dealt into play",
    ),
    Mutant(
        "notes-note-uncapped",
        "notes",
        "referee/records/notes.py",
        "        kept, cut = cut_note(note, min(NOTE_BYTES, room))",
        "        kept, cut = cut_note(note, room)",
        "a bot's note is kept whole up to the game's 64 KB: one note may flood a replay",
    ),
    Mutant(
        "notes-every-seat",
        "notes",
        "referee/records/notes.py",
        "            {seat: notes for seat, notes in self.by_seat.items() if seat in seats},",
        "            dict(self.by_seat),",
        "an author's private replay shows the notes of every bot of the game, other authors' included",
    ),
    Mutant(
        "author-test-rated",
        "author_tests",
        "referee/apps/ladder/run.py",
        "            ladder_run.tests.ended(done.game, done.record)\n            return\n",
        "            ladder_run.tests.ended(done.game, done.record)\n",
        "an author's unrated test game is recorded with the ladder's rated games: its standings and pages show it",
    ),
)

# The tests that could catch each module's bugs, fastest first (a file missing from a suite is left out).
SELECTIONS: dict[str, tuple[str, ...]] = {
    "session": (
        "tests/test_session_races.py",
        "tests/test_clock.py",
        "tests/test_faults.py",
        "tests/test_stream.py",
    ),
    "clock": (
        "tests/test_session_races.py",
        "tests/test_clock.py",
        "tests/test_faults.py",
    ),
    "match": (
        "tests/test_session_races.py",  # its last test plays a game on the fakes
        "tests/test_faults.py",
        "tests/test_void_games.py",
        "tests/test_stream.py",
        "tests/test_match.py",
    ),
    "standings": (
        "tests/test_standings.py",
        "tests/test_stats.py",
        "tests/test_replay.py",
        "tests/test_seasons.py",
    ),
    "sandbox": (
        "tests/test_sandbox.py",
        "tests/test_containment.py",
    ),
    "visibility": (
        "tests/test_visibility.py",
        "tests/test_spectating.py",
        "tests/test_nothing_early.py",
    ),
    "feeds": (
        "tests/test_visibility.py",
        "tests/test_spectating.py",
        "tests/test_nothing_early.py",
    ),
    "site": (
        "tests/test_serve.py",
        "tests/test_site.py",
        "tests/test_nothing_early.py",
    ),
    "auth": (
        "tests/test_site_guard.py",
        "tests/test_site.py",
    ),
    "play": ("tests/test_play_tables.py",),
    "notes": ("tests/test_notes.py", "tests/test_author_pages_in_browser.py"),
    "author_tests": ("tests/test_author_test_limits.py", "tests/test_author_tests.py"),
    "luck": (
        "tests/test_luck_pools.py",
        "tests/test_luck.py",
        "tests/test_duel.py",
    ),
    "sampling": (
        "tests/test_luck_pools.py",
        "tests/test_brag_sampling.py",
        "tests/test_search_api.py",
    ),
}
# Tests of those files left out of every run of both suites, with why (node id prefixes, as --deselect takes).
LEFT_OUT: dict[str, str] = {}

# ----- the pytest plugin each run loads (written into the copy, next to its tests/) -----

PLUGIN_NAME = "_mutation_audit_plugin"
PLUGIN = '''\
"""Records the tests that fail (and those stopped for running too long); stops a test that runs too long."""

import json
import os
import signal
import time

import pytest

_OUT = os.environ["MUTATION_AUDIT_OUT"]
_LIMITS = json.loads(os.environ.get("MUTATION_AUDIT_LIMITS") or "{}")
_DEFAULT_LIMIT = float(os.environ.get("MUTATION_AUDIT_DEFAULT_LIMIT") or "0")
_ORDER = json.loads(os.environ.get("MUTATION_AUDIT_ORDER") or "[]")


class TestTooLong(Exception):
    pass


def _record(entry):
    with open(_OUT, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\\n")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The files in the order given (the quick ones first), each file's tests in their own order."""
    place = {path: index for index, path in enumerate(_ORDER)}
    items.sort(key=lambda item: place.get(item.nodeid.split("::")[0], len(place)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    limit = _LIMITS.get(item.nodeid, _DEFAULT_LIMIT)
    if not limit:
        yield
        return

    def expire(signum, frame):
        _record({"event": "timeout", "nodeid": item.nodeid, "limit": limit})
        raise TestTooLong(f"{item.nodeid} ran over {limit:.0f} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def pytest_runtest_logreport(report):
    if report.when == "call" or report.failed:
        entry = {"event": report.outcome, "when": report.when, "nodeid": report.nodeid, "seconds": report.duration}
        if report.failed:
            entry["message"] = str(report.longrepr)[-600:]
        _record(entry)


def pytest_collectreport(report):
    if report.failed:
        _record({"event": "collect-error", "nodeid": report.nodeid, "message": str(report.longrepr)[-600:]})
'''


# ----- copies -----


def git(*args: str, cwd: Path = ROOT) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True).stdout


def rev_name(rev: str) -> str:
    return git("rev-parse", "--short", f"{rev}^{{commit}}").decode().strip()


def extract(rev: str, into: Path, *paths: str) -> None:
    archive = git("archive", "--format=tar", rev, *paths)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


@functools.cache
def editable_checkout() -> tuple[Path, Path]:
    """The checkout whose ``referee`` the virtual environment imports (its editable install), and the virtual
    environment, which must lie inside it (it is mounted back there)."""
    found = subprocess.run(
        [PYTHON, "-c", "import os, sys, referee; print(os.path.dirname(referee.__file__)); print(sys.prefix)"],
        cwd="/",
        env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    checkout, venv = Path(found[0]).resolve().parent, Path(found[1]).resolve()
    if venv.parent != checkout or venv.name != ".venv":
        raise SystemExit(f"the virtual environment {venv} is not the .venv of the checkout {checkout}")
    return checkout, venv


def make_pristine(suite: str, code_rev: str, tests_rev: str, into: Path) -> None:
    """The code of ``code_rev`` with the tests of ``tests_rev``, byte-compiled, and the plugin beside them."""
    into.mkdir(parents=True)
    extract(code_rev, into)
    shutil.rmtree(into / "tests")
    extract(tests_rev, into, "tests")
    if suite == "before":
        conftest = into / "tests" / "conftest.py"
        if "PYTHONPATH_OF_BOTS" not in conftest.read_text(encoding="utf-8"):
            patch = git("show", "--format=", CONFTEST_FIX_REV, "--", "tests/conftest.py")
            subprocess.run(["git", "apply", "-"], cwd=into, input=patch, check=True, capture_output=True)
    (into / f"{PLUGIN_NAME}.py").write_text(PLUGIN, encoding="utf-8")
    compile_tree(into / "referee")


def compile_tree(folder: Path) -> None:
    # Checked against the source's hash, not its time: a mutated file is never run from a stale .pyc.
    if not compileall.compile_dir(
        str(folder), quiet=1, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH, workers=1
    ):
        raise SystemExit(f"{folder} does not compile")


def check_mutants(root: Path, mutants: Sequence[Mutant]) -> None:
    """Every mutant's text occurs exactly once in its file, and the file compiles once mutated; else exit."""
    problems = []
    names = [mutant.name for mutant in mutants]
    for mutant in mutants:
        if names.count(mutant.name) > 1:
            problems.append(f"{mutant.name}: the name is used twice")
        if mutant.module not in SELECTIONS:
            problems.append(f"{mutant.name}: no test selection for module {mutant.module!r}")
        path = root / mutant.file
        if not path.is_file():
            problems.append(f"{mutant.name}: no file {mutant.file}")
            continue
        text = path.read_text(encoding="utf-8")
        count = text.count(mutant.old)
        if count != 1:
            problems.append(f"{mutant.name}: its text occurs {count} times in {mutant.file}, not once: {mutant.old!r}")
            continue
        try:
            compile(text.replace(mutant.old, mutant.new), mutant.file, "exec")
        except SyntaxError as error:
            problems.append(f"{mutant.name}: {mutant.file} does not compile once mutated: {error}")
    if problems:
        raise SystemExit("bad mutants:\n  " + "\n  ".join(problems))


def apply(copy: Path, mutant: Mutant) -> None:
    path = copy / mutant.file
    text = path.read_text(encoding="utf-8")
    assert text.count(mutant.old) == 1, mutant.name
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    cached = importlib.util.cache_from_source(str(path))
    py_compile.compile(
        str(path), cfile=cached, doraise=True, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH
    )


# ----- runs -----


@dataclass
class Run:
    """One pytest run: its outcome, wall time and what the plugin saw."""

    outcome: str  # "killed", "killed (timeout)", "survived", "error"
    seconds: float
    returncode: int | None
    failed: list[str] = field(default_factory=list)  # node ids, in the order they failed
    collect_errors: list[str] = field(default_factory=list)
    timed_out: list[str] = field(default_factory=list)  # tests stopped by the plugin's per-test limit
    durations: dict[str, float] = field(default_factory=dict)  # node id -> seconds of its call (passed or not)
    messages: dict[str, str] = field(default_factory=dict)
    tail: str = ""  # the end of pytest's output, when the run went wrong


def run_pytest(
    copy: Path,
    tests: Sequence[str],
    *,
    stop_at_first: bool,
    deselect: Sequence[str],
    ignore: Sequence[str],
    workers: int,
    dist: str,
    run_timeout: float,
    limits: dict[str, float] | None = None,
    default_limit: float = 0.0,
) -> Run:
    """Run pytest on ``tests`` in ``copy``, seen where the checkout is (see the module's doc), and say how it went."""
    out = copy / ".mutation-audit-events.jsonl"
    out.unlink(missing_ok=True)
    argv = pytest_command(tests, stop_at_first, deselect, ignore, workers, dist)
    env = pytest_environment(out, tests, limits, default_limit)
    output, returncode, seconds = run_isolated(copy, argv, env, run_timeout)
    run = Run("error", seconds, returncode)
    read_events(out, run)
    run.outcome = run_outcome(run)
    if run.outcome in ("error", "killed (timeout)") or not stop_at_first:
        run.tail = output.decode(errors="replace")[-3000:]
    return run


def pytest_command(
    tests: Sequence[str], stop_at_first: bool, deselect: Sequence[str], ignore: Sequence[str], workers: int, dist: str
) -> list[str]:
    argv = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers)]
    if workers:
        argv += ["--dist", dist]
    if stop_at_first:
        argv.append("-x")
    argv += [f"--deselect={node}" for node in deselect]
    argv += [f"--ignore={path}" for path in ignore]
    argv += list(tests)
    return argv


def pytest_environment(
    out: Path, tests: Sequence[str], limits: dict[str, float] | None, default_limit: float
) -> dict[str, str]:
    """The run's environment: the copy's code seen where the checkout is, and the plugin's settings."""
    checkout, _ = editable_checkout()
    return {
        **os.environ,
        "PYTHONPATH": str(checkout),  # where the copy is seen
        "PYTHONDONTWRITEBYTECODE": "1",  # the copy's .pyc files are compiled once, checked by hash
        "PYTEST_PLUGINS": PLUGIN_NAME,  # loaded by the controller and by every xdist worker
        "MUTATION_AUDIT_OUT": str(out),
        "MUTATION_AUDIT_LIMITS": json.dumps(limits or {}),
        "MUTATION_AUDIT_DEFAULT_LIMIT": str(default_limit),
        "MUTATION_AUDIT_ORDER": json.dumps(list(tests)),
    }


def run_isolated(
    copy: Path, argv: list[str], env: dict[str, str], run_timeout: float
) -> tuple[bytes, int | None, float]:
    """Run ``argv`` with the copy mounted over the checkout, killed after ``run_timeout`` seconds: its output, its
    exit status (None when it was killed) and the seconds it took."""
    checkout, venv = editable_checkout()
    start = time.perf_counter()
    (copy / ".venv").mkdir(exist_ok=True)
    # In a mount namespace of the run's own: the real virtual environment into the copy, then the copy (and the
    # environment in it) over the checkout; the mounts go with the namespace's last process.
    script = 'mount --bind "$1" "$2/.venv" && mount --rbind "$2" "$3" && cd "$3" && shift 3 && exec "$@"'
    isolated = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(venv), str(copy)]
    process = subprocess.Popen(
        [*isolated, str(checkout), *argv],
        cwd=copy,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=run_timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return output, None, time.perf_counter() - start
    return output, process.returncode, time.perf_counter() - start


def read_events(out: Path, run: Run) -> None:
    """Add to ``run`` what the plugin recorded in ``out``: the tests that failed, timed out or could not be
    collected, with their messages, and each test's duration."""
    for line in out.read_text(encoding="utf-8").splitlines() if out.exists() else []:
        event = json.loads(line)
        nodeid = event["nodeid"]
        if event["event"] == "collect-error":
            if nodeid not in run.collect_errors:
                run.collect_errors.append(nodeid)
            run.messages[nodeid] = event["message"]
        elif event["event"] == "timeout":
            if nodeid not in run.timed_out:
                run.timed_out.append(nodeid)
        elif event["event"] == "failed":
            if nodeid not in run.failed:
                run.failed.append(nodeid)
            run.messages.setdefault(nodeid, event["message"])
        if event.get("when") == "call":
            run.durations[nodeid] = event["seconds"]


def run_outcome(run: Run) -> str:
    """What a run with these events and exit status says of its mutant (a returncode of None: the run was killed)."""
    if run.returncode is None:
        return "killed (timeout)"
    if run.returncode == 0:
        return "survived"
    if run.timed_out:
        return "killed (timeout)"
    if run.failed or run.collect_errors:
        return "killed"
    return "error"  # pytest itself went wrong (a usage error, no tests collected): not a verdict


# ----- a suite -----


@dataclass
class Suite:
    name: str
    tests_rev: str
    pristine: Path
    deselected: dict[str, str] = field(default_factory=dict)  # node id -> why
    ignored: dict[str, str] = field(default_factory=dict)  # file -> why
    baseline: Run | None = None
    results: dict[str, Run] = field(default_factory=dict)

    def selection(self, module: str) -> list[str]:
        """The module's test files this suite has and can collect (pytest collects a file named on its command
        line even if --ignore names it too)."""
        return [path for path in SELECTIONS[module] if (self.pristine / path).is_file() and path not in self.ignored]


def run_baseline(suite: Suite, modules: Sequence[str], args: argparse.Namespace) -> None:
    """Run every selected test once, unmutated; deselect (or ignore) in this suite whatever fails."""
    tests = list(dict.fromkeys(path for module in modules for path in suite.selection(module)))
    copy = fresh_copy(suite, "baseline", args)
    print(f"[{suite.name}] baseline: {' '.join(tests)}", flush=True)
    run = run_pytest(
        copy,
        tests,
        stop_at_first=False,
        deselect=[*LEFT_OUT, *suite.deselected],
        ignore=[],
        workers=args.workers,
        dist=args.dist,
        run_timeout=args.baseline_timeout,
    )
    suite.baseline = run
    for path in run.collect_errors:
        suite.ignored[path] = "cannot be collected on the code: " + last_line(run.messages.get(path, ""))
    for nodeid in run.failed:
        suite.deselected[nodeid] = "fails on the unmutated code: " + last_line(run.messages.get(nodeid, ""))
    remove_copy(copy, args)
    print(
        f"[{suite.name}] baseline: {run.outcome if run.outcome != 'survived' else 'passed'} in {run.seconds:.0f} s; "
        f"{len(run.durations)} tests ran, {len(suite.deselected)} deselected, {len(suite.ignored)} files ignored",
        flush=True,
    )
    for nodeid, why in {**suite.ignored, **suite.deselected}.items():
        print(f"    left out: {nodeid}: {why}", flush=True)
    if run.outcome == "error" or (run.returncode not in (0, 1) and not run.collect_errors):
        print(run.tail, flush=True)
        raise SystemExit(f"[{suite.name}] the baseline run went wrong (exit status {run.returncode})")


def last_line(message: str) -> str:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def run_mutant(suite: Suite, mutant: Mutant, args: argparse.Namespace) -> Run:
    assert suite.baseline is not None
    copy = fresh_copy(suite, mutant.name, args)
    apply(copy, mutant)
    limits = {
        nodeid: max(args.test_timeout_min, args.test_timeout_factor * seconds)
        for nodeid, seconds in suite.baseline.durations.items()
    }
    run = run_pytest(
        copy,
        suite.selection(mutant.module),
        stop_at_first=True,
        deselect=[*LEFT_OUT, *suite.deselected],
        ignore=list(suite.ignored),
        workers=args.workers,
        dist=args.dist,
        run_timeout=args.run_timeout,
        limits=limits,
        default_limit=args.test_timeout_default,
    )
    remove_copy(copy, args)
    return run


def fresh_copy(suite: Suite, name: str, args: argparse.Namespace) -> Path:
    copy = suite.pristine.parent / f"{suite.name}-{name}"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(suite.pristine, copy, symlinks=True)
    return copy


def remove_copy(copy: Path, args: argparse.Namespace) -> None:
    if not args.keep:
        shutil.rmtree(copy, ignore_errors=True)


# ----- the report -----


def verdict(run: Run | None) -> str:
    if run is None:
        return "-"
    return {"killed": "killed", "killed (timeout)": "killed (timeout)", "survived": "SURVIVED"}.get(
        run.outcome, run.outcome
    )


def killed(run: Run | None) -> bool:
    return run is not None and run.outcome.startswith("killed")


def report(suites: Sequence[Suite], mutants: Sequence[Mutant]) -> str:
    names = [suite.name for suite in suites]
    rows = []
    for mutant in mutants:
        row: list[Any] = [mutant.name, mutant.module]
        row += [verdict(suite.results.get(mutant.name)) for suite in suites]
        row += [
            f"{suite.results[mutant.name].seconds:.0f} s" if mutant.name in suite.results else "-" for suite in suites
        ]
        rows.append(row)
    headers = ["mutant", "module", *(f"killed {name}?" for name in names), *(f"time {name}" for name in names)]
    lines = [tabulate(rows, headers=headers, tablefmt="github")]
    lines.append("")
    for suite in suites:
        runs = [suite.results[mutant.name] for mutant in mutants if mutant.name in suite.results]
        caught = sum(killed(run) for run in runs)
        by_timeout = sum(run.outcome == "killed (timeout)" for run in runs)
        spent = sum(run.seconds for run in runs)
        baseline = suite.baseline.seconds if suite.baseline else 0.0
        lines.append(
            f"{suite.name} (tests of {suite.tests_rev}): killed {caught}/{len(runs)}"
            + (f" ({by_timeout} by a timeout)" if by_timeout else "")
            + f"; test time {spent / 60:.1f} min on the mutants, {baseline / 60:.1f} min on the baseline"
        )
    lines.append("")
    killers = []
    for mutant in mutants:
        row = [mutant.name]
        for suite in suites:
            run = suite.results.get(mutant.name)
            row.append(first_failure(run))
        killers.append(row)
    lines.append(tabulate(killers, headers=["mutant", *(f"first failing test, {name}" for name in names)]))
    return "\n".join(lines)


def first_failure(run: Run | None) -> str:
    if run is None:
        return "-"
    if run.timed_out:
        return run.timed_out[0] + " (stopped: too long)"
    if run.failed:
        return run.failed[0]
    if run.collect_errors:
        return run.collect_errors[0] + " (collection)"
    return "(run timed out)" if run.outcome == "killed (timeout)" else ""


def suites_from_json(paths: Sequence[Path]) -> tuple[list[Suite], list[Mutant]]:
    """The suites of one or more ``--json`` files, a later file's result for a mutant replacing an earlier's."""
    suites: dict[str, Suite] = {}
    mutants: dict[str, Mutant] = {}
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        for entry in data["mutants"]:
            mutants.setdefault(entry["name"], Mutant(**entry))
        for name, saved in data["suites"].items():
            suite = suites.setdefault(name, Suite(name, saved["tests"], Path()))
            suite.deselected.update(saved["deselected"])
            suite.ignored.update(saved["ignored"])
            if saved["baseline_seconds"] is not None and suite.baseline is None:
                suite.baseline = Run("survived", saved["baseline_seconds"], 0)
            for mutant, result in saved["results"].items():
                suite.results[mutant] = Run(
                    result["outcome"],
                    result["seconds"],
                    result["returncode"],
                    failed=result["failed"],
                    collect_errors=result["collect_errors"],
                    timed_out=result["timed_out"],
                )
    order = {mutant.name: index for index, mutant in enumerate(MUTANTS)}
    chosen = sorted(mutants.values(), key=lambda mutant: order.get(mutant.name, len(order)))
    return [suites[name] for name in ("before", "after") if name in suites], chosen


def results_json(suites: Sequence[Suite], mutants: Sequence[Mutant], args: argparse.Namespace) -> dict[str, Any]:
    return {
        "code": rev_name(args.code),
        "command": " ".join(sys.argv),
        "selections": {module: list(paths) for module, paths in SELECTIONS.items()},
        "left_out": LEFT_OUT,
        "mutants": [dataclasses.asdict(mutant) for mutant in mutants],
        "suites": {
            suite.name: {
                "tests": suite.tests_rev,
                "deselected": suite.deselected,
                "ignored": suite.ignored,
                "baseline_seconds": suite.baseline.seconds if suite.baseline else None,
                "killed": sum(killed(run) for run in suite.results.values()),
                "total": len(suite.results),
                "mutant_seconds": sum(run.seconds for run in suite.results.values()),
                "results": {
                    name: {
                        "outcome": run.outcome,
                        "seconds": round(run.seconds, 2),
                        "returncode": run.returncode,
                        "failed": run.failed,
                        "timed_out": run.timed_out,
                        "collect_errors": run.collect_errors,
                        "first_message": last_line(run.messages.get(first_failure(run).split(" (")[0], "")),
                        "tail": run.tail,
                    }
                    for name, run in suite.results.items()
                },
            }
            for suite in suites
        },
    }


# ----- main -----


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    if args.table:
        suites, chosen = suites_from_json(args.table)
        print(report(suites, chosen))
        return 0
    mutants = chosen_mutants(args)
    if args.list:
        print_mutants(mutants)
        return 0
    if not mutants:
        raise SystemExit(f"no mutant's name contains any of {args.only}")
    suites = audit(mutants, args)
    print()
    print(report(suites, mutants))
    return 0


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=("before", "after", "both"), default="both")
    parser.add_argument("--only", action="append", default=[], help="run the mutants whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the mutants and the selections, and stop")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--code", default="HEAD", help="the revision whose code is mutated (default HEAD)")
    parser.add_argument("--before", default=BEFORE_REV, help=f"the tests of 'before' (default {BEFORE_REV})")
    parser.add_argument("--after", default="HEAD", help="the tests of 'after' (default HEAD)")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (at most 2 here; 0: none)")
    parser.add_argument(
        "--dist",
        default="load",
        help="pytest-xdist's distribution (default load: test by test, in the selection's order, quick files first)",
    )
    parser.add_argument("--run-timeout", type=float, default=900.0, help="seconds a mutant's whole run may take")
    parser.add_argument("--baseline-timeout", type=float, default=2400.0)
    parser.add_argument("--test-timeout-factor", type=float, default=4.0)
    parser.add_argument("--test-timeout-min", type=float, default=30.0)
    parser.add_argument(
        "--test-timeout-default", type=float, default=300.0, help="for a test the baseline did not time"
    )
    parser.add_argument("--workdir", type=Path, help="where the copies go (default: a new temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep each mutant's copy")
    parser.add_argument(
        "--deselect", action="append", default=[], help="a test (node id prefix) to leave out of both suites' runs"
    )
    parser.add_argument(
        "--table", type=Path, nargs="+", help="print the table of these --json files (a later one's results win)"
    )
    return parser.parse_args(argv)


def chosen_mutants(args: argparse.Namespace) -> list[Mutant]:
    """The mutants --only names (all without it), once every mutant of the table is checked: its text occurs once
    in a file of the code's revision."""
    mutants = [mutant for mutant in MUTANTS if not args.only or any(part in mutant.name for part in args.only)]
    check_mutants(ROOT, MUTANTS)
    code_files = git("ls-tree", "-r", "--name-only", args.code).decode().split()
    stale = sorted({mutant.file for mutant in MUTANTS} - set(code_files))
    if stale:
        raise SystemExit(f"not files of {args.code}: {stale}")
    return mutants


def print_mutants(mutants: Sequence[Mutant]) -> None:
    """--list: the mutants, each module's test selection and the tests left out of both suites."""
    rows = [(mutant.name, mutant.module, mutant.file, mutant.bug) for mutant in mutants]
    print(tabulate(rows, headers=["mutant", "module", "file", "the bug"]))
    print()
    for module, paths in SELECTIONS.items():
        print(f"{module}: {' '.join(paths)}")
    for nodeid, why in LEFT_OUT.items():
        print(f"left out of both: {nodeid}: {why}")


def audit(mutants: Sequence[Mutant], args: argparse.Namespace) -> list[Suite]:
    """Make each suite's copy of the code, run its baseline, then every mutant; the copies removed at the end
    (unless --keep), the results written to --json after each mutant and at the end, however it ends."""
    workdir = Path(tempfile.mkdtemp(prefix="mutation-audit-", dir=args.workdir))
    workdir.chmod(0o755)  # a bot runs as a user of its own (the referee is root), and reads its files from the copy
    names = ("before", "after") if args.suite == "both" else (args.suite,)
    revs = {"before": rev_name(args.before), "after": rev_name(args.after)}
    code = rev_name(args.code)
    print(f"code of {code}; mutants: {len(mutants)}; suites: {', '.join(f'{n} ({revs[n]})' for n in names)}")
    print(f"copies in {workdir}", flush=True)
    suites: list[Suite] = []
    try:
        for name in names:
            pristine = workdir / f"{name}-pristine"
            make_pristine(name, args.code, revs[name], pristine)
            check_mutants(pristine, mutants)
            suites.append(Suite(name, revs[name], pristine))
        modules = list(dict.fromkeys(mutant.module for mutant in mutants))
        for suite in suites:
            suite.deselected.update(dict.fromkeys(args.deselect, "left out with --deselect"))
            run_baseline(suite, modules, args)
        share_deselections(suites)
        for suite in suites:
            run_mutants(suite, suites, mutants, args)
    finally:
        if args.json and suites:
            write_results(suites, mutants, args)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return suites


def share_deselections(suites: Sequence[Suite]) -> None:
    """Leave out of each suite the tests that another suite's baseline left out."""
    # A test that fails on the unmutated code in one suite's baseline (a flaky one, under load) is left out
    # of the other too, where it has the same node id: neither suite is credited with what it alone kept.
    for suite in suites:
        for other in suites:
            for nodeid, why in other.deselected.items():
                if other is not suite and nodeid not in suite.deselected:
                    suite.deselected[nodeid] = f"(in the {other.name} suite's baseline) {why}"


def run_mutants(suite: Suite, suites: Sequence[Suite], mutants: Sequence[Mutant], args: argparse.Namespace) -> None:
    """Run each mutant against ``suite``'s tests, saying how each went; with --json, every suite's results are
    written after each."""
    for number, mutant in enumerate(mutants, 1):
        run = run_mutant(suite, mutant, args)
        suite.results[mutant.name] = run
        print(
            f"[{suite.name}] {number}/{len(mutants)} {mutant.name}: {verdict(run)} in {run.seconds:.0f} s"
            + (f" by {first_failure(run)}" if killed(run) else ""),
            flush=True,
        )
        if run.outcome == "error":
            print(run.tail, flush=True)
        if args.json:
            write_results(suites, mutants, args)


def write_results(suites: Sequence[Suite], mutants: Sequence[Mutant], args: argparse.Namespace) -> None:
    args.json.write_text(json.dumps(results_json(suites, mutants, args), indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
