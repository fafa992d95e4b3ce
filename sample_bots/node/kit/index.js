'use strict';
// The Node.js bot kit for the Brag referee: write one function from observation to action, and play.
//
//   const { runBot } = require('referee-bot-kit');
//   runBot((obs) => obs.legal_actions[0], { name: 'first-legal' });
//
// The kit serves protocol v2 (proto/referee/v2/bot.proto, carried in this folder so a bot needs
// nothing outside its own folder at run time) on the address in REFEREE_BOT_ADDRESS: it answers the
// handshake, keeps each game's public history from the stream (checking the events' sequence
// numbers), calls `decide` for each decision_request and your optional hooks for everything else,
// one message at a time and in order. If `decide` throws (or its promise rejects), the kit writes the
// stack to stderr (your log) and answers with Decision.error, the error's one-line summary: the
// referee records a malformed-reply fault quoting it. Messages are plain objects with the .proto's
// field names; enums are their names ('ACTION_KIND_DRAW', 'SUIT_SPADES'); uint64 values are strings.
//
// Notes: `decide` may call obs.note(text) any number of times; the texts, joined by "\n", go with
// that decision's reply as Decision.note, a private note kept beside the decision in your replay (see
// NOTE_BYTES for the cap).

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTOCOL_VERSION = 2;
const ADDRESS_VARIABLE = 'REFEREE_BOT_ADDRESS';
const PROTO_PATH = path.join(__dirname, 'proto', 'referee', 'v2', 'bot.proto');
// keepCase: field names as in the .proto (decision_number). enums: String: enums are their names.
// longs: String: the uint64 random_seed is a decimal string (BigInt(seed) for arithmetic), exact.
// defaults: unset scalars read as their defaults, unset messages as null; an unset `optional` field
// (Action.slot, Event.seat) stays undefined, so a decoded action serializes back exactly as sent.
// oneofs: a oneof's name holds the field that is set (`observation.view === 'stop_the_bus'`).
const LOAD_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

const GAME_NAMES = { stop_the_bus: 'GAME_STOP_THE_BUS', bastard_brag: 'GAME_BASTARD_BRAG' };

// ----- cards -------------------------------------------------------------------------------
// The text form, the same everywhere (logs, the referee, the other kits): rank then suit letter,
// "QS", "TD", "2C", "AH".

const RANK_CHARS = '23456789TJQKA';
const SUITS = ['SUIT_CLUBS', 'SUIT_DIAMONDS', 'SUIT_HEARTS', 'SUIT_SPADES'];
const SUIT_CHARS = 'CDHS';

/** "QS" for { rank: 12, suit: 'SUIT_SPADES' } (the suit may also be its number, 1..4). */
function cardText(card) {
  const suit = typeof card.suit === 'number' ? card.suit - 1 : SUITS.indexOf(card.suit);
  return RANK_CHARS[card.rank - 2] + SUIT_CHARS[suit];
}

/** { rank: 12, suit: 'SUIT_SPADES' } for "QS" (any case; "10S" for "TS" too). */
function parseCard(text) {
  const match = /^(10|[2-9TJQKA])([CDHS])$/i.exec(String(text).trim());
  if (!match) throw new Error(`${JSON.stringify(text)} is not a card: write rank then suit, as in "QS", "TD", "2C"`);
  const rank = match[1] === '10' ? 10 : RANK_CHARS.indexOf(match[1].toUpperCase()) + 2;
  return { rank, suit: SUITS[SUIT_CHARS.indexOf(match[2].toUpperCase())] };
}

/** A short text for an action, for logs: "ACTION_KIND_DISCARD QS", "ACTION_KIND_EXCHANGE 2C slot 1". */
function actionText(action) {
  let text = action.kind;
  if (action.card) text += ` ${cardText(action.card)}`;
  if (action.slot !== undefined && action.slot !== null) text += ` slot ${action.slot}`;
  return text;
}

// ----- notes ------------------------------------------------------------------------------------
// A decision's note (Decision.note) is for its author's eyes: what the bot believed, why it chose. The
// referee keeps the first 1024 bytes of each note (UTF-8, cut at a character, marked " [cut]") and the
// first 65536 bytes of a bot's notes in a game; its caps are the authority. The kit cuts a note the
// same way before sending it, so it never sends more than the referee keeps.

const NOTE_BYTES = 1024; // the most of one note the referee keeps, in bytes of UTF-8
const CUT_MARK = ' [cut]';

/**
 * `text` as it goes out as a note: at most `limit` bytes of UTF-8; a longer text is cut at a
 * character and ends " [cut]" (within the limit). A lone surrogate becomes U+FFFD.
 */
function cutNote(text, limit = NOTE_BYTES) {
  const bytes = Buffer.from(String(text), 'utf8');
  if (bytes.length <= limit) return bytes.toString('utf8');
  let end = Math.max(0, limit - Buffer.byteLength(CUT_MARK));
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1; // not inside a character
  return bytes.subarray(0, end).toString('utf8') + CUT_MARK;
}

/** One decision's note: the texts of obs.note(text), joined by "\n"; null when there was none. */
class NoteTaker {
  constructor() {
    this.texts = [];
    this.bytes = 0;
    this.open = true; // closed once the reply is made: a later note (an async leftover) is dropped
  }

  add(text) {
    if (!this.open || this.bytes > NOTE_BYTES) return; // past the cap, a note would be cut off anyway
    const line = String(text);
    this.texts.push(line);
    this.bytes += Buffer.byteLength(line) + 1;
  }

  /** The note for the reply (cut to NOTE_BYTES), or null when decide made none; closes the taker. */
  close() {
    this.open = false;
    return this.texts.length ? cutNote(this.texts.join('\n')) : null;
  }
}

// ----- one game's public history -------------------------------------------------------------

/** One game's public history as the stream delivered it: every event, in order, checked for gaps. */
class GameHistory {
  constructor(gameStart = null) {
    this.gameStart = gameStart; // the GameStart message (seat, players, seed, limits), null before one
    this.gameId = gameStart ? gameStart.game_id : '';
    this.events = []; // every event so far, oldest first: sequence 1, 2, 3 ...
    this.gaps = []; // one line for each gap in the sequence numbers (there should be none)
  }

  /** Take the next event. Returns false (and records the gap) unless it is numbered one past the last. */
  add(event) {
    const last = this.events.length ? this.events[this.events.length - 1].sequence : 0;
    this.events.push(event);
    if (event.sequence === last + 1) return true;
    this.gaps.push(`game ${this.gameId}: event ${event.sequence} arrived where ${last + 1} was due`);
    return false;
  }

  /** The public events of hand `handNumber` (the current hand), oldest first. */
  handEvents(handNumber) {
    let first = this.events.length;
    while (first > 0 && this.events[first - 1].hand_number === handNumber) first -= 1;
    return this.events.slice(first);
  }

  /** Every showdown event so far; each one's `showdown` holds the revealed hands. */
  showdowns() {
    return this.events.filter((event) => event.kind === 'EVENT_KIND_SHOWDOWN');
  }
}

// ----- the stream ------------------------------------------------------------------------------

function log(text) {
  process.stderr.write(`${text}\n`);
}

/** One line saying what was thrown: "TypeError: x is undefined". */
function errorSummary(error) {
  if (error instanceof Error) return `${error.name}: ${String(error.message).split('\n')[0]}`;
  return `thrown: ${String(error).split('\n')[0]}`;
}

function logError(what, error) {
  log(`${what}: ${error instanceof Error && error.stack ? error.stack : String(error)}`);
}

/**
 * Serves one referee stream: answers the handshake, keeps the history, calls decide and the hooks.
 * Messages are handled one at a time, in the order they came, even when decide or a hook is async.
 */
class StreamHandler {
  constructor(decide, options) {
    this.decide = decide;
    this.options = options;
    this.handshake = {
      protocol_versions: [PROTOCOL_VERSION],
      games: (options.games || ['stop_the_bus', 'bastard_brag']).map((game) => GAME_NAMES[game] || game),
      name: options.name,
      version: options.version || '1.0',
      author: options.author || '',
    };
    this.history = new GameHistory();
    this.expectedSequence = 1;
  }

  /** The reply to one PlayRequest, or null when it needs none. */
  async handle(request) {
    if (request.sequence !== this.expectedSequence) {
      log(`referee stream: message ${request.sequence} arrived where ${this.expectedSequence} was due`);
    }
    this.expectedSequence = request.sequence + 1;
    switch (request.message) {
      case 'decision_request':
        return { decision: await this.decision(request.decision_request) };
      case 'handshake':
        return { handshake: this.handshake };
      case 'game_start':
        this.history = new GameHistory(request.game_start);
        await this.hook('onGameStart', request.game_start);
        return null;
      case 'fault_notice':
        await this.hook('onFault', request.fault_notice);
        return null;
      case 'game_end':
        await this.takeEvents(request.game_end.events);
        await this.hook('onGameEnd', request.game_end);
        return null;
      default:
        log(`referee stream: a message of an unknown kind (${request.message}); ignored`);
        return null;
    }
  }

  async takeEvents(events) {
    for (const event of events) {
      if (!this.history.add(event)) log(`referee stream: ${this.history.gaps[this.history.gaps.length - 1]}`);
      await this.hook('onEvent', event);
    }
  }

  async decision(request) {
    const number = request.decision_number;
    await this.takeEvents(request.events);
    const notes = new NoteTaker();
    let reply;
    try {
      const obs = observationOf(request, this.history, notes);
      const chosen = await this.decide(obs);
      if (!chosen || typeof chosen !== 'object' || !chosen.kind) {
        throw new TypeError(`decide returned ${JSON.stringify(chosen)}, not an action: return one of obs.legal_actions`);
      }
      reply = { decision_number: number, action: chosen };
    } catch (error) {
      logError(`decision ${number} of game ${request.game_id}: decide failed`, error);
      reply = { decision_number: number, error: errorSummary(error) };
    }
    const note = notes.close(); // a note goes with an error reply too
    if (note) reply.note = note;
    return reply;
  }

  async hook(name, message) {
    const hook = this.options[name];
    if (!hook) return;
    try {
      await hook(message);
    } catch (error) {
      logError(`${name} failed`, error);
    }
  }
}

/**
 * What `decide` gets: the request's observation plus the legal actions, the hand's events, the clock,
 * and note(text), which adds a line to this decision's note.
 */
function observationOf(request, history, notes = new NoteTaker()) {
  return {
    ...request.observation,
    game_id: request.game_id,
    decision_number: request.decision_number,
    legal_actions: request.legal_actions,
    default_action: request.default_action,
    move_time_ms: request.move_time_ms,
    time_bank_ms: request.time_bank_ms,
    last_charged_ms: request.last_charged_ms,
    hand_events: history.handEvents(request.observation.hand_number),
    history,
    note: (text) => notes.add(text),
  };
}

/** The service implementation for `decide` and `options` (exported for tests and custom servers). */
function botService(decide, options) {
  return {
    Play(call) {
      const handler = new StreamHandler(decide, options);
      let queue = Promise.resolve();
      call.on('data', (request) => {
        queue = queue
          .then(() => handler.handle(request))
          .then((reply) => {
            if (reply) call.write(reply);
          })
          .catch((error) => logError('referee stream', error));
      });
      call.on('end', () => {
        queue.then(() => call.end());
      });
      call.on('error', (error) => log(`referee stream: ${error.message}`));
    },
  };
}

/** The package definition of referee.v2 (the .proto in this folder). */
function loadProtocol() {
  const definition = protoLoader.loadSync(PROTO_PATH, LOAD_OPTIONS);
  return grpc.loadPackageDefinition(definition).referee.v2;
}

/**
 * Serve `decide` as a bot until the referee stops it (SIGTERM or SIGINT: exit status 0).
 *
 * options: name (required), version, author, games (default both: 'stop_the_bus', 'bastard_brag'),
 * address (default $REFEREE_BOT_ADDRESS), and the hooks onGameStart(GameStart), onEvent(Event)
 * for every public event in order, onFault(FaultNotice), onGameEnd(GameEnd).
 */
function runBot(decide, options) {
  if (typeof decide !== 'function') throw new TypeError('runBot(decide, options): decide must be a function');
  if (!options || !options.name) throw new TypeError("runBot(decide, options): options.name is required, e.g. { name: 'my-bot' }");
  const address = options.address || process.env[ADDRESS_VARIABLE];
  if (!address) {
    log(`no address to listen on: set ${ADDRESS_VARIABLE} (the referee does), e.g. unix:/tmp/bot.sock`);
    process.exit(2);
  }
  const server = new grpc.Server();
  server.addService(loadProtocol().BotService.service, botService(decide, options));
  server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error) => {
    if (error) {
      log(`cannot listen on ${address}: ${error.message}`);
      process.exit(1);
    }
    log(`${options.name} ${options.version || '1.0'} listening on ${address}`);
  });
  const stop = (signal) => {
    log(`${signal}: shutting down`);
    server.tryShutdown(() => process.exit(0));
    setTimeout(() => {
      server.forceShutdown();
      process.exit(0);
    }, 500).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return server;
}

module.exports = {
  runBot,
  botService,
  loadProtocol,
  GameHistory,
  cardText,
  parseCard,
  actionText,
  cutNote,
  NOTE_BYTES,
  PROTOCOL_VERSION,
  PROTO_PATH,
};
