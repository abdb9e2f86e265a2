// FixBugs dashboard: polls the pipeline, follows one bug's events live (SSE),
// and renders its report. No framework; everything comes from /v1.
"use strict";
const STAGES = ["analysis", "file_relevance", "reproduction", "root_cause", "fix", "validation"];
const $ = (s) => document.querySelector(s);
const keyInput = $("#api-key");
keyInput.value = new URLSearchParams(location.search).get("key") || localStorage.getItem("fixbugs-key") || "";
keyInput.addEventListener("change", () => localStorage.setItem("fixbugs-key", keyInput.value));

function headers() { return keyInput.value ? { "X-API-Key": keyInput.value } : {}; }
async function api(path, opts = {}) {
  const r = await fetch(path, { ...opts, headers: { ...headers(), ...(opts.headers || {}) } });
  const body = r.headers.get("content-type")?.includes("json") ? await r.json() : await r.text();
  if (!r.ok) { const e = new Error(body.detail || r.statusText); e.status = r.status; e.retryAfter = r.headers.get("retry-after"); throw e; }
  return body;
}
function el(tag, text, attrs = {}) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}
const fmt = (x, d = 2) => (x === null || x === undefined || Number.isNaN(x)) ? "–" : Number(x).toFixed(d);

// -- pipeline ---------------------------------------------------------------
async function refreshPipeline() {
  try {
    const p = await api("/v1/pipeline");
    $("#conn").textContent = "";
    $("#queue").textContent = `${p.queue.depth} / ${p.queue.capacity} (${p.queue.stage})`;
    $("#workers").textContent = `${p.workers.busy} busy of ${p.workers.slots}`;
    $("#sessions").textContent = `${p.sessions.held} held of ${p.sessions.capacity}`;
    const lim = p.flow.limits;
    $("#limits").textContent = lim.length ? lim.map((l) => `${l.client}: ${l.in_use}/${l.limit}`).join(", ") : "no limiter";
    const rb = p.flow.retry_budget;
    $("#retry-budget").textContent = rb ? `${rb.retrying} of ${rb.in_flight_cap} in flight; ${fmt(rb.balance, 1)}/${rb.burst} left; ${rb.denied} denied` : "–";
    $("#job-counts").textContent = Object.entries(p.jobs).filter(([, n]) => n).map(([s, n]) => `${n} ${s}`).join(", ") || "none";
    const ol = $("#pipeline-stages"); ol.replaceChildren();
    for (const s of p.stages) ol.append(el("li", `${s.name}: ${s.running}`, { class: "stage", "data-state": s.running ? "running" : "idle" }));
  } catch (e) { $("#conn").textContent = e.status === 401 ? "enter the API key" : "disconnected"; }
}

async function refreshBugs() {
  try {
    const bugs = await api("/v1/bugs");
    const tb = $("#bugs tbody"); tb.replaceChildren();
    for (const b of bugs) {
      const tr = el("tr"); const a = el("a", b.title, { href: `#/bugs/${b.id}`, "data-bug": b.id });
      const td = el("td"); td.append(a);
      tr.append(td, el("td", b.state), el("td", b.current_stage || ""), el("td", b.queued_at ? new Date(b.queued_at * 1000).toLocaleTimeString() : ""));
      tb.append(tr);
    }
  } catch (e) { /* shown by the pipeline poll */ }
}

// -- submit -----------------------------------------------------------------
function submitted(r) { $("#submit-msg").textContent = `submitted ${r.id}`; location.hash = `#/bugs/${r.id}`; }
function refused(e) {
  $("#submit-msg").textContent = e.status === 429 ? `queue full: retry in ${e.retryAfter} s` : `error: ${e.message}`;
}
$("#example-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  try { submitted(await api("/v1/bugs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ example: $("#example").value }) })); }
  catch (e) { refused(e); }
});
$("#upload-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const fd = new FormData(ev.target);
  if (!fd.get("test")) fd.delete("test");
  try { submitted(await api("/v1/bugs/upload", { method: "POST", body: fd })); } catch (e) { refused(e); }
});

// -- one bug ----------------------------------------------------------------
let source = null;
function stageChips(ol, states) {
  ol.replaceChildren();
  for (const s of STAGES) ol.append(el("li", s, { class: "stage", "data-stage": s, "data-state": states[s] || "pending" }));
}
function showBug(id) {
  $("#home-view").hidden = true; $("#bug-view").hidden = false; $("#report").hidden = true;
  $("#events").replaceChildren(); $("#live-gantt").replaceChildren(); $("#bug-state").textContent = "…";
  const live = [];  // this bug's events so far: the live timeline grows with them
  const states = {}; stageChips($("#bug-stages"), states);
  api(`/v1/bugs/${id}`).then((st) => { $("#bug-title").textContent = st.title; $("#bug-state").textContent = st.state; Object.assign(states, st.stages); stageChips($("#bug-stages"), states); if (st.state === "done") loadReport(id); }).catch((e) => { $("#bug-state").textContent = e.message; });
  if (source) source.close();
  const q = keyInput.value ? `?key=${encodeURIComponent(keyInput.value)}` : "";
  source = new EventSource(`/v1/bugs/${id}/events${q}`);
  const onEvent = (m) => {
    const ev = JSON.parse(m.data);
    if (ev.kind === "stage_started") states[ev.stage] = "running";
    if (ev.kind === "stage_finished") states[ev.stage] = "done";
    if (ev.kind === "run_started") $("#bug-state").textContent = "running";
    stageChips($("#bug-stages"), states);
    $("#events").append(el("li", `${fmt(ev.at_s)}s ${ev.stage}: ${ev.message}`));
    live.push(ev);
    drawGantt({ events: live, calls: [], total_s: ev.at_s }, "#live-gantt");
  };
  for (const k of ["run_started", "stage_started", "stage_finished", "hypothesis", "ranked_files", "evidence", "reproduction", "root_cause", "candidate", "validated", "note", "run_finished", "failed"]) source.addEventListener(k, onEvent);
  source.addEventListener("status", (m) => { $("#bug-state").textContent = JSON.parse(m.data).state; });
  source.addEventListener("end", (m) => {
    const st = JSON.parse(m.data).state; $("#bug-state").textContent = st; source.close(); source = null;
    if (st === "done") loadReport(id);
  });
}

async function loadReport(id) {
  const r = await api(`/v1/bugs/${id}/report`);
  $("#report").hidden = false;
  // the level, as the report gives it: only "validated" reads as a validated fix
  const level = r.verdict || (r.validated ? "validated" : "no_fix");
  const head = { validated: "Validated fix", passes_tests: "Passes tests, not validated", no_fix: "No validated fix." }[level] || "No validated fix.";
  $("#verdict").textContent = `${head}: ${r.validation.summary}`;
  $("#verdict").dataset.validated = String(level === "validated");
  $("#verdict").dataset.verdict = level;
  const failed = $("#failed-checks"); failed.replaceChildren();
  for (const c of r.validation.failed_checks || []) failed.append(el("li", `${c.kind}: ${c.why}`));
  const tb = $("#stage-table tbody"); tb.replaceChildren();
  for (const [name, s] of Object.entries(r.stages)) {
    const calls = r.calls.filter((c) => c.stage === name);
    const n = calls.length, fails = calls.filter((c) => c.outcome === "error").length;
    const attempts = calls.reduce((a, c) => a + c.attempts, 0);
    const model = calls.filter((c) => c.kind === "model");
    const busy = model.reduce((a, c) => a + c.wall_s, 0), out = model.reduce((a, c) => a + c.output_tokens, 0);
    const tr = el("tr", undefined, { "data-stage": name });
    tr.append(el("td", name), el("td", fmt(s.wall_s)), el("td", fmt(s.ttft_s)), el("td", busy > 0 ? fmt(out / busy, 1) : "–"),
      el("td", String(n)), el("td", n ? fmt(fails / n) : "–"), el("td", n ? fmt((attempts - n) / n) : "–"));
    tb.append(tr);
  }
  const rc = r.root_cause;
  $("#root-cause").textContent = rc ? `${rc.path}:${rc.lines[0]}-${rc.lines[1]} (${rc.origin}) ${rc.explanation}` : "not determined";
  const ranked = $("#ranked"); ranked.replaceChildren();
  for (const f of r.ranked_files.slice(0, 10)) ranked.append(el("li", `${f.path} ${fmt(f.score, 3)} — ${f.reasons.slice(0, 2).join("; ")}`));
  const evid = $("#evidence"); evid.replaceChildren();
  for (const e of r.evidence.slice(0, 20)) evid.append(el("li", `[${e.source}] ${e.path ? e.path + (e.line ? ":" + e.line : "") + " " : ""}${e.text}`));
  $("#patch").textContent = r.patch ? (level === "validated" ? r.patch : `# not validated (${level.replace("_", " ")})\n${r.patch}`) : "(no validated patch)";
  $("#validation").textContent = `${r.validation.summary} (${r.validation.tried} tried)`;
  drawGantt(r);
}

// Gantt: one row per stage (its wall from events) with its calls drawn inside.
// Drawn live from the events so far (a running stage reaches the latest event),
// and again from the report at the end, with the calls.
function drawGantt(r, target = "#gantt") {
  const spans = {}, open = new Set();
  for (const e of r.events) {
    if (e.kind === "stage_started") { spans[e.stage] = [e.at_s, e.at_s]; open.add(e.stage); }
    if (e.kind === "stage_finished" && spans[e.stage]) { spans[e.stage][1] = e.at_s; open.delete(e.stage); }
  }
  const rows = STAGES.filter((s) => spans[s] || r.calls.some((c) => c.stage === s));
  const end = Math.max(r.total_s || 0, ...r.calls.map((c) => c.started_at + c.wall_s), 0.001);
  for (const s of open) spans[s][1] = Math.max(spans[s][1], end);
  const W = 900, L = 110, H = 22, svgNS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("width", W); svg.setAttribute("height", rows.length * H + 24);
  const x = (t) => L + (W - L - 10) * (t / end);
  const add = (tag, attrs, text) => { const e = document.createElementNS(svgNS, tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); if (text) e.textContent = text; svg.append(e); return e; };
  rows.forEach((s, i) => {
    const y = i * H + 4;
    add("text", { x: 4, y: y + 14 }, s);
    if (spans[s]) add("rect", { x: x(spans[s][0]), y, width: Math.max(1, x(spans[s][1]) - x(spans[s][0])), height: H - 6, fill: "#cfe2f3", "data-stage": s });
    for (const c of r.calls.filter((c) => c.stage === s)) {
      const rect = add("rect", { x: x(c.started_at), y: y + 4, width: Math.max(1, x(c.started_at + c.wall_s) - x(c.started_at)), height: H - 14, fill: c.outcome === "error" ? "#e06666" : (c.kind === "model" ? "#3d85c6" : "#93c47d"), class: "call" });
      const tip = document.createElementNS(svgNS, "title"); tip.textContent = `${c.kind} ${c.name} ${fmt(c.wall_s)} s`; rect.append(tip);
    }
  });
  add("text", { x: L, y: rows.length * H + 18 }, "0 s"); add("text", { x: W - 60, y: rows.length * H + 18 }, `${fmt(end, 1)} s`);
  $(target).replaceChildren(svg);
}

// -- routing ----------------------------------------------------------------
function route() {
  const m = location.hash.match(/^#\/bugs\/([A-Za-z0-9]+)/);
  if (m) { showBug(m[1]); return; }
  if (source) { source.close(); source = null; }
  $("#home-view").hidden = false; $("#bug-view").hidden = true; refreshBugs();
}
window.addEventListener("hashchange", route);
route(); refreshPipeline();
setInterval(refreshPipeline, 1000); setInterval(() => { if (!$("#home-view").hidden) refreshBugs(); }, 2000);
