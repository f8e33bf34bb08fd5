// The /v1 API as the dashboard uses it: JSON reads with the server's error
// messages, and the event stream that drives live updates.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function request(method, path) {
  const response = await fetch(path, { method, headers: { Accept: "application/json" } });
  const text = await response.text();
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
      onStatus("reconnecting");
      if (error instanceof ApiError && error.status === 410) revision = null;  // fell out of the window: start over
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}
