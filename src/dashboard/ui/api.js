// The /v1 API as the dashboard uses it: JSON reads with the server's error
// messages, the event stream that drives live updates, and the API token of
// a server with access control (kept for this browser tab only).

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const TOKEN_KEY = "tessera-token";

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

// A new token (or null to sign out): every view reloads with it.
export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
  window.dispatchEvent(new Event("tessera-token"));
}

async function request(method, path) {
  const headers = { Accept: "application/json" };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const response = await fetch(path, { method, headers });
  const text = await response.text();
  // The server wants a token, or refused this one: the shell asks for one.
  if (response.status === 401) window.dispatchEvent(new CustomEvent("tessera-unauthorized", { detail: text }));
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      message = JSON.parse(text).error || message;
    } catch { /* not JSON: keep the status line */ }
    throw new ApiError(response.status, message);
  }
  return { text, headers: response.headers };
}

export async function get(path) {
  return JSON.parse((await request("GET", path)).text);
}

export async function post(path) {
  const { text } = await request("POST", path);
  return text ? JSON.parse(text) : null;
}

export async function getText(path) {
  return request("GET", path);
}

// Long-polls GET /v1/events from the current revision and calls onEvents
// with each batch; onStatus("live" | "reconnecting") tells the page whether
// it is up to date. Runs until the page goes away.
export async function watchEvents(onEvents, onStatus) {
  let revision = null;
  for (;;) {
    try {
      if (revision === null) revision = (await get("/v1/cluster")).revision;
      onStatus("live");
      const batch = await get(`/v1/events?since=${revision}&wait=25`);
      revision = batch.revision;
      if (batch.events.length > 0) onEvents(batch.events);
    } catch (error) {
      onStatus(error instanceof ApiError && error.status === 401 ? "signed out" : "reconnecting");
      if (error instanceof ApiError && error.status === 410) revision = null;  // fell out of the window: start over
      // Again in 2 s, or as soon as a token is given.
      await new Promise((resolve) => {
        setTimeout(resolve, 2000);
        window.addEventListener("tessera-token", resolve, { once: true });
      });
    }
  }
}
