"use strict";
// A pair's head-to-head page: draws the data the referee wrote into it (referee/publish/head_to_head.py), from the
// side its address names after "#" (pairs/alpha/bravo.html#bravo), else from the first bot's.
(function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  };
  const data = JSON.parse($("pair").textContent);
  const [A, B] = data.bots;
  const hasReplay = (flag) => flag === 2 || (flag === 1 && location.protocol !== "file:");
  const MINUS = "\u2212";
  const signed = (value, digits) => {
    if (value === null || value === undefined) return "-";
    const text = Math.abs(value).toFixed(digits);
    if (Number(text) === 0) return text;
    return (value > 0 ? "+" : MINUS) + text;
  };
  const percent = (value) => (value === null || value === undefined ? "-" : (100 * value).toFixed(1) + "%");
  // An interval's ends; a null end is one the games cannot bound.
  const interval = (range, show) => (range
    ? " [" + (range.low === null ? MINUS + "\u221e" : show(range.low)) + ", " + (range.high === null ? "+\u221e" : show(range.high)) + "]"
    : "");
  const counted = (count, noun) => count + " " + noun + (count === 1 ? "" : "s");

  function sides() {
    let side = "";
    try { side = decodeURIComponent(location.hash.slice(1)); } catch (e) { /* not an address the league's page made */ }
    return side === B ? [B, A] : [A, B];
  }

  function figureRow(label, value, range, key) {
    const tr = el("tr");
    tr.dataset.key = key;
    const td = el("td", null, value);
    if (range) td.append(el("span", "range", range));
    tr.append(el("th", null, label), td);
    return tr;
  }

  function drawFigures(x, y) {
    const f = data.figures[x];
    const table = $("figures");
    table.replaceChildren();
    const body = el("tbody");
    if (!f || !f.games) {
      body.append(figureRow("games counted", "none yet", null, "games"));
      table.append(body);
      $("figures-note").textContent = "";
      return;
    }
    const ties = f.ties || 0;
    const below = f.games - f.above - ties;
    const rate = f.above_rate || {};
    body.append(
      figureRow("games counted", counted(f.games, "game") + " on " + counted(f.deals, "deal"), null, "games"),
      figureRow(x + " finished above " + y, f.above + " of " + f.games, null, "above"),
      figureRow(y + " finished above " + x, below + " of " + f.games, null, "below"),
    );
    if (ties) body.append(figureRow("the same place", ties + " of " + f.games, null, "ties"));
    body.append(
      figureRow("share of games " + x + " finished above" + (ties ? " (a tie counting half)" : ""), percent(rate.estimate),
        interval(f.above_rate, percent), "above_rate"),
      figureRow("score difference per game, " + x + " " + MINUS + " " + y,
        signed(f.score_difference && f.score_difference.estimate, 3), interval(f.score_difference, (v) => signed(v, 3)),
        "score_difference"),
      figureRow("Elo difference, " + x + " " + MINUS + " " + y, signed(f.elo && f.elo.estimate, 0),
        interval(f.elo, (v) => signed(v, 0)), "elo"),
      figureRow("likelihood that " + x + " is the stronger", percent(f.los), null, "los"),
    );
    table.append(body);
    $("figures-note").textContent = "Of the games both played (in a gauntlet, two candidates: of the deals both " +
      "played in the same seat). A score is (n - place) / (n - 1): first 1, last 0. Intervals at 95%, with the " +
      "deals as the samples, since games dealt alike are not independent; an end the games cannot bound is " +
      "\u00b1\u221e. The likelihood of superiority is the chance that " + x + "'s true share of games above " + y +
      " is over one half.";
  }

  function drawGames(x, y) {
    const games = data.games;
    $("games-count").textContent = data.listed < data.shared
      ? "the newest " + data.listed + " of " + data.shared
      : counted(data.shared, "game");
    const table = $("games");
    table.replaceChildren();
    if (!games.length) {
      table.append(el("caption", "note", "No game of theirs is shown yet."));
      return;
    }
    const head = el("tr");
    for (const [label, cls] of [["#", ""], ["game", "text"], ["result, first to last", "text"], ["above", "text"], ["", ""]]) {
      head.append(el("th", cls, label));
    }
    table.appendChild(el("thead")).append(head);
    const body = el("tbody");
    for (const [index, id, seats, finishOrder, , , , voidReason, replay] of games) {
      const tr = el("tr");
      tr.dataset.game = id;
      tr.append(el("td", null, String(index + 1))); // the schedule's place, counted from 1
      const name = el("td", "text");
      const href = "../../replays/" + encodeURIComponent(id) + ".html";
      if (hasReplay(replay)) {
        const link = el("a", null, id);
        link.href = href;
        name.append(link);
      } else name.textContent = id;
      tr.append(name);
      const result = el("td", "players");
      if (voidReason) result.append(el("span", "void", "void: " + voidReason + " \u2014 "));
      finishOrder.forEach((seat, place) => {
        const bot = seats[seat];
        // "2. bravo", a place never apart from its bot however the cell wraps (pair.css: .player).
        const player = el("span", "player" + (bot === x || bot === y ? " of-pair" : ""), (place + 1) + ". " + bot);
        player.dataset.bot = bot;
        result.append(player);
        if (place < finishOrder.length - 1) result.append(document.createTextNode(", "));
      });
      tr.append(result);
      const first = finishOrder.map((seat) => seats[seat]).find((bot) => bot === x || bot === y);
      tr.append(el("td", "text above", voidReason ? "void" : first ? first + " above" : ""));
      const open = el("td");
      if (hasReplay(replay)) {
        const link = el("a", null, "replay");
        link.href = href;
        open.append(link);
      }
      tr.append(open);
      body.append(tr);
    }
    table.append(body);
  }

  function draw() {
    const [x, y] = sides();
    document.title = x + " and " + y + ", head to head \u2014 " + (data.league.name || "");
    $("name").textContent = x + " and " + y + ", head to head";
    $("league").textContent = [data.league.name, (data.league.game || "").replace(/_/g, " ")].filter(Boolean).join(" \u00b7 ");
    const swap = $("swap");
    swap.textContent = "from " + y + "'s side";
    swap.href = "#" + encodeURIComponent(y);
    drawFigures(x, y);
    drawGames(x, y);
    document.body.dataset.side = x;
    document.body.dataset.ready = "1";
  }

  window.addEventListener("hashchange", draw);
  draw();
})();
