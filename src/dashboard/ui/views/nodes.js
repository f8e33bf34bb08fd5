// Nodes as `tessera nodes` lists them, and one node's GPUs: what each is
// doing, its utilization and the jobs holding it (GET /v1/nodes).
import * as api from "../api.js";
import { badge, fill, h, table } from "../dom.js";
import { ago, bytes, gpus } from "../format.js";
import { eventList } from "./events.js";

const SHOWN = 500;  // rows one page lays out quickly; the filter finds the rest

export function mountList(container, params, navigate) {
  const filter = params.get("filter") || "";
  const input = h("input", { type: "search", name: "filter", value: filter, placeholder: "name, state, leaf or spine",
    onchange: (e) => navigate(`#/nodes?filter=${encodeURIComponent(e.target.value.trim())}`) });
  const summary = h("p", { class: "muted" });
  const body = h("div");
  container.append(h("h1", {}, "Nodes"), h("form", { class: "filters", onsubmit: (e) => e.preventDefault() },
    h("label", {}, "Filter ", input)), summary, body);
  return {
    async refresh() {
      const { nodes } = await api.get("/v1/nodes?gpus=false");
      const matching = nodes.filter((n) => !filter || [n.name, n.state, n.leaf, n.spine].some((v) => v.includes(filter)));
      summary.textContent = matching.length > SHOWN ? `${SHOWN} of ${matching.length} nodes; narrow the filter to see others`
                                                    : `${matching.length} of ${nodes.length} nodes`;
      fill(body, table(["Node", "State", "Leaf", "Spine", "GPUs", "Allocated", "Jobs", "Sharing", "Heartbeat"],
        matching.slice(0, SHOWN).map((n) => h("tr", { dataset: { node: n.name } },
          h("td", {}, h("a", { href: `#/nodes/${encodeURIComponent(n.name)}` }, n.name)),
          h("td", {}, badge(n.state)),
          h("td", {}, n.leaf), h("td", {}, n.spine),
          h("td", { class: "num" }, n.gpuCount),
          h("td", { class: "num" }, gpus(n.allocatedGpus)),
          h("td", { class: "num" }, n.jobs),
          h("td", {}, (n.gpuSharing || []).join(", ") || "exclusive"),
          h("td", {}, ago(n.lastHeartbeat)))), { class: "nodes" }));
    },
  };
}

export function mountNode(container, params) {
  const name = params.get("name");
  const header = h("div");
  const body = h("div");
  const events = h("div");
  container.append(header, body, h("section", {}, h("h2", {}, "Events"), events));
  const action = (verb) => h("button", { type: "button", onclick: async () => {
    try {
      await api.post(`/v1/nodes/${encodeURIComponent(name)}/${verb}`);
    } catch (error) {
      window.alert(error.message);
    }
  } }, verb);
  return {
    async refresh() {
      const [node, history] = await Promise.all([api.get(`/v1/nodes/${encodeURIComponent(name)}`),
        api.get(`/v1/events?since=0&kind=node&node=${encodeURIComponent(name)}&wait=0`)]);
      fill(events, eventList(history.events.slice(-200)));
      fill(header, h("h1", {}, `${node.name} `, badge(node.state), " ", action(node.cordoned ? "uncordon" : "cordon"),
        node.cordoned ? null : action("drain")),
        h("p", { class: "muted" }, `${node.leaf} · ${node.spine} · ${node.provider} · heartbeat ${ago(node.lastHeartbeat)}`));
      fill(body, table(["GPU", "Model", "Memory", "State", "Utilization", "Held", "Shared as", "Jobs"],
        node.gpus.map((g) => h("tr", { dataset: { gpu: g.index } },
          h("td", { class: "num" }, g.index),
          h("td", {}, g.model),
          h("td", { class: "num" }, bytes(g.memory)),
          h("td", {}, badge(g.cell || "unknown"), g.outOfService ? h("div", { class: "muted" }, g.outOfService) : null),
          h("td", { class: "num" }, g.utilization === undefined ? "–" : `${Math.round(g.utilization)}%`),
          h("td", { class: "num" }, `${(g.allocatedMilli || 0) / 10}%`),
          h("td", {}, g.sharedAs || ""),
          h("td", {}, (g.jobs || []).map((id) => h("a", { href: `#/jobs/${id}`, class: "chip" }, `#${id}`))))), { class: "gpus" }));
    },
  };
}
