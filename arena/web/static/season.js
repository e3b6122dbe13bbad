// Live progress of a season: polls /api/seasons/ID/progress while the season is going,
// and reloads the page (board and matches) when more matches are done.
"use strict";
(function () {
  const live = document.getElementById("live");
  if (!live) return;
  const id = live.dataset.season;
  const bar = document.querySelector(".progress progress");
  const count = document.querySelector(".progress .count");
  const status = document.querySelector(".progress .status");
  let done = bar ? Number(bar.value) : 0;
  const going = (s) => s === "created" || s === "running";
  if (!going(live.dataset.status)) return;
  async function poll() {
    try {
      const r = await fetch("/api/seasons/" + encodeURIComponent(id) + "/progress");
      if (r.ok) {
        const p = await r.json();
        bar.max = p.total || 1; bar.value = p.done;
        count.textContent = p.done + "/" + p.total;
        status.textContent = p.status_text;
        live.textContent = "live: " + p.counts.running + " running, " + p.counts.queued + " queued";
        if (p.done !== done || !going(p.status)) { window.location.reload(); return; }
      }
    } catch (e) { /* the server is away for a moment: try again */ }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 2000);
})();
