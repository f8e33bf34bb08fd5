// One job: its fields, tasks and placement, events, spec and logs, the logs
// followed while the job runs (GET /v1/jobs/{id}, /v1/jobs/{id}/logs).
import * as api from "../api.js";
import { badge, fill, h, table } from "../dom.js";
import { duration, gpuHours, gpus, percent, time } from "../format.js";
import { eventList } from "./events.js";

const KEEP_LOG_BYTES = 256 * 1024;

// Follows one task's stream from where it last read; keeps the tail.
class LogView {
  constructor(jobId) {
    this.jobId = jobId;
    this.task = null;
    this.stream = "stdout";
    this.pre = h("pre", { class: "logs", "aria-label": "task log" });
    this.taskSelect = h("select", { name: "task", onchange: (e) => this.select(e.target.value, this.stream) });
    this.streamSelect = h("select", { name: "stream", onchange: (e) => this.select(this.task, e.target.value) },
      h("option", { value: "stdout" }, "stdout"), h("option", { value: "stderr" }, "stderr"));
    this.note = h("span", { class: "muted" });
    this.element = h("section", {}, h("h2", {}, "Logs"),
      h("div", { class: "filters" }, h("label", {}, "Task ", this.taskSelect), h("label", {}, "Stream ", this.streamSelect), this.note),
      this.pre);
  }

  setTasks(names) {
    if (this.taskSelect.options.length !== names.length) {
      fill(this.taskSelect, ...names.map((n) => h("option", { value: n }, n)));
    }
    if (this.task === null && names.length > 0) this.select(names[0], this.stream);
  }

  select(task, stream) {
    this.task = task;
    this.stream = stream;
    this.offset = 0;
    this.attempt = null;
    this.pre.textContent = "";
    this.taskSelect.value = task;
    this.streamSelect.value = stream;
    this.refresh();
  }

  async refresh() {
    if (this.task === null || this.loading) return;
    this.loading = true;
    try {
      for (let i = 0; i < 32; ++i) {  // catch up in chunks, at most 32 per refresh
        const query = new URLSearchParams({ task: this.task, stream: this.stream, offset: this.offset });
        const { text, headers } = await api.getText(`/v1/jobs/${this.jobId}/logs?${query}`);
        const attempt = headers.get("X-Tessera-Attempt");
        if (this.attempt !== null && attempt !== this.attempt) {  // a restart: its log starts afresh
          this.pre.textContent = "";
          this.offset = 0;
        }
        this.attempt = attempt;
        this.note.textContent = `attempt ${attempt}`;
        if (text.length === 0) break;
        this.offset = Number(headers.get("X-Tessera-Next-Offset"));
        const all = this.pre.textContent + text;
        this.pre.textContent = all.length > KEEP_LOG_BYTES ? all.slice(all.length - KEEP_LOG_BYTES) : all;
        this.pre.scrollTop = this.pre.scrollHeight;
      }
    } catch (error) {
      this.note.textContent = error.message;
    } finally {
      this.loading = false;
    }
  }
}

function field(label, value, name) {
  return [h("dt", {}, label), h("dd", { dataset: { field: name } }, value)];
}

function taskTable(tasks) {
  return table(["Task", "Node", "GPUs", "Share", "State", "Exit", "Message"], tasks.map((t) =>
    h("tr", { dataset: { task: t.name } },
      h("td", {}, t.name),
      h("td", {}, t.node ? h("a", { href: `#/nodes/${encodeURIComponent(t.node)}` }, t.node) : "–"),
      h("td", {}, t.gpus.length ? t.gpus.join(", ") : "–"),
      h("td", { class: "num" }, t.gpuMilli < 1000 ? `${t.gpuMilli / 10}%` : "whole"),
      h("td", {}, badge(t.state)),
      h("td", { class: "num" }, t.exitCode ?? ""),
      h("td", { class: "message" }, t.message || ""))), { class: "tasks" });
}


export function mount(container, params) {
  const id = params.get("id");
  const header = h("div");
  const fields = h("dl", { class: "fields" });
  const tasks = h("div");
  const events = h("div");
  const spec = h("pre", { class: "spec" });
  const logs = new LogView(id);
  container.append(header, fields,
    h("section", {}, h("h2", {}, "Tasks and placement"), tasks),
    logs.element,
    h("section", {}, h("h2", {}, "Events"), events),
    h("details", {}, h("summary", {}, "Spec as submitted"), spec));
  return {
    async refresh() {
      const job = await api.get(`/v1/jobs/${id}`);
      const active = ["pending", "starting", "running"].includes(job.state);
      const cancel = h("button", { type: "button", onclick: async () => {
        if (!window.confirm(`Cancel job ${job.id} (${job.name})?`)) return;
        try {
          await api.post(`/v1/jobs/${job.id}/cancel`);
        } catch (error) {
          window.alert(error.message);
        }
      } }, "Cancel");
      fill(header, h("h1", {}, `${job.name} `, h("span", { class: "muted" }, `#${job.id}`), " ", badge(job.state),
        active ? cancel : null, job.hung ? badge("hung") : null), job.message ? h("p", { class: "message" }, job.message) : null,
        job.state === "pending" && job.restartAfter > Date.now()
          ? h("p", { class: "muted" }, `restart held back until ${time(job.restartAfter)} (spec.restart.backoff)`) : null);
      const ran = job.runningTime ? (job.endTime || Date.now()) - job.runningTime : null;
      fill(fields,
        ...field("Queue", h("a", { href: `#/jobs?queue=${encodeURIComponent(job.queue)}&state=all` }, job.queue), "queue"),
        ...field("User", job.user, "user"),
        ...field("Priority", job.priority, "priority"),
        ...field("GPUs", gpus(job.gpus), "gpus"),
        ...field("Tasks", job.taskCount, "tasks"),
        ...field("Attempt", `${job.attempt} (${job.restarts} of ${job.maxRestarts} restarts used)`, "attempt"),
        ...field("Submitted", time(job.submitTime), "submitted"),
        ...field("Waited", duration((job.runningTime || job.scheduledTime || Date.now()) - job.submitTime), "waited"),
        ...field("Ran", duration(ran), "ran"),
        ...field("GPU-hours", `${gpuHours(job.gpuSeconds)} (${percent(job.idleGpuSeconds, job.gpuSeconds)} idle)`, "gpu-hours"));
      fill(tasks, job.tasks.length ? taskTable(job.tasks) : h("p", { class: "muted" }, "Not placed yet."));
      fill(events, eventList(job.events));
      spec.textContent = typeof job.spec === "string" ? job.spec : JSON.stringify(job.spec, null, 2);
      if (job.attempt > 0) {
        logs.setTasks(job.tasks.map((t) => t.name));
        await logs.refresh();
      }
    },
  };
}
