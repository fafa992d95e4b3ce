// Live games for spectators (referee serve's /live/): the list of games in play, and one game drawn move by move
// from its feed (referee/publish/spectators.py). A feed holds only what anyone watching may know: every seat's cards
// stay face down until its hand's showdown reveals them.
(function () {
  const $ = (id) => document.getElementById(id);
  const page = document.body.dataset.page;
  const setState = (text, playing) => {
    $("state").textContent = text;
    $("state").classList.toggle("playing", !!playing);
  };

  // ----- the list of games in play -----------------------------------------------------------
  if (page === "list") {
    $("list-view").hidden = false;
    const refresh = () =>
      fetch("games.json", { cache: "no-store" })
        .then((answer) => answer.json())
        .then((games) => {
          // Listed in play first (referee/apps/site/spectating.py), then those just finished, counted apart.
          const list = $("games");
          list.replaceChildren();
          const playing = games.filter((game) => !game.over).length;
          const finished = games.length - playing;
          setState(playing ? playing + " in play" : "no game in play", playing > 0);
          $("note").textContent = finished
            ? finished + " just finished"
            : playing
              ? ""
              : "games appear here while a league, duel or ladder plays";
          for (const game of games) {
            const item = el("li");
            const link = el("a", "", game.game_id);
            link.href = encodeURIComponent(game.game_id);
            item.append(link, " " + game.game.replace(/_/g, " ") + ": " + game.players.join(", "));
            if (game.over) item.append(el("span", "status", " (just finished)"));
            list.append(item);
          }
        })
        .catch(() => setState("the server does not answer", false));
    refresh();
    setInterval(refresh, 2000);
    return;
  }

  // ----- one game, live -------------------------------------------------------------------------
  $("game-view").hidden = false;
  let players = [];
  let isBrag = false;
  let view = null;
  let shown = null; // the last showdown's hands, shown until the next deal
  let shownLoser = null;
  const name = (seat) => "seat " + seat + " " + (players[seat] || "");

  function line(event) {
    const who = event.seat === undefined ? "" : name(event.seat);
    switch (event.kind) {
      case "deal":
        return "hand " + event.hand + " dealt by " + who + (isBrag ? "; face up " : "; discard ") + cardText(event.card);
      case "draw":
        return who + " draws from the stock";
      case "take":
        return who + " takes " + cardText(event.card);
      case "discard":
        return who + " discards " + cardText(event.card);
      case "stop":
        return who + " stops the bus";
      case "pass":
        return who + " passes";
      case "recycle":
        return "the discards (" + event.count + ") are shuffled into a new stock";
      case "exchange":
        if (event.slot === 2) return who + " gives " + cardText(event.card) + " for the face-up " + cardText(event.taken);
        return who + " exchanges a card with face-down slot " + event.slot;
      case "exchange-all":
        return who + " takes the whole centre, laying " + cardText(event.card) + " face up";
      case "knock":
        return who + " knocks";
      case "stock-exhausted":
        return "the stock is exhausted: showdown";
      case "turn-limit":
        return "the turn limit is reached: showdown";
      case "showdown": {
        const hands = Object.keys(event.hands || {}).map(
          (seat) => name(seat) + " " + event.hands[seat].split(" ").map(cardText).join(" ") + " (" + event.ranks[seat] + ")"
        );
        return "showdown: " + hands.join("; ") + (event.seat === undefined ? "" : "; " + name(event.seat) + " loses a life");
      }
      case "eliminated":
        return who + " is out of the game";
      case "forfeit":
        return who + " forfeits";
      case "game-over":
        return who + " wins the game";
      default:
        return event.kind;
    }
  }

  function seatPanel(seat) {
    const panel = el("div", "seat");
    panel.dataset.seat = seat;
    const inGame = view.in_game[seat] === 1;
    const inHand = view.in_hand[seat] === 1;
    if (view.current_seat === seat) panel.classList.add("current");
    if (shownLoser === seat) panel.classList.add("loser");
    if (!inGame) panel.classList.add("out");
    const who = el("div", "who");
    who.title = name(seat);
    who.append(el("span", "chip seatno", String(seat)), el("span", "name", players[seat]));
    if (view.dealer === seat) who.append(el("span", "chip", "D"));
    if (view.ender === seat) who.append(el("span", "chip ender", isBrag ? "knocked" : "stopped"));
    if (view.current_seat === seat) who.append(el("span", "chip turn", "to play"));
    const lives = el("div", "lives");
    for (let i = 0; i < 3; i++) lives.append(el("span", "token" + (i < view.lives[seat] ? "" : " lost")));
    if (view.floating[seat] === 1) lives.append(el("span", "token floating"), el("span", "status", "floating"));
    if (!inGame) lives.append(el("span", "status", "out of the game"));
    const cards = el("div", "cards");
    cards.dataset.seat = seat;
    if (shown && shown[seat]) for (const c of shown[seat].split(" ")) cards.append(card(c));
    else if (inHand) for (let i = 0; i < 3; i++) cards.append(card(null));
    panel.append(who, lives, cards);
    return panel;
  }

  function draw() {
    if (!view) return;
    const table = $("table");
    table.replaceChildren();
    const centre = el("div", "centre");
    if (isBrag) {
      const cards = el("div", "cards centre-cards");
      view.centre.forEach((c) => cards.append(card(c)));
      const pile = el("div", "pile");
      pile.append(cards, el("div", "label", "centre: slots 0 and 1 face down, 2 face up"));
      centre.append(pile);
    } else {
      const stock = el("div", "pile stock");
      stock.append(card(null), el("div", "label", "stock " + view.stock_count));
      const discard = el("div", "pile discard");
      discard.append(view.discard_top ? card(view.discard_top) : el("span", "card gone"));
      discard.append(el("div", "label", "discard pile " + view.discard_count));
      centre.append(stock, discard);
    }
    const seats = el("div", "seats");
    for (let seat = 0; seat < players.length; seat++) seats.append(seatPanel(seat));
    table.append(centre, seats);
  }

  function addMove(event) {
    const item = el("li", event.kind === "deal" ? "deal" : event.kind === "showdown" ? "hand" : "", line(event));
    item.dataset.kind = event.kind;
    $("moves").append(item);
    // The newest move in view, by scrolling the list's own box: scrolling the item into view would scroll the page
    // too, and on a phone (the list under the table) take the game's title off the screen.
    const box = $("moves").parentElement;
    box.scrollTop = box.scrollHeight;
    $("caption").textContent = line(event);
  }

  const game = document.body.dataset.game;
  let over = false;
  // A stream the server refuses (full: 503 with Retry-After) is not retried by the browser, which retries only a
  // stream that broke: it is opened again after a while, from the game's start (the moves drawn so far cleared).
  const RETRY_MS = 30000;
  // A hand's moves reach the feed once every game dealt alike has played that hand (referee/records/visibility.py), so they
  // come a hand at a time: each is shown at its own pace, as it was played, a steady delay behind the game (the
  // longest wait seen so far, which never shrinks, so the game never jumps ahead and back). The wait is counted on
  // this browser's clock from the referee's time of each frame: its clock's offset cancels out.
  let queue = [];
  let lag = -Infinity;
  let timer = null;

  function play(kind, data, time) {
    if (time !== undefined) lag = Math.max(lag, Date.now() / 1000 - time);
    queue.push({ kind: kind, data: data, time: time });
    if (timer === null) next();
  }

  function next() {
    timer = null;
    while (queue.length) {
      const item = queue[0];
      const wait = item.time === undefined ? 0 : (item.time + lag) * 1000 - Date.now();
      if (wait > 0) {
        timer = setTimeout(next, Math.min(wait, 1000));
        return;
      }
      queue.shift();
      show(item.kind, item.data);
    }
  }

  function show(kind, data) {
    if (kind === "start") {
      players = data.players;
      isBrag = data.game === "bastard_brag";
      $("title").textContent = data.game_id + ": " + data.game.replace(/_/g, " ") + ", live";
      setState("playing", true);
    } else if (kind === "frame") {
      for (const event of data.events) {
        if (event.kind === "deal") {
          shown = null;
          shownLoser = null;
        } else if (event.kind === "showdown") {
          shown = event.hands || null;
          shownLoser = event.seat === undefined ? null : event.seat;
        }
        addMove(event);
      }
      view = data.view;
      draw();
    } else if (kind === "end") {
      setState("finished", false);
      $("note").replaceChildren("places: " + data.placements.map(name).join(", ") + " \u2014 ", el("span", "", ""));
      linkReplay();
    } else if (kind === "gone") {
      setState("no longer in play", false);
    }
  }

  // A finished game's replay is published once every game dealt alike with it has ended, and the league's spectator
  // delay after (referee/records/visibility.py): until then it would show the cards of a game in play. Until then the
  // note says when it will be, and asks again every few seconds; then it links the replay.
  const REPLAY_POLL_MS = 5000;
  const replayAddress = "../replays/" + encodeURIComponent(game) + ".html";

  function linkReplay() {
    const place = $("note").lastChild;
    fetch(replayAddress, { method: "HEAD", cache: "no-store" })
      .then((answer) => answer.ok)
      .catch(() => false)
      .then((ready) => {
        if (ready) {
          const replay = el("a", "", "the replay");
          replay.href = replayAddress;
          place.replaceChildren(replay);
          return;
        }
        place.replaceChildren(
          el(
            "span",
            "waiting",
            "its replay is published once every game dealt alike with it (such as its table's other seat " +
              "rotations) has ended, and the league's spectator delay after them: this page links it then"
          )
        );
        setTimeout(linkReplay, REPLAY_POLL_MS);
      });
  }

  function connect() {
    const feed = new EventSource(encodeURIComponent(game) + "/feed");
    $("moves").replaceChildren();
    view = null;
    shown = null;
    shownLoser = null;
    queue = [];
    lag = -Infinity;
    if (timer !== null) clearTimeout(timer);
    timer = null;
    setState("connecting", false);
    feed.addEventListener("start", (message) => play("start", JSON.parse(message.data).start));
    feed.addEventListener("frame", (message) => {
      const frame = JSON.parse(message.data);
      play("frame", frame, frame.time);
    });
    feed.addEventListener("end", (message) => {
      over = true;
      feed.close();
      play("end", JSON.parse(message.data).end);
    });
    feed.addEventListener("gone", () => {
      over = true;
      feed.close();
      play("gone", null);
    });
    feed.addEventListener("error", () => {
      if (over || feed.readyState !== EventSource.CLOSED) return; // over, or the browser reconnects by itself
      // Refused: no longer in play (404), or the server is full (503). The list of games in play tells which.
      fetch("games.json", { cache: "no-store" })
        .then((answer) => (answer.ok ? answer.json() : null))
        .catch(() => null) // the list refused too: the server is busy
        .then((games) => {
          if (games !== null && !games.some((listed) => listed.game_id === game)) {
            setState("no longer in play", false);
            return;
          }
          setState("the server is busy: watching again in " + RETRY_MS / 1000 + " s", false);
          setTimeout(connect, RETRY_MS * (0.75 + Math.random() / 2));
        });
    });
  }

  connect();
})();
