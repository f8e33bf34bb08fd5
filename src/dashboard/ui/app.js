// The dashboard's shell: hash routes to views, and live updates. Every view
// mounts into <main> and exposes refresh(); the event stream and a timer
// (telemetry changes without events) call it, at most once a second.
import * as api from "./api.js";
import { errorBox, fill, h } from "./dom.js";
import * as job from "./views/job.js";
import * as jobs from "./views/jobs.js";
import * as nodes from "./views/nodes.js";
import * as overview from "./views/overview.js";
import * as queues from "./views/queues.js";

const ROUTES = [
  { pattern: /^\/?$/, nav: "overview", mount: overview.mount },
  { pattern: /^\/jobs$/, nav: "jobs", mount: jobs.mount },
  { pattern: /^\/jobs\/(?<id>\d+)$/, nav: "jobs", mount: job.mount },
  { pattern: /^\/queues$/, nav: "queues", mount: queues.mount },
  { pattern: /^\/nodes$/, nav: "nodes", mount: nodes.mountList },
  { pattern: /^\/nodes\/(?<name>[^/]+)$/, nav: "nodes", mount: nodes.mountNode },
];
const PERIODIC_REFRESH_MS = 5000;
const MIN_REFRESH_GAP_MS = 1000;

let current = null;
let generation = 0;

function navigate(hash) {
  if (location.hash === hash) show();
  else location.hash = hash;
}

function show() {
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const route = ROUTES.find((r) => r.pattern.test(path));
  const view = document.getElementById("view");
  current?.view.destroy?.();
  fill(view);
  generation += 1;
  for (const link of document.querySelectorAll("[data-nav]")) link.classList.toggle("active", link.dataset.nav === route?.nav);
  if (!route) {
    view.append(h("h1", {}, "Not found"), h("p", {}, "No page at ", h("code", {}, location.hash), "."));
    current = null;
    return;
  }
  const params = new URLSearchParams(query || "");
  for (const [key, value] of Object.entries(path.match(route.pattern).groups || {})) params.set(key, decodeURIComponent(value));
  const status = h("div", { class: "status" });
  const body = h("div");
  view.append(status, body);
  current = { view: route.mount(body, params, navigate), status, generation, last: 0, pending: null };
  refresh();
}

// Refreshes the current view now, or once the gap since the last refresh has passed.
function refresh() {
  const view = current;
  if (!view) return;
  if (view.pending) {  // one is due or running: run once more after it
    view.again = true;
    return;
  }
  const wait = Math.max(0, view.last + MIN_REFRESH_GAP_MS - Date.now());
  view.pending = setTimeout(async () => {
    view.last = Date.now();
    const started = performance.now();
    try {
      await view.view.refresh();
      // For the scale benchmark (tests/browser/dashboard_scale.py).
      window.tesseraStats = { ...view.view.stats, refreshMs: performance.now() - started };
      if (view.generation === generation) fill(view.status);
    } catch (error) {
      if (view.generation === generation) fill(view.status, errorBox(error));
    } finally {
      view.pending = null;
      document.body.dataset.refreshed = String(Date.now());
      if (view.again && view === current) {
        view.again = false;
        refresh();
      }
    }
  }, wait);
}

// A server with access control answers 401 without a valid token: ask for
// one in place of the view, and show the current view again once given.
function signIn(message) {
  const view = document.getElementById("view");
  if (view.querySelector("#signin")) return;
  current?.view.destroy?.();
  current = null;
  const input = h("input", { type: "password", id: "token", autocomplete: "off", placeholder: "tsr_…", "aria-label": "API token" });
  const form = h("form", { id: "signin", class: "signin" },
    h("h1", {}, "Sign in"),
    h("p", {}, "This cluster needs an API token (", h("code", {}, "tessera tokens create"), ", or the file ", h("code", {}, "tessera up"),
      " wrote). It is kept in this tab only."),
    message ? h("p", { class: "error", role: "alert" }, message) : null,
    input,
    h("button", { type: "submit" }, "Sign in"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    api.setToken(input.value.trim());
  });
  fill(view, form);
  input.focus();
}

function errorOf(body) {
  try {
    return JSON.parse(body).error;
  } catch {
    return null;
  }
}

const signOut = document.getElementById("signout");
function showSignOut() {
  signOut.hidden = !api.token();
}
signOut.addEventListener("click", () => api.setToken(null));
window.addEventListener("tessera-unauthorized", (event) => signIn(api.token() ? errorOf(event.detail) : null));
window.addEventListener("tessera-token", () => {
  showSignOut();
  show();
});
window.addEventListener("hashchange", show);
showSignOut();
show();
setInterval(refresh, PERIODIC_REFRESH_MS);
const live = document.getElementById("live");
api.watchEvents(refresh, (state) => {
  live.textContent = state;
  live.className = `live ${state.replace(" ", "-")}`;
});
