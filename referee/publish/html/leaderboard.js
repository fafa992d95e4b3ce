"use strict";
// The league page: draws the data the referee wrote into it (referee/publish/league_page.py).
(function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  };
  const readData = (doc) => JSON.parse(doc.getElementById("league").textContent);
  let data = readData(document);

  // What the reader chose survives the page's own refreshes (sessionStorage, per page).
  const STATE_KEY = "referee-leaderboard:" + location.pathname;
  const ui = Object.assign(
    { sort: "rank", dir: 1, more: false, bot: "", faulty: false, shown: 100, fault: null, scrollY: 0 },
    JSON.parse(sessionStorage.getItem(STATE_KEY) || "{}")
  );
  const saveState = () => {
    ui.scrollY = window.scrollY;
    try { sessionStorage.setItem(STATE_KEY, JSON.stringify(ui)); } catch (e) { /* storage may be off */ }
  };

  const fixed = (digits) => (value) => (value === null || value === undefined ? "-" : value.toFixed(digits));
  const percent = (value) => (value === null || value === undefined ? "-" : (100 * value).toFixed(1) + "%");
  const faultTotal = (row) => Object.values(row.faults).reduce((a, b) => a + b, 0);
  const interval = (row) => {
    const r = row.rating;
    const half = 1.96 * r.sigma; // used when the data carries no interval of its own
    return [r.low !== undefined ? r.low : r.mu - half, r.high !== undefined ? r.high : r.mu + half];
  };

  const COLUMNS = [
    { key: "rank", label: "#", value: (r) => r.rank },
    { key: "bot", label: "bot", text: true, value: (r) => r.bot },
    { key: "rating", label: "rating", value: (r) => r.rating.conservative, show: fixed(2),
      title: "mu - 3 sigma: the conservative rating that ranks the table" },
    { key: "mu", label: "mu, 95% interval", value: (r) => r.rating.mu, draw: drawInterval,
      title: "the rating's mean and the interval where the bot's strength lies (95%)" },
    { key: "games", label: "games", value: (r) => r.games },
    { key: "wins", label: "wins", value: (r) => r.wins },
    { key: "win_rate", label: "win %", value: (r) => r.win_rate, show: percent },
    { key: "average_placement", label: "avg place", value: (r) => r.average_placement, show: fixed(2) },
    { key: "mean_score", label: "score/game", value: (r) => r.mean_score, show: fixed(3),
      title: "per game (n - place) / (n - 1): first 1, last 0" },
    { key: "faults", label: "faults", value: faultTotal, draw: drawFaults, title: "faults by kind; click one to see where" },
    { key: "median_ms", label: "median ms", value: (r) => r.median_ms, show: fixed(1), title: "median decision time" },
    { key: "p99_ms", label: "p99 ms", value: (r) => r.p99_ms, show: fixed(1), more: true },
    { key: "forfeits", label: "forfeits", value: (r) => r.forfeits, more: true },
    { key: "decisions", label: "decisions", value: (r) => r.decisions, more: true },
    { key: "score", label: "score", value: (r) => r.score, show: fixed(2), more: true, title: "total score" },
    { key: "sigma", label: "sigma", value: (r) => r.rating.sigma, show: fixed(2), more: true },
  ];

  // ----- header ----------------------------------------------------------------------

  function drawHeader() {
    const league = data.league;
    const s = league.settings || {};
    document.title = league.name + " \u2014 leaderboard";
    $("name").textContent = league.name;
    const timing = s.timing || {};
    const policy = s.fault_policy || {};
    const dates = league.first_game
      ? league.first_game.slice(0, 16).replace("T", " ") + (league.last_game && league.last_game.slice(0, 10) === league.first_game.slice(0, 10)
        ? "\u2013" + league.last_game.slice(11, 16) : " \u2013 " + (league.last_game || "").slice(0, 16).replace("T", " ")) + " UTC"
      : "no game yet";
    const parts = [
      (league.game || "").replace(/_/g, " "),
      s.table_size ? "tables of " + s.table_size : null,
      league.bots + " bots",
      league.games + (league.scheduled ? " of " + league.scheduled : "") + " games",
      timing.move_time_ms !== undefined
        ? "move " + timing.move_time_ms + " ms + bank " + timing.time_bank_ms + " ms (grace " + timing.grace_ms + " ms)" : null,
      s.turn_limit ? "turn limit " + s.turn_limit : null,
      policy.mode ? "faults: " + policy.mode.replace(/_/g, " ") + (policy.mode === "default_action" ? " (forfeit after " + policy.max_faults + ")" : "") : null,
      s.seed_commitment ? "seed commitment " + s.seed_commitment : s.seed !== undefined ? "seed " + s.seed : null,
      dates,
      "referee " + league.referee_version,
    ];
    $("settings").textContent = parts.filter(Boolean).join(" \u00b7 ");
    const live = $("live");
    live.hidden = !league.live;
    live.textContent = "live, updated " + league.updated.slice(11, 19) + " UTC";
    const board = data.board;
    const duel = $("duel");
    duel.hidden = !board.duel;
    if (board.duel) {
      const d = board.duel;
      duel.textContent = "Duel " + d.candidates[0] + " against " + d.candidates[1] + ": " + d.headline +
        " (log-likelihood ratio " + d.llr.toFixed(2) + ", bounds " + d.bounds[0].toFixed(2) + " and " + d.bounds[1].toFixed(2) + ")";
    }
    $("void").textContent = board.void_games && board.void_games.length
      ? board.void_games.length + " void game(s), which count for nobody: " + board.void_games.map((g) => g.game_id + " (" + g.reason + ")").join("; ")
      : "";
    $("rating-note").textContent = "rating: mu - 3 sigma of an openskill Plackett-Luce rating; the bar shows mu (line) and its 95% interval, " +
      "on one scale for every bot; score per game: (n - place) / (n - 1). Click a column to sort.";
  }

  // ----- standings -------------------------------------------------------------------

  let scale = [0, 1];

  function drawInterval(row, cell) {
    const [low, high] = interval(row);
    cell.append(el("span", null, row.rating.mu.toFixed(2) + " [" + low.toFixed(1) + ", " + high.toFixed(1) + "]"));
    const bar = el("span", "interval");
    const at = (v) => (100 * (v - scale[0])) / (scale[1] - scale[0] || 1) + "%";
    const span = el("span");
    span.style.left = at(low);
    span.style.width = "calc(" + at(high) + " - " + at(low) + ")";
    const mark = el("i");
    mark.style.left = at(row.rating.mu);
    bar.append(span, mark);
    cell.append(bar);
  }

  function drawFaults(row, cell) {
    const kinds = Object.entries(row.faults).filter(([, count]) => count > 0);
    if (!kinds.length) {
      cell.append(el("span", "none", "0"));
      return;
    }
    for (const [kind, count] of kinds) {
      const button = el("button", "fault", kind + " " + count);
      button.dataset.bot = row.bot;
      button.dataset.kind = kind;
      button.title = "where " + row.bot + "'s " + kind + " faults happened";
      button.onclick = () => {
        ui.fault = ui.fault && ui.fault[0] === row.bot && ui.fault[1] === kind ? null : [row.bot, kind];
        drawFaultList();
        saveState();
      };
      cell.append(button);
    }
  }

  function drawStandings() {
    const rows = data.board.rows.slice();
    const ends = rows.flatMap(interval);
    scale = ends.length ? [Math.min(...ends), Math.max(...ends)] : [0, 1];
    const columns = COLUMNS.filter((c) => !c.more || ui.more);
    const column = columns.find((c) => c.key === ui.sort) || columns[0];
    rows.sort((a, b) => {
      const x = column.value(a), y = column.value(b);
      if (x === y) return a.rank - b.rank;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (column.text ? String(x).localeCompare(String(y)) : x - y) * ui.dir;
    });
    const table = $("standings");
    table.replaceChildren();
    const head = el("tr");
    for (const c of columns) {
      const th = el("th", c.text ? "text" : "", c.label);
      th.dataset.key = c.key;
      if (c.title) th.title = c.title;
      if (c.key === column.key) th.setAttribute("aria-sort", ui.dir > 0 ? "ascending" : "descending");
      th.onclick = () => {
        ui.dir = ui.sort === c.key ? -ui.dir : c.text || c.key === "rank" || c.key === "average_placement" ? 1 : -1;
        ui.sort = c.key;
        drawStandings();
        saveState();
      };
      head.append(th);
    }
    table.appendChild(el("thead")).append(head);
    const body = el("tbody");
    for (const row of rows) {
      const tr = el("tr");
      tr.dataset.bot = row.bot;
      for (const c of columns) {
        const td = el("td", c.key === "bot" ? "text bot" : c.text ? "text" : "");
        td.dataset.key = c.key;
        if (c.draw) c.draw(row, td);
        else td.textContent = c.show ? c.show(c.value(row)) : String(c.value(row));
        tr.append(td);
      }
      body.append(tr);
    }
    table.append(body);
  }

  function gameLink(game, n) {
    const row = data.games.find((g) => g[1] === game);
    if (row && row[8]) return "replays/" + encodeURIComponent(game) + ".html" + (n !== null && n !== undefined ? "#n=" + n : "");
    return "games/" + encodeURIComponent(game) + ".jsonl";
  }

  function drawFaultList() {
    const box = $("faults");
    box.replaceChildren();
    if (!ui.fault) {
      box.hidden = true;
      return;
    }
    const [bot, kind] = ui.fault;
    const row = data.board.rows.find((r) => r.bot === bot);
    const entries = (data.faults[bot] || []).filter((f) => f.kind === kind);
    box.hidden = false;
    const total = row ? row.faults[kind] : entries.length;
    box.append(el("h3", null, bot + ": " + total + " " + kind + " fault" + (total === 1 ? "" : "s")));
    const list = el("ul");
    for (const f of entries) {
      const item = el("li");
      const link = el("a", null, f.game + (f.n !== null && f.n !== undefined ? ", decision " + f.n : ", before the first decision"));
      link.href = gameLink(f.game, f.n);
      item.append(link, document.createTextNode(": " + f.detail));
      if (f.log) {
        item.append(document.createTextNode(" \u2014 output: "));
        const log = el("a", null, f.log + (f.line !== null ? ", line " + f.line : ""));
        log.href = f.log;
        item.append(log);
      }
      if (f.excerpt) {
        const details = el("details");
        details.append(el("summary", null, "the bot's output around it (from line " + f.excerpt[0] + ")"));
        details.append(el("pre", null, f.excerpt[1]));
        item.append(details);
      }
      list.append(item);
    }
    box.append(list);
    if (entries.length < total) {
      box.append(el("p", "note", "Listed: the first " + entries.length + "; every game with a fault is in the games list below (with faults only)."));
    }
  }

  // ----- head to head ----------------------------------------------------------------

  function drawPairs() {
    const bots = data.board.rows.map((r) => r.bot);
    const table = $("pairs");
    table.replaceChildren();
    const head = el("tr");
    head.append(el("th"));
    for (const bot of bots) head.append(el("th", null, bot));
    table.appendChild(el("thead")).append(head);
    const body = el("tbody");
    for (const bot of bots) {
      const tr = el("tr");
      tr.append(el("th", "text", bot));
      for (const other of bots) {
        const td = el("td");
        const pair = bot !== other && data.board.head_to_head[bot] ? data.board.head_to_head[bot][other] : null;
        if (!pair) td.textContent = "\u2014";
        else if (!pair.games) td.append(el("span", "none", "0/0"));
        else {
          td.textContent = pair.above + "/" + pair.games;
          // Strength: the likelihood of superiority where the data has it, else the share of games above.
          const strength = typeof pair.los === "number" ? pair.los : pair.above / pair.games;
          const hue = strength >= 0.5 ? 135 : 0;
          const alpha = Math.min(1, Math.abs(strength - 0.5) * 2) * 0.75;
          td.style.background = "hsla(" + hue + ", 60%, 50%, " + alpha.toFixed(2) + ")";
          td.title = bot + " finished above " + other + " in " + (100 * pair.above / pair.games).toFixed(0) + "% of " +
            pair.games + " games" + (typeof pair.los === "number" ? "; likelihood of superiority " + (100 * pair.los).toFixed(0) + "%" : "");
          td.dataset.strength = strength.toFixed(3);
        }
        tr.append(td);
      }
      body.append(tr);
    }
    table.append(body);
  }

  // ----- the rating chart ------------------------------------------------------------

  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
  const colour = (i) => (i < COLOURS.length ? COLOURS[i] : "hsl(" + ((i * 137) % 360) + ", 55%, 45%)");
  const SVG = "http://www.w3.org/2000/svg";
  const svg = (tag, attrs) => {
    const node = document.createElementNS(SVG, tag);
    for (const key in attrs) node.setAttribute(key, attrs[key]);
    return node;
  };

  function drawChart() {
    const box = $("chart");
    box.replaceChildren();
    const history = data.history;
    const bots = data.board.rows.map((r) => r.bot);
    if (!history || history.games.length < 2) {
      box.append(el("p", "note", "The chart appears once games are counted."));
      return;
    }
    const W = 900, H = 300, L = 44, R = 12, T = 10, B = 28;
    const xs = history.games;
    const all = bots.flatMap((b) => history.mu[b] || []);
    let low = Math.floor(Math.min(...all) - 1), high = Math.ceil(Math.max(...all) + 1);
    const x = (v) => L + ((W - L - R) * v) / xs[xs.length - 1];
    const y = (v) => T + ((H - T - B) * (high - v)) / (high - low);
    const chart = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "each bot's rating (mu) as games accumulate" });
    const ticks = 5;
    for (let i = 0; i <= ticks; i++) {
      const v = low + ((high - low) * i) / ticks;
      chart.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#e6e9ed" }));
      const label = svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#66707a" });
      label.textContent = v.toFixed(0);
      chart.append(label);
    }
    for (let i = 0; i <= 4; i++) {
      const v = Math.round((xs[xs.length - 1] * i) / 4);
      const label = svg("text", { x: x(v), y: H - 8, "text-anchor": "middle", "font-size": 11, fill: "#66707a" });
      label.textContent = v + (i === 4 ? " games" : "");
      chart.append(label);
    }
    const lines = {};
    bots.forEach((bot, i) => {
      const mu = history.mu[bot];
      if (!mu) return;
      const sigma = history.sigma[bot];
      const upper = mu.map((m, j) => x(xs[j]) + "," + y(m + 1.96 * sigma[j]));
      const lower = mu.map((m, j) => x(xs[j]) + "," + y(m - 1.96 * sigma[j])).reverse();
      const band = svg("polygon", { points: upper.concat(lower).join(" "), fill: colour(i), opacity: 0, "data-bot": bot });
      const line = svg("polyline", { points: mu.map((m, j) => x(xs[j]) + "," + y(m)).join(" "), fill: "none",
        stroke: colour(i), "stroke-width": 2, "data-bot": bot });
      const title = svg("title", {});
      title.textContent = bot + ": mu " + mu[mu.length - 1].toFixed(2);
      line.append(title);
      chart.append(band, line);
      lines[bot] = [line, band];
    });
    const legend = el("div", "legend");
    bots.forEach((bot, i) => {
      const item = el("span");
      const swatch = el("i");
      swatch.style.background = colour(i);
      item.append(swatch, document.createTextNode(bot));
      const focus = (on) => {
        for (const other in lines) {
          lines[other][0].setAttribute("opacity", on && other !== bot ? 0.2 : 1);
          lines[other][1].setAttribute("opacity", on && other === bot ? 0.15 : 0);
        }
      };
      item.onmouseenter = () => focus(true);
      item.onmouseleave = () => focus(false);
      legend.append(item);
    });
    box.append(chart, legend);
  }

  // ----- games -----------------------------------------------------------------------

  function drawGames() {
    const select = $("bot-filter");
    const bots = data.board.rows.map((r) => r.bot).slice().sort();
    select.replaceChildren(new Option("every bot", ""));
    for (const bot of bots) select.append(new Option(bot, bot));
    select.value = ui.bot;
    $("faulty").checked = ui.faulty;
    const games = data.games.filter((g) => (!ui.bot || g[2].includes(ui.bot)) && (!ui.faulty || g[6]));
    $("games-count").textContent = games.length + " of " + data.games.length + " games";
    const table = $("games");
    table.replaceChildren();
    const head = el("tr");
    for (const label of ["#", "game", "result, first to last", "hands", "decisions", "faults", ""]) {
      head.append(el("th", label.startsWith("result") || label === "game" ? "text" : "", label));
    }
    table.appendChild(el("thead")).append(head);
    const body = el("tbody");
    for (const g of games.slice(0, ui.shown)) {
      const [index, id, seats, placements, hands, decisions, faults, voidReason, replay] = g;
      const tr = el("tr");
      tr.dataset.game = id;
      tr.append(el("td", null, String(index)));
      const name = el("td", "text");
      if (replay) {
        const link = el("a", null, id);
        link.href = "replays/" + encodeURIComponent(id) + ".html";
        name.append(link);
      } else name.textContent = id;
      tr.append(name);
      const result = el("td", "players");
      if (voidReason) result.append(el("span", "void", "void: " + voidReason + " \u2014 "));
      placements.forEach((seat, place) => {
        result.append(el("span", place === 0 ? "winner" : "", (place + 1) + ". " + seats[seat]));
        if (place < placements.length - 1) result.append(document.createTextNode(", "));
      });
      tr.append(result);
      tr.append(el("td", null, hands === null ? "-" : String(hands)));
      tr.append(el("td", null, decisions === null ? "-" : String(decisions)));
      tr.append(el("td", "text", faults ? seats.map((s, i) => (faults[i] ? s + " " + faults[i] : "")).filter(Boolean).join(", ") : ""));
      const open = el("td");
      if (replay) {
        const link = el("a", null, "replay");
        link.href = "replays/" + encodeURIComponent(id) + ".html";
        open.append(link);
      }
      tr.append(open);
      body.append(tr);
    }
    table.append(body);
    $("games-more").hidden = games.length <= ui.shown;
  }

  function drawAll() {
    drawHeader();
    drawStandings();
    drawFaultList();
    drawPairs();
    drawChart();
    drawGames();
    document.body.dataset.games = data.league.games;
  }

  $("more").checked = ui.more;
  $("more").onchange = (event) => { ui.more = event.target.checked; drawStandings(); saveState(); };
  $("bot-filter").onchange = (event) => { ui.bot = event.target.value; ui.shown = 100; drawGames(); saveState(); };
  $("faulty").onchange = (event) => { ui.faulty = event.target.checked; drawGames(); saveState(); };
  $("games-more").onclick = () => { ui.shown += 200; drawGames(); saveState(); };
  drawAll();
  if (ui.scrollY) window.scrollTo(0, ui.scrollY);
  document.body.dataset.ready = "1";

  // ----- staying current while the league runs -----------------------------------------

  async function refresh() {
    const response = await fetch(location.pathname, { cache: "no-store" });
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    data = readData(doc);
    drawAll();
  }
  if (location.protocol === "http:" || location.protocol === "https:") {
    // `referee serve` pushes an event as each game finishes; another web server gets polled while the league runs.
    let polling = null;
    const poll = () => {
      if (!polling && data.league.live) polling = setInterval(() => refresh().catch(() => {}), 5000);
    };
    if (window.EventSource) {
      const events = new EventSource("events");
      let opened = false;
      events.onopen = () => { opened = true; };
      events.onmessage = () => refresh().catch(() => {});
      events.onerror = () => { if (!opened) { events.close(); poll(); } };
    } else poll();
  } else if (data.league.live) {
    // From a file the page cannot fetch its own file again: it reloads, keeping what the reader chose.
    setTimeout(() => { saveState(); location.reload(); }, 5000);
  }
})();
