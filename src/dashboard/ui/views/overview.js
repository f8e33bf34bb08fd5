// The cluster at a glance: totals, utilization over time, every GPU, and the
// queues against their guarantees.
import * as api from "../api.js";
import { utilizationChart } from "../chart.js";
import { fill, h } from "../dom.js";
import { gpus, percent } from "../format.js";
import { CELL_COLORS, Heatmap } from "../heatmap.js";
import { legend as queueLegend, queueTable } from "./queues.js";

function tile(label, value, detail, field) {
  return h("div", { class: "tile", dataset: { field } }, h("div", { class: "value" }, value), h("div", { class: "label" }, label),
    detail ? h("div", { class: "detail" }, detail) : null);
}

export function mount(container, _params, navigate) {
  const tiles = h("div", { class: "tiles" });
  const chart = h("div");
  const heatmap = new Heatmap((node) => navigate(`#/nodes/${encodeURIComponent(node)}`));
  const heatmapLegend = h("p", { class: "legend" });
  const queues = h("div");
  container.append(
    tiles,
    h("section", {}, h("h2", {}, "GPU utilization over time"), chart),
    h("section", {}, h("h2", {}, "GPUs by leaf switch and node"), heatmapLegend, heatmap.element),
    h("section", {}, h("h2", {}, "Queues"), queueLegend(), queues));
  return {
    async refresh() {
      const [cluster, map, history, queueList] = await Promise.all([
        api.get("/v1/cluster"), api.get("/v1/cluster/gpus"), api.get("/v1/cluster/history"), api.get("/v1/queues")]);
      const c = map.counts;
      fill(tiles,
        tile("GPUs", gpus(cluster.gpus), `${cluster.readyNodes} of ${cluster.nodes} nodes ready`, "gpus"),
        tile("allocated", gpus(cluster.allocatedGpus), percent(cluster.allocatedGpus, cluster.gpus), "allocated"),
        tile("allocated but idle", c.idle, `under ${map.idleThresholdPercent}% utilization`, "idle"),
        tile("unhealthy GPUs", c.unhealthy, `and ${c.lost} on lost nodes`, "unhealthy"),
        tile("running jobs", cluster.runningJobs, null, "running"),
        tile("pending jobs", cluster.pendingJobs, null, "pending"));
      // The last sample is the server's; add "now" so the chart ends at the present.
      const samples = history.samples.concat([{ time: Date.now(), gpus: c.free + c.allocated + c.shared + c.idle + c.cordoned,
        allocated: cluster.allocatedGpus, idle: c.idle, pendingJobs: cluster.pendingJobs, runningJobs: cluster.runningJobs }]);
      fill(chart, utilizationChart(samples, chart.clientWidth));
      fill(heatmapLegend, ...Object.entries(map.legend).map(([code, name]) =>
        h("span", { class: "key", dataset: { cell: name } }, h("i", { style: { background: CELL_COLORS[code] } }), `${name} `,
          h("b", {}, String(c[name])))));
      heatmap.update(map);
      fill(queues, queueTable(queueList.queues, cluster.gpus));
      this.stats = { heatmapDrawMs: heatmap.drawMs };
    },
    destroy() {
      heatmap.destroy();
    },
  };
}
