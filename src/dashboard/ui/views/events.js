// Events as a table, newest first: a job's on its page, a node's on its page.
import { h, table } from "../dom.js";
import { time } from "../format.js";

export function eventList(events) {
  return table(["Time", "Event", "Message"], events.slice().reverse().map((e) =>
    h("tr", {}, h("td", {}, time(e.time)), h("td", {}, e.type), h("td", { class: "message" }, e.message))), { class: "events" });
}
