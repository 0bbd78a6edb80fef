// Draws the shipped Grafana dashboard (window.DASHBOARD) from Prometheus range queries
// (window.SERIES: panel id -> [{legend, points: [[t, v], ...]}]) as Grafana lays it out:
// a 24-column grid, timeseries panels as lines, stat panels as their last values. Test
// support only: it lets the browser test take a picture of the dashboard on real data
// where no Grafana can be installed.
"use strict";

const COLORS = ["#7eb26d", "#eab839", "#6ed0e0", "#ef843c", "#e24d42", "#1f78c1", "#ba43a9", "#705da0"];
const ROW_PX = 34;

function element(tag, attributes, text) {
  const svg = ["svg", "polyline", "line", "text"].includes(tag);
  const node = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function short(value) {
  const magnitude = Math.abs(value);
  if (magnitude >= 1e6) return (value / 1e6).toFixed(1) + "M";
  if (magnitude >= 1e3) return (value / 1e3).toFixed(1) + "k";
  if (magnitude > 0 && magnitude < 0.1) return value.toPrecision(2);
  return value.toFixed(magnitude >= 10 ? 0 : 2);
}

function timeseries(body, series) {
  const width = body.clientWidth, height = body.clientHeight - 22;
  const points = series.flatMap(s => s.points);
  if (!points.length) return;
  const t0 = Math.min(...points.map(p => p[0])), t1 = Math.max(...points.map(p => p[0]));
  const top = Math.max(...points.map(p => p[1]), 1e-9);
  const svg = element("svg", { width, height });
  const x = t => 40 + (width - 50) * (t1 > t0 ? (t - t0) / (t1 - t0) : 1);
  const y = v => 6 + (height - 18) * (1 - v / top);
  svg.appendChild(element("text", { x: 2, y: 14, class: "axis" }, short(top)));
  svg.appendChild(element("text", { x: 2, y: height - 8, class: "axis" }, "0"));
  svg.appendChild(element("line", { x1: 40, x2: width - 10, y1: y(0), y2: y(0), class: "grid" }));
  series.forEach((s, i) => {
    svg.appendChild(element("polyline", { points: s.points.map(p => `${x(p[0])},${y(p[1])}`).join(" "),
                                          stroke: COLORS[i % COLORS.length], fill: "none", "stroke-width": 2 }));
  });
  body.appendChild(svg);
  const legend = element("div", { class: "legend" });
  series.forEach((s, i) => {
    const item = element("span", {}, s.legend);
    item.style.borderColor = COLORS[i % COLORS.length];
    legend.appendChild(item);
  });
  body.appendChild(legend);
}

function stat(body, series) {
  for (const s of series) {
    const last = s.points.length ? s.points[s.points.length - 1][1] : NaN;
    const box = element("div", { class: "stat" });
    box.appendChild(element("div", { class: "value" }, short(last)));
    box.appendChild(element("div", { class: "label" }, s.legend));
    body.appendChild(box);
  }
}

function draw() {
  const board = document.getElementById("board");
  document.getElementById("title").textContent = window.DASHBOARD.title;
  const rows = Math.max(...window.DASHBOARD.panels.map(p => p.gridPos.y + p.gridPos.h));
  board.style.height = rows * ROW_PX + "px";
  for (const panel of window.DASHBOARD.panels) {
    const box = element("section", { class: "panel", "data-panel": panel.id });
    const g = panel.gridPos;
    Object.assign(box.style, { left: (g.x / 24 * 100) + "%", width: `calc(${g.w / 24 * 100}% - 8px)`,
                               top: g.y * ROW_PX + "px", height: g.h * ROW_PX - 8 + "px" });
    box.appendChild(element("h3", {}, panel.title));
    const body = element("div", { class: "body" });
    box.appendChild(body);
    board.appendChild(box);
    (panel.type === "stat" ? stat : timeseries)(body, window.SERIES[panel.id] || []);
  }
  document.body.dataset.drawn = "yes";
}

draw();
