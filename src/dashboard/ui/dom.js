// Building the page from data without innerHTML: text from the API (job
// names, log lines, messages) is always set as text, never parsed as HTML.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(element.dataset, value);
    // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
    else if (key === "style") Object.assign(element.style, value);
    else element.setAttribute(key, value === true ? "" : value);
  }
  append(element, children);
  return element;
}

// Replaces an element's children; null, undefined and false are skipped
// (the DOM's own replaceChildren would show them as text).
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : String(child));
  }
}

// Wide tables scroll inside their box rather than widen the page.
export function table(headers, rows, attributes = {}) {
  return h("div", { class: "scroll" }, h("table", attributes,
    h("thead", {}, h("tr", {}, headers.map((title) => h("th", {}, title)))),
    h("tbody", {}, rows)));
}

export function badge(state) {
  return h("span", { class: `badge ${state}` }, state);
}

export function errorBox(error) {
  return h("p", { class: "error", role: "alert" }, String(error.message || error));
}
