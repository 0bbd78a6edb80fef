// segflow's web view: polls /api/job once a second and draws the job graph (Cytoscape.js)
// and the tables. Text goes in with textContent only: nothing from the job is parsed as HTML.
"use strict";

const POLL_MS = 1000;
let graph = null;

function human(n) {
  for (const [unit, size] of [["G", 1e9], ["M", 1e6], ["k", 1e3]]) {
    if (Math.abs(n) >= size) return (n / size).toFixed(1) + unit;
  }
  return Math.round(n).toString();
}

function bytes(n) {
  for (const [unit, size] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]]) {
    if (n >= size) return (n / size).toFixed(1) + " " + unit;
  }
  return n + " B";
}

function clock(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString();
}

function setText(id, text) {
  document.getElementById(id).textContent = text;
}

function row(cells, attributes) {
  const tr = document.createElement("tr");
  for (const [name, value] of Object.entries(attributes || {})) tr.setAttribute(name, value);
  for (const cell of cells) {
    const td = document.createElement("td");
    if (Array.isArray(cell)) {
      td.textContent = cell[0];
      td.className = cell[1];
    } else {
      td.textContent = cell;
    }
    tr.appendChild(td);
  }
  return tr;
}

function fill(tableId, rows, emptyId) {
  const body = document.querySelector("#" + tableId + " tbody");
  body.replaceChildren(...rows);
  if (emptyId) document.getElementById(emptyId).hidden = rows.length > 0;
}

function underPressure(block) {
  return block.inbox > 0 && block.blocked_seconds > 0;
}

// Segment backup: each segment's plain blocks share a colour (blocks keep their segment).
const SEGMENT_COLOURS = ["#fde2b8", "#e3d4f7", "#cdeff2", "#f7d4e8", "#e6f2c2", "#d9dcf2"];

function nodeLabel(block) {
  return "b" + block.id + " " + block.name + "\n×" + block.replicas + "  " + human(block.rate_in) + "/s";
}

// A recovery's restarted blocks, each at the version its state came back from when known.
function restartedBlocks(recovery) {
  return recovery.restarted.map(b => "b" + b.block + " " + b.name + (b.version === null ? "" : "@v" + b.version))
    .join("; ");
}

function drawGraph(job) {
  const elements = [];
  for (const block of job.blocks) {
    elements.push({ group: "nodes", data: { id: "b" + block.id, label: nodeLabel(block) },
                    classes: [block.source ? "source" : "", block.connector ? "connector" : "",
                              block.segment ? "segment" + (block.segment % SEGMENT_COLOURS.length) : "",
                              block.restarted_last ? "restarted" : ""].join(" ") });
  }
  job.edges.forEach((edge, index) => {
    elements.push({ group: "edges", data: { id: "e" + index, source: "b" + edge.src, target: "b" + edge.dst,
                                            label: edge.strategy },
                    classes: edge.feedback ? "feedback" : "" });
  });
  graph = cytoscape({
    container: document.getElementById("graph"),
    elements: elements,
    userZoomingEnabled: true,
    boxSelectionEnabled: false,
    autoungrabify: true,
    layout: { name: "breadthfirst", directed: true, spacingFactor: 1.1, padding: 16,
              roots: job.blocks.filter(b => b.source).map(b => "#b" + b.id).join(", ") },
    style: [
      { selector: "node", style: { "shape": "round-rectangle", "background-color": "#dbe8ff",
        "border-width": 1, "border-color": "#2f6fde", "label": "data(label)", "text-wrap": "wrap",
        "text-valign": "center", "font-size": 12, "width": "label", "height": "label", "padding": 10,
        "color": "#1d2330" } },
      { selector: "node.source", style: { "background-color": "#d8f0dd", "border-color": "#2b8a3e" } },
      { selector: "node.connector", style: { "border-width": 4, "border-style": "double" } },
      ...SEGMENT_COLOURS.map((colour, i) => ({ selector: "node.segment" + i, style: { "background-color": colour } })),
      { selector: "node.restarted", style: { "border-color": "#c8372d", "border-width": 3, "border-style": "dashed" } },
      { selector: "node.pressure", style: { "background-color": "#f8d9d6", "border-color": "#c8372d" } },
      { selector: "edge", style: { "curve-style": "bezier", "target-arrow-shape": "triangle", "width": 2,
        "line-color": "#9aa3b5", "target-arrow-color": "#9aa3b5", "label": "data(label)", "font-size": 9,
        "color": "#6b7385", "text-background-color": "#fff", "text-background-opacity": 1 } },
      { selector: "edge.feedback", style: { "line-style": "dashed" } },
    ],
  });
  window.segflowGraph = graph;
}

function updateGraph(job) {
  for (const block of job.blocks) {
    const node = graph.getElementById("b" + block.id);
    node.data("label", nodeLabel(block));
    node.toggleClass("pressure", underPressure(block));
    node.toggleClass("restarted", block.restarted_last);
  }
}

// A standby's coordinator (disasterRecovery.standby warm or hot) serves this until its
// cluster holds the job's lease: who stands by and, when hot, what each worker follows.
function renderStandby(job) {
  document.title = "segflow: " + job.job + " (standing by)";
  setText("job-name", job.job);
  const phase = document.getElementById("phase");
  phase.textContent = job.standby_mode + " standby";
  phase.className = "phase STANDBY";
  setText("protocol", job.protocol);
  document.querySelector("main").hidden = true;
  document.getElementById("standby-panel").hidden = false;
  setText("standby-summary", "cluster " + job.cluster + " stands by until it holds the job's lease; " +
          (job.standby_mode === "hot"
            ? "its workers follow the backup store every " + job.follow_seconds + " s, read-only, and keep the "
              + "newest version's snapshots decoded"
            : "its workers wait registered and idle"));
  fill("standby-workers", job.workers.map(w => row([
    w.name, w.following ? "yes" : "no", w.version === null ? "" : w.version,
    w.lag_versions === null ? "" : w.lag_versions, w.lag_seconds === null ? "" : w.lag_seconds.toFixed(2),
  ], { "class": w.following ? "following" : "" })));
  setText("workers", job.workers.map(w => w.name).join(", ") || "none yet");
  setText("updated", new Date().toLocaleTimeString());
}

function render(job) {
  if (job.phase === "STANDBY") {
    renderStandby(job);
    return;
  }
  document.querySelector("main").hidden = false;
  document.getElementById("standby-panel").hidden = true;
  document.title = "segflow: " + job.job;
  setText("job-name", job.job);
  const phase = document.getElementById("phase");
  phase.textContent = job.phase.toLowerCase().replaceAll("_", " ");
  phase.className = "phase " + job.phase;
  setText("protocol", job.protocol === "none" ? "no checkpoints"
          : job.protocol + " every " + job.interval_seconds + " s");
  setText("seconds", job.seconds.toFixed(1) + " s");
  setText("recoveries", job.recoveries);
  setText("restored", job.restored || "–");
  const error = document.getElementById("error");
  error.hidden = !job.error;
  error.textContent = job.error;
  if (graph === null) drawGraph(job); else updateGraph(job);
  fill("blocks", job.blocks.map(b => row([
    ["b" + b.id + (b.segment ? " s" + b.segment : ""), "block"], b.operators, b.replicas, [human(b.rate_in), "rate-in"], [human(b.rate_out), "rate-out"],
    [b.records_in.toLocaleString("en-US"), "records-in"], [b.inbox, "inbox"], [b.blocked_seconds.toFixed(2), "blocked"],
    b.latency_ms === null ? "" : b.latency_ms.toFixed(1),
    [b.checkpoint_start_delay_ms === null ? "" : b.checkpoint_start_delay_ms.toFixed(1), "start-delay"],
    [b.checkpoint_ack_delay_ms === null ? "" : b.checkpoint_ack_delay_ms.toFixed(1), "ack-delay"],
    b.window === null ? "" : b.window.versions + " versions, " + human(b.window.records) + " records, "
      + bytes(b.window.bytes),
  ], { "data-block": b.id, "title": b.operators,
     "class": [underPressure(b) ? "pressure" : "", b.restarted_last ? "restarted" : ""].join(" ").trim() })));
  fill("checkpoints", job.checkpoints.map(c => row([
    [c.id, "checkpoint-id"], c.complete ? (c.savepoint ? "savepoint" : "complete") : "failed: " + c.error,
    c.seconds.toFixed(3), bytes(c.bytes), c.alignment_seconds.toFixed(3), clock(c.at),
  ], { "class": c.complete ? "" : "failed" })), "no-checkpoints");
  fill("recoveries-table", job.recovery_log.map(r => row([
    clock(r.at), [r.lost, "lost"], r.reason,
    [r.scope + (r.damaged ? ", grown: a stored part was missing or damaged" : ""), "scope"],
    [restartedBlocks(r), "restarted"],
    [r.kept.map(b => "b" + b).join(" ") || "none", "kept"], r.restored,
  ], { "class": r.scope })), "no-recoveries");
  setText("workers", job.workers.map(w => w.name + (w.slot && w.slot !== w.name ? " as " + w.slot : "") +
                                     " (pid " + w.pid + ")").join(", ") || "none yet");
  setText("standby", job.standby.map(w => w.name + " (pid " + w.pid + ")").join(", ") || "none");
  setText("updated", new Date().toLocaleTimeString());
}

async function poll() {
  try {
    const response = await fetch("api/job", { cache: "no-store" });
    if (!response.ok) throw new Error("HTTP " + response.status);
    render(await response.json());
  } catch (error) {
    const phase = document.getElementById("phase");
    phase.textContent = "disconnected (the job may be over)";
    phase.className = "phase";
  }
  setTimeout(poll, POLL_MS);
}

poll();
