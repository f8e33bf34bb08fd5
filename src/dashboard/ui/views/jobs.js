// Jobs with filters, as `tessera jobs` lists them; the filters live in the
// address (#/jobs?state=running&queue=research) so a view can be shared.
import * as api from "../api.js";
import { badge, fill, h, table } from "../dom.js";
import { ago, duration, gpuHours, gpus, percent } from "../format.js";

const STATES = ["active", "pending", "running", "starting", "ended", "succeeded", "failed", "cancelled", "all"];
const LIMIT = 500;

function runtime(job) {
  if (!job.runningTime) return "–";
  return duration((job.endTime || Date.now()) - job.runningTime);
}

export function jobRow(job) {
  return h("tr", { dataset: { job: job.id } },
    h("td", { class: "num" }, h("a", { href: `#/jobs/${job.id}` }, job.id)),
    h("td", { class: "name" }, h("a", { href: `#/jobs/${job.id}` }, job.name)),
    h("td", {}, job.queue),
    h("td", {}, job.user),
    h("td", {}, badge(job.state)),
    h("td", { class: "num" }, gpus(job.gpus)),
    h("td", { class: "num" }, job.taskCount),
    h("td", {}, ago(job.submitTime)),
    h("td", {}, runtime(job)),
    h("td", { class: "num" }, gpuHours(job.gpuSeconds)),
    h("td", { class: "num" }, job.gpuSeconds > 0 ? percent(job.idleGpuSeconds, job.gpuSeconds) : "–"),
    h("td", { class: "message" }, job.message));
}

export function mount(container, params, navigate) {
  const filters = { state: params.get("state") || "active", queue: params.get("queue") || "",
                    user: params.get("user") || "", name: params.get("name") || "" };
  const apply = () => {
    const query = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
    navigate(`#/jobs?${query}`);
  };
  const input = (key, placeholder) => h("input", { name: key, value: filters[key], placeholder, type: "search",
    onchange: (e) => { filters[key] = e.target.value.trim(); apply(); } });
  const form = h("form", { class: "filters", onsubmit: (e) => e.preventDefault() },
    h("label", {}, "State ", h("select", { name: "state", onchange: (e) => { filters.state = e.target.value; apply(); } },
      STATES.map((s) => h("option", { value: s, selected: s === filters.state }, s)))),
    h("label", {}, "Queue ", input("queue", "any queue")),
    h("label", {}, "User ", input("user", "any user")),
    h("label", {}, "Name ", input("name", "any name")));
  const summary = h("p", { class: "muted" });
  const body = h("div");
  container.append(h("h1", {}, "Jobs"), form, summary, body);
  return {
    async refresh() {
      const query = new URLSearchParams({ limit: LIMIT });
      for (const [key, value] of Object.entries(filters)) if (value && value !== "all") query.set(key, value);
      // Ended jobs newest first; waiting and running ones in queue order.
      if (["ended", "succeeded", "failed", "cancelled", "all"].includes(filters.state)) query.set("order", "newest");
      const { jobs } = await api.get(`/v1/jobs?${query}`);
      summary.textContent = jobs.length >= LIMIT ? `the first ${LIMIT} jobs; narrow the filters to see others` : `${jobs.length} jobs`;
      fill(body, table(["ID", "Name", "Queue", "User", "State", "GPUs", "Tasks", "Submitted", "Ran", "GPU-h", "Idle", "Message"],
        jobs.map(jobRow), { class: "jobs" }));
    },
  };
}
