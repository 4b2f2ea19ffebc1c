// captcha-dlq dashboard: live counts, replay progress and the fleet (polling,
// with a toggle kept in localStorage), the purge confirmation, row selection,
// and lazily loaded numbers. Pages work without it; it only keeps them current.
(function () {
  "use strict";
  const base = document.querySelector('meta[name="dashboard-base"]')?.content || "";
  const interval = Number(document.body.dataset.liveMs) || 2000;
  const toggle = document.getElementById("live-toggle");
  const LIVE_KEY = "captcha-dlq-dashboard-live";
  let timer = null;

  async function getJson(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) throw new Error(url + ": HTTP " + response.status);
    return response.json();
  }

  function setText(root, attribute, values) {
    for (const el of root.querySelectorAll("[" + attribute + "]")) {
      const key = el.getAttribute(attribute);
      if (key in values && typeof values[key] !== "object" && typeof values[key] !== "boolean") {
        el.textContent = values[key];
      }
    }
  }

  async function refreshSummary() {
    try {
      const summary = await getJson(base + "/api/summary");
      setText(document, "data-stat", summary);
      document.body.dataset.storeAvailable = String(summary.store_available);
      // A page waiting for the overview's scan shows it once the scan is done.
      if (summary.overview_at !== null && document.querySelector("[data-pending-overview]")) window.location.reload();
    } catch (e) {
      console.warn("captcha-dlq dashboard:", e.message);
    }
  }

  async function refreshReplays() {
    for (const section of document.querySelectorAll("[data-replay-url]")) {
      if (section.dataset.status && !["selecting", "running", "cancelling"].includes(section.dataset.status)) continue;
      try {
        const p = await getJson(section.dataset.replayUrl);
        setText(section, "data-field", p);
        const bar = section.querySelector("progress");
        if (bar && p.target_number !== null) {
          bar.max = Math.max(1, p.target_number);
          bar.value = Math.min(p.done_number, bar.max);
        }
        const was = section.dataset.status;
        section.dataset.status = p.status;
        // The report and the cancel button change once the request ends: show the final page.
        if (was !== p.status && !p.active) window.location.reload();
      } catch (e) {
        console.warn("captcha-dlq dashboard:", e.message);
      }
    }
  }

  // The fleet page: heartbeat ages and counts follow the ledger; when a client or an account
  // comes, goes or changes state (live or gone, paused, an account error) the page reloads,
  // since its rows' markup changes then.
  async function refreshFleet() {
    const section = document.getElementById("fleet");
    if (!section) return;
    try {
      const f = await getJson(section.dataset.fleetUrl);
      if (!f.ledger || f.signature !== section.dataset.fleetSignature) {
        window.location.reload();
        return;
      }
      setText(section, "data-fleet-stat", { live: f.live, gone: f.gone, accounts: f.accounts.length, in_flight: f.in_flight });
      for (const o of f.owners) {
        const row = section.querySelector('tr[data-owner="' + CSS.escape(o.owner) + '"]');
        if (row) setText(row, "data-field", { heartbeat: o.heartbeat, in_flight: o.in_flight });
      }
      for (const a of f.accounts) {
        const row = section.querySelector('tr[data-account="' + CSS.escape(a.account) + '"]');
        if (row) setText(row, "data-field", { window: a.window, in_flight: a.in_flight, clients: a.clients, paused: a.paused, error: a.error });
      }
    } catch (e) {
      console.warn("captcha-dlq dashboard:", e.message);
    }
  }

  function tick() {
    refreshSummary();
    refreshReplays();
    refreshFleet();
  }

  function setLive(on) {
    if (toggle) toggle.checked = on;
    try { localStorage.setItem(LIVE_KEY, on ? "on" : "off"); } catch (e) { /* private mode */ }
    document.body.dataset.live = on ? "on" : "off";
    if (timer) { clearInterval(timer); timer = null; }
    if (on) { tick(); timer = setInterval(tick, interval); }
  }

  let stored = null;
  try { stored = localStorage.getItem(LIVE_KEY); } catch (e) { /* private mode */ }
  if (toggle) toggle.addEventListener("change", () => setLive(toggle.checked));
  setLive(stored !== "off");
  if (stored === "off") refreshSummary();

  // Numbers that take a store call of their own, loaded after the page.
  const matchCount = document.getElementById("match-count");
  if (matchCount) {
    getJson(matchCount.dataset.countUrl)
      .then((r) => { matchCount.textContent = r.text; })
      .catch(() => { matchCount.textContent = "?"; });
  }
  const balance = document.getElementById("balance");
  if (balance) {
    getJson(balance.dataset.balanceUrl)
      .then((r) => { balance.textContent = "error" in r ? "unavailable: " + r.error : String(r.balance); })
      .catch((e) => { balance.textContent = "unavailable: " + e.message; });
  }

  // Purge: the button waits for the number of records (or "purge") to be typed.
  for (const form of document.querySelectorAll("form.purge")) {
    const input = form.querySelector('input[name="confirm"]');
    const button = form.querySelector('button[type="submit"]');
    const expected = form.dataset.expected;
    const check = () => {
      const typed = input.value.trim();
      button.disabled = !(typed === "purge" || (expected ? typed === expected : /^[0-9]+$/.test(typed)));
    };
    input.addEventListener("input", check);
    check();
  }

  // Row selection for the bulk actions.
  const selectAll = document.getElementById("select-all");
  const selectedCount = document.getElementById("selected-count");
  const boxes = () => Array.from(document.querySelectorAll("input.select"));
  const recount = () => { if (selectedCount) selectedCount.textContent = String(boxes().filter((b) => b.checked).length); };
  if (selectAll) selectAll.addEventListener("change", () => { for (const b of boxes()) b.checked = selectAll.checked; recount(); });
  for (const b of boxes()) b.addEventListener("change", recount);
  recount();
})();
