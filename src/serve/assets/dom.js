// Small DOM and formatting helpers every view uses: elements built from props (text only,
// never markup), numbers, times and costs as the page shows them, toasts.

export const STATUSES = ["running", "asking", "paused", "interrupted", "failed", "completed"];

// ---------------------------------------------------------------- helpers

function setProps(node, props) {
  if (!props) return;
  for (const key of Object.keys(props)) {
    const value = props[key];
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "testid") node.setAttribute("data-testid", value);
    else if (key === "data") {
      for (const name of Object.keys(value)) {
        if (value[name] !== undefined && value[name] !== null) node.dataset[name] = String(value[name]);
      }
    } else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "value") node.value = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
}

function appendKids(node, kids) {
  for (const kid of kids) {
    if (kid === undefined || kid === null || kid === false) continue;
    if (Array.isArray(kid)) appendKids(node, kid);
    else node.append(kid instanceof Node ? kid : String(kid));
  }
}

/** An HTML element; strings among `kids` become text, never markup. */
export function h(tag, props, ...kids) {
  const node = document.createElement(tag);
  setProps(node, props);
  appendKids(node, kids);
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";
export function svg(tag, props, ...kids) {
  const node = document.createElementNS(SVG_NS, tag);
  setProps(node, props);
  appendKids(node, kids);
  return node;
}

export function fmtCost(usd) {
  if (usd === undefined || usd === null || Number.isNaN(usd)) return "–";
  if (usd === 0) return "$0";
  if (Math.abs(usd) < 0.01) return "$" + usd.toFixed(4);
  if (Math.abs(usd) < 100) return "$" + usd.toFixed(2);
  return "$" + Math.round(usd).toLocaleString("en-US");
}

export function fmtDuration(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return "–";
  if (ms < 1000) return Math.round(ms) + " ms";
  if (ms < 10000) return (ms / 1000).toFixed(2) + " s";
  if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
  const s = Math.floor(ms / 1000);
  if (s < 3600) return Math.floor(s / 60) + "m " + String(s % 60).padStart(2, "0") + "s";
  if (s < 86400) return Math.floor(s / 3600) + "h " + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + "m";
  return Math.floor(s / 86400) + "d " + String(Math.floor((s % 86400) / 3600)).padStart(2, "0") + "h";
}

export function fmtCountdown(ms) {
  if (ms <= 0) return "0:00";
  const s = Math.ceil(ms / 1000);
  if (s >= 86400) return Math.floor(s / 86400) + "d " + String(Math.floor((s % 86400) / 3600)).padStart(2, "0") + "h";
  if (s >= 3600) {
    return Math.floor(s / 3600) + ":" + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + ":" +
      String(s % 60).padStart(2, "0");
  }
  return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
}

/** RFC 3339 to epoch ms (nanosecond fractions cut to milliseconds). */
export function parseTs(text) {
  if (!text) return null;
  const at = Date.parse(String(text).replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(at) ? null : at;
}

export function fmtAge(text) {
  const at = parseTs(text);
  if (at === null) return "–";
  const s = Math.max(0, Math.round((Date.now() - at) / 1000));
  if (s < 60) return s + "s ago";
  if (s < 3600) return Math.floor(s / 60) + "m ago";
  if (s < 86400) return Math.floor(s / 3600) + "h ago";
  return Math.floor(s / 86400) + "d ago";
}

export function fmtWhen(text) {
  const at = parseTs(text);
  return at === null ? "" : new Date(at).toLocaleString();
}

export function plural(n, one, many) {
  return n + " " + (n === 1 ? one : many || one + "s");
}

export function baseName(path) {
  if (!path) return "";
  const parts = String(path).split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path);
}

export function stateLabel(state) {
  return state === null || state === undefined ? "(terminated)" : String(state);
}

const TEXT_CAP = 100000;
/** A <pre> holding `text` as text; a very long text shows its start and a button for the rest. */
export function textBlock(text, props) {
  const pre = h("pre", props);
  const full = text === undefined || text === null ? "" : String(text);
  if (full.length <= TEXT_CAP) {
    pre.textContent = full;
    if (!full) pre.classList.add("empty");
    return pre;
  }
  pre.textContent = full.slice(0, TEXT_CAP);
  const more = h("button", {
    type: "button",
    class: "link more",
    text: "show all " + full.length.toLocaleString("en-US") + " characters",
    onclick: () => {
      pre.textContent = full;
      more.remove();
    },
  });
  return h("div", { class: "capped" }, pre, more);
}

export function toast(message, kind) {
  const box = document.getElementById("toasts");
  const item = h("div", { class: "toast " + (kind || "info"), role: "status", text: message });
  box.append(item);
  setTimeout(() => item.remove(), kind === "error" ? 8000 : 4000);
}

export function statusPill(status, props) {
  return h("span", Object.assign({ class: "pill status-" + (status || "unknown"), text: status || "unknown" }, props || {}));
}

export function field(label, input, hint) {
  return h("label", { class: "field" }, h("span", { class: "label", text: label }), input,
    hint ? h("span", { class: "hint", text: hint }) : null);
}
