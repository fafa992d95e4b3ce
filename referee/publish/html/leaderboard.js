"use strict";
// The league page: draws the data the referee wrote into it (referee/publish/league_page.py).
// Seeds come as strings of digits (a JavaScript number would round a 64-bit seed) and are shown as they are.
(function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  };
  // A bot's name, free to wrap after each "-", "_" and "." (newcomer-|v2, bot-|03), so that it wraps rather than is cut.
  const named = (tag, cls, name) => {
    const node = el(tag, cls);
    String(name).split(/(?<=[-_.])/).forEach((part, i) => node.append(...(i ? [el("wbr"), part] : [part])));
    return node;
  };
  const readData = (doc) => JSON.parse(doc.getElementById("league").textContent);
  let data = readData(document);

  const PAIRS_SHOWN = 12; // a head-to-head matrix larger than this is cut to the top bots, or one bot's row and column
  const CHART_SHOWN = 8; // lines drawn at first when the field is larger; the legend adds or removes bots
  const GAMES_PAGE = 100; // games listed at first, newest first, and how many more each "show more" adds

  // What the reader chose survives the page's own refreshes (sessionStorage, per page).
  const STATE_KEY = "referee-leaderboard:" + location.pathname;
  const ui = Object.assign(
    { sort: "rank", dir: 1, more: false, bot: "", faulty: false, shown: GAMES_PAGE, fault: null, scrollY: 0, pairs: "", chart: null },
    JSON.parse(sessionStorage.getItem(STATE_KEY) || "{}")
  );
  const saveState = () => {
    ui.scrollY = window.scrollY;
    try { sessionStorage.setItem(STATE_KEY, JSON.stringify(ui)); } catch (e) { /* storage may be off */ }
  };

  const fixed = (digits) => (value) => (value === null || value === undefined ? "-" : value.toFixed(digits));
  const signed = (value) => {
    if (value === null || value === undefined) return "-";
    const text = value.toFixed(0);
    return text === "-0" || text === "0" ? "0" : (value > 0 ? "+" : "") + text;
  };
  const counted = (count, noun) => count + " " + noun + (count === 1 ? "" : "s");
  // Every time on the page in one form, to the minute in UTC: "2026-12-03 07:34 UTC" (as leaderboard.md writes them).
  const utcMinute = (at) => {
    const time = at ? new Date(at) : null;
    if (!time) return "";
    return isNaN(time.getTime()) ? at : time.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  };
  const percent = (value) => (value === null || value === undefined ? "-" : (100 * value).toFixed(1) + "%");
  const faultTotal = (row) => Object.values(row.faults).reduce((a, b) => a + b, 0);
  const strengthOf = (row) => (row.strength ? row.strength.estimate : null);
  // A rank as people read it: "2", or "1–3" where the games leave the place open that far (rank_range, 95%).
  const rankText = (row) => {
    if (row.status === "disqualified") return "\u2014";
    const range = row.rank_range || [row.rank, row.rank];
    return range[0] === range[1] ? String(range[0]) : range[0] + "\u2013" + range[1];
  };

  // key: shown at every width; the others wait for a wider screen or "more columns".
  const COLUMNS = [
    { key: "rank", label: "rank", value: (r) => r.rank, show: (v, r) => rankText(r), key_column: true,
      title: "by strength; a range such as 1\u20133 is where the games put the bot (95%): bots whose order the games do not establish share it" },
    { key: "bot", label: "bot", text: true, value: (r) => r.bot, draw: drawBot, key_column: true },
    { key: "strength", label: "strength", value: strengthOf, draw: drawStrength, key_column: true,
      title: "Plackett-Luce strength, Elo relative to the field's mean, with its 95% interval" },
    { key: "games", label: "games", value: (r) => r.games, key_column: true },
    { key: "mean_score", label: "score per game", value: (r) => r.mean_score, show: fixed(3), key_column: true,
      title: "per game (n - place) / (n - 1): first 1, last 0" },
    // Only where the luck was measured (a duel that adjusts for it, `referee leaderboard --adjust-for-luck --write`).
    { key: "adjusted_mean_score", label: "less luck", value: (r) => (r.adjusted_mean_score || {}).estimate,
      show: fixed(3), luck: true,
      title: "score per game with the luck of the cards taken out (docs/statistics.md, Luck), with its 95% interval",
      draw: (r, cell) => {
        const luck = r.adjusted_mean_score;
        cell.textContent = luck ? luck.estimate.toFixed(3) + " [" + luck.low.toFixed(3) + ", " + luck.high.toFixed(3) + "]" : "-";
      } },
    { key: "wins", label: "wins", value: (r) => r.wins },
    { key: "win_rate", label: "win %", value: (r) => r.win_rate, show: percent },
    { key: "average_placement", label: "avg place", value: (r) => r.average_placement, show: fixed(2) },
    { key: "faults", label: "faults", value: faultTotal, draw: drawFaults, title: "faults by kind; click one to see where" },
    { key: "median_ms", label: "median ms", value: (r) => r.median_ms, show: fixed(1), title: "median decision time" },
    { key: "p99_ms", label: "p99 ms", value: (r) => r.p99_ms, show: fixed(1), more: true },
    { key: "forfeits", label: "forfeits", value: (r) => r.forfeits, more: true },
    { key: "decisions", label: "decisions", value: (r) => r.decisions, more: true },
    { key: "score", label: "score", value: (r) => r.score, show: fixed(2), more: true, title: "total score" },
  ];

  // ----- header ----------------------------------------------------------------------

  function drawHeader() {
    const league = data.league;
    const s = league.settings || {};
    document.title = league.name + " \u2014 leaderboard";
    $("name").textContent = league.name;
    const timing = s.timing || {};
    const policy = s.fault_policy || {};
    // The first and last games, as every time on the page: "2026-12-03 07:34–07:39 UTC" (one day), else both whole.
    const [first, last] = [utcMinute(league.first_game), utcMinute(league.last_game || league.first_game)];
    const dates = !first ? "no game yet" : first === last ? first
      : first.slice(0, 10) === last.slice(0, 10) ? first.replace(" UTC", "") + "\u2013" + last.slice(11)
      : first + " \u2013 " + last;
    const parts = [
      (league.game || "").replace(/_/g, " "),
      s.table_size ? "tables of " + s.table_size : null,
      // A season counts its authors and their versions (the bots of its standings); a league its bots.
      league.authors
        ? counted(league.authors, "author") + ", " + counted(league.bots, "version") + " (" + league.active + " active)"
        : counted(league.bots, "bot"),
      league.games + (league.scheduled ? " of " + league.scheduled : "") + (league.games === 1 && !league.scheduled ? " game" : " games"),
      timing.move_time_ms !== undefined
        ? "move " + timing.move_time_ms + " ms + bank " + timing.time_bank_ms + " ms (grace " + timing.grace_ms + " ms)" : null,
      s.turn_limit ? "turn limit " + s.turn_limit : null,
      policy.mode ? "faults: " + policy.mode.replace(/_/g, " ") + (policy.mode === "default_action" ? " (forfeit after " + policy.max_faults + ")" : "") : null,
      dates,
      "referee " + league.referee_version,
    ];
    $("settings").textContent = parts.filter(Boolean).join(" \u00b7 ");
    const seed = $("seed");
    seed.replaceChildren();
    if (s.seed_commitment) {
      seed.append(document.createTextNode("seed commitment "), el("code", null, s.seed_commitment),
        document.createTextNode(" (the seed is shown once every game is played)"));
    } else if (s.seed !== undefined && s.seed !== null) {
      seed.append(document.createTextNode("seed "), el("code", null, String(s.seed)),
        document.createTextNode(" (check it: referee seed --check " + String(s.seed) + ")"));
    }
    const live = $("live");
    live.hidden = !league.live;
    live.textContent = "live, updated " + utcMinute(league.updated);
    if (league.live && location.protocol !== "file:") {
      // Served by referee serve: the games being played, move by move.
      const watch = el("a", null, "watch the games in play");
      watch.href = "live/";
      live.append(" \u00b7 ", watch);
    }
    const board = data.board;
    const duel = $("duel");
    duel.hidden = !board.duel;
    if (board.duel) {
      const d = board.duel;
      duel.textContent = d.candidates[0] + " against " + d.candidates[1] + ": " + d.headline +
        " (log-likelihood ratio " + d.llr.toFixed(2) + ", bounds " + d.bounds[0].toFixed(2) + " and " + d.bounds[1].toFixed(2) + ")";
    }
    $("void").textContent = board.void_games && board.void_games.length
      ? board.void_games.length + " void game" + (board.void_games.length === 1 ? "" : "s") + ", which count for nobody: " +
        board.void_games.map((g) => g.game_id + " (" + g.reason + ")").join("; ")
      : "";
    $("season").replaceChildren(...seasonLines().map((line) => el("span", "season-line", line)));
    $("rating-note").textContent = "rank: by strength, one Plackett-Luce fit of every game's finish order; a range such as 1\u20133 is " +
      "where the games put the bot at 95% (" + (board.ranking && board.ranking.covariance === "sandwich"
        ? "the fit's covariance over " + board.ranking.deals + " deals" : "a bootstrap over deals") +
      "): bots whose order the games do not establish share it. " +
      "strength: Elo relative to the field's mean; the bar shows it (line) and its 95% interval on one scale for every bot. " +
      "score per game: (n - place) / (n - 1)." + (candidatesOf().length ? " The candidates are ranked among themselves, on the same deals; the field apart." : "") +
      " Click a column to sort.";
  }

  // ----- standings -------------------------------------------------------------------

  let scale = [0, 1];
  const candidatesOf = () => data.board.candidates || [];
  const statusText = (row) => (!row.status || row.status === "active" ? "" : row.status + (row.status_reason ? ": " + row.status_reason : ""));

  // A bot's name, and its mark when it is withdrawn or disqualified.
  function drawBot(row, td) {
    td.append(named("span", "name", row.bot));
    const mark = statusText(row);
    if (mark) td.append(" ", el("span", "status", mark));
  }

  // What the season changed: the games left out with disqualified bots, each author's line of versions, the edits.
  function seasonLines() {
    const board = data.board;
    const rows = Object.fromEntries(board.rows.map((r) => [r.bot, r]));
    const lines = [];
    const out = board.rows.filter((r) => r.status === "disqualified");
    if (out.length) {
      lines.push("Disqualified, unranked: " + out.map((r) => r.bot + " (" + statusText(r) + ")").join("; ") + ". The " +
        board.left_out_games + " game" + (board.left_out_games === 1 ? "" : "s") + " they sat in count for no one.");
    }
    for (const line of board.versions || []) {
      lines.push("Versions of " + line.author + ": " + line.bots.filter((b) => rows[b]).map((b) =>
        b + " (" + signed(strengthOf(rows[b])) + (statusText(rows[b]) ? ", " + rows[b].status : "") + ")").join(" \u2192 "));
    }
    for (const change of data.league.changes || []) lines.push(utcMinute(change.at) + ": " + change.what);
    return lines;
  }

  function drawStrength(row, cell) {
    if (!row.strength) {
      cell.append(el("span", "none", "-"));
      return;
    }
    const s = row.strength;
    cell.append(el("span", "figure", signed(s.estimate)));
    // A null end is one the games cannot bound: a bot first (or last) in every game it played.
    const low = s.low === null ? scale[0] : s.low, high = s.high === null ? scale[1] : s.high;
    cell.append(el("span", "range", " [" + (s.low === null ? "\u2212\u221e" : signed(s.low)) + ", " +
      (s.high === null ? "+\u221e" : signed(s.high)) + "]"));
    const bar = el("span", "interval");
    const at = (v) => (100 * (v - scale[0])) / (scale[1] - scale[0] || 1) + "%";
    const span = el("span");
    span.style.left = at(low);
    span.style.width = "calc(" + at(high) + " - " + at(low) + ")";
    const mark = el("i");
    mark.style.left = at(s.estimate);
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
    const ends = rows.flatMap((r) => (r.strength ? [r.strength.low, r.strength.estimate, r.strength.high] : []))
      .filter((v) => v !== null);
    scale = ends.length ? [Math.min(...ends), Math.max(...ends)] : [0, 1];
    const measured = rows.some((r) => r.adjusted_mean_score);
    const columns = COLUMNS.filter((c) => (!c.more || ui.more) && (!c.luck || measured));
    const column = columns.find((c) => c.key === ui.sort) || columns[0];
    rows.sort((a, b) => {
      if (a.candidate !== b.candidate) return a.candidate ? -1 : 1; // candidates first, whatever the sort
      const x = column.value(a), y = column.value(b);
      if (x === y) return a.rank - b.rank || (a.bot < b.bot ? -1 : 1);
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (column.text ? String(x).localeCompare(String(y)) : x - y) * ui.dir;
    });
    const table = $("standings");
    table.replaceChildren();
    table.classList.toggle("all-columns", ui.more);
    const head = el("tr");
    for (const c of columns) {
      const th = el("th", (c.text ? "text" : "") + (c.key_column ? " key" : ""), c.label);
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
    const grouped = candidatesOf().length > 0;
    let group = null;
    for (const row of rows) {
      if (grouped && row.candidate !== group) {
        group = row.candidate;
        const label = el("tr", "group");
        const th = el("th", "text", group ? "candidates, ranked among themselves" : "the field, ranked apart");
        th.colSpan = columns.length;
        label.append(th);
        body.append(label);
      }
      const tr = el("tr");
      tr.dataset.bot = row.bot;
      if (row.candidate) tr.classList.add("candidate");
      if (row.status && row.status !== "active") tr.classList.add(row.status);
      for (const c of columns) {
        const td = el("td", (c.key === "bot" ? "text bot" : c.text ? "text" : "") + (c.key_column ? " key" : ""));
        td.dataset.key = c.key;
        if (c.draw) c.draw(row, td);
        else td.textContent = c.show ? c.show(c.value(row), row) : String(c.value(row));
        tr.append(td);
      }
      body.append(tr);
    }
    table.append(body);
    keepNamesWhole(table);
  }

  // A table squeezed to the screen narrows every column that can wrap: a name would wrap (random-|2) while the
  // headers still could. So each name is kept as wide as it is on one line, up to 45% of the screen; only a
  // longer name wraps, after its separators.
  const ruler = document.createElement("canvas").getContext("2d");
  function keepNamesWhole(table) {
    for (const name of table.querySelectorAll("td.bot .name")) {
      const style = getComputedStyle(name);
      ruler.font = [style.fontStyle, style.fontWeight, style.fontSize, style.fontFamily].join(" ");
      name.style.minWidth = "min(" + Math.ceil(ruler.measureText(name.textContent).width + 1) + "px, 45vw)";
    }
  }

  // A game's replay: a file (2), or made from the game's log by referee serve (1), so only on a served page.
  const hasReplay = (flag) => flag === 2 || (flag === 1 && location.protocol !== "file:");
  // A game's replay, else its log: the games listed say where their replay is, and so does each fault told.
  function gameLink(game, n, replay) {
    const row = data.games.find((g) => g[1] === game);
    const flag = row ? row[8] : replay;
    if (hasReplay(flag)) return "replays/" + encodeURIComponent(game) + ".html" + (n !== null && n !== undefined ? "#n=" + n : "");
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
    const causes = ((data.causes || {})[bot] || {})[kind] || [];
    box.hidden = false;
    const total = row ? row.faults[kind] : entries.length;
    box.append(el("h3", null, bot + ": " + total + " " + kind + " fault" + (total === 1 ? "" : "s")));
    // Grouped by cause first: a bot that failed to start in 80 games is one line, not 80.
    if (causes.length) {
      const summary = el("ul", "causes");
      for (const [, count, first, detail] of causes) {
        const item = el("li");
        item.append(el("strong", null, count + " \u00d7 "), document.createTextNode(detail + " (first in "));
        const link = el("a", null, first);
        const told = entries.find((f) => f.game === first);
        link.href = gameLink(first, null, told ? told.replay : 0);
        item.append(link, document.createTextNode(")"));
        summary.append(item);
      }
      box.append(summary);
    }
    const details = el("details");
    details.open = causes.length <= 1 || entries.length <= 5;
    details.append(el("summary", null, "each fault (" + entries.length + (entries.length < total ? " of " + total : "") + ")"));
    const list = el("ul");
    for (const f of entries) {
      const item = el("li");
      const link = el("a", null, f.game + (f.n !== null && f.n !== undefined ? ", decision " + f.n : ", before the first decision"));
      link.href = gameLink(f.game, f.n, f.replay);
      item.append(link, document.createTextNode(": " + f.detail));
      // Where its output stood, in words: the output itself is the organiser's, in the league's folder.
      if (f.output) item.append(el("span", "output", " \u2014 its output: " + f.output));
      list.append(item);
    }
    details.append(list);
    box.append(details);
    const read = (data.fault_games || {})[bot];
    if (entries.length < total) {
      box.append(el("p", "note", "Told from the logs of " + bot + "'s newest " + (read || "") + " games with faults" +
        " (the causes too), newest first; the leaderboard counts every fault."));
    }
    box.append(el("p", "note", "A bot's output (and what it said with a fault) is not published: the organiser has it in the league's folder."));
  }

  // ----- a ladder's submissions: each version judged, accepted or rejected, and why ---------------

  // Why a version was rejected: its first line, the whole of it on hover and, when it has more lines, unfolded.
  function drawReason(reason, cell) {
    if (!reason) return;
    const [first, ...more] = reason.split("\n");
    cell.title = reason;
    if (!more.length) {
      cell.textContent = first;
      return;
    }
    const details = el("details");
    details.append(el("summary", null, first), el("pre", null, reason));
    cell.append(details);
  }

  function drawSubmissions() {
    const authors = data.board.submissions || [];
    $("submissions-section").hidden = !authors.length;
    const table = $("submissions");
    table.replaceChildren();
    if (!authors.length) return;
    const labels = ["version", "verdict", "status", "judged", "why rejected"];
    const head = el("tr");
    for (const label of labels) head.append(el("th", "text", label));
    table.appendChild(el("thead")).append(head);
    const rows = Object.fromEntries(data.board.rows.map((r) => [r.bot, r]));
    for (const author of authors) {
      const body = el("tbody");
      body.dataset.author = author.author;
      const group = el("tr", "group");
      const name = el("th", "text", author.author);
      name.colSpan = labels.length;
      if (author.page) {
        const page = el("a", "report", "the author's page");
        page.href = author.page;
        page.title = "for its author alone: every check, the build's output, the bot's output in each game";
        name.append(page);
      }
      group.append(name);
      body.append(group);
      for (const version of author.versions.slice().reverse()) {
        const tr = el("tr", version.verdict);
        tr.dataset.bot = version.bot;
        const status = el("td", "text", version.status || "");
        const row = rows[version.bot];
        if (row && row.status_reason) status.title = row.status_reason;
        const reason = el("td", "text reason");
        drawReason(version.reason, reason);
        tr.append(named("td", "text bot", version.bot), el("td", "text verdict", version.verdict), status,
          el("td", "text", utcMinute(version.at)), reason);
        body.append(tr);
      }
      table.append(body);
    }
  }

  // ----- head to head ----------------------------------------------------------------

  // A name that may name a file and a path of referee serve (referee/publish/head_to_head.py's PAGE_NAME).
  const PAGE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
  const hasPage = (bot) => PAGE_NAME.test(bot) && !bot.includes("..");
  // The page of two bots, seen from ``bot``'s side: pairs/A/B.html#bot, A first in sorted order.
  function pairHref(bot, other) {
    const [a, b] = [bot, other].sort();
    return "pairs/" + encodeURIComponent(a) + "/" + encodeURIComponent(b) + ".html#" + encodeURIComponent(bot);
  }

  function pairCell(bot, other) {
    const td = el("td");
    const pair = bot !== other && data.board.head_to_head[bot] ? data.board.head_to_head[bot][other] : null;
    if (!pair) td.textContent = "\u2014";
    else if (!pair.games) td.append(el("span", "none", "0/0"));
    else {
      const above = pair.above + (pair.ties || 0) / 2;
      const text = (pair.ties ? above.toFixed(1) : pair.above) + "/" + pair.games;
      if (data.league.pair_pages && hasPage(bot) && hasPage(other)) {
        // Each pair's own page: the figures with their intervals, and the games they shared.
        const link = el("a", "pair", text);
        link.href = pairHref(bot, other);
        td.append(link);
      } else td.textContent = text;
      // Strength: the likelihood of superiority where the data has it, else the share of games above.
      const strength = typeof pair.los === "number" ? pair.los : above / pair.games;
      const hue = strength >= 0.5 ? 135 : 0;
      const alpha = Math.min(1, Math.abs(strength - 0.5) * 2) * 0.75;
      td.style.background = "hsla(" + hue + ", 60%, 50%, " + alpha.toFixed(2) + ")";
      td.title = bot + (pair.ties ? " placed better than " : " finished above ") + other + " in " + (100 * above / pair.games).toFixed(0) + "% of " +
        pair.games + (pair.ties ? " paired games (a tie counting half)" : " games") +
        (typeof pair.los === "number" ? "; likelihood of superiority " + (100 * pair.los).toFixed(0) + "%" : "");
      td.dataset.strength = strength.toFixed(3);
    }
    return td;
  }

  function drawPairs() {
    const bots = data.board.rows.map((r) => r.bot);
    const select = $("pairs-bot");
    select.replaceChildren(new Option(bots.length > PAIRS_SHOWN ? "the top " + PAIRS_SHOWN : "every bot", ""));
    for (const bot of bots) select.append(new Option(bot, bot));
    if (ui.pairs && !bots.includes(ui.pairs)) ui.pairs = "";
    select.value = ui.pairs;
    const table = $("pairs");
    table.replaceChildren();
    const note = $("pairs-note");
    if (ui.pairs) {
      // One bot's row and column: each other bot, with the chosen bot's record against it.
      const bot = ui.pairs;
      const head = el("tr");
      head.append(el("th", "text", "opponent"), el("th", null, bot + " above"), el("th", null, "above " + bot));
      table.appendChild(el("thead")).append(head);
      const body = el("tbody");
      for (const other of bots) {
        if (other === bot) continue;
        const tr = el("tr");
        tr.append(named("th", "text", other), pairCell(bot, other), pairCell(other, bot));
        body.append(tr);
      }
      table.append(body);
      note.textContent = "";
      return;
    }
    const shown = bots.slice(0, PAIRS_SHOWN);
    const head = el("tr");
    head.append(el("th"));
    for (const bot of shown) head.append(named("th", null, bot));
    table.appendChild(el("thead")).append(head);
    const body = el("tbody");
    for (const bot of shown) {
      const tr = el("tr");
      tr.append(named("th", "text", bot));
      for (const other of shown) tr.append(pairCell(bot, other));
      body.append(tr);
    }
    table.append(body);
    note.textContent = bots.length > shown.length
      ? "The top " + shown.length + " of " + bots.length + " bots; choose a bot to see its row and column against every other."
      : "";
  }

  // ----- the chart of strengths over time: the standings' fit as games accumulate ----------

  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
  const colour = (i) => (i < COLOURS.length ? COLOURS[i] : "hsl(" + ((i * 137) % 360) + ", 55%, 45%)");
  const SVG = "http://www.w3.org/2000/svg";
  const svg = (tag, attrs) => {
    const node = document.createElementNS(SVG, tag);
    for (const key in attrs) node.setAttribute(key, attrs[key]);
    return node;
  };

  function chartBots(bots) {
    if (!Array.isArray(ui.chart)) return bots.slice(0, CHART_SHOWN);
    return bots.filter((bot) => ui.chart.includes(bot));
  }

  // A step of 1, 2 or 5 times a power of ten that cuts ``span`` into about four.
  const niceStep = (span) => {
    const raw = span / 4, power = Math.pow(10, Math.floor(Math.log10(raw)));
    const mantissa = raw / power;
    return (mantissa <= 1 ? 1 : mantissa <= 2 ? 2 : mantissa <= 5 ? 5 : 10) * power;
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
    const chosen = chartBots(bots);
    // Drawn at the width it is shown at, so that its labels are as large on a phone as on a desktop.
    const W = Math.max(280, Math.round(box.clientWidth || 900)), H = Math.round(Math.min(320, Math.max(200, W * 0.45)));
    const L = 46, R = 10, T = 10, B = 26;
    const xs = history.games;
    const series = (bot) => history.strength[bot] || [];
    // Elo from the field's mean: 0 is always on the scale, the rest in round steps.
    const all = [0, ...chosen.flatMap((b) => series(b).filter((v) => v !== null))];
    const step = niceStep(Math.max(40, Math.max(...all) - Math.min(...all)));
    const low = Math.floor(Math.min(...all) / step) * step, high = Math.ceil(Math.max(...all) / step) * step;
    const x = (v) => L + ((W - L - R) * v) / xs[xs.length - 1];
    const y = (v) => T + ((H - T - B) * (high - v)) / (high - low || 1);
    const chart = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img",
      "aria-label": "Plackett-Luce strengths (Elo relative to the field's mean) of the chosen bots as games accumulate" });
    for (let v = low; v <= high + step / 2; v += step) {
      chart.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: Math.abs(v) < step / 2 ? "#b8c0c8" : "#e6e9ed" }));
      const label = svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 12, fill: "#66707a" });
      label.textContent = signed(v);
      chart.append(label);
    }
    const xticks = W < 500 ? 2 : 4;
    for (let i = 0; i <= xticks; i++) {
      const v = Math.round((xs[xs.length - 1] * i) / xticks);
      const label = svg("text", { x: x(v), y: H - 8, "text-anchor": i === 0 ? "start" : i === xticks ? "end" : "middle",
        "font-size": 12, fill: "#66707a" });
      label.textContent = v + (i === xticks ? " games" : "");
      chart.append(label);
    }
    const lines = {};
    bots.forEach((bot, i) => {
      // A bot has no strength before its first counted game: its line starts there.
      const points = series(bot).map((v, j) => (v === null ? null : [x(xs[j]), y(v), v, xs[j]])).filter(Boolean);
      if (!points.length || !chosen.includes(bot)) return;
      const line = svg("polyline", { points: points.map((p) => p[0] + "," + p[1]).join(" "), fill: "none",
        stroke: colour(i), "stroke-width": 2, "data-bot": bot });
      const last = points[points.length - 1];
      const end = svg("circle", { cx: last[0], cy: last[1], r: 3, fill: colour(i), "data-bot": bot });
      const title = svg("title", {});
      title.textContent = bot + ": " + signed(last[2]) + " after " + last[3] + (last[3] === 1 ? " game" : " games");
      line.append(title);
      chart.append(line, end);
      lines[bot] = [line, end];
    });
    const legend = el("div", "legend");
    bots.forEach((bot, i) => {
      const on = chosen.includes(bot);
      const item = el("button", on ? "on" : "off");
      item.type = "button";
      item.dataset.bot = bot;
      item.setAttribute("aria-pressed", on ? "true" : "false");
      item.title = on ? "hide " + bot : "show " + bot;
      const swatch = el("i");
      swatch.style.background = on ? colour(i) : "transparent";
      swatch.style.borderColor = colour(i);
      item.append(swatch, named("span", "name", bot));
      const focus = (lit) => {
        for (const other in lines) {
          for (const mark of lines[other]) mark.setAttribute("opacity", lit && other !== bot ? 0.2 : 1);
        }
      };
      item.onmouseenter = () => on && focus(true);
      item.onmouseleave = () => on && focus(false);
      item.onclick = () => {
        const current = chartBots(bots);
        ui.chart = on ? current.filter((b) => b !== bot) : current.concat([bot]);
        drawChart();
        saveState();
      };
      legend.append(item);
    });
    box.append(chart, legend);
  }

  // ----- games -----------------------------------------------------------------------

  // A game's count, labelled for a phone, where a game is a block of lines rather than a row of columns (leaderboard.css).
  const count = (value, label) => {
    const td = el("td", "count", value === null ? "-" : String(value));
    td.dataset.label = label;
    return td;
  };

  function drawGames() {
    const select = $("bot-filter");
    const bots = data.board.rows.map((r) => r.bot).slice().sort();
    select.replaceChildren(new Option("every bot", ""));
    for (const bot of bots) select.append(new Option(bot, bot));
    select.value = ui.bot;
    $("faulty").checked = ui.faulty;
    const games = data.games.filter((g) => (!ui.bot || g[2].includes(ui.bot)) && (!ui.faulty || g[6]));
    // The newest games alone are listed, newest first: a page costs the same however long the league.
    const listed = data.games.length < data.league.games ? "the newest " + data.games.length + " of " + data.league.games : String(data.games.length);
    $("games-count").textContent = games.length + " of " + listed + (data.league.games === 1 ? " game" : " games");
    const archive = $("archive");
    archive.hidden = !hasReplay(data.league.archive) || !data.league.games; // where it is: flagged as a replay is
    archive.href = "games.tar.gz";
    const table = $("games");
    table.replaceChildren();
    const head = el("tr");
    for (const label of ["#", "game", "result, first to last", "hands", "decisions", "faults", ""]) {
      head.append(el("th", label.startsWith("result") || label === "game" ? "text" : "", label));
    }
    table.appendChild(el("thead")).append(head);
    const body = el("tbody");
    for (const g of games.slice(0, ui.shown)) {
      const [index, id, seats, finishOrder, hands, decisions, faults, voidReason, replay] = g;
      const tr = el("tr");
      tr.dataset.game = id;
      tr.append(el("td", null, String(index + 1))); // the schedule's place, counted from 1 as people count
      const name = el("td", "text");
      if (hasReplay(replay)) {
        const link = el("a", null, id);
        link.href = "replays/" + encodeURIComponent(id) + ".html";
        name.append(link);
      } else name.textContent = id;
      tr.append(name);
      const result = el("td", "players");
      if (voidReason) result.append(el("span", "void", "void: " + voidReason + " \u2014 "));
      finishOrder.forEach((seat, place) => {
        // "2. bravo", a place never apart from its bot however the cell wraps (leaderboard.css: .player).
        const player = el("span", "player" + (place === 0 ? " winner" : ""), (place + 1) + ". " + seats[seat]);
        player.dataset.bot = seats[seat];
        result.append(player);
        if (place < finishOrder.length - 1) result.append(document.createTextNode(", "));
      });
      tr.append(result);
      tr.append(count(hands, "hands"), count(decisions, "decisions"));
      const faulted = el("td", "text faulted", faults ? seats.map((s, i) => (faults[i] ? s + " " + faults[i] : "")).filter(Boolean).join(", ") : "");
      faulted.dataset.label = "faults";
      tr.append(faulted);
      const open = el("td");
      if (hasReplay(replay)) {
        const link = el("a", null, "replay");
        link.href = "replays/" + encodeURIComponent(id) + ".html";
        open.append(link);
      }
      tr.append(open);
      body.append(tr);
    }
    table.append(body);
    const more = $("games-more");
    more.hidden = games.length <= ui.shown;
    more.textContent = "show " + Math.min(GAMES_PAGE, games.length - ui.shown) + " more (" + (games.length - ui.shown) + " not shown)";
  }

  function drawAll() {
    drawHeader();
    drawStandings();
    drawFaultList();
    drawSubmissions();
    drawPairs();
    drawChart();
    drawGames();
    document.body.dataset.games = data.league.games;
  }

  $("more").checked = ui.more;
  $("more").onchange = (event) => { ui.more = event.target.checked; drawStandings(); saveState(); };
  $("bot-filter").onchange = (event) => { ui.bot = event.target.value; ui.shown = GAMES_PAGE; drawGames(); saveState(); };
  $("pairs-bot").onchange = (event) => { ui.pairs = event.target.value; drawPairs(); saveState(); };
  $("faulty").onchange = (event) => { ui.faulty = event.target.checked; ui.shown = GAMES_PAGE; drawGames(); saveState(); };
  $("games-more").onclick = () => { ui.shown += GAMES_PAGE; drawGames(); saveState(); };
  let chartWidth = $("chart").clientWidth;
  window.addEventListener("resize", () => {
    if ($("chart").clientWidth !== chartWidth) { chartWidth = $("chart").clientWidth; drawChart(); }
  });
  drawAll();
  if (ui.scrollY) window.scrollTo(0, ui.scrollY);
  document.body.dataset.ready = "1";

  // ----- staying current while the league runs -----------------------------------------
  // Only while it runs: a finished league's page holds no connection open and sets no timer, so that a browser
  // which waits for the network to go quiet (headless Chromium's --virtual-time-budget) finishes with it.
  let events = null;
  let polling = null;
  function stopListening() {
    if (events) events.close();
    if (polling) clearInterval(polling);
    events = polling = null;
  }
  async function refresh() {
    const response = await fetch(location.pathname, { cache: "no-store" });
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    if (!doc.getElementById("league")) return;
    data = readData(doc);
    drawAll();
    if (!data.league.live) stopListening(); // the league has ended: nothing more will change
  }
  const served = location.protocol === "http:" || location.protocol === "https:";
  if (data.league.live && served) {
    // `referee serve` pushes an event as each game finishes; another web server gets polled.
    const poll = () => {
      if (!polling) polling = setInterval(() => refresh().catch(() => {}), 5000);
    };
    if (window.EventSource) {
      events = new EventSource("events");
      let opened = false;
      events.onopen = () => { opened = true; };
      events.onmessage = () => refresh().catch(() => {});
      events.onerror = () => { if (!opened) { stopListening(); poll(); } };
    } else poll();
  } else if (data.league.live) {
    // From a file the page cannot fetch its own file again: it reloads, keeping what the reader chose.
    setTimeout(() => { saveState(); location.reload(); }, 5000);
  }
})();
