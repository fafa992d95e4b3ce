// The replay page: draws the frames the referee computed (referee/publish/replay_page.py), one per step.
// The data is gzipped JSON in base64: the browser's own DecompressionStream unpacks it.
async function unpack(node) {
  const bytes = Uint8Array.from(atob(node.textContent.trim()), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}
if (!window.DecompressionStream) document.getElementById("unsupported").hidden = false;
else unpack(document.getElementById("game")).then(function (data) {
  const players = data.players;
  const isBrag = data.game === "bastard_brag";

  // Frames are stored as differences from the frame before; rebuild each whole frame once.
  const frames = [];
  let state = {};
  for (const change of data.frames) {
    state = Object.assign({}, state, change);
    for (const key in change) if (change[key] === null) delete state[key];
    frames.push(state);
  }

  const $ = (id) => document.getElementById(id);
  const cardsOf = (text) => (text ? text.split(" ") : []);
  const handOf = (f, seat) => f["o" + seat][0]; // a seat's cards: its own view of them is the whole truth
  // Stop the Bus mid-turn: the card the seat just drew or took (in Bastard Brag a view's later entries are the centre).
  const drawnOf = (f, seat) => (isBrag ? null : f["o" + seat][1]);

  // A seat's name, free to wrap after each "-", "_" and "." (newcomer-|v2), as on the league's page.
  function nameOf(seat) {
    const node = el("span", "name");
    String(players[seat]).split(/(?<=[-_.])/).forEach((part, i) => node.append(...(i ? [el("wbr"), part] : [part])));
    node.title = players[seat]; // whole, should even two lines not hold it
    return node;
  }

  let at = 0;
  let viewer = null; // null: every card face up; else the seat whose view is shown
  let timer = null;
  const speeds = [0.5, 1, 2, 4, 8];
  let speed = 2;

  // ----- the table -------------------------------------------------------------------

  function seatPanel(f, seat) {
    const reveal = f.rev && f.rev[seat];
    const inGame = f.in[seat] === 1;
    const inHand = f.ih[seat] === 1;
    const panel = el("div", "seat");
    panel.dataset.seat = seat;
    if (f.cur === seat) panel.classList.add("current");
    if (viewer === seat) panel.classList.add("viewer");
    if (f.loser === seat) panel.classList.add("loser");
    if (!inGame) panel.classList.add("out");
    // The name has its line to itself, so that it shows whole where the seat has room; the marks that come and
    // go (dealer, stopped or knocked, to play) sit with the lives, so a seat's height stays as the turn moves on.
    const who = el("div", "who");
    who.append(el("span", "chip seatno", String(seat)), nameOf(seat));
    const marks = el("span", "marks");
    if (f.d === seat) marks.append(el("span", "chip", "D"));
    if (f.e === seat) marks.append(el("span", "chip ender", isBrag ? "knocked" : "stopped"));
    if (f.cur === seat) marks.append(el("span", "chip turn", "to play"));
    const lives = el("span", "lives");
    const floating = f.fl && f.fl[seat] === 1;
    for (let i = 0; i < 3; i++) lives.append(el("span", "token" + (i < f.lives[seat] ? "" : " lost")));
    if (floating) {
      lives.append(el("span", "token floating"));
      lives.append(el("span", "status", "floating"));
    }
    if (!inGame) lives.append(el("span", "status", "out of the game"));
    else if (!inHand) lives.append(el("span", "status", "out of this hand"));
    lives.title = f.lives[seat] + " lives" + (floating ? ", floating" : "");
    const cards = el("div", "cards");
    cards.dataset.seat = seat;
    if (reveal) {
      for (const c of cardsOf(reveal[0])) cards.append(card(c));
    } else if (viewer === null || viewer === seat) {
      const drawn = drawnOf(f, seat);
      for (const c of cardsOf(handOf(f, seat))) cards.append(card(c, c === drawn ? "new" : ""));
    } else {
      for (let i = 0; i < cardsOf(handOf(f, seat)).length; i++) cards.append(back());
    }
    const state = el("div", "state");
    state.append(lives, marks);
    panel.append(who, state, cards);
    if (reveal) panel.append(el("div", "rank", reveal[1] + (f.loser === seat ? " \u2014 loses a life" : "")));
    return panel;
  }

  function centre(f) {
    const box = el("div", "centre");
    if (isBrag) {
      const slots = cardsOf(f.centre);
      const known = viewer === null ? null : f["o" + viewer];
      const row = el("div", "pile");
      const cards = el("div", "cards centre-cards");
      slots.forEach((c, slot) => {
        const faceUp = slot === 2 || viewer === null || (known && known[slot + 1]);
        const shown = faceUp ? card(c) : back();
        shown.dataset.slot = slot;
        cards.append(shown);
      });
      row.append(cards, el("div", "label", "centre: slots 0 and 1 face down, 2 face up"));
      box.append(row);
      return box;
    }
    const stock = el("div", "pile stock");
    const stockCards = el("div", "fan");
    stockCards.append(f.stock ? back() : el("span", "card gone"));
    if (viewer === null && f.next) stockCards.append(card(f.next, "small"));
    stock.append(stockCards, el("div", "label", "stock " + f.stock + (viewer === null && f.next ? ", next " + cardText(f.next) : "")));
    const pile = cardsOf(f.pile);
    const discard = el("div", "pile discard");
    const fan = el("div", "fan");
    fan.dataset.pile = "discard";
    const shown = viewer === null ? pile.slice().reverse() : pile.slice(0, 1);
    if (!shown.length) fan.append(el("span", "card gone"));
    for (const c of shown) fan.append(card(c));
    discard.append(fan, el("div", "label", "discard " + f.pc));
    box.append(stock, discard);
    return box;
  }

  function draw() {
    const f = frames[at];
    const table = $("table");
    table.replaceChildren();
    if (f.k === "game_end") table.append(el("div", "result", resultText()));
    table.append(centre(f));
    const seats = el("div", "seats");
    for (let seat = 0; seat < players.length; seat++) seats.append(seatPanel(f, seat));
    table.append(seats);
    $("caption").textContent = lineOf(f);
    // A bot's private note on this decision (only its author's replay has any): text, never markup.
    $("note").hidden = !f.nt;
    $("note").replaceChildren(...(f.nt ? [el("b", null, "note of " + players[f.ns] + ": "), f.nt] : []));
    $("counter").textContent = "step " + (at + 1) + " of " + frames.length + ", hand " + f.h;
    $("hand").value = String(f.h);
    for (const node of document.querySelectorAll("#moves li.at")) node.classList.remove("at");
    const item = $("moves").children[at];
    if (item) {
      item.classList.add("at");
      const list = item.parentElement.parentElement;
      const top = item.offsetTop - list.offsetTop;
      if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - item.offsetHeight) {
        list.scrollTop = top - list.clientHeight / 3;
      }
    }
    document.body.dataset.step = at;
    saveHash();
  }

  function lineOf(f) {
    if (viewer === null) return f.t;
    const own = f.vx && f.vx[viewer];
    if (own === 0) return f.t;
    return own || f.v || f.t;
  }

  function resultText() {
    if (!data.placements) return "";
    const places = data.placements.map((seat, i) => (i + 1) + ". " + players[seat]).join(", ");
    return "Result: " + places + (data.void ? " (void: " + data.void + ")" : "");
  }

  function listMoves() {
    const list = $("moves");
    list.replaceChildren();
    frames.forEach((f, i) => {
      const item = el("li", f.k, lineOf(f));
      if (f.nt) item.append(el("div", "note", f.nt));
      item.dataset.step = i;
      item.addEventListener("click", () => go(i));
      list.append(item);
    });
  }

  // ----- moving through the game -----------------------------------------------------

  function go(step) {
    at = Math.max(0, Math.min(frames.length - 1, step));
    draw();
  }
  function handStart(hand) {
    const i = frames.findIndex((f) => f.h === hand && f.k === "deal");
    return i < 0 ? frames.findIndex((f) => f.h === hand) : i;
  }
  function jumpHand(delta) {
    const current = frames[at].h;
    const index = data.hands.indexOf(current);
    const target = data.hands[index + delta];
    if (delta < 0 && frames[at].k !== "deal") return go(handStart(current));
    if (target !== undefined) go(handStart(target));
  }
  function play(on) {
    if (timer) clearInterval(timer);
    timer = null;
    if (on && at >= frames.length - 1) go(0);
    if (on) {
      timer = setInterval(() => {
        if (at >= frames.length - 1) return play(false);
        go(at + 1);
      }, 1000 / speeds[speed]);
    }
    $("play").textContent = timer ? "\u275A\u275A" : "\u25B6";
    $("play").setAttribute("aria-label", timer ? "pause" : "play");
    document.body.dataset.playing = timer ? "1" : "";
  }
  function setSpeed(index) {
    speed = Math.max(0, Math.min(speeds.length - 1, index));
    $("speed").value = String(speed);
    if (timer) play(true);
  }
  function setViewer(value) {
    viewer = value === "" || value === null ? null : Number(value);
    $("view").value = viewer === null ? "" : String(viewer);
    listMoves();
    draw();
  }

  function saveHash() {
    const hash = "#step=" + at + (viewer === null ? "" : "&seat=" + viewer);
    if (location.hash !== hash) {
      try { history.replaceState(null, "", hash); } catch (e) { /* some file:// setups refuse */ }
    }
  }
  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    if (params.has("seat")) {
      const seat = Number(params.get("seat"));
      if (seat >= 0 && seat < players.length) viewer = seat;
    }
    if (params.has("n")) {
      const n = Number(params.get("n"));
      const i = frames.findIndex((f) => f.n === n);
      if (i >= 0) at = i;
    } else if (params.has("step")) {
      at = Math.max(0, Math.min(frames.length - 1, Number(params.get("step")) || 0));
    }
  }

  // ----- set up ------------------------------------------------------------------------

  const game = data.game.replace(/_/g, " ");
  $("title").textContent = data.game_id + " \u2014 " + game;
  const timing = data.timing || {};
  const policy = data.policy || {};
  $("meta").textContent = [
    players.length + " players: " + players.map((name, seat) => seat + " " + name).join(", "),
    data.decisions + " decisions, " + data.hands.length + " hands",
    "move " + timing.move_time_ms + " ms + bank " + timing.time_bank_ms + " ms",
    "faults: " + policy.mode,
    resultText(),
    "referee " + data.referee_version,
  ].filter(Boolean).join(" \u00b7 ");
  // The game's own seed, not the league's (which its page keeps hidden until the league ends): said so, lest it
  // read as a leak.
  $("seed").append(document.createTextNode("deal seed "), el("code", null, data.seed),
    document.createTextNode(" (this table's: every hand of its games is dealt from it; a league derives it one " +
      "way from the league's seed, which it does not reveal)"));
  if (data.notes_of && data.notes_of.length) {
    $("private").textContent = "Private: this replay shows the notes of " + data.notes_of.join(", ") +
      " beside their decisions; only their author sees them.";
    $("private").hidden = false;
  }
  if (data.back) {
    $("back").href = data.back;
    $("back").hidden = false;
  }
  speeds.forEach((value, i) => $("speed").append(new Option(value + " steps/s", String(i))));
  data.hands.forEach((hand) => $("hand").append(new Option("hand " + hand, String(hand))));
  $("view").append(new Option("everyone's, face up", ""));
  players.forEach((name, seat) => $("view").append(new Option("as seat " + seat + " " + name + " saw them", String(seat))));

  $("first").onclick = () => go(0);
  $("prev").onclick = () => go(at - 1);
  $("next").onclick = () => go(at + 1);
  $("last").onclick = () => go(frames.length - 1);
  $("play").onclick = () => play(!timer);
  $("speed").onchange = (event) => setSpeed(Number(event.target.value));
  $("hand").onchange = (event) => go(handStart(Number(event.target.value)));
  $("view").onchange = (event) => setViewer(event.target.value);
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.tagName === "SELECT" && event.key.startsWith("Arrow")) return;
    const keys = {
      ArrowRight: () => go(at + 1), ArrowLeft: () => go(at - 1), Home: () => go(0), End: () => go(frames.length - 1),
      " ": () => play(!timer), k: () => play(!timer), PageDown: () => jumpHand(1), PageUp: () => jumpHand(-1),
      n: () => jumpHand(1), p: () => jumpHand(-1), "+": () => setSpeed(speed + 1), "=": () => setSpeed(speed + 1),
      "-": () => setSpeed(speed - 1),
      v: () => setViewer(viewer === null ? 0 : viewer + 1 < players.length ? viewer + 1 : null),
    };
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });

  readHash();
  $("speed").value = String(speed);
  $("view").value = viewer === null ? "" : String(viewer);
  listMoves();
  draw();
  document.body.dataset.ready = "1";
  document.body.dataset.readyMs = performance.now().toFixed(0); // since navigation started (the browser tests read it)
});
