// Utilization over time as an SVG line chart: GPUs available, allocated, and
// allocated-but-idle, from GET /v1/cluster/history.
import { h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const HEIGHT = 180, LEFT = 44, BOTTOM = 20, TOP = 8;

function svg(tag, attributes) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  return element;
}

export const SERIES = [
  { key: "gpus", label: "GPUs available", color: "#94a3b8", dash: "4 3" },
  { key: "allocated", label: "allocated", color: "#2563eb" },
  { key: "idle", label: "allocated, idle", color: "#f59e0b" },
];

// Drawn at the width it will have (no stretching, so the labels keep their shape).
export function utilizationChart(samples, width) {
  const chartWidth = Math.max(width || 800, 240);
  const box = h("figure", { class: "chart" });
  if (samples.length === 0) {
    box.append(h("p", { class: "muted" }, "No samples yet: the server records one every interval."));
    return box;
  }
  const t0 = samples[0].time, t1 = Math.max(samples[samples.length - 1].time, t0 + 1);
  const top = Math.max(1, ...samples.map((s) => s.gpus));
  const x = (t) => LEFT + ((t - t0) / (t1 - t0)) * (chartWidth - LEFT - 4);
  const y = (v) => TOP + (1 - v / top) * (HEIGHT - TOP - BOTTOM);
  const chart = svg("svg", { viewBox: `0 0 ${chartWidth} ${HEIGHT}`, role: "img",
                             "aria-label": "GPU utilization over time" });
  for (const fraction of [0, 0.5, 1]) {
    chart.append(svg("line", { x1: LEFT, x2: chartWidth, y1: y(top * fraction), y2: y(top * fraction), class: "grid" }));
    const label = svg("text", { x: LEFT - 6, y: y(top * fraction) + 4, "text-anchor": "end", class: "axis" });
    label.textContent = String(Math.round(top * fraction));
    chart.append(label);
  }
  for (const [t, anchor] of [[t0, "start"], [t1, "end"]]) {
    const label = svg("text", { x: x(t), y: HEIGHT - 4, "text-anchor": anchor, class: "axis" });
    label.textContent = new Date(t).toLocaleTimeString();
    chart.append(label);
  }
  for (const series of SERIES) {
    const points = samples.map((s) => `${x(s.time).toFixed(1)},${y(s[series.key]).toFixed(1)}`).join(" ");
    const line = svg("polyline", { points, fill: "none", stroke: series.color, "stroke-width": 2 });
    if (series.dash) line.setAttribute("stroke-dasharray", series.dash);
    chart.append(line);
  }
  const last = samples[samples.length - 1];
  box.append(chart, h("figcaption", {}, SERIES.map((s) =>
    h("span", { class: "key" }, h("i", { style: { background: s.color } }), `${s.label}: ${Math.round(last[s.key] * 100) / 100}`))));
  return box;
}
