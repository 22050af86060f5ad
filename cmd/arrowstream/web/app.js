// The Arrowstream web UI: the streaming queries, and per query the charts
// of Spark's Structured Streaming tab, its latest progress and EXPLAIN.
// It polls the JSON API once a second; no external resources.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { selected: null, runId: null, charts: null, lastTable: 0 };

async function getJSON(path) {
  const r = await fetch(path, { cache: "no-store" });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function td(text, cls) {
  const c = document.createElement("td");
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
}

function clock(s) {
  if (!s) return "-";
  const t = Date.parse(s);
  if (!(t > 0)) return "-";
  return new Date(t).toISOString().replace("T", " ").replace(/\.\d+Z$/, "").replace("Z", "");
}

// The list of queries.
function renderQueries(qs) {
  const body = $("queries").tBodies[0];
  body.replaceChildren();
  if (qs.length === 0) {
    const tr = document.createElement("tr");
    tr.append(td("no streaming queries yet", "empty"));
    tr.firstChild.colSpan = 11;
    body.append(tr);
    return;
  }
  for (const q of qs) {
    const tr = document.createElement("tr");
    tr.dataset.id = q.id;
    if (q.id === state.selected) tr.className = "selected";
    const status = document.createElement("td");
    const badge = document.createElement("span");
    badge.className = "badge " + q.status;
    badge.textContent = q.status;
    status.append(badge);
    tr.append(
      td(q.name || "(unnamed)"), status,
      td(q.hasBatch ? q.batchId : "-", "num"),
      td(q.hasBatch ? fmtNum(q.inputRowsPerSecond) + "/s" : "-", "num"),
      td(q.hasBatch ? fmtNum(q.processedRowsPerSecond) + "/s" : "-", "num"),
      td(q.hasBatch ? q.batchDurationMs + " ms" : "-", "num"),
      td(clock(q.watermark)),
      td(fmtNum(q.stateRows), "num"),
      td(fmtNum(q.sinkRows), "num"),
      td(clock(q.started)),
      td(q.id.slice(0, 8) + " / " + q.runId.slice(0, 8), "small"),
    );
    tr.addEventListener("click", () => { location.hash = "#/query/" + q.id; });
    body.append(tr);
  }
}

// Chart definitions: what Spark's Structured Streaming tab plots.
const CHARTS = [
  ["inputRate", "Input Rate", "rows/s", (p) => p.inputRowsPerSecond],
  ["processRate", "Process Rate", "rows/s", (p) => p.processedRowsPerSecond],
  ["inputRows", "Input Rows", "", (p) => p.numInputRows],
  ["batchDuration", "Batch Duration", "ms", (p) => p.batchDuration],
  ["latency", "End-to-end Latency p99", "ms", (p) => p.latencyMs ? p.latencyMs.p99 : undefined],
  ["operations", "Operation Duration", "ms", null],
  ["watermarkGap", "Global Watermark Gap", "s", (p) => {
    const wm = p.eventTime && Date.parse(p.eventTime.watermark);
    return wm > 0 ? (Date.parse(p.timestamp) - wm) / 1000 : undefined;
  }],
  ["stateRows", "Aggregated Number Of Total State Rows", "", (p) => sumState(p, "numRowsTotal")],
  ["stateUpdated", "Aggregated Number Of Updated State Rows", "", (p) => sumState(p, "numRowsUpdated")],
  ["stateMemory", "Aggregated State Memory Used", "bytes", (p) => sumState(p, "memoryUsedBytes")],
  ["dropped", "Aggregated Number Of Rows Dropped By Watermark", "", (p) => sumState(p, "numRowsDroppedByWatermark")],
];
const OPERATIONS = ["addBatch", "getBatch", "latestOffset", "queryPlanning", "walCommit", "commitOffsets"];

function sumState(p, key) {
  if (!p.stateOperators || p.stateOperators.length === 0) return undefined;
  return p.stateOperators.reduce((a, s) => a + (s[key] || 0), 0);
}

function buildCharts() {
  const box = $("charts");
  box.replaceChildren();
  const charts = {};
  for (const [key, title, unit] of CHARTS) {
    charts[key] = new Chart(box, title, unit);
    charts[key].box.dataset.chart = key;
  }
  return charts;
}

// drawCharts plots the progress reports of epochs that ran (idle triggers
// repeat the previous epoch and are left out, as Spark's UI does).
function drawCharts(progress) {
  const ran = progress.filter((p) => p.durationMs && "addBatch" in p.durationMs);
  let ready = true;
  for (const [key, , , get] of CHARTS) {
    let series;
    if (key === "operations") {
      series = OPERATIONS.map((op) => ({
        name: op,
        points: ran.filter((p) => op in p.durationMs).map((p) => ({ x: Date.parse(p.timestamp), y: p.durationMs[op] })),
      })).filter((s) => s.points.length > 0);
    } else {
      series = [{ name: key, points: [] }];
      for (const p of ran) {
        const y = get(p);
        if (y !== undefined && y !== null && Number.isFinite(y)) series[0].points.push({ x: Date.parse(p.timestamp), y });
      }
    }
    // Only continuous queries report latency: the chart is hidden for
    // micro-batch ones rather than drawn empty.
    if (key === "latency") state.charts[key].box.hidden = !progress.some((p) => p.latencyMs);
    const n = state.charts[key].draw(series);
    if (["inputRate", "processRate", "inputRows", "batchDuration", "operations"].includes(key) && n < 2) ready = false;
  }
  document.body.dataset.ready = String(ready);
  document.body.dataset.points = String(ran.length);
}

function renderRows(t) {
  const table = $("rows");
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  for (const c of t.columns) {
    const th = document.createElement("th");
    th.textContent = c.name;
    th.title = c.type;
    head.append(th);
  }
  const body = table.createTBody();
  for (const r of t.rows) {
    const tr = body.insertRow();
    r.forEach((v, i) => {
      const num = typeof v === "number";
      let text = v === null ? "NULL" : typeof v === "object" ? JSON.stringify(v) : String(v);
      if (/timestamp/.test(t.columns[i].type) && typeof v === "string") text = clock(v);
      tr.append(td(text, num ? "num" : ""));
    });
  }
  if (t.rows.length === 0) {
    const tr = body.insertRow();
    tr.append(td("empty", "empty"));
    tr.firstChild.colSpan = Math.max(t.columns.length, 1);
  }
}

async function refreshDetail(q) {
  $("qname").textContent = q.name || q.id;
  const badge = $("qstatus");
  badge.textContent = q.status;
  badge.className = "badge " + q.status;
  $("qmeta").textContent = "id " + q.id + " · run " + q.runId + " · started " + clock(q.started) +
    (q.message ? " · " + q.message : "");
  $("qerror").hidden = !q.error;
  $("qerror").textContent = q.error || "";
  if (state.runId !== q.runId) {
    state.runId = q.runId;
    state.charts = buildCharts();
    getJSON("api/queries/" + q.id + "/explain").then((e) => { $("explain").textContent = e.plan; })
      .catch((err) => { $("explain").textContent = String(err.message || err); });
    getJSON("api/queries/" + q.id).then((d) => { $("sql").textContent = d.sql || "(not known)"; })
      .catch(() => {});
  }
  const progress = await getJSON("api/queries/" + q.id + "/progress");
  drawCharts(progress);
  if (progress.length > 0) $("progress").textContent = JSON.stringify(progress[progress.length - 1], null, 2);
  if (q.name && Date.now() - state.lastTable > 2000) {
    state.lastTable = Date.now();
    $("tname").textContent = q.name;
    $("tsize").textContent = fmtNum(q.sinkRows) + " rows · " + fmtNum(q.sinkBytes) + " bytes · " + q.sinkEpochs + " epochs retained · latest rows:";
    getJSON("api/tables/" + encodeURIComponent(q.name) + "?limit=20&tail=true").then(renderRows).catch(() => {});
  }
}

// The cluster's recent rebalances (cluster mode only), newest first.
function renderRebalances(c) {
  $("cluster").hidden = !c.cluster;
  if (!c.cluster) return;
  $("cname").textContent = c.cluster;
  const body = $("rebalances").tBodies[0];
  body.replaceChildren();
  const list = (ps) => ps.length === 0 ? "-" : ps.length + ": " + ps.join(", ");
  for (const r of c.rebalances.slice().reverse()) {
    const tr = document.createElement("tr");
    tr.append(
      td(r.table), td(clock(r.start)), td(r.generation, "num"),
      td(list(r.assigned), "small"), td(list(r.revoked), "small"), td(list(r.lost), "small"),
      td(r.ownedAfter, "num"),
      td(r.pausedMs === null ? "not resumed yet" : r.pausedMs + " ms", "num"),
    );
    body.append(tr);
  }
}

async function tick() {
  try {
    const qs = await getJSON("api/queries");
    $("conn").textContent = "live · " + new Date().toISOString().slice(11, 19) + " UTC";
    $("conn").classList.remove("down");
    const m = location.hash.match(/^#\/query\/(.+)$/);
    let sel = m ? decodeURIComponent(m[1]) : null;
    if (!sel && qs.length > 0) sel = qs[0].id; // show the first query's charts right away
    if (sel !== state.selected) { state.selected = sel; state.runId = null; state.lastTable = 0; }
    renderQueries(qs);
    getJSON("api/cluster/rebalances").then(renderRebalances).catch(() => {});
    const q = qs.find((x) => x.id === sel);
    $("detail").hidden = !q;
    if (q) await refreshDetail(q);
  } catch (err) {
    $("conn").textContent = "disconnected: " + (err.message || err);
    $("conn").classList.add("down");
  }
}

async function loop() {
  await tick();
  setTimeout(loop, 1000);
}
window.addEventListener("hashchange", tick);
loop();
