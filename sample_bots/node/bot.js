'use strict';
// A Node.js bot for the Brag referee: plays Stop the Bus and Bastard Brag, on the Node.js bot kit.
//
// The referee sets REFEREE_BOT_ADDRESS ("unix:/path/bot.sock" or "127.0.0.1:PORT") and starts
// `node bot.js`; the kit (./kit, the package referee-bot-kit) serves protocol v2 on that address
// until SIGTERM or SIGINT and calls `decide` for each decision. Logs go to stderr; stdout stays quiet.
//
// Strategy: every three-card hand gets a strength, the fraction of the 22,100 possible hands it
// beats. The bot keeps the strongest hand it can reach (the mean strength when a card is unknown),
// and stops or knocks once its hand is unlikely to be the single worst at the table. Each decision
// carries a one-line note of what it chose and why (obs.note): the author reads it in the replay.

const { runBot } = require('referee-bot-kit');

const NAME = 'node-heuristic';
const VERSION = '2.0.0';

// ----- cards and hands --------------------------------------------------------
// A card is an id 0..51: (rank - 2) * 4 + suit, suits clubs 0 < diamonds 1 < hearts 2 < spades 3,
// so ids sort by rank, then suit, like the referee's canonical deck.

const SUITS = ['SUIT_CLUBS', 'SUIT_DIAMONDS', 'SUIT_HEARTS', 'SUIT_SPADES'];
const ACE = 14;
const A23 = 15; // the run A-2-3 and the prial 3-3-3 rank above every ordinary rank

function cardId(card) {
  return (card.rank - 2) * 4 + SUITS.indexOf(card.suit);
}

function rankOf(id) {
  return (id >> 2) + 2;
}

// A number that orders three-card Brag hands: category, then the ranks that decide within it,
// then the suit of the highest card (exact ties).
function handScore(x, y, z) {
  const [a, b, c] = [x, y, z].sort((p, q) => q - p);
  const r1 = rankOf(a);
  const r2 = rankOf(b);
  const r3 = rankOf(c);
  const flush = a % 4 === b % 4 && b % 4 === c % 4;
  let category;
  let values;
  if (r1 === r2 && r2 === r3) {
    category = 5; // prial
    values = [r1 === 3 ? A23 : r1, 0, 0];
  } else if ((r1 === ACE && r2 === 3 && r3 === 2) || (r1 === r2 + 1 && r2 === r3 + 1)) {
    category = flush ? 4 : 3; // running flush, run
    values = [r1 === ACE && r2 === 3 ? A23 : r1, 0, 0];
  } else if (flush) {
    category = 2;
    values = [r1, r2, r3];
  } else if (r1 === r2 || r2 === r3) {
    category = 1; // pair, then kicker
    values = r1 === r2 ? [r1, r3, 0] : [r2, r1, 0];
  } else {
    category = 0; // high card
    values = [r1, r2, r3];
  }
  return (((category * 16 + values[0]) * 16 + values[1]) * 16 + values[2]) * 4 + (a % 4);
}

// "KS" for a card id, and "KS KH 4C" for a hand of them, as the notes write cards.
function idText(id) {
  return '23456789TJQKA'[rankOf(id) - 2] + 'CDHS'[id % 4];
}

function handText(ids) {
  return ids.map(idText).join(' ');
}

// A strength in a note: 0.83.
function fixed(s) {
  return s.toFixed(2);
}

function handKey(x, y, z) {
  return x * 2704 + y * 52 + z;
}

// STRENGTH[handKey(...)] for any order of the three ids: the fraction of all hands this one beats.
const STRENGTH = (() => {
  const hands = [];
  for (let a = 0; a < 52; a++) {
    for (let b = a + 1; b < 52; b++) {
      for (let c = b + 1; c < 52; c++) hands.push([handScore(a, b, c), a, b, c]);
    }
  }
  hands.sort((p, q) => p[0] - q[0]);
  const table = new Float64Array(52 * 52 * 52);
  hands.forEach(([, a, b, c], position) => {
    const s = position / hands.length;
    for (const [p, q, r] of [[a, b, c], [a, c, b], [b, a, c], [b, c, a], [c, a, b], [c, b, a]]) {
      table[handKey(p, q, r)] = s;
    }
  });
  return table;
})();

function strength(ids) {
  return STRENGTH[handKey(ids[0], ids[1], ids[2])];
}

// The strength of the best three of `hand` plus `extra` (keeping `extra` if `mustKeep`).
function bestWith(hand, extra, mustKeep) {
  const [a, b, c] = hand;
  const best = Math.max(strength([a, b, extra]), strength([a, extra, c]), strength([extra, b, c]));
  return mustKeep ? best : Math.max(best, strength(hand));
}

function mean(values) {
  return values.length ? values.reduce((sum, v) => sum + v, 0) / values.length : 0;
}

// ----- when to end a hand -------------------------------------------------------

// Chance that every opponent beats strength `s` when each holds about the best of `power` random hands.
function loseChance(s, opponents, power) {
  return Math.pow(1 - Math.pow(s, power), opponents);
}

// Stop or knock when the chance of holding the single worst hand, after every opponent's final
// turn, is below half the fair share 1 / players. Opponents improve as the hand goes on; and the
// longer the hand, the more risk is accepted, so that hands end.
function shouldEnd(obs, s) {
  const players = obs.seats.filter((seat) => seat.in_hand).length;
  const opponents = players - 1;
  const rounds = obs.turns_this_hand / players;
  const power = 2 + 2 * Math.min(rounds, 3);
  const target = (0.5 / players) * (1 + 0.25 * Math.max(0, rounds - 3));
  return loseChance(s, opponents, power) <= target;
}

// ----- Stop the Bus ------------------------------------------------------------------

// Cards that cannot be in the stock: the discard pile and cards opponents took from it.
function stopTheBusSeen(events, seat) {
  let pile = [];
  const takenByOthers = new Set();
  for (const event of events) {
    if (event.kind === 'EVENT_KIND_DEAL') {
      pile = [cardId(event.card)];
      takenByOthers.clear();
    } else if (event.kind === 'EVENT_KIND_DISCARD') {
      pile.push(cardId(event.card));
      takenByOthers.delete(cardId(event.card));
    } else if (event.kind === 'EVENT_KIND_TAKE') {
      pile.pop();
      if (event.seat !== seat) takenByOthers.add(cardId(event.card));
    } else if (event.kind === 'EVENT_KIND_RECYCLE') {
      pile = pile.slice(-1);
    }
  }
  return new Set([...pile, ...takenByOthers]);
}

function unknownCards(known) {
  const unknown = [];
  for (let id = 0; id < 52; id++) if (!known.has(id)) unknown.push(id);
  return unknown;
}

function decideStopTheBus(obs) {
  const legal = obs.legal_actions;
  const view = obs.stop_the_bus;
  const hand = obs.hand.map(cardId);
  if (view.drawn_card) {
    // Discard the card whose loss leaves the strongest three (the referee lists only legal discards).
    let best = null;
    let bestScore = -1;
    for (const action of legal) {
      const gone = cardId(action.card);
      const score = strength(hand.filter((id) => id !== gone));
      if (score > bestScore) [best, bestScore] = [action, score];
    }
    if (best) {
      const kept = hand.filter((id) => id !== cardId(best.card));
      obs.note(`discard ${idText(cardId(best.card))}: keeps ${handText(kept)}, strength ${fixed(bestScore)}`);
    }
    return best;
  }
  const now = strength(hand);
  const find = (kind) => legal.find((action) => action.kind === kind);
  if (find('ACTION_KIND_STOP') && shouldEnd(obs, now)) {
    obs.note(`stop: ${handText(hand)}, strength ${fixed(now)}, is unlikely to be the worst at the table`);
    return find('ACTION_KIND_STOP');
  }
  const top = cardId(view.discard_top);
  const seen = stopTheBusSeen(obs.hand_events, obs.seat);
  seen.add(top);
  for (const id of hand) seen.add(id);
  const drawValue = mean(unknownCards(seen).map((id) => bestWith(hand, id, false)));
  const takeValue = bestWith(hand, top, true);
  const values = `take ${fixed(takeValue)}, draw ${fixed(drawValue)} (mean), hold ${fixed(now)}`;
  if (takeValue > now && takeValue >= drawValue) {
    obs.note(`take ${idText(top)}: ${values}`);
    return find('ACTION_KIND_TAKE');
  }
  obs.note(`draw: ${values}`);
  return find('ACTION_KIND_DRAW'); // never worse than passing: the drawn card may be discarded
}

// ----- Bastard Brag -----------------------------------------------------------------

function decideBastardBrag(obs) {
  const legal = obs.legal_actions;
  const hand = obs.hand.map(cardId);
  const centre = [null, null, null];
  for (const slot of obs.bastard_brag.centre) {
    if (slot.card) centre[slot.slot] = cardId(slot.card);
  }
  const known = new Set(hand);
  for (const id of centre) if (id !== null) known.add(id);
  const unknown = unknownCards(known);

  const slotValue = (kept, slot) =>
    centre[slot] !== null ? strength([...kept, centre[slot]]) : mean(unknown.map((id) => strength([...kept, id])));
  let wholeCentre = null;
  const wholeCentreValue = () => {
    const visible = centre.filter((id) => id !== null);
    if (visible.length === 3) return strength(visible);
    if (visible.length === 2) return mean(unknown.map((id) => strength([...visible, id])));
    const values = [];
    for (let i = 0; i < unknown.length; i++) {
      for (let j = i + 1; j < unknown.length; j++) values.push(strength([visible[0], unknown[i], unknown[j]]));
    }
    return mean(values);
  };

  let best = null;
  let bestScore = -1;
  let knock = null;
  for (const action of legal) {
    let score;
    if (action.kind === 'ACTION_KIND_EXCHANGE') {
      const given = cardId(action.card);
      score = slotValue(hand.filter((id) => id !== given), action.slot);
    } else if (action.kind === 'ACTION_KIND_EXCHANGE_ALL') {
      if (wholeCentre === null) wholeCentre = wholeCentreValue();
      score = wholeCentre - 0.0001 * action.card.rank; // lay the lowest card face up
    } else {
      if (action.kind === 'ACTION_KIND_KNOCK') knock = action;
      continue;
    }
    if (score > bestScore) [best, bestScore] = [action, score];
  }
  const now = strength(hand);
  const players = obs.seats.filter((seat) => seat.in_hand).length;
  // Knock on a strong hand, or when any exchange would only spoil a hand that is not among the worst.
  if (knock && shouldEnd(obs, now)) {
    obs.note(`knock: ${handText(hand)}, strength ${fixed(now)}, is unlikely to be the worst at the table`);
    return knock;
  }
  if (knock && bestScore < now && loseChance(now, players - 1, 4) <= 1 / players) {
    obs.note(`knock: ${handText(hand)}, strength ${fixed(now)}; the best exchange would make ${fixed(bestScore)}`);
    return knock;
  }
  if (best) obs.note(`${exchangeText(best)}: expects strength ${fixed(bestScore)}, holding ${fixed(now)}`);
  return best;
}

// "exchange 2C for slot 1", "exchange all, 4D face up": an exchange as the notes write it.
function exchangeText(action) {
  const card = idText(cardId(action.card));
  if (action.kind === 'ACTION_KIND_EXCHANGE_ALL') return `exchange all, ${card} face up`;
  return `exchange ${card} for slot ${action.slot}`;
}

// ----- the bot ---------------------------------------------------------------------------------

// `obs` is the request's observation with `legal_actions` and `hand_events` (the kit keeps the
// hand's public history), and `obs.note(text)`, which writes the decision's private note. Returning
// one of obs.legal_actions, as decoded, serializes it back exactly.
function decide(obs) {
  logClock(obs);
  return obs.view === 'stop_the_bus' ? decideStopTheBus(obs) : decideBastardBrag(obs);
}

// The clock, in the log once every CLOCK_LOG_EVERY decisions (the first included): the time left
// for this move and in the bank, and what the referee charged the previous decision.
const CLOCK_LOG_EVERY = 20;
let decisionsMade = 0;

function logClock(obs) {
  decisionsMade += 1;
  if (decisionsMade % CLOCK_LOG_EVERY !== 1) return;
  console.error(
    `clock: decision ${obs.decision_number}: move ${obs.move_time_ms} ms, bank ${obs.time_bank_ms} ms left;` +
      ` the previous decision was charged ${obs.last_charged_ms} ms`,
  );
}

if (require.main === module) runBot(decide, { name: NAME, version: VERSION, author: 'sample' });

module.exports = { decide, handScore, strength, cardId, decideStopTheBus, decideBastardBrag, shouldEnd };
