// The match replay viewer. Its data is /api/matches/ID/replay: the server replays the
// record through the engine (the replay `saloon replay` runs), so the page shows what the
// CLI shows. Position p = after the first p log entries (0 = the start, n = the end).
"use strict";
(function () {
  const viewer = document.getElementById("viewer");
  if (!viewer) return;
  const id = viewer.dataset.match;
  const $ = (sel) => document.getElementById(sel);
  const slider = $("slider"), position = $("position"), tablePane = $("table"),
    stepPane = $("step"), logList = $("log"), handsBox = $("hands"), handsPane = $("allhands");
  let data = null, pos = 0, timer = null;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }
  // A log entry's kind as words: PLAY_CARD -> "play card".
  const kindName = (k) => k.toLowerCase().replaceAll("_", " ");
  const seatName = (s) => (data.seats[s] ? "seat " + s + " (" + data.seats[s].name + ")" : "no seat yet");
  const locationName = (id) => {
    const found = (data.tables[pos].locations || []).find((l) => l.id === id);
    return found ? found.name : "location " + id;
  };
  const card = (c) => el("span", { class: "card", "data-card": c }, data.cards[c] || String(c));
  const cards = (list) => { const f = document.createDocumentFragment(); (list || []).forEach((c) => f.append(card(c))); return f; };

  function seatTable(columns, turn) {
    const head = el("tr", {}, el("th", {}, "seat"), ...columns.map(([h]) => el("th", { class: "num" }, h)));
    const rows = data.seats.map((s, i) => el("tr", { class: i === turn ? "turn" : "", "data-seat": i },
      el("td", {}, seatName(i)), ...columns.map(([, values]) => el("td", { class: "num" }, values[i] ?? "-"))));
    return el("table", { class: "seats" }, el("thead", {}, head), el("tbody", {}, ...rows));
  }

  const renderers = {
    "seas-of-strife-v1": (t, turn) => {
      const f = document.createDocumentFragment();
      f.append(el("h3", {}, "Hand " + t.hand_number + " · trick in play"));
      const trick = el("p", { id: "trick" });
      if (!t.trick.length) trick.append("(no card played yet" + (t.leader >= 0 ? "; " + seatName(t.leader) + " leads" : "") + ")");
      t.trick.forEach(([s, c]) => trick.append(el("span", {}, "seat " + s + ": "), card(c), " "));
      f.append(trick);
      if (t.last_trick) f.append(el("p", { class: "meta", id: "last-trick", "data-winner": t.last_trick.winner },
        "last trick won by " + seatName(t.last_trick.winner) + ": ", cards(t.last_trick.cards)));
      f.append(seatTable([["cards", t.hand_sizes], ["tricks won", t.tricks_taken], ["points", t.points]], turn));
      return f;
    },
    "seizure-v1": (t, turn) => {
      const f = document.createDocumentFragment();
      f.append(el("h3", {}, "Round " + t.round + (t.dealer >= 0 ? " · dealer seat " + t.dealer : "")));
      const pile = el("p", { id: "pile" }, "pile (" + t.pile.length + ", top last): ");
      t.pile.slice(-8).forEach((c) => pile.append(card(c)));
      if (t.reference !== null) pile.append(" · reference ", card(t.reference));
      f.append(pile, el("p", { class: "meta" }, "draw pile: " + t.draw_pile_size + " cards"));
      f.append(seatTable([["cards", t.hand_sizes], ["draws", t.draws], ["gifts", t.gifts], ["score", t.scores]], turn));
      if (t.last_round) f.append(el("p", { class: "meta", id: "last-round" },
        "round " + t.last_round.round + " scored (" + t.last_round.reason + "): " + t.last_round.points.join(", ")));
      return f;
    },
    "western-showdown-v1": (t, turn) => {
      const f = document.createDocumentFragment();
      f.append(el("h3", {}, "Game " + t.game_number + " · games won " + t.games_won.join("–")));
      const locs = el("div", { id: "locations", class: "locations" });
      t.locations.forEach((l) => locs.append(el("p", { "data-location": l.id }, el("strong", {}, l.name + ": "), l.stack.length ? cards(l.stack) : "(empty)")));
      f.append(locs);
      f.append(seatTable([["hand", t.hand_sizes], ["draw pile", t.draw_pile_sizes], ["cards won", t.won_sizes]], turn));
      const used = el("div", { id: "abilities" });
      t.played.forEach((p, s) => used.append(el("p", { class: "meta" }, seatName(s) + " played: ", p.length ? cards(p) : "-")));
      f.append(el("h3", {}, "Abilities used"), used, el("p", { class: "meta" }, "reputation: " + seatName(t.reputation)));
      return f;
    },
  };

  function describeEvent(e) {
    const rest = Object.entries(e).filter(([k]) => k !== "event").map(([k, v]) => k + " " + JSON.stringify(v)).join(", ");
    const attrs = { class: "event", "data-event": e.event };
    if (e.winner !== undefined) attrs["data-winner"] = e.winner;
    if (e.seat !== undefined) attrs["data-seat"] = e.seat;
    let text = e.event + ": " + rest;
    if (e.event === "trick") text = "trick won by " + seatName(e.winner);
    if (e.event === "stack_taken") text = seatName(e.seat) + " takes the stack at " + locationName(e.location) + " (" + e.why.replaceAll("_", " ") + ")";
    if (e.event === "game_won") text = "game " + e.game + " won by " + seatName(e.winner);
    if (e.event === "round_scored") { text = "round " + e.round + " scored: " + e.points.join(", "); attrs["data-points"] = JSON.stringify(e.points); }
    if (e.event === "hand_scored") { text = "hand scored: points " + e.points.join(", "); attrs["data-points"] = JSON.stringify(e.points); }
    return el("li", attrs, text);
  }

  function show(p) {
    pos = Math.max(0, Math.min(p, data.steps.length));
    slider.value = pos;
    const n = data.steps.length;
    const next = data.steps[pos];
    const turn = pos < n ? next.to_play : -1;
    position.textContent = pos + " / " + n;
    tablePane.replaceChildren();
    const render = renderers[data.game];
    if (render) tablePane.append(render(data.tables[pos], turn));
    else tablePane.append(el("p", { class: "meta" }, "No table view for this game: its events and turns are below."));
    stepPane.replaceChildren(el("h3", {}, "Whose turn"), el("p", { id: "turn", class: "turn" },
      pos >= n ? "game over · " + data.outcome : turn >= 0 ? seatName(turn) + " to act (" + kindName(next.kind) + ")" : "chance (" + kindName(next.kind) + ")"));
    if (pos > 0) {
      const s = data.steps[pos - 1];
      const who = s.seat === null ? "chance" : seatName(s.seat);
      const action = el("p", { id: "action" }, who + " · " + kindName(s.kind) + ": ");
      if (s.dealt) s.dealt.forEach((g) => action.append(el("span", { class: "dealt", "data-to": g.to },
        (g.seat === null ? g.to : seatName(g.seat)) + ": ", cards(g.cards))));
      else action.append(s.label === null ? "(hidden until “show all hands”)" : s.text || s.label);
      action.append((s.auto ? " (only move)" : "") + (s.fallback ? " (house:random)" : ""));
      stepPane.append(el("h3", {}, "Entry " + s.index), action);
      const events = el("ul", { id: "events" });
      s.events.forEach((e) => events.append(describeEvent(e)));
      if (s.events.length) stepPane.append(events);
      (s.faults || []).forEach((f) => stepPane.append(el("p", { class: "fault", "data-fault-seat": f.seat }, "fault: " + seatName(f.seat) + " " + f.kind + ": " + f.detail)));
    } else {
      data.start_faults.forEach((f) => stepPane.append(el("p", { class: "fault" }, "fault at the start: " + seatName(f.seat) + " " + f.kind + ": " + f.detail)));
    }
    if (pos >= n && data.scores.length) {
      stepPane.append(el("h3", {}, "Result"), seatTable([["score", data.scores], ["place", data.ranks.map((r) => r + 1)]], -1));
    }
    for (const li of logList.children) li.classList.toggle("current", Number(li.dataset.index) === pos - 1);
    // Scroll the log alone (scrollIntoView would scroll the page too, taking the table
    // off-screen while stepping); the log is the offset parent of its entries.
    const current = logList.children[pos - 1];
    if (current) {
      const top = current.offsetTop, bottom = top + current.offsetHeight;
      if (top < logList.scrollTop) logList.scrollTop = top;
      else if (bottom > logList.scrollTop + logList.clientHeight) logList.scrollTop = bottom - logList.clientHeight;
    }
    if (data.hands) {
      handsPane.hidden = false;
      handsPane.replaceChildren(el("h3", {}, "All hands (the full deal)"));
      for (const [zone, list] of Object.entries(data.hands[pos])) {
        const own = /^([a-z]+)(\d+)$/.exec(zone);  // hand0 -> seat 0 (name): hand
        const name = own && data.seats[Number(own[2])] ? seatName(Number(own[2])) + ": " + own[1] : zone;
        handsPane.append(el("p", { "data-zone": zone }, el("strong", {}, name + ": "), list.length ? cards(list) : "-"));
      }
    } else handsPane.hidden = true;
  }

  function buildLog() {
    logList.replaceChildren();
    data.steps.forEach((s) => {
      // Numbered as the pane's "Entry N" (and the seat view, and faults) count: from 0.
      const li = el("li", { "data-index": s.index, value: s.index, class: s.faults ? "faulted" : "" },
        (s.seat === null ? "chance" : "seat " + s.seat) + " " + kindName(s.kind) + ": " +
        (s.dealt ? s.dealt.map((g) => g.cards.length).join(" + ") + " cards" : s.label === null ? "…" : s.text || s.label));
      li.addEventListener("click", () => show(s.index + 1));
      logList.append(li);
    });
  }

  async function load(hands) {
    const r = await fetch("/api/matches/" + encodeURIComponent(id) + "/replay" + (hands ? "?hands=all" : ""));
    if (!r.ok) { position.textContent = "could not load the match (" + r.status + ")"; return; }
    data = await r.json();
    slider.max = data.steps.length;
    buildLog();
    show(pos);
    viewer.dataset.ready = hands ? "hands" : "public";
  }

  function stop() { if (timer) { clearInterval(timer); timer = null; $("play").textContent = "play"; } }
  function play() {
    if (timer) { stop(); return; }
    if (pos >= data.steps.length) show(0);
    $("play").textContent = "pause";
    timer = setInterval(() => { if (pos >= data.steps.length) stop(); else show(pos + 1); }, 400);
  }
  $("first").addEventListener("click", () => { stop(); show(0); });
  $("prev").addEventListener("click", () => { stop(); show(pos - 1); });
  $("next").addEventListener("click", () => { stop(); show(pos + 1); });
  $("last").addEventListener("click", () => { stop(); show(data.steps.length); });
  $("play").addEventListener("click", play);
  slider.addEventListener("input", () => { stop(); show(Number(slider.value)); });
  handsBox.addEventListener("change", () => load(handsBox.checked));
  document.addEventListener("keydown", (e) => {
    if (!data || e.target === slider || e.target.tagName === "INPUT" && e.target.type !== "checkbox") return;
    const keys = { ArrowRight: () => show(pos + 1), ArrowLeft: () => show(pos - 1), Home: () => show(0), End: () => show(data.steps.length), " ": play };
    if (keys[e.key]) { e.preventDefault(); if (e.key !== " ") stop(); keys[e.key](); }
  });
  load(false);
})();
