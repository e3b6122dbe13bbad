// A tournament's page: a countdown to its deadline while it is open, and, while it is
// not over, a look at /api/tournaments/ID every few seconds that reloads the page when
// its phase, its batches or its results change.
"use strict";
(function () {
  const live = document.getElementById("live");
  if (!live) return;
  const id = live.dataset.tournament;
  const phase = live.dataset.phase;
  const deadline = Date.parse(live.dataset.deadline);
  const countdown = document.getElementById("countdown");
  function pad(n) { return String(n).padStart(2, "0"); }
  function tick() {
    if (!countdown) return;
    let left = Math.max(0, Math.floor((deadline - Date.now()) / 1000));
    const days = Math.floor(left / 86400); left -= days * 86400;
    const h = Math.floor(left / 3600); left -= h * 3600;
    const m = Math.floor(left / 60); const s = left - m * 60;
    countdown.textContent = (days ? days + " d " : "") + pad(h) + ":" + pad(m) + ":" + pad(s);
  }
  if (countdown && !Number.isNaN(deadline)) { tick(); setInterval(tick, 1000); }
  if (phase === "done" || phase === "cancelled") return;
  const seen = [phase, live.dataset.batches, live.dataset.matches, live.dataset.done].join("/");
  async function poll() {
    try {
      const r = await fetch("/api/tournaments/" + encodeURIComponent(id));
      if (r.ok) {
        const t = await r.json();
        const now = [t.phase, t.batches, t.matches, t.season ? t.season.done : 0].join("/");
        if (now !== seen) { window.location.reload(); return; }
      }
    } catch (e) { /* the server is away for a moment: try again */ }
    setTimeout(poll, 3000);
  }
  setTimeout(poll, 3000);
})();
