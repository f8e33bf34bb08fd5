// Queues against their guarantee: what each team holds, what it is
// guaranteed, and what it borrows beyond that (GET /v1/queues).
import * as api from "../api.js";
import { fill, h, table } from "../dom.js";
import { gpus } from "../format.js";

// The bar's scale: the largest of guarantee, usage and limit over all queues.
function usageBar(queue, scale) {
  const guaranteed = Math.min(queue.guaranteed, scale);
  const within = Math.min(queue.allocatedGpus, guaranteed);
  const borrowed = Math.max(0, queue.allocatedGpus - guaranteed);
  const width = (v) => ({ width: `${(100 * v) / scale}%` });
  return h("div", { class: "bar", title: `${gpus(queue.allocatedGpus)} GPUs held, ${gpus(queue.guaranteed)} guaranteed` },
    h("span", { class: "bar-guarantee", style: width(guaranteed) }),
    h("span", { class: "bar-used", style: width(within) }),
    borrowed > 0 ? h("span", { class: "bar-borrowed", style: { ...width(borrowed), left: `${(100 * within) / scale}%` } }) : null);
}

export function queueTable(queues, clusterGpus) {
  const finite = (v) => (v === null || v > 1e8 ? 0 : v);  // the default queue's "everything" is no scale
  const scale = Math.max(1, clusterGpus || 0, ...queues.map((q) => Math.max(finite(q.guaranteed), q.allocatedGpus, finite(q.limit))));
  const rows = queues.map((q) => {
    const depth = q.name.split("/").length - 1;
    return h("tr", { dataset: { queue: q.name } },
      h("td", { class: "name", style: { paddingLeft: `${0.5 + depth * 1.2}em` } },
        h("a", { href: `#/jobs?queue=${encodeURIComponent(q.name)}&state=active` }, q.name.split("/").pop())),
      h("td", { class: "wide" }, usageBar(q, scale)),
      h("td", { class: "num", dataset: { field: "allocated" } }, gpus(q.allocatedGpus)),
      h("td", { class: "num", dataset: { field: "guaranteed" } }, q.guaranteed > 1e8 ? "all" : gpus(q.guaranteed)),
      h("td", { class: "num" }, q.limit === null ? "none" : gpus(q.limit)),
      h("td", { class: "num" }, q.weight),
      h("td", { class: "num", dataset: { field: "running" } }, q.runningJobs),
      h("td", { class: "num", dataset: { field: "pending" } }, q.pendingJobs));
  });
  return table(["Queue", "Held vs guaranteed", "GPUs held", "Guaranteed", "Limit", "Weight", "Running", "Pending"], rows,
    { class: "queues" });
}

export function legend() {
  return h("p", { class: "legend" },
    h("span", { class: "key" }, h("i", { class: "bar-used" }), "held within the guarantee"),
    h("span", { class: "key" }, h("i", { class: "bar-borrowed" }), "borrowed beyond it (reclaimable)"),
    h("span", { class: "key" }, h("i", { class: "bar-guarantee" }), "guaranteed"));
}

export function mount(container) {
  const body = h("div");
  container.append(h("h1", {}, "Queues"), legend(), body);
  return {
    async refresh() {
      const [{ queues }, cluster] = await Promise.all([api.get("/v1/queues"), api.get("/v1/cluster")]);
      fill(body, queueTable(queues, cluster.gpus));
    },
  };
}
