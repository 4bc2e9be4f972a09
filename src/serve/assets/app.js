// The run inspector of `baton serve`: one page, hash routes, no framework.
//
// Routes: `#/` (runs and workflows), `#/runs/RUN` (one run),
// `#/runs/RUN/steps/AGENT/STEP` (one run with a step open). A URL fragment
// `#token=T` or `#token=T&/runs/RUN` hands the page its token: it is kept in
// this tab's sessionStorage and removed from the address bar.
//
// Safety: every text that comes from a run (prompts, outputs, names, results)
// reaches the page through textContent or an SVG/canvas text call, never as
// markup; the page is served with `default-src 'self'`, so nothing here is
// inline or evaluated.
"use strict";

(() => {
  const API = "/api/v1";
  const TOKEN_KEY = "baton.token";
  const STATUSES = ["running", "asking", "paused", "interrupted", "failed", "completed"];

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
  function h(tag, props, ...kids) {
    const node = document.createElement(tag);
    setProps(node, props);
    appendKids(node, kids);
    return node;
  }

  const SVG_NS = "http://www.w3.org/2000/svg";
  function svg(tag, props, ...kids) {
    const node = document.createElementNS(SVG_NS, tag);
    setProps(node, props);
    appendKids(node, kids);
    return node;
  }

  function fmtCost(usd) {
    if (usd === undefined || usd === null || Number.isNaN(usd)) return "–";
    if (usd === 0) return "$0";
    if (Math.abs(usd) < 0.01) return "$" + usd.toFixed(4);
    if (Math.abs(usd) < 100) return "$" + usd.toFixed(2);
    return "$" + Math.round(usd).toLocaleString("en-US");
  }

  function fmtDuration(ms) {
    if (ms === undefined || ms === null || Number.isNaN(ms)) return "–";
    if (ms < 1000) return Math.round(ms) + " ms";
    if (ms < 10000) return (ms / 1000).toFixed(2) + " s";
    if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
    const s = Math.floor(ms / 1000);
    if (s < 3600) return Math.floor(s / 60) + "m " + String(s % 60).padStart(2, "0") + "s";
    if (s < 86400) return Math.floor(s / 3600) + "h " + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + "m";
    return Math.floor(s / 86400) + "d " + String(Math.floor((s % 86400) / 3600)).padStart(2, "0") + "h";
  }

  function fmtCountdown(ms) {
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
  function parseTs(text) {
    if (!text) return null;
    const at = Date.parse(String(text).replace(/(\.\d{3})\d+/, "$1"));
    return Number.isNaN(at) ? null : at;
  }

  function fmtAge(text) {
    const at = parseTs(text);
    if (at === null) return "–";
    const s = Math.max(0, Math.round((Date.now() - at) / 1000));
    if (s < 60) return s + "s ago";
    if (s < 3600) return Math.floor(s / 60) + "m ago";
    if (s < 86400) return Math.floor(s / 3600) + "h ago";
    return Math.floor(s / 86400) + "d ago";
  }

  function fmtWhen(text) {
    const at = parseTs(text);
    return at === null ? "" : new Date(at).toLocaleString();
  }

  function plural(n, one, many) {
    return n + " " + (n === 1 ? one : many || one + "s");
  }

  function baseName(path) {
    if (!path) return "";
    const parts = String(path).split(/[\\/]/).filter(Boolean);
    return parts.length ? parts[parts.length - 1] : String(path);
  }

  function stateLabel(state) {
    return state === null || state === undefined ? "(terminated)" : String(state);
  }

  const TEXT_CAP = 100000;
  /** A <pre> holding `text` as text; a very long text shows its start and a button for the rest. */
  function textBlock(text, props) {
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

  function toast(message, kind) {
    const box = document.getElementById("toasts");
    const item = h("div", { class: "toast " + (kind || "info"), role: "status", text: message });
    box.append(item);
    setTimeout(() => item.remove(), kind === "error" ? 8000 : 4000);
  }

  function statusPill(status, props) {
    return h("span", Object.assign({ class: "pill status-" + (status || "unknown"), text: status || "unknown" }, props || {}));
  }

  // ---------------------------------------------------------------- token and API

  function getToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY) || "";
    } catch (error) {
      return "";
    }
  }

  function setToken(token) {
    try {
      if (token) sessionStorage.setItem(TOKEN_KEY, token);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (error) {
      // Storage refused (a sandboxed page): the token lasts until reload.
    }
    memoryToken = token;
    document.getElementById("forget-token").hidden = !token;
  }
  let memoryToken = "";
  function token() {
    return getToken() || memoryToken;
  }

  /** `#token=T`, `#token=T&/runs/X` or `#/runs/X&token=T`: keep T, drop it from the URL. */
  function takeTokenFromHash() {
    const hash = location.hash;
    const match = /(^#|&)token=([^&]*)/.exec(hash);
    if (!match) return;
    let value = match[2];
    try {
      value = decodeURIComponent(value);
    } catch (error) {
      // Not percent-encoded after all: use it as it is.
    }
    value = value.trim();
    if (value) setToken(value);
    let rest = hash.slice(1).split("&").filter((part) => !part.startsWith("token=")).join("&");
    if (!rest.startsWith("/")) rest = "/" + rest;
    history.replaceState(null, "", location.pathname + location.search + "#" + rest);
  }

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function needToken(message) {
    const box = document.getElementById("token-box");
    const error = document.getElementById("token-error");
    error.hidden = !message;
    error.textContent = message || "";
    if (box.hidden) {
      box.hidden = false;
      const input = document.getElementById("token-input");
      input.value = "";
      input.focus();
    }
  }

  /** A button that downloads one of an ask's display files. */
  function displayFile(ask, item) {
    const name = item && typeof item === "object" ? String(item.name) : String(item);
    const source = item && typeof item === "object" ? String(item.source) : name;
    const button = h("button", { type: "button", class: "tag mono", testid: "ask-display-file", text: name,
      title: "download " + source, data: { name } });
    button.addEventListener("click", () => {
      const path = "/runs/" + encodeURIComponent(ask.run_id) + "/asks/" + encodeURIComponent(ask.ask_id) + "/files/" +
        encodeURIComponent(name);
      download(path, name).catch((error) => { button.title = String(error && error.message); button.classList.add("failed"); });
    });
    return button;
  }

  async function api(method, path, body, options) {
    const current = token();
    if (!current) {
      needToken("");
      throw new ApiError(401, "no token");
    }
    const headers = { Authorization: "Bearer " + current, Accept: "application/json" };
    let payload;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(API + path, {
        method,
        headers,
        body: payload,
        cache: "no-store",
        signal: options && options.signal,
      });
    } catch (error) {
      if (error && error.name === "AbortError") throw error;
      throw new ApiError(0, "the daemon cannot be reached (" + (error && error.message) + ")");
    }
    if (response.status === 401) {
      needToken("The daemon refused this token; it may have been rotated.");
      throw new ApiError(401, "token refused");
    }
    if (response.status === 204) return null;
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (error) {
      data = null;
    }
    if (!response.ok) {
      const message = (data && data.error) || text || response.statusText || "HTTP " + response.status;
      throw new ApiError(response.status, message);
    }
    return data;
  }

  /** Fetch a file with the token and hand it to the browser as a download. */
  async function download(path, name) {
    const current = token();
    if (!current) {
      needToken("");
      return;
    }
    const response = await fetch(API + path, { headers: { Authorization: "Bearer " + current }, cache: "no-store" });
    if (!response.ok) throw new ApiError(response.status, "cannot fetch " + name + " (HTTP " + response.status + ")");
    const url = URL.createObjectURL(await response.blob());
    const link = h("a", { href: url, download: name });
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  // ---------------------------------------------------------------- server-sent events over fetch

  const connStates = new Set();
  function setConn(stream, state) {
    if (state === "off") connStates.delete(stream);
    else connStates.add(stream);
    const conn = document.getElementById("conn");
    const states = Array.from(connStates, (item) => item.state);
    let shown = "idle";
    if (states.includes("reconnecting")) shown = "reconnecting";
    else if (states.includes("live")) shown = "live";
    else if (states.includes("connecting")) shown = "connecting";
    conn.dataset.state = shown;
    const words = { reconnecting: "reconnecting…", live: "live", connecting: "connecting…" };
    conn.textContent = words[shown] || "offline";
  }

  /**
   * One `text/event-stream` read with fetch (EventSource cannot send a header):
   * parses id/event/data lines, reconnects 1 s after a drop with Last-Event-ID,
   * and hands `resync` to its owner, who reloads and says where to go on from.
   */
  class EventStream {
    constructor(path, handlers) {
      this.path = path;
      this.handlers = handlers;
      this.lastId = null;
      this.stopped = true;
      this.controller = null;
      this.timer = null;
      this.state = "off";
    }

    start(after) {
      this.lastId = after === undefined || after === null ? null : String(after);
      this.stopped = false;
      this.connect();
    }

    stop() {
      this.stopped = true;
      clearTimeout(this.timer);
      if (this.controller) this.controller.abort();
      this.setState("off");
    }

    setState(state) {
      this.state = state;
      setConn(this, state);
    }

    async connect() {
      if (this.stopped) return;
      const controller = new AbortController();
      this.controller = controller;
      const current = token();
      if (!current) {
        this.setState("off");
        return;
      }
      if (this.state !== "reconnecting" && this.state !== "live") this.setState("connecting");
      const headers = { Authorization: "Bearer " + current, Accept: "text/event-stream" };
      if (this.lastId !== null) headers["Last-Event-ID"] = this.lastId;
      let resync = null;
      try {
        const response = await fetch(API + this.path, { headers, signal: controller.signal, cache: "no-store" });
        if (response.status === 401) {
          needToken("The daemon refused this token; it may have been rotated.");
          this.stopped = true;
          this.setState("off");
          return;
        }
        if (response.status === 404) {
          this.stopped = true;
          this.setState("off");
          return;
        }
        if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
        this.setState("live");
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        let data = [];
        let type = "";
        let id = null;
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          buffer += decoder.decode(chunk.value, { stream: true });
          let from = 0;
          for (;;) {
            const end = buffer.indexOf("\n", from);
            if (end < 0) break;
            let line = buffer.slice(from, end);
            from = end + 1;
            if (line.endsWith("\r")) line = line.slice(0, -1);
            if (line === "") {
              if (id !== null) this.lastId = id;
              if (data.length) {
                const text = data.join("\n");
                const kind = type || "message";
                if (kind === "resync") {
                  resync = text;
                  break;
                }
                this.handlers.onEvent(kind, text, id);
              }
              data = [];
              type = "";
              id = null;
              continue;
            }
            if (line.charCodeAt(0) === 58) continue; // ":" a comment (keep-alive)
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            let value = colon < 0 ? "" : line.slice(colon + 1);
            if (value.charCodeAt(0) === 32) value = value.slice(1);
            if (field === "data") data.push(value);
            else if (field === "event") type = value;
            else if (field === "id" && value.indexOf("\0") < 0) id = value;
          }
          buffer = buffer.slice(from);
          if (resync !== null) break;
        }
      } catch (error) {
        if (this.stopped) return;
      }
      if (this.stopped || controller !== this.controller) return;
      if (resync !== null) {
        controller.abort();
        let after = null;
        try {
          const parsed = JSON.parse(resync);
          after = parsed.trace_seq !== undefined ? parsed.trace_seq : parsed.id;
        } catch (error) {
          after = null;
        }
        this.setState("reconnecting");
        try {
          const next = await this.handlers.onResync(after);
          if (next !== undefined) after = next;
        } catch (error) {
          // The views show their own error; reconnect all the same.
        }
        if (this.stopped) return;
        this.lastId = after === undefined || after === null ? null : String(after);
        this.connect();
        return;
      }
      this.setState("reconnecting");
      this.timer = setTimeout(() => this.connect(), 1000);
    }
  }

  // ---------------------------------------------------------------- router

  function parseRoute() {
    const hash = location.hash.replace(/^#/, "");
    const parts = hash.split("?")[0].split("/").filter(Boolean).map((part) => {
      try {
        return decodeURIComponent(part);
      } catch (error) {
        return part;
      }
    });
    if (parts[0] === "runs" && parts[1]) {
      const route = { name: "run", run: parts[1], agent: null, step: null };
      if (parts[2] === "steps" && parts[3] && parts[4]) {
        route.agent = parts[3];
        route.step = Number(parts[4]);
      }
      return route;
    }
    return { name: "home" };
  }

  function runHash(run, agent, step) {
    let hash = "#/runs/" + encodeURIComponent(run);
    if (agent !== null && agent !== undefined) hash += "/steps/" + encodeURIComponent(agent) + "/" + step;
    return hash;
  }

  let current = null;
  let pendingCommand = null;

  function setCrumbs(items) {
    const crumbs = document.getElementById("crumbs");
    crumbs.replaceChildren();
    items.forEach((item, index) => {
      if (index) crumbs.append(h("span", { class: "sep", text: "/" }));
      crumbs.append(item.href ? h("a", { href: item.href, text: item.text }) : h("span", { text: item.text }));
    });
  }

  function route() {
    const next = parseRoute();
    if (current && current.route.name === "run" && next.name === "run" && current.route.run === next.run) {
      current.route = next;
      current.view.showStep(next.agent, next.step);
      return;
    }
    if (current) current.view.destroy();
    const root = document.getElementById("view");
    root.replaceChildren();
    const view = next.name === "run" ? new RunView(root, next) : new HomeView(root);
    current = { route: next, view };
  }

  function remount() {
    if (current) current.view.destroy();
    current = null;
    route();
  }

  // ---------------------------------------------------------------- home: runs and workflows

  class HomeView {
    constructor(root) {
      this.root = root;
      this.runs = new Map();
      this.workflows = [];
      this.asks = [];
      this.filter = "";
      this.limit = 200;
      this.destroyed = false;
      this.renderQueued = false;
      this.asksTimer = null;
      this.chosen = null;
      setCrumbs([{ text: "runs" }]);
      document.title = "baton runs";
      this.build();
      this.stream = new EventStream("/events", {
        onEvent: (type, data) => this.onEvent(type, data),
        // Reloaded: go on after the id the daemon named (from now when it named none).
        onResync: () => this.load(),
      });
      this.stream.start(null);
      this.load();
    }

    destroy() {
      this.destroyed = true;
      this.stream.stop();
      clearTimeout(this.asksTimer);
    }

    build() {
      const filter = h("select", { class: "filter", "aria-label": "status", testid: "status-filter" },
        h("option", { value: "", text: "all statuses" }),
        STATUSES.map((status) => h("option", { value: status, text: status })));
      filter.addEventListener("change", () => {
        this.filter = filter.value;
        this.renderRuns();
      });
      this.count = h("span", { class: "muted" });
      this.error = h("p", { class: "error", hidden: true });
      this.asksBox = h("div", { class: "waiting", testid: "waiting-asks", hidden: true });
      this.tbody = h("tbody");
      this.more = h("button", {
        type: "button",
        class: "link more",
        hidden: true,
        onclick: () => {
          this.limit += 500;
          this.renderRuns();
        },
      });
      const table = h("table", { class: "runs", testid: "run-list" },
        h("thead", null, h("tr", null,
          h("th", { text: "status" }), h("th", { text: "run" }), h("th", { text: "workflow" }),
          h("th", { class: "num", text: "steps" }), h("th", { class: "num", text: "cost" }),
          h("th", { class: "num", text: "duration" }), h("th", { class: "num", text: "agents" }),
          h("th", { text: "updated" }))),
        this.tbody);
      this.empty = h("p", { class: "note", hidden: true, text: "No runs yet. Start one from a workflow." });

      this.workflowList = h("ul", { class: "workflows", testid: "workflow-list" });
      this.formBox = h("div", { class: "start-box" });
      const rescan = h("button", {
        type: "button",
        class: "small",
        text: "rescan",
        title: "read the workflow roots again",
        onclick: async () => {
          try {
            const answer = await api("POST", "/workflows/rescan");
            this.workflows = (answer && answer.workflows) || [];
            this.renderWorkflows();
          } catch (error) {
            toast("rescan: " + error.message, "error");
          }
        },
      });
      this.root.append(h("div", { class: "home" },
        h("section", { class: "panel runs-panel" },
          h("div", { class: "section-head" }, h("h2", { text: "Runs" }), filter, this.count),
          this.error, this.asksBox, table, this.empty, this.more),
        h("aside", { class: "panel workflows-panel" },
          h("div", { class: "section-head" }, h("h2", { text: "Workflows" }), rescan),
          this.formBox, this.workflowList)));
    }

    async load() {
      try {
        const [runs, workflows, asks] = await Promise.all([
          api("GET", "/runs"),
          api("GET", "/workflows"),
          api("GET", "/asks").catch(() => ({ asks: [] })),
        ]);
        if (this.destroyed) return;
        this.error.hidden = true;
        const fresh = new Map();
        for (const run of (runs && runs.runs) || []) {
          const known = this.runs.get(run.run_id);
          fresh.set(run.run_id, known && newer(known, run) ? known : run);
        }
        this.runs = fresh;
        this.workflows = (workflows && workflows.workflows) || [];
        this.asks = (asks && asks.asks) || [];
        this.renderRuns();
        this.renderWorkflows();
        this.renderAsks();
      } catch (error) {
        if (this.destroyed || error.status === 401) return;
        this.error.hidden = false;
        this.error.textContent = "Cannot load runs: " + error.message;
      }
    }

    onEvent(type, data) {
      if (this.destroyed) return;
      if (type === "run") {
        let entry;
        try {
          entry = JSON.parse(data);
        } catch (error) {
          return;
        }
        const known = this.runs.get(entry.run_id);
        if (known && newer(known, entry)) return;
        this.runs.set(entry.run_id, entry);
        if (!known || known.asking !== entry.asking || known.status !== entry.status) this.loadAsksSoon();
        this.renderSoon();
      } else if (type === "deleted") {
        try {
          this.runs.delete(JSON.parse(data).run_id);
        } catch (error) {
          return;
        }
        this.renderSoon();
      } else if (type === "workflows") {
        api("GET", "/workflows").then((answer) => {
          if (this.destroyed) return;
          this.workflows = (answer && answer.workflows) || [];
          this.renderWorkflows();
        }, () => {});
      }
    }

    loadAsksSoon() {
      clearTimeout(this.asksTimer);
      this.asksTimer = setTimeout(() => {
        api("GET", "/asks").then((answer) => {
          if (this.destroyed) return;
          this.asks = (answer && answer.asks) || [];
          this.renderAsks();
        }, () => {});
      }, 300);
    }

    renderSoon() {
      if (this.renderQueued) return;
      this.renderQueued = true;
      requestAnimationFrame(() => {
        this.renderQueued = false;
        if (!this.destroyed) this.renderRuns();
      });
    }

    renderRuns() {
      const all = Array.from(this.runs.values());
      all.sort((a, b) => (parseTs(b.created_at) || 0) - (parseTs(a.created_at) || 0) ||
        String(b.run_id).localeCompare(String(a.run_id)));
      const shown = this.filter ? all.filter((run) => run.status === this.filter) : all;
      const rows = shown.slice(0, this.limit).map((run) => this.row(run));
      this.tbody.replaceChildren(...rows);
      this.count.textContent = this.filter ? shown.length + " of " + plural(all.length, "run") : plural(all.length, "run");
      this.empty.hidden = all.length > 0;
      this.more.hidden = shown.length <= this.limit;
      this.more.textContent = "show " + Math.min(500, shown.length - this.limit) + " more";
    }

    row(run) {
      const link = h("a", { href: runHash(run.run_id), text: run.run_id });
      // An unreadable run says why on hover.
      const status = h("td", run.status === "unreadable" ? { title: run.error || "" } : null, statusPill(run.status));
      if (run.live) status.append(h("span", { class: "live-dot", title: "a baton drives it now" }));
      const workflow = run.workflow_id || baseName(run.workflow);
      const row = h("tr", {
        testid: "run-row",
        data: { runId: run.run_id, status: run.status },
        class: "clickable",
      },
      status,
      h("td", { class: "mono" }, link, run.asking ? h("span", { class: "badge ask", text: "asks " + run.asking }) : null),
      h("td", { text: workflow || "–", title: run.workflow || "" }),
      h("td", { class: "num", text: run.steps === null || run.steps === undefined ? "–" : String(run.steps) }),
      h("td", { class: "num", text: fmtCost(run.cost_usd) }),
      h("td", { class: "num", text: fmtDuration(run.duration_ms) }),
      h("td", { class: "num", text: run.agents === undefined ? "–" : String(run.agents) }),
      h("td", { class: "muted", text: fmtAge(run.updated_at || run.created_at), title: fmtWhen(run.updated_at) }));
      row.addEventListener("click", (event) => {
        if (event.target.closest("a")) return;
        location.hash = runHash(run.run_id);
      });
      return row;
    }

    renderAsks() {
      this.asksBox.replaceChildren();
      this.asksBox.hidden = this.asks.length === 0;
      if (!this.asks.length) return;
      this.asksBox.append(h("h3", { text: plural(this.asks.length, "question") + " waiting for an answer" }));
      const list = h("ul");
      for (const ask of this.asks.slice(0, 20)) {
        list.append(h("li", null,
          h("a", { href: runHash(ask.run_id), class: "mono", text: ask.run_id }),
          h("span", { class: "muted", text: " · " + ask.agent_id + ": " }),
          h("span", { class: "ask-preview", text: String(ask.prompt || "").slice(0, 160) })));
      }
      this.asksBox.append(list);
    }

    renderWorkflows() {
      const items = this.workflows.map((workflow) => {
        const lint = workflow.lint || {};
        const start = h("button", { type: "button", class: "small", text: "start…" });
        const item = h("li", {
          testid: "workflow-row",
          data: { workflowId: workflow.id },
          class: this.chosen === workflow.id ? "chosen" : null,
        },
        h("div", { class: "wf-main" },
          h("span", { class: "wf-name", text: workflow.name || workflow.id }),
          workflow.name && workflow.name !== workflow.id ? h("span", { class: "mono muted", text: workflow.id }) : null),
        h("div", { class: "wf-meta" },
          h("span", { class: "tag", text: workflow.kind || "workflow" }),
          workflow.input ? h("span", { class: "tag", text: "input " + workflow.input.mode }) : null,
          lint.errors ? h("span", { class: "tag bad", text: plural(lint.errors, "lint error") }) : null,
          lint.warnings ? h("span", { class: "tag warn", text: plural(lint.warnings, "warning") }) : null,
          start),
        workflow.description ? h("div", { class: "wf-description", text: workflow.description }) : null,
        h("div", { class: "wf-path mono muted", text: workflow.path || "" }));
        item.addEventListener("click", () => this.choose(workflow));
        return item;
      });
      this.workflowList.replaceChildren(...items);
      if (!items.length) {
        this.workflowList.append(h("li", { class: "note", text: "No workflows under the roots baton serve was given." }));
      }
    }

    choose(workflow) {
      this.chosen = workflow.id;
      for (const item of this.workflowList.children) {
        item.classList.toggle("chosen", item.dataset.workflowId === workflow.id);
      }
      this.formBox.replaceChildren(startForm(workflow, () => {
        this.chosen = null;
        this.formBox.replaceChildren();
        this.renderWorkflows();
      }));
      const first = this.formBox.querySelector("textarea, input");
      if (first) first.focus();
    }
  }

  function newer(a, b) {
    return (parseTs(a.updated_at) || 0) > (parseTs(b.updated_at) || 0);
  }

  function field(label, input, hint) {
    return h("label", { class: "field" }, h("span", { class: "label", text: label }), input,
      hint ? h("span", { class: "hint", text: hint }) : null);
  }

  function startForm(workflow, onClose) {
    const mode = (workflow.input && workflow.input.mode) || "optional";
    const input = h("textarea", {
      testid: "start-input",
      name: "input",
      rows: 4,
      placeholder: (workflow.input && workflow.input.label) || "what the workflow starts with ({{input}})",
      required: mode === "required",
      disabled: mode === "none",
    });
    const budget = h("input", {
      name: "budget",
      type: "number",
      min: "0",
      step: "0.01",
      placeholder: workflow.default_budget ? String(workflow.default_budget) : "no limit",
      testid: "start-budget",
    });
    const maxSteps = h("input", { name: "max_steps", type: "number", min: "1", step: "1", placeholder: "no limit",
      testid: "start-max-steps" });
    const timeLimit = h("input", { name: "time_limit", type: "text", placeholder: "e.g. 2h", testid: "start-time-limit" });
    const runId = h("input", { name: "run_id", type: "text", placeholder: "generated", pattern: "[A-Za-z0-9_\\-]+",
      testid: "start-run-id" });
    const error = h("p", { class: "error", hidden: true });
    const submit = h("button", { type: "submit", class: "primary", testid: "start-submit", text: "Start run" });
    const form = h("form", { class: "start-form", testid: "start-form", data: { workflowId: workflow.id } },
      h("div", { class: "form-head" },
        h("h3", null, "Start ", h("span", { text: workflow.name || workflow.id })),
        h("button", { type: "button", class: "link", text: "close", onclick: onClose })),
      mode === "none"
        ? h("p", { class: "note", text: "This workflow takes no input." })
        : field("Input" + (mode === "required" ? " (required)" : " (optional)"), input,
          workflow.input && workflow.input.description ? workflow.input.description : null),
      h("div", { class: "row3" }, field("Budget, USD", budget), field("Max steps", maxSteps), field("Time limit", timeLimit)),
      field("Run id", runId),
      error,
      h("div", { class: "form-actions" }, submit));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = { workflow: workflow.id };
      if (mode !== "none" && (input.value !== "" || mode === "required")) body.input = input.value;
      if (budget.value !== "") body.budget = Number(budget.value);
      if (maxSteps.value !== "") body.max_steps = Number(maxSteps.value);
      if (timeLimit.value.trim()) body.time_limit = timeLimit.value.trim();
      if (runId.value.trim()) body.run_id = runId.value.trim();
      submit.disabled = true;
      error.hidden = true;
      try {
        const answer = await api("POST", "/runs", body);
        pendingCommand = { text: answer.command, what: "started with" };
        location.hash = runHash(answer.run_id);
      } catch (failure) {
        error.hidden = false;
        error.textContent = failure.message;
      } finally {
        submit.disabled = false;
      }
    });
    return form;
  }

  // ---------------------------------------------------------------- the timeline model

  const STEP_EVENTS = new Set(["StateStarted", "StateCompleted", "ErrorOccurred", "AgentPaused", "TransitionOccurred",
    "AgentSpawned", "AgentTerminated", "ClaudeInvocationStarted"]);
  const STATUS_EVENTS = new Set(["WorkflowStarted", "WorkflowCompleted", "WorkflowAsking", "WorkflowPaused",
    "WorkflowInterrupted", "WorkflowStopping", "RunFailed", "WorkflowWaiting", "WorkflowResuming", "AgentPaused",
    "AgentAsking", "JoinWaiting", "JoinCompleted"]);
  const ASK_EVENTS = new Set(["AgentAsking", "WorkflowAsking", "WorkflowStarted", "TransitionOccurred"]);
  const DETAIL_EVENTS = new Set(["ScriptOutput", "PromptRendered", "ClaudeStreamOutput"]);

  /**
   * The run's steps and lanes as `GET …/steps` gives them, kept up to date from
   * trace events the same way the daemon builds them (`src/serve/timeline.rs`).
   */
  class Model {
    constructor() {
      this.reset();
    }

    reset() {
      this.steps = [];
      this.byKey = new Map();
      this.lanes = new Map();
      this.latest = new Map();
      this.order = [];
      this.orderDirty = false;
      this.startedAt = null;
      this.seq = 0;
      this.visits = new Map();
      this.at = new Map();
      this.maxEnd = 0;
      // The trace lines of commits and costs applied from events, in order (the header's live figures).
      this.commits = [];
      this.costs = [];
    }

    /** Steps committed, and cost spent, by events after trace line `seq`. */
    since(seq) {
      const after = (list) => {
        let lo = 0;
        let hi = list.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (list[mid][0] <= seq) lo = mid + 1;
          else hi = mid;
        }
        return list.slice(lo);
      };
      return {
        steps: after(this.commits).length,
        cost: after(this.costs).reduce((sum, entry) => sum + entry[1], 0),
      };
    }

    key(agent, step) {
      return agent + "\u0000" + step;
    }

    load(view) {
      this.reset();
      this.merge(view);
    }

    /** Take in a `GET …/steps` answer (all of it, or what changed `after`). */
    merge(view) {
      if (!view) return;
      if (view.started_at && this.startedAt === null) this.startedAt = parseTs(view.started_at);
      for (const lane of view.agents || []) {
        const known = this.addLane(lane.id, lane.parent, lane.spawned_ms);
        if (lane.result !== undefined) known.result = lane.result;
        if (lane.parent && !known.parent) {
          known.parent = lane.parent;
          this.orderDirty = true;
        }
      }
      for (const step of view.steps || []) this.putStep(step);
      this.seq = Math.max(this.seq, view.trace_seq || 0);
    }

    addLane(id, parent, spawned) {
      let lane = this.lanes.get(id);
      if (!lane) {
        lane = { id, parent: parent || null, spawned_ms: spawned || 0, result: null, steps: [], seen: this.lanes.size };
        this.lanes.set(id, lane);
        this.orderDirty = true;
      }
      return lane;
    }

    putStep(step) {
      const key = this.key(step.agent, step.step);
      let index = this.byKey.get(key);
      if (index === undefined) {
        index = this.steps.length;
        this.steps.push(step);
        this.byKey.set(key, index);
        this.addLane(step.agent, null, step.start_ms).steps.push(index);
        this.visits.set(step.state, (this.visits.get(step.state) || 0) + 1);
        const latest = this.latest.get(step.agent);
        if (latest === undefined || this.steps[latest].step <= step.step) this.latest.set(step.agent, index);
      } else {
        Object.assign(this.steps[index], step);
      }
      this.noteEnd(this.steps[index]);
      return index;
    }

    noteEnd(step) {
      const end = step.start_ms + (step.duration_ms || 0);
      if (end > this.maxEnd) this.maxEnd = end;
    }

    ms(ts) {
      const at = parseTs(ts);
      if (at === null) return 0;
      if (this.startedAt === null) this.startedAt = at;
      return at - this.startedAt;
    }

    /** Apply one trace event; returns the index of the step it touched, or -1. */
    apply(type, event, seq) {
      if (seq && seq <= this.seq) return -1;
      if (seq) this.seq = seq;
      const at = this.ms(event.ts);
      const agent = event.agent_id || "";
      const latest = this.latest.has(agent) ? this.steps[this.latest.get(agent)] : null;
      switch (type) {
        case "StateStarted": {
          this.at.set(agent, event.state);
          const attempt = event.attempt || 1;
          if (latest && latest.step === event.step && attempt > 1) {
            latest.attempts = Math.max(latest.attempts || 1, attempt);
            latest.status = "running";
            return this.latest.get(agent);
          }
          this.addLane(agent, null, at);
          return this.putStep({
            agent, step: event.step || 0, state: event.state || "", kind: event.state_type || "",
            start_ms: at, duration_ms: null, cost_usd: 0, attempts: attempt, tag: null, target: null,
            commit: null, status: "running",
          });
        }
        case "ClaudeInvocationStarted":
          // A prompt step's backend and model (a trace older than backends: Claude).
          if (!latest || event.is_reminder) return -1;
          latest.backend = event.backend || "claude";
          latest.model = event.model || "";
          return this.latest.get(agent);
        case "StepRanOn":
          // The `baton worker` a distributed step ran on (--engine restate).
          if (!latest) return -1;
          latest.worker = event.worker;
          return this.latest.get(agent);
        case "StateCompleted":
          if (!latest) return -1;
          latest.cost_usd = (latest.cost_usd || 0) + (event.cost_usd || 0);
          if (event.cost_usd) this.costs.push([seq, event.cost_usd]);
          latest.duration_ms = at - latest.start_ms;
          this.noteEnd(latest);
          return this.latest.get(agent);
        case "ErrorOccurred":
          if (!latest) return -1;
          latest.status = "failed";
          latest.duration_ms = at - latest.start_ms;
          this.noteEnd(latest);
          return this.latest.get(agent);
        case "AgentPaused":
          if (!latest) return -1;
          if (latest.status === "running" || latest.status === "failed") latest.status = "paused";
          if (latest.duration_ms === null || latest.duration_ms === undefined) latest.duration_ms = at - latest.start_ms;
          this.noteEnd(latest);
          return this.latest.get(agent);
        case "TransitionOccurred":
          if (event.to_state) this.at.set(agent, event.to_state);
          else this.at.delete(agent);
          if (!latest) return -1;
          if (event.commit !== null && event.commit !== undefined) this.commits.push([seq, event.commit]);
          latest.tag = event.transition_type || null;
          latest.target = event.to_state === undefined ? null : event.to_state;
          latest.commit = event.commit === undefined ? null : event.commit;
          latest.status = "done";
          if (latest.duration_ms === null || latest.duration_ms === undefined) latest.duration_ms = at - latest.start_ms;
          this.noteEnd(latest);
          return this.latest.get(agent);
        case "AgentSpawned":
          if (event.new_agent_id) {
            this.addLane(event.new_agent_id, event.parent_agent_id, at);
            if (event.initial_state) this.at.set(event.new_agent_id, event.initial_state);
          }
          return -1;
        case "AgentTerminated":
          this.addLane(agent, null, at).result = event.result === undefined ? null : event.result;
          this.at.delete(agent);
          return -1;
        default:
          return -1;
      }
    }

    /** Lanes in display order: each agent under the agent that forked it. */
    laneOrder() {
      if (!this.orderDirty) return this.order;
      const children = new Map();
      const roots = [];
      for (const lane of this.lanes.values()) {
        if (lane.parent && this.lanes.has(lane.parent) && lane.parent !== lane.id) {
          if (!children.has(lane.parent)) children.set(lane.parent, []);
          children.get(lane.parent).push(lane);
        } else roots.push(lane);
      }
      const order = [];
      const seen = new Set();
      const stack = roots.slice().reverse();
      while (stack.length) {
        const lane = stack.pop();
        if (seen.has(lane.id)) continue;
        seen.add(lane.id);
        order.push(lane);
        const kids = children.get(lane.id);
        if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
      }
      for (const lane of this.lanes.values()) if (!seen.has(lane.id)) order.push(lane);
      order.forEach((lane, index) => {
        lane.row = index;
      });
      this.order = order;
      this.orderDirty = false;
      return order;
    }

    find(agent, step) {
      const index = this.byKey.get(this.key(agent, step));
      return index === undefined ? null : this.steps[index];
    }

    /** The step of the same agent `offset` steps away. */
    neighbour(agent, step, offset) {
      const lane = this.lanes.get(agent);
      if (!lane) return null;
      const position = lane.steps.findIndex((index) => this.steps[index].step === step);
      if (position < 0) return null;
      const index = lane.steps[position + offset];
      return index === undefined ? null : this.steps[index];
    }
  }

  // ---------------------------------------------------------------- the timeline canvas

  const LABEL_W = 150;
  const AXIS_H = 24;
  const LANE_H = 22;
  const BAR_H = 14;
  const MAX_VIEW_H = 380;
  const COLORS = {
    markdown: "#5b7fd6",
    script: "#2f9e8f",
    other: "#7d8590",
    running: "#d4a72c",
    failed: "#cf222e",
    paused: "#8c959f",
    retry: "#bc4c00",
    select: "#1f2328",
    grid: "#eaeef2",
    text: "#1f2328",
    muted: "#57606a",
    zebra: "#f6f8fa",
    now: "#0969da",
  };

  function barColor(step) {
    if (step.status === "failed") return COLORS.failed;
    if (step.status === "running") return COLORS.running;
    if (step.status === "paused") return COLORS.paused;
    return COLORS[step.kind] || COLORS.other;
  }

  const TICKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000,
    600000, 900000, 1800000, 3600000, 7200000, 10800000, 21600000, 43200000, 86400000];

  function fmtTick(ms, step) {
    if (step < 1000) {
      const digits = step < 10 ? 3 : step < 100 ? 2 : 1;
      return (ms / 1000).toFixed(digits) + "s";
    }
    const s = Math.round(ms / 1000);
    if (step < 60000 && s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
    return Math.floor(s / 3600) + ":" + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + ":" +
      String(s % 60).padStart(2, "0");
  }

  class TimelineView {
    constructor(card, model, handlers) {
      this.model = model;
      this.handlers = handlers;
      this.t0 = 0;
      this.t1 = 1000;
      this.follow = true;
      this.selected = null;
      this.hover = -1;
      this.queued = false;
      this.width = 0;
      this.height = 0;
      this.live = false;
      this.clock = () => 0;

      this.canvas = h("canvas", { testid: "timeline", tabindex: "0", class: "timeline-canvas",
        "aria-label": "timeline: one lane per agent, one bar per step; arrow keys move between steps" });
      this.spacer = h("div", { class: "timeline-spacer" });
      this.wrap = h("div", { class: "timeline-scroll" }, this.canvas, this.spacer);
      this.tip = h("div", { class: "timeline-tip", hidden: true, role: "tooltip" });
      this.summary = h("div", { class: "sr-only", testid: "timeline-summary", data: { steps: 0, agents: 0 } });
      const zoomIn = h("button", { type: "button", class: "small", text: "+", title: "zoom in",
        onclick: () => this.zoomBy(0.5, 0.5) });
      const zoomOut = h("button", { type: "button", class: "small", text: "−", title: "zoom out",
        onclick: () => this.zoomBy(2, 0.5) });
      this.fitButton = h("button", { type: "button", class: "small", text: "fit", title: "show the whole run",
        onclick: () => this.fit() });
      this.legend = h("div", { class: "legend" },
        [["markdown", "prompt"], ["script", "script"], ["running", "running"], ["failed", "failed"],
          ["paused", "paused"], ["retry", "retried"]].map(([key, label]) =>
          h("span", { class: "key" }, h("span", { class: "swatch sw-" + key }), label)),
        h("span", { class: "hint", text: "drag to pan · ctrl+wheel to zoom · double-click to fit · ←/→ between steps" }));
      this.info = h("span", { class: "muted" });
      card.append(
        h("div", { class: "card-head" }, h("h2", { text: "Timeline" }), this.info, h("span", { class: "spacer" }),
          zoomOut, zoomIn, this.fitButton),
        h("div", { class: "timeline-box" }, this.wrap, this.tip), this.legend, this.summary);

      this.wrap.addEventListener("scroll", () => this.draw());
      this.canvas.addEventListener("mousemove", (event) => this.onMove(event));
      this.canvas.addEventListener("mouseleave", () => this.setHover(-1, null));
      this.canvas.addEventListener("mousedown", (event) => this.onDown(event));
      this.canvas.addEventListener("click", (event) => this.onClick(event));
      this.canvas.addEventListener("dblclick", () => this.fit());
      this.canvas.addEventListener("wheel", (event) => this.onWheel(event), { passive: false });
      this.canvas.addEventListener("keydown", (event) => this.onKey(event));
      this.resizer = new ResizeObserver(() => this.draw());
      this.resizer.observe(this.wrap);
    }

    destroy() {
      this.resizer.disconnect();
    }

    fit() {
      this.follow = true;
      this.fitButton.classList.add("active");
      this.draw();
    }

    end(step) {
      if (step.duration_ms !== null && step.duration_ms !== undefined) return step.start_ms + step.duration_ms;
      if (step.status === "running" && this.live) return Math.max(step.start_ms, this.clock());
      return step.start_ms;
    }

    span() {
      let end = this.model.maxEnd;
      if (this.live) end = Math.max(end, this.clock());
      return Math.max(end, 1000);
    }

    plotWidth() {
      return Math.max(10, this.width - LABEL_W - 12);
    }

    xOf(ms) {
      return LABEL_W + (ms - this.t0) * this.plotWidth() / (this.t1 - this.t0);
    }

    tOf(x) {
      return this.t0 + (x - LABEL_W) * (this.t1 - this.t0) / this.plotWidth();
    }

    zoomBy(factor, at) {
      const width = this.t1 - this.t0;
      const next = Math.min(Math.max(width * factor, 5), this.span() * 4);
      const pivot = this.t0 + width * at;
      this.t0 = pivot - next * at;
      this.t1 = this.t0 + next;
      this.follow = false;
      this.fitButton.classList.remove("active");
      this.draw();
    }

    panBy(ms) {
      this.t0 += ms;
      this.t1 += ms;
      this.follow = false;
      this.fitButton.classList.remove("active");
      this.draw();
    }

    /** Draw at the next frame. */
    draw() {
      if (this.queued) return;
      this.queued = true;
      requestAnimationFrame(() => {
        this.queued = false;
        this.paint();
      });
    }

    paint() {
      const model = this.model;
      const lanes = model.laneOrder();
      const total = AXIS_H + lanes.length * LANE_H + 6;
      const viewH = Math.min(total, MAX_VIEW_H);
      if (this.wrap.clientHeight !== viewH) this.wrap.style.height = viewH + "px";
      this.spacer.style.height = Math.max(0, total - viewH) + "px";
      const width = this.wrap.clientWidth || 600;
      const ratio = window.devicePixelRatio || 1;
      if (this.width !== width || this.height !== viewH || this.ratio !== ratio) {
        this.width = width;
        this.height = viewH;
        this.ratio = ratio;
        this.canvas.width = Math.round(width * ratio);
        this.canvas.height = Math.round(viewH * ratio);
        this.canvas.style.width = width + "px";
        this.canvas.style.height = viewH + "px";
      }
      if (this.follow) {
        this.t0 = 0;
        this.t1 = this.span() * 1.02;
      }
      const ctx = this.canvas.getContext("2d");
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.clearRect(0, 0, width, viewH);
      ctx.font = "12px system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif";
      ctx.textBaseline = "middle";
      const scroll = this.wrap.scrollTop;
      const first = Math.max(0, Math.floor(scroll / LANE_H));
      const last = Math.min(lanes.length - 1, Math.ceil((scroll + viewH - AXIS_H) / LANE_H));
      const plotRight = LABEL_W + this.plotWidth();
      const scale = this.plotWidth() / (this.t1 - this.t0);

      // Ticks and grid.
      const minStep = (this.t1 - this.t0) * 80 / this.plotWidth();
      let tick = TICKS.find((candidate) => candidate >= minStep);
      if (!tick) tick = Math.ceil(minStep / 86400000) * 86400000;
      ctx.fillStyle = COLORS.grid;
      for (let t = Math.ceil(this.t0 / tick) * tick; t <= this.t1; t += tick) {
        const x = Math.round(this.xOf(t)) + 0.5;
        ctx.fillRect(x, AXIS_H, 1, viewH - AXIS_H);
      }

      for (let row = first; row <= last; row++) {
        const lane = lanes[row];
        const y = AXIS_H + row * LANE_H - scroll;
        if (row % 2 === 1) {
          ctx.fillStyle = COLORS.zebra;
          ctx.fillRect(0, y, width, LANE_H);
        }
        const mid = y + LANE_H / 2;
        // The lane's life: from its fork to its last step.
        const steps = lane.steps;
        const lastStep = steps.length ? model.steps[steps[steps.length - 1]] : null;
        const from = Math.max(this.xOf(lane.spawned_ms), LABEL_W);
        const to = Math.min(lastStep ? this.xOf(this.end(lastStep)) : from, plotRight);
        if (to > from) {
          ctx.fillStyle = "#d0d7de";
          ctx.fillRect(from, mid - 0.5, to - from, 1);
        }
        // A fork: a line from the parent's lane.
        if (lane.parent && model.lanes.has(lane.parent)) {
          const parentRow = model.lanes.get(lane.parent).row;
          const x = Math.round(this.xOf(lane.spawned_ms)) + 0.5;
          if (x >= LABEL_W && x <= plotRight) {
            const parentY = AXIS_H + parentRow * LANE_H - scroll + LANE_H / 2;
            ctx.strokeStyle = "#8c959f";
            ctx.setLineDash([3, 2]);
            ctx.beginPath();
            ctx.moveTo(x, parentY);
            ctx.lineTo(x, mid);
            ctx.stroke();
            ctx.setLineDash([]);
            ctx.fillStyle = "#8c959f";
            ctx.beginPath();
            ctx.arc(x, mid, 2.5, 0, Math.PI * 2);
            ctx.fill();
          }
        }
        this.paintBars(ctx, lane, y, scale, plotRight);
      }

      // Labels over the bars' left edge.
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(0, AXIS_H, LABEL_W - 4, viewH - AXIS_H);
      for (let row = first; row <= last; row++) {
        const lane = lanes[row];
        const y = AXIS_H + row * LANE_H - scroll;
        if (row % 2 === 1) {
          ctx.fillStyle = COLORS.zebra;
          ctx.fillRect(0, y, LABEL_W - 4, LANE_H);
        }
        let depth = 0;
        for (let up = lane; up.parent && model.lanes.has(up.parent) && depth < 6; up = model.lanes.get(up.parent)) depth++;
        const indent = 6 + depth * 8;
        const done = lane.result !== null && lane.result !== undefined;
        ctx.fillStyle = done ? COLORS.muted : COLORS.text;
        const label = clip(ctx, lane.id + "  " + lane.steps.length, LABEL_W - indent - 8);
        ctx.fillText(label, indent, y + LANE_H / 2);
      }
      ctx.fillStyle = "#d0d7de";
      ctx.fillRect(LABEL_W - 4, AXIS_H, 1, viewH - AXIS_H);

      // The axis, on top.
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(0, 0, width, AXIS_H);
      ctx.fillStyle = "#d0d7de";
      ctx.fillRect(0, AXIS_H - 1, width, 1);
      ctx.fillStyle = COLORS.muted;
      ctx.textAlign = "center";
      for (let t = Math.ceil(this.t0 / tick) * tick; t <= this.t1; t += tick) {
        const x = this.xOf(t);
        if (x < LABEL_W + 10 || x > width - 14) continue;
        ctx.fillText(fmtTick(t, tick), x, AXIS_H / 2);
      }
      ctx.textAlign = "left";
      ctx.fillText(plural(lanes.length, "agent"), 6, AXIS_H / 2);
      if (this.live) {
        const x = this.xOf(this.clock());
        if (x >= LABEL_W && x <= plotRight) {
          ctx.fillStyle = COLORS.now;
          ctx.fillRect(Math.round(x), AXIS_H - 4, 1, viewH - AXIS_H + 4);
        }
      }
      this.summary.dataset.steps = String(model.steps.length);
      this.summary.dataset.agents = String(lanes.length);
      this.summary.textContent = plural(model.steps.length, "step") + " of " + plural(lanes.length, "agent") + " drawn";
      this.info.textContent = plural(model.steps.length, "step") + " · " + plural(lanes.length, "agent");
    }

    paintBars(ctx, lane, y, scale, plotRight) {
      const model = this.model;
      const steps = lane.steps;
      if (!steps.length) return;
      // The first step that ends after t0: steps of one agent follow each other.
      let lo = 0;
      let hi = steps.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.end(model.steps[steps[mid]]) < this.t0) lo = mid + 1;
        else hi = mid;
      }
      const top = y + (LANE_H - BAR_H) / 2;
      let lastPixel = -1;
      let lastColor = "";
      for (let i = lo; i < steps.length; i++) {
        const index = steps[i];
        const step = model.steps[index];
        if (step.start_ms > this.t1) break;
        const x0 = Math.max(LABEL_W, LABEL_W + (step.start_ms - this.t0) * scale);
        const x1 = Math.min(plotRight, LABEL_W + (this.end(step) - this.t0) * scale);
        let w = x1 - x0;
        const color = barColor(step);
        if (w < 1) {
          // Many steps in one pixel: draw the pixel once.
          const pixel = Math.floor(x0);
          if (pixel === lastPixel && color === lastColor && index !== this.selected && index !== this.hover) continue;
          lastPixel = pixel;
          w = 1;
        }
        if (color !== lastColor) {
          ctx.fillStyle = color;
          lastColor = color;
        }
        ctx.fillRect(x0, top, w, BAR_H);
        if (step.attempts > 1) {
          ctx.fillStyle = COLORS.retry;
          lastColor = COLORS.retry;
          ctx.beginPath();
          ctx.moveTo(x0, top);
          ctx.lineTo(x0 + 6, top);
          ctx.lineTo(x0, top + 6);
          ctx.fill();
        }
        if (w > 44) {
          ctx.fillStyle = "#ffffff";
          lastColor = "#ffffff";
          ctx.fillText(clip(ctx, step.state, w - 8), x0 + 4, top + BAR_H / 2 + 0.5);
        }
        if (index === this.selected || index === this.hover) {
          ctx.strokeStyle = index === this.selected ? COLORS.select : "#57606a";
          ctx.lineWidth = index === this.selected ? 2 : 1;
          ctx.strokeRect(x0 - 1, top - 1, Math.max(w, 1) + 2, BAR_H + 2);
          ctx.lineWidth = 1;
        }
      }
    }

    /** The step drawn under (x, y) in canvas pixels, or -1. */
    hit(x, y) {
      if (x < LABEL_W || y < AXIS_H) return -1;
      const lanes = this.model.laneOrder();
      const row = Math.floor((y - AXIS_H + this.wrap.scrollTop) / LANE_H);
      const lane = lanes[row];
      if (!lane || !lane.steps.length) return -1;
      const t = this.tOf(x);
      const steps = lane.steps;
      const model = this.model;
      let lo = 0;
      let hi = steps.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (model.steps[steps[mid]].start_ms <= t) lo = mid;
        else hi = mid - 1;
      }
      const slack = 4 * (this.t1 - this.t0) / this.plotWidth();
      let best = -1;
      let bestDistance = Infinity;
      for (let i = Math.max(0, lo - 1); i <= Math.min(steps.length - 1, lo + 1); i++) {
        const step = model.steps[steps[i]];
        const start = step.start_ms;
        const end = this.end(step);
        const distance = t < start ? start - t : t > end ? t - end : 0;
        if (distance <= slack && distance < bestDistance) {
          best = steps[i];
          bestDistance = distance;
        }
      }
      return best;
    }

    /** Where step `index` is drawn, in client coordinates (for tests and for scrolling to it). */
    barCenter(index) {
      const step = this.model.steps[index];
      if (!step) return null;
      const lane = this.model.lanes.get(step.agent);
      this.model.laneOrder();
      const rect = this.canvas.getBoundingClientRect();
      const x0 = Math.max(LABEL_W, this.xOf(step.start_ms));
      const x1 = Math.max(x0 + 1, Math.min(LABEL_W + this.plotWidth(), this.xOf(this.end(step))));
      const y = AXIS_H + lane.row * LANE_H - this.wrap.scrollTop + LANE_H / 2;
      return { x: rect.left + (x0 + x1) / 2, y: rect.top + y };
    }

    local(event) {
      const rect = this.canvas.getBoundingClientRect();
      return { x: event.clientX - rect.left, y: event.clientY - rect.top };
    }

    onMove(event) {
      if (this.drag) return;
      const at = this.local(event);
      this.setHover(this.hit(at.x, at.y), at);
    }

    setHover(index, at) {
      this.canvas.classList.toggle("pointing", index >= 0);
      if (index !== this.hover) {
        this.hover = index;
        this.draw();
      }
      if (index < 0 || !at) {
        this.tip.hidden = true;
        return;
      }
      const step = this.model.steps[index];
      const lines = [
        step.agent + " · step " + step.step,
        step.state + (step.kind ? " (" + step.kind + ")" : ""),
        ...(step.backend ? [onBackend(step.backend, step.model)] : []),
        ...(step.worker ? ["on worker " + step.worker] : []),
        step.tag ? "<" + step.tag + "> → " + stateLabel(step.target) : step.status === "running" ? "running…" : "no transition",
        fmtDuration(this.end(step) - step.start_ms) + " · " + fmtCost(step.cost_usd) +
          (step.commit !== null && step.commit !== undefined ? " · commit " + step.commit : ""),
      ];
      if (step.attempts > 1) lines.push(plural(step.attempts, "attempt") + " (retried)");
      if (step.status === "failed" || step.status === "paused") lines.push(step.status);
      this.tip.replaceChildren(...lines.map((line, i) => h("div", { class: i === 0 ? "tip-head" : null, text: line })));
      this.tip.hidden = false;
      const left = Math.min(at.x + 14, this.width - 260);
      this.tip.style.left = Math.max(0, left) + "px";
      this.tip.style.top = at.y + 16 + "px";
    }

    onDown(event) {
      if (event.button !== 0) return;
      const start = { x: event.clientX, t0: this.t0, t1: this.t1, moved: false };
      this.drag = start;
      const move = (e) => {
        const dx = e.clientX - start.x;
        if (Math.abs(dx) > 3) start.moved = true;
        if (!start.moved) return;
        const ms = -dx * (start.t1 - start.t0) / this.plotWidth();
        this.t0 = start.t0 + ms;
        this.t1 = start.t1 + ms;
        this.follow = false;
        this.fitButton.classList.remove("active");
        this.tip.hidden = true;
        this.draw();
      };
      const up = () => {
        window.removeEventListener("mousemove", move);
        window.removeEventListener("mouseup", up);
        setTimeout(() => {
          this.drag = null;
        }, 0);
      };
      window.addEventListener("mousemove", move);
      window.addEventListener("mouseup", up);
    }

    onClick(event) {
      if (this.drag && this.drag.moved) return;
      const at = this.local(event);
      const index = this.hit(at.x, at.y);
      if (index >= 0) {
        const step = this.model.steps[index];
        this.handlers.open(step.agent, step.step);
      }
    }

    onWheel(event) {
      const at = this.local(event);
      if (at.x < LABEL_W) return;
      if (event.ctrlKey || event.metaKey || event.altKey) {
        event.preventDefault();
        const pivot = (at.x - LABEL_W) / this.plotWidth();
        this.zoomBy(Math.exp(event.deltaY * 0.002), Math.min(1, Math.max(0, pivot)));
      } else if (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
        event.preventDefault();
        const delta = event.deltaX || event.deltaY;
        this.panBy(delta * (this.t1 - this.t0) / this.plotWidth());
      }
    }

    onKey(event) {
      const selected = this.selected !== null && this.selected >= 0 ? this.model.steps[this.selected] : null;
      if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
        event.preventDefault();
        if (!selected) {
          const first = this.model.steps[0];
          if (first) this.handlers.open(first.agent, first.step);
          return;
        }
        const next = this.model.neighbour(selected.agent, selected.step, event.key === "ArrowRight" ? 1 : -1);
        if (next) this.handlers.open(next.agent, next.step);
      } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        if (!selected) return;
        event.preventDefault();
        const lanes = this.model.laneOrder();
        const row = this.model.lanes.get(selected.agent).row + (event.key === "ArrowDown" ? 1 : -1);
        const lane = lanes[row];
        if (!lane || !lane.steps.length) return;
        // The step of that lane nearest in time.
        let best = lane.steps[0];
        for (const index of lane.steps) {
          if (this.model.steps[index].start_ms <= selected.start_ms) best = index;
          else break;
        }
        const step = this.model.steps[best];
        this.handlers.open(step.agent, step.step);
      } else if (event.key === "+" || event.key === "=") this.zoomBy(0.5, 0.5);
      else if (event.key === "-") this.zoomBy(2, 0.5);
      else if (event.key === "0") this.fit();
    }

    /** Mark step `index` selected, scrolled into view. */
    select(index) {
      this.selected = index;
      if (index !== null && index >= 0) {
        const step = this.model.steps[index];
        const lane = this.model.lanes.get(step.agent);
        this.model.laneOrder();
        const top = lane.row * LANE_H;
        const visible = this.wrap.clientHeight - AXIS_H;
        if (top < this.wrap.scrollTop || top + LANE_H > this.wrap.scrollTop + visible) {
          this.wrap.scrollTop = Math.max(0, top - visible / 2);
        }
        if (!this.follow) {
          const end = this.end(step);
          if (end < this.t0 || step.start_ms > this.t1) {
            const width = this.t1 - this.t0;
            this.t0 = step.start_ms - width / 2;
            this.t1 = this.t0 + width;
          }
        }
      }
      this.draw();
    }
  }

  /** `text` cut with an ellipsis to fit `width` pixels. */
  function clip(ctx, text, width) {
    if (width <= 8) return "";
    if (ctx.measureText(text).width <= width) return text;
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + "…").width <= width) lo = mid;
      else hi = mid - 1;
    }
    return lo ? text.slice(0, lo) + "…" : "";
  }

  // ---------------------------------------------------------------- the workflow graph

  class GraphView {
    constructor(card, handlers) {
      this.handlers = handlers;
      this.nodes = new Map();
      this.box = h("div", { class: "graph-scroll", testid: "graph" }, h("p", { class: "note", text: "Loading the workflow graph…" }));
      this.info = h("span", { class: "muted" });
      card.append(h("div", { class: "card-head" }, h("h2", { text: "Graph" }), this.info), this.box);
    }

    fail(message) {
      this.box.replaceChildren(h("p", { class: "note", text: message }));
    }

    build(diagram, model) {
      if (!diagram || !Array.isArray(diagram.nodes)) {
        this.fail("No graph for this workflow.");
        return;
      }
      const width = Math.max(100, Math.ceil(diagram.width || 400));
      const height = Math.max(60, Math.ceil(diagram.height || 300));
      const root = svg("svg", {
        class: "diagram", width, height, viewBox: "0 0 " + width + " " + height, role: "img",
        "aria-label": "workflow graph",
      });
      root.append(svg("defs", null, svg("marker", {
        id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "8", markerHeight: "8",
        orient: "auto-start-reverse",
      }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow-head" }))));
      const edges = svg("g", { class: "edges" });
      const labels = svg("g", { class: "edge-labels" });
      for (const edge of diagram.edges || []) {
        if (!edge.path) continue;
        edges.append(svg("path", {
          class: "edge " + (edge.style || "solid"), d: edge.path, "marker-end": "url(#arrow)",
          data: { from: edge.from, to: edge.to },
        }));
        if (edge.label && edge.label_x !== undefined && edge.label_x !== null) {
          const w = String(edge.label).length * 6.4 + 10;
          labels.append(svg("g", { class: "edge-label" },
            svg("rect", { x: edge.label_x - w / 2, y: edge.label_y - 8, width: w, height: 16, rx: 3 }),
            svg("text", { x: edge.label_x, y: edge.label_y + 4, "text-anchor": "middle", text: edge.label })));
        }
      }
      const nodes = svg("g", { class: "nodes" });
      this.nodes.clear();
      for (const node of diagram.nodes) nodes.append(this.node(node));
      root.append(edges, labels, nodes);
      this.box.replaceChildren(root);
      this.update(model);
    }

    node(node) {
      const { x, y } = node;
      const w = node.width || 90;
      const hgt = node.height || 36;
      const left = x - w / 2;
      const top = y - hgt / 2;
      const kind = node.kind || "prompt";
      if (kind === "start") return svg("circle", { class: "terminal", cx: x, cy: y, r: w / 2 });
      if (kind === "end") {
        return svg("g", { class: "terminal-end" }, svg("circle", { class: "ring", cx: x, cy: y, r: w / 2 }),
          svg("circle", { class: "terminal", cx: x, cy: y, r: Math.max(1, w / 2 - 4) }));
      }
      const state = node.file || node.name;
      const group = svg("g", {
        class: "node " + kind, testid: "graph-node", data: { state, kind, visits: 0, agents: 0 },
        tabindex: "0", role: "button",
      });
      const title = svg("title", { text: state });
      group.append(title);
      if (kind === "script") {
        const inset = 12;
        group.append(svg("polygon", {
          class: "shape",
          points: [[left, y], [left + inset, top], [left + w - inset, top], [left + w, y], [left + w - inset, top + hgt],
            [left + inset, top + hgt]].map((p) => p[0].toFixed(1) + "," + p[1].toFixed(1)).join(" "),
        }));
      } else if (kind === "workflow") {
        group.append(svg("rect", { class: "shape", x: left, y: top, width: w, height: hgt }),
          svg("line", { class: "inner", x1: left + 7, y1: top, x2: left + 7, y2: top + hgt }),
          svg("line", { class: "inner", x1: left + w - 7, y1: top, x2: left + w - 7, y2: top + hgt }));
      } else {
        group.append(svg("rect", { class: "shape", x: left, y: top, width: w, height: hgt, rx: 4 }));
      }
      const label = node.name + (node.backend ? " (" + node.backend + ")" : "");
      group.append(svg("text", { class: "name", x, y: y + 4.5, "text-anchor": "middle", text: label }));
      const visits = svg("text", { class: "visits", x: left + w - 3, y: top - 4, "text-anchor": "end" });
      const agents = svg("text", { class: "agents", x: left + 2, y: top + hgt + 13 });
      group.append(visits, agents);
      group.addEventListener("click", () => this.handlers.pick(state));
      group.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          this.handlers.pick(state);
        }
      });
      this.nodes.set(state, { group, title, visits, agents, shownVisits: -1, shownAgents: "" });
      return group;
    }

    update(model) {
      if (!this.nodes.size) return;
      const here = new Map();
      for (const [agent, state] of model.at) {
        if (!here.has(state)) here.set(state, []);
        here.get(state).push(agent);
      }
      let agentsShown = 0;
      for (const [state, node] of this.nodes) {
        const count = model.visits.get(state) || 0;
        if (count !== node.shownVisits) {
          node.shownVisits = count;
          node.visits.textContent = count ? "×" + count : "";
          node.group.dataset.visits = String(count);
          node.group.classList.toggle("visited", count > 0);
        }
        const agents = here.get(state) || [];
        agentsShown += agents.length;
        const key = count + ":" + (agents.length > 20 ? String(agents.length) : agents.join(","));
        if (key !== node.shownAgents) {
          node.shownAgents = key;
          node.group.dataset.agents = String(agents.length);
          node.group.classList.toggle("current", agents.length > 0);
          node.agents.textContent = agents.length === 0 ? "" : agents.length === 1 ? "● " + agents[0] :
            agents.length <= 3 ? "● " + agents.join(", ") : "● " + agents.length + " agents";
          node.title.textContent = state + (count ? " — started " + count + "×" : "") +
            (agents.length ? "\nhere now: " + agents.slice(0, 20).join(", ") + (agents.length > 20 ? ", …" : "") : "");
        }
      }
      this.info.textContent = agentsShown ? plural(agentsShown, "agent") + " in the graph" : "";
    }
  }

  // ---------------------------------------------------------------- the step inspector

  class Inspector {
    constructor(panel, view) {
      this.panel = panel;
      this.view = view;
      this.key = null;
      this.request = 0;
      this.refreshTimer = null;
      this.clear();
    }

    clear() {
      this.key = null;
      this.panel.dataset.agent = "";
      this.panel.dataset.step = "";
      this.panel.replaceChildren(h("div", { class: "card-head" }, h("h2", { text: "Step" })),
        h("p", { class: "note", text: "Click a bar in the timeline to see its step: prompt, Claude's transcript, " +
          "script output, and the transition it took. Arrow keys move between steps once the timeline has focus." }));
    }

    async open(agent, step) {
      const key = agent + "\u0000" + step;
      const request = ++this.request;
      const fresh = key !== this.key;
      this.key = key;
      this.panel.dataset.agent = agent;
      this.panel.dataset.step = String(step);
      if (fresh) {
        this.panel.dataset.loaded = "";
        this.panel.replaceChildren(this.head(agent, step), h("p", { class: "note", text: "Loading…" }));
      }
      try {
        const detail = await api("GET", "/runs/" + encodeURIComponent(this.view.id) + "/steps/" +
          encodeURIComponent(agent) + "/" + step);
        if (request !== this.request || this.view.destroyed) return;
        this.render(detail);
      } catch (error) {
        if (request !== this.request || this.view.destroyed) return;
        this.panel.replaceChildren(this.head(agent, step), h("p", { class: "error", text: "Cannot load this step: " + error.message }));
      }
    }

    refreshSoon() {
      if (!this.key) return;
      clearTimeout(this.refreshTimer);
      this.refreshTimer = setTimeout(() => {
        const [agent, step] = this.key.split("\u0000");
        this.open(agent, Number(step));
      }, 400);
    }

    destroy() {
      clearTimeout(this.refreshTimer);
    }

    head(agent, step) {
      const model = this.view.model;
      const prev = model.neighbour(agent, step, -1);
      const next = model.neighbour(agent, step, 1);
      const go = (target) => () => this.view.openStep(target.agent, target.step);
      return h("div", { class: "card-head" },
        h("h2", null, h("span", { class: "mono", text: agent }), " · step " + step),
        h("span", { class: "spacer" }),
        h("button", { type: "button", class: "small", text: "◀", title: "previous step of " + agent, disabled: !prev,
          onclick: prev ? go(prev) : null }),
        h("button", { type: "button", class: "small", text: "▶", title: "next step of " + agent, disabled: !next,
          onclick: next ? go(next) : null }),
        h("button", { type: "button", class: "small", text: "✕", title: "close", onclick: () => this.view.openStep(null, null) }));
    }

    render(detail) {
      const model = this.view.model;
      const known = model.find(detail.agent, detail.step) || {};
      const status = known.status || (detail.transition ? "done" : "running");
      const parts = [this.head(detail.agent, detail.step)];
      const attempts = detail.attempts || known.attempts || 1;
      parts.push(h("div", { class: "meta-line" },
        h("span", { class: "mono strong", text: detail.state || known.state || "" }),
        h("span", { class: "tag", text: detail.kind === "markdown" ? "prompt" : detail.kind || known.kind || "step" }),
        detail.backend || known.backend
          ? h("span", { class: "tag", testid: "step-backend",
              text: onBackend(detail.backend || known.backend, detail.backend ? detail.model : known.model) })
          : null,
        detail.worker || known.worker
          ? h("span", { class: "tag", testid: "step-worker", text: "on worker " + (detail.worker || known.worker) })
          : null,
        statusPill(status === "done" ? "completed" : status, { text: status }),
        h("span", { text: fmtDuration(detail.duration_ms !== null && detail.duration_ms !== undefined ? detail.duration_ms : known.duration_ms) }),
        h("span", { text: fmtCost(detail.cost_usd !== undefined ? detail.cost_usd : known.cost_usd) }),
        attempts > 1 ? h("span", { class: "tag warn", text: plural(attempts, "attempt") + " (retried)" }) : null));

      const errors = [].concat(detail.errors || [], detail.error ? [detail.error] : []);
      for (const message of errors) parts.push(h("pre", { class: "error-block", text: message }));

      const transition = h("div", { class: "transition", testid: "step-transition" });
      if (detail.transition) {
        const t = detail.transition;
        transition.append(h("span", { class: "tagname", text: "<" + (t.tag || "?") + ">" }), " → ",
          h("span", { class: "mono strong", text: stateLabel(t.target) }));
        if (t.commit !== null && t.commit !== undefined) transition.append(h("span", { class: "muted", text: " · commit " + t.commit }));
        const attributes = t.attributes && typeof t.attributes === "object" ? Object.entries(t.attributes) : [];
        if (attributes.length) {
          const list = h("dl", { class: "attributes" });
          for (const [name, value] of attributes) {
            list.append(h("dt", { text: name }),
              h("dd", null, textBlock(typeof value === "string" ? value : JSON.stringify(value, null, 2), { class: "text" })));
          }
          transition.append(list);
        }
      } else {
        transition.append(h("span", { class: "muted", text: status === "running" ? "no transition yet: the step is running" : "no transition" }));
      }
      parts.push(section("Transition", transition, true));

      if (detail.prompts && detail.prompts.length) {
        const box = h("div", { testid: "step-prompt", class: "prompts" });
        for (const prompt of detail.prompts) {
          if (prompt.reminder) box.append(h("div", { class: "sub", text: "reminder " + prompt.reminder }));
          box.append(textBlock(prompt.text, { class: "text prompt" }));
        }
        parts.push(section(detail.prompts.length > 1 ? "Prompts (" + detail.prompts.length + " turns)" : "Prompt", box, true));
      }

      if (detail.transcript && detail.transcript.length) {
        parts.push(section("Claude transcript", transcript(detail.transcript), true));
      }

      if (detail.script) {
        const script = detail.script;
        const exit = script.exit_code;
        parts.push(section("Script", h("div", { class: "script" },
          h("div", { class: "exit " + (exit === 0 ? "ok" : "bad"), testid: "step-exit", data: { exitCode: exit } },
            exit === null || exit === undefined ? "no exit code (killed?)" : "exit " + exit,
            script.execution_time_ms !== undefined ? " · " + fmtDuration(script.execution_time_ms) : ""),
          h("div", { class: "sub", text: "stdout" }),
          textBlock(script.stdout, { class: "text", testid: "step-stdout" }),
          h("div", { class: "sub", text: "stderr" }),
          textBlock(script.stderr, { class: "text stderr", testid: "step-stderr" })), true));
      }

      if (detail.output !== undefined && detail.output !== null) {
        parts.push(section(detail.script ? "Output the tag was read from (stdout)" : "Output the tag was read from",
          textBlock(detail.output, { class: "text", testid: "step-output" }), !detail.script));
      }

      const actions = h("div", { class: "inspector-actions" });
      const commit = detail.transition && detail.transition.commit;
      if (commit !== null && commit !== undefined) {
        actions.append(h("button", { type: "button", class: "small", text: "rerun after this step",
          title: "a new run from the state right after commit " + commit, onclick: () => this.view.openRerun(commit) }));
      }
      if (status === "running" && this.view.live) {
        actions.append(h("button", { type: "button", class: "small", text: "stop " + detail.agent + " after this step",
          onclick: () => this.view.cancel(detail.agent) }));
      }
      if (actions.childNodes.length) parts.push(actions);
      this.panel.replaceChildren(...parts);
      this.panel.dataset.loaded = "true";
    }
  }

  /** "on codex (model gpt-5)", as the console words it. */
  function onBackend(backend, model) {
    return "on " + backend + (model ? " (model " + model + ")" : " (its default model)");
  }

  function section(title, body, open) {
    return h("details", { class: "section", open: open ? true : null }, h("summary", { text: title }), body);
  }

  function preview(input) {
    if (input === null || input === undefined) return "";
    if (typeof input !== "object") return String(input);
    for (const name of ["command", "file_path", "path", "pattern", "url", "query", "description", "prompt"]) {
      if (typeof input[name] === "string") return input[name];
    }
    const text = JSON.stringify(input);
    return text.length > 2 ? text : "";
  }

  function transcript(entries) {
    const box = h("div", { class: "transcript" });
    const calls = new Map();
    for (const entry of entries) {
      if (entry.role === "tool_use") {
        const body = h("div", { class: "tool-body" },
          textBlock(typeof entry.input === "string" ? entry.input : JSON.stringify(entry.input, null, 2), { class: "text" }));
        const oneLine = preview(entry.input).replace(/\s+/g, " ");
        const item = h("details", { class: "tool" },
          h("summary", null, h("span", { class: "tool-name", text: entry.name || "tool" }),
            h("span", { class: "tool-preview", text: oneLine.length > 120 ? oneLine.slice(0, 120) + "…" : oneLine })),
          body);
        if (entry.id) calls.set(entry.id, { item, body });
        box.append(item);
      } else if (entry.role === "tool_result") {
        const result = h("div", { class: "tool-result" + (entry.is_error ? " bad" : "") },
          h("div", { class: "sub", text: entry.is_error ? "result (error)" : "result" }),
          textBlock(entry.text, { class: "text" }));
        const call = entry.id ? calls.get(entry.id) : null;
        if (call) {
          call.body.append(result);
          if (entry.is_error) call.item.classList.add("bad");
        } else box.append(result);
      } else if (entry.role === "thinking") {
        box.append(h("details", { class: "thinking" }, h("summary", { text: "thinking" }), textBlock(entry.text, { class: "text" })));
      } else if (entry.role === "result") {
        const facts = [];
        if (entry.num_turns !== undefined && entry.num_turns !== null) facts.push(plural(entry.num_turns, "turn"));
        if (entry.cost_usd !== undefined && entry.cost_usd !== null) facts.push(fmtCost(entry.cost_usd));
        box.append(h("div", { class: "result" + (entry.is_error ? " bad" : "") },
          h("div", { class: "sub", text: "final result" + (entry.is_error ? " (error)" : "") + (facts.length ? " · " + facts.join(" · ") : "") }),
          textBlock(entry.text, { class: "text" })));
      } else {
        box.append(h("div", { class: "msg " + (entry.role || "assistant") }, textBlock(entry.text, { class: "text" })));
      }
    }
    return box;
  }

  // ---------------------------------------------------------------- questions (asks)

  class AsksView {
    constructor(box, view) {
      this.box = box;
      this.view = view;
      this.forms = new Map();
      this.timer = setInterval(() => this.tick(), 1000);
    }

    destroy() {
      clearInterval(this.timer);
    }

    show(asks) {
      const seen = new Set();
      for (const ask of asks) {
        seen.add(ask.ask_id);
        if (!this.forms.has(ask.ask_id)) {
          const entry = this.form(ask);
          this.forms.set(ask.ask_id, entry);
          this.box.append(entry.form);
        }
      }
      for (const [id, entry] of this.forms) {
        if (!seen.has(id) && !entry.sending) {
          entry.form.remove();
          this.forms.delete(id);
        }
      }
      this.box.hidden = this.forms.size === 0;
      this.tick();
    }

    tick() {
      const now = Date.now();
      for (const entry of this.forms.values()) {
        if (entry.deadline === null) continue;
        const left = entry.deadline - now;
        entry.countdown.dataset.remainingMs = String(Math.max(0, left));
        entry.countdown.textContent = left > 0
          ? "times out in " + fmtCountdown(left) + (entry.ask.timeout_next ? " → " + entry.ask.timeout_next : ", then the agent pauses")
          : "timed out" + (entry.ask.timeout_next ? ": goes to " + entry.ask.timeout_next : ": the agent pauses");
        entry.countdown.classList.toggle("urgent", left < 60000);
      }
    }

    form(ask) {
      const text = h("textarea", { testid: "ask-text", name: "text", rows: 3, placeholder: "your answer" });
      const files = [];
      const fileFields = [];
      const slots = Array.isArray(ask.slots) ? ask.slots : [];
      for (const slot of slots) {
        const name = typeof slot === "string" ? slot.split(":")[0].trim() : slot.name;
        const mime = typeof slot === "string" ? (slot.split(":")[1] || "").split("|").filter(Boolean) : [].concat(slot.mime || slot.mimes || []);
        const input = h("input", { type: "file", name, accept: mime.join(",") || null, testid: "ask-file", data: { slot: name } });
        files.push(input);
        fileFields.push(field(name, input, mime.length ? mime.join(", ") : null));
      }
      if (ask.mode === "bucket" || (ask.bucket && !slots.length)) {
        const bucket = ask.bucket || {};
        const mime = [].concat(bucket.mime || []);
        const input = h("input", { type: "file", name: "files", multiple: true, accept: mime.join(",") || null,
          testid: "ask-file", data: { bucket: "true" } });
        files.push(input);
        const caps = [];
        if (bucket.max_count) caps.push("up to " + plural(bucket.max_count, "file"));
        if (bucket.max_size) caps.push(fmtBytes(bucket.max_size) + " each");
        if (bucket.max_total_size) caps.push(fmtBytes(bucket.max_total_size) + " in all");
        if (mime.length) caps.push(mime.join(", "));
        fileFields.push(field("Files", input, caps.join(" · ")));
      }
      const display = Array.isArray(ask.display_files) ? ask.display_files : [];
      const countdown = h("span", { class: "countdown", testid: "ask-countdown" });
      const deadline = parseTs(ask.deadline);
      if (deadline === null) countdown.textContent = ask.timeout ? "times out after " + ask.timeout : "no time limit";
      const error = h("p", { class: "error", hidden: true });
      const submit = h("button", { type: "submit", class: "primary", testid: "ask-submit", text: "Answer" });
      const form = h("form", { class: "ask-form", testid: "ask-form", data: { askId: ask.ask_id, agent: ask.agent_id } },
        h("div", { class: "ask-head" },
          h("span", { class: "pill status-asking", text: "question" }),
          h("span", { class: "mono strong", text: ask.agent_id }),
          h("span", { class: "muted", text: "→ " + (ask.next_state || "") }),
          h("span", { class: "spacer" }),
          countdown),
        textBlock(ask.prompt, { class: "ask-prompt" }),
        display.length ? h("div", { class: "display-files" }, h("span", { class: "sub", text: "files to look at: " }),
          display.map((item) => displayFile(ask, item))) : null,
        h("label", { class: "field" }, h("span", { class: "label", text: "Answer" }), text),
        fileFields,
        error,
        h("div", { class: "form-actions" }, submit, h("span", { class: "muted", text: "asked " + fmtAge(ask.asked_at) })));
      const entry = { ask, form, countdown, deadline, sending: false };
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const chosen = files.filter((input) => input.files && input.files.length);
        let body;
        if (chosen.length) {
          body = new FormData();
          body.append("text", text.value);
          for (const input of chosen) for (const file of input.files) body.append(input.name, file, file.name);
        } else body = { text: text.value };
        submit.disabled = true;
        entry.sending = true;
        error.hidden = true;
        try {
          const answer = await api("POST", "/runs/" + encodeURIComponent(this.view.id) + "/asks/" + encodeURIComponent(ask.ask_id), body);
          this.view.showCommand(answer && answer.command, "answered with");
          form.classList.add("answered");
          form.dataset.answered = "true";
          submit.textContent = "Answered";
          setTimeout(() => {
            entry.sending = false;
            this.view.loadAsks();
          }, 1500);
        } catch (failure) {
          entry.sending = false;
          submit.disabled = false;
          error.hidden = false;
          error.textContent = failure.status === 404 ? "This question no longer waits (answered or timed out)." : failure.message;
          if (failure.status === 404) this.view.loadAsks();
        }
      });
      return entry;
    }
  }

  function fmtBytes(bytes) {
    if (bytes >= 1048576) return (bytes / 1048576).toFixed(bytes % 1048576 ? 1 : 0) + " MiB";
    if (bytes >= 1024) return (bytes / 1024).toFixed(bytes % 1024 ? 1 : 0) + " KiB";
    return bytes + " bytes";
  }

  // ---------------------------------------------------------------- one run

  class RunView {
    constructor(root, route) {
      this.id = route.run;
      this.root = root;
      this.model = new Model();
      this.detail = null;
      this.live = false;
      this.status = "";
      this.destroyed = false;
      this.queue = [];
      this.flushQueued = false;
      this.detailTimer = null;
      this.detailAt = 0;
      this.asksTimer = null;
      this.tickTimer = null;
      this.openKey = null;
      this.wanted = { agent: route.agent, step: route.step };
      setCrumbs([{ text: "runs", href: "#/" }, { text: this.id }]);
      document.title = this.id + " · baton";
      this.build();
      if (pendingCommand) {
        this.showCommand(pendingCommand.text, pendingCommand.what);
        pendingCommand = null;
      }
      this.stream = new EventStream("/runs/" + encodeURIComponent(this.id) + "/events", {
        onEvent: (type, data, id) => this.onEvent(type, data, id),
        onResync: (seq) => this.resync(seq),
      });
      this.load();
    }

    destroy() {
      this.destroyed = true;
      this.stream.stop();
      this.timeline.destroy();
      this.asks.destroy();
      this.inspector.destroy();
      clearTimeout(this.detailTimer);
      clearTimeout(this.asksTimer);
      clearInterval(this.tickTimer);
    }

    build() {
      this.statusPill = statusPill("loading", { testid: "run-status", data: { status: "" } });
      this.liveNote = h("span", { class: "live-note muted" });
      this.metrics = h("dl", { class: "metrics" });
      this.errorBox = h("pre", { class: "error-block", hidden: true, testid: "run-error" });
      this.agentsBox = h("div", { class: "agents-box" });
      this.cancelButton = h("button", { type: "button", testid: "cancel-run", text: "Cancel", disabled: true,
        title: "SIGINT to the baton driving it: running steps finish, the run is saved as interrupted",
        onclick: () => this.cancel(null) });
      this.resumeButton = h("button", { type: "button", testid: "resume-run", text: "Resume", disabled: true,
        onclick: () => this.resume() });
      this.rerunButton = h("button", { type: "button", testid: "rerun-run", text: "Rerun…",
        title: "a new run from a past step", onclick: () => this.openRerun(null) });
      this.resumeBudget = h("input", { type: "number", min: "0", step: "0.01", placeholder: "budget $", "aria-label": "budget for the resume" });
      this.resumeSteps = h("input", { type: "number", min: "1", step: "1", placeholder: "max steps", "aria-label": "max steps for the resume" });
      this.resumeTime = h("input", { type: "text", placeholder: "time limit", "aria-label": "time limit for the resume" });
      const resumeOptions = h("details", { class: "resume-options" }, h("summary", { text: "resume options" }),
        h("div", { class: "inline-fields" }, this.resumeBudget, this.resumeSteps, this.resumeTime));
      this.rerunBox = h("div", { class: "rerun-box", hidden: true });
      this.cli = h("div", { class: "cli", testid: "cli-command", hidden: true });
      this.errorLine = h("p", { class: "error", hidden: true });
      this.asksBox = h("section", { class: "asks", testid: "asks", hidden: true });

      const head = h("section", { class: "run-head panel" },
        h("div", { class: "title-line" },
          h("h1", { class: "mono", text: this.id }), this.statusPill, this.liveNote,
          h("span", { class: "spacer" }),
          h("div", { class: "actions" }, this.cancelButton, this.resumeButton, resumeOptions, this.rerunButton)),
        this.metrics, this.errorBox, this.agentsBox, this.rerunBox, this.cli, this.errorLine);

      const timelineCard = h("section", { class: "card timeline-card" });
      const graphCard = h("section", { class: "card graph-card" });
      this.inspectorPanel = h("aside", { class: "card inspector", testid: "step-inspector" });
      this.root.append(h("div", { class: "run" }, head, this.asksBox,
        h("div", { class: "run-body" }, h("div", { class: "run-left" }, timelineCard, graphCard), this.inspectorPanel)));

      this.timeline = new TimelineView(timelineCard, this.model, { open: (agent, step) => this.openStep(agent, step) });
      this.timeline.clock = () => (this.model.startedAt === null ? 0 : Date.now() - this.model.startedAt);
      this.graph = new GraphView(graphCard, { pick: (state) => this.pickState(state) });
      this.inspector = new Inspector(this.inspectorPanel, this);
      this.asks = new AsksView(this.asksBox, this);
    }

    path(suffix) {
      return "/runs/" + encodeURIComponent(this.id) + (suffix || "");
    }

    async load() {
      try {
        const detailPromise = api("GET", this.path());
        const stepsPromise = api("GET", this.path("/steps"));
        const asksPromise = api("GET", this.path("/asks")).catch(() => ({ asks: [] }));
        const diagramPromise = this.loadDiagram(detailPromise);
        const [detail, steps] = await Promise.all([detailPromise, stepsPromise]);
        if (this.destroyed) return;
        this.model.load(steps);
        this.applyDetail(detail, true);
        const [diagram, asks] = await Promise.all([diagramPromise, asksPromise]);
        if (this.destroyed) return;
        if (diagram && diagram.error) this.graph.fail(diagram.error);
        else this.graph.build(diagram, this.model);
        this.asks.show((asks && asks.asks) || []);
        this.timeline.paint();
        const ms = performance.now();
        try {
          performance.mark("baton:run-rendered");
        } catch (error) {
          // Marks are a convenience.
        }
        window.baton.rendered = { run: this.id, ms, steps: this.model.steps.length };
        this.root.dataset.rendered = "true";
        const after = Math.min(detail.trace_seq || 0, steps.trace_seq || 0);
        this.model.seq = steps.trace_seq || 0;
        this.stream.start(after);
        if (this.wanted.agent !== null) this.showStep(this.wanted.agent, this.wanted.step);
        this.tickTimer = setInterval(() => {
          if (!this.live) return;
          this.timeline.draw();
          this.liveFigures();
        }, 500);
      } catch (error) {
        if (this.destroyed || error.status === 401) return;
        if (error.status === 404) {
          this.root.replaceChildren(h("section", { class: "panel" }, h("h1", { text: "No run " + this.id }),
            h("p", null, h("a", { href: "#/", text: "back to the runs" }))));
          return;
        }
        this.errorLine.hidden = false;
        this.errorLine.textContent = "Cannot load this run: " + error.message;
      }
    }

    /**
     * The workflow's graph: the registry's drawing when the run's workflow is one
     * of the daemon's (cheap), else the run's own (`…/diagram`, which also works
     * for a run the CLI started elsewhere). Visit counts come from the timeline.
     */
    async loadDiagram(detailPromise) {
      let id = null;
      try {
        const detail = await detailPromise;
        id = (detail.summary && detail.summary.workflow_id) || detail.workflow_id || null;
      } catch (error) {
        return { error: "Cannot load the graph: " + error.message };
      }
      if (id) {
        try {
          const answer = await api("GET", "/workflows/" + encodeURIComponent(id));
          if (answer && answer.diagram) return answer.diagram;
        } catch (error) {
          // Rescanned away since: the run's own drawing below.
        }
      }
      try {
        const answer = await api("GET", this.path("/diagram"));
        return answer.diagram;
      } catch (error) {
        if (error.status === 404) return { error: "This run's workflow is not under the daemon's roots: no graph." };
        return { error: "Cannot load the graph: " + error.message };
      }
    }

    async resync(seq) {
      const [detail, steps] = await Promise.all([api("GET", this.path()), api("GET", this.path("/steps"))]);
      if (this.destroyed) return seq;
      this.queue = [];
      const at = new Map(this.model.at);
      this.model.load(steps);
      this.model.at = at;
      this.applyDetail(detail, true);
      this.graph.update(this.model);
      this.timeline.draw();
      this.loadAsks();
      if (this.openKey) this.inspector.refreshSoon();
      return Math.max(steps.trace_seq || 0, seq || 0);
    }

    onEvent(type, data, id) {
      if (this.destroyed) return;
      if (!STEP_EVENTS.has(type) && !STATUS_EVENTS.has(type) && !DETAIL_EVENTS.has(type) && !ASK_EVENTS.has(type)) return;
      this.queue.push([type, data, Number(id) || 0]);
      if (this.flushQueued) return;
      this.flushQueued = true;
      const flush = () => {
        if (!this.flushQueued) return;
        this.flushQueued = false;
        this.flush();
      };
      requestAnimationFrame(flush);
      // A hidden tab has no animation frames; events still apply.
      setTimeout(flush, 250);
    }

    flush() {
      if (this.destroyed) return;
      const queue = this.queue;
      this.queue = [];
      let statusChanged = false;
      let asksChanged = false;
      let openTouched = false;
      const open = this.openKey;
      for (const [type, data, seq] of queue) {
        if (STEP_EVENTS.has(type) || STATUS_EVENTS.has(type) || ASK_EVENTS.has(type) ||
          (open && DETAIL_EVENTS.has(type) && data.indexOf(open.split("\u0000")[0]) >= 0)) {
          let event;
          try {
            event = JSON.parse(data);
          } catch (error) {
            continue;
          }
          if (STEP_EVENTS.has(type)) {
            const index = this.model.apply(type, event, seq);
            if (open && index >= 0) {
              const step = this.model.steps[index];
              if (step.agent + "\u0000" + step.step === open) openTouched = true;
            }
          } else if (seq > this.model.seq) this.model.seq = seq;
          if (STATUS_EVENTS.has(type)) statusChanged = true;
          if (ASK_EVENTS.has(type)) asksChanged = true;
          if (open && DETAIL_EVENTS.has(type) && event.agent_id + "\u0000" + event.step === open) openTouched = true;
        }
      }
      this.timeline.draw();
      this.graph.update(this.model);
      this.liveFigures();
      if (statusChanged) this.loadDetailSoon(150);
      else this.loadDetailSoon(1500);
      if (asksChanged) this.loadAsksSoon();
      if (openTouched) this.inspector.refreshSoon();
    }

    loadDetailSoon(delay) {
      if (this.detailTimer) {
        if (delay >= this.detailDelay) return;
        clearTimeout(this.detailTimer);
      }
      this.detailDelay = delay;
      this.detailTimer = setTimeout(async () => {
        this.detailTimer = null;
        try {
          const detail = await api("GET", this.path());
          if (!this.destroyed) this.applyDetail(detail, false);
        } catch (error) {
          // The next event tries again.
        }
      }, delay);
    }

    loadAsksSoon() {
      clearTimeout(this.asksTimer);
      this.asksTimer = setTimeout(() => this.loadAsks(), 200);
    }

    async loadAsks() {
      try {
        const answer = await api("GET", this.path("/asks"));
        if (!this.destroyed) this.asks.show((answer && answer.asks) || []);
      } catch (error) {
        // Shown at the next change.
      }
    }

    applyDetail(detail, first) {
      this.detail = detail;
      const run = detail.run || {};
      const summary = detail.summary || {};
      const agents = Array.isArray(run.agents) ? run.agents : [];
      const terminated = Array.isArray(run.terminated) ? run.terminated : [];
      let status = summary.status || run.status || "unknown";
      if (status === "running" && !summary.status && agents.some((agent) => agent.status === "asking")) status = "asking";
      this.status = status;
      this.live = !!detail.live;
      this.timeline.live = this.live;
      this.statusPill.textContent = status;
      this.statusPill.className = "pill status-" + status;
      this.statusPill.dataset.status = status;
      this.statusPill.dataset.live = String(this.live);
      this.liveNote.textContent = this.live
        ? "live" + (detail.pid ? " · pid " + detail.pid : "") + (detail.served ? " · started here" : "")
        : "not running";
      this.liveNote.classList.toggle("is-live", this.live);
      if (first) {
        this.model.at.clear();
        for (const agent of agents) if (agent.current_state) this.model.at.set(agent.id, agent.current_state);
      }
      const budget = run.budget_usd ? " of " + fmtCost(run.budget_usd) : "";
      const workflowId = summary.workflow_id || detail.workflow_id;
      // Steps, cost and time go on from these between two reloads of the run.
      this.base = {
        seq: detail.trace_seq || 0,
        steps: run.steps_completed || 0,
        cost: run.total_cost_usd || 0,
        elapsed: run.elapsed_ms || 0,
        at: Date.now(),
        budget,
      };
      const items = [
        ["workflow", workflowId || baseName(run.scope_dir), run.scope_dir],
        ["steps", ""],
        ["cost", ""],
        ["running time", ""],
        ["agents", agents.length + " active" + (terminated.length ? ", " + terminated.length + " done" : "")],
        ["created", fmtWhen(run.created_at)],
      ];
      if (run.launch_params && run.launch_params.max_steps) items.push(["max steps", String(run.launch_params.max_steps)]);
      if (run.paused_by) items.push(["paused by", run.paused_by.bound + " bound"]);
      if (run.rerun_of) items.push(["rerun of", run.rerun_of.run_id + " after commit " + run.rerun_of.commit, null, runHash(run.rerun_of.run_id)]);
      this.cells = {};
      this.metrics.replaceChildren(...items.map(([name, value, title, href]) => {
        const cell = h("dd", { title: title || null, testid: "run-" + name.replace(/ /g, "-") },
          href ? h("a", { href, text: value }) : value);
        this.cells[name] = cell;
        return h("div", { class: "metric" }, h("dt", { text: name }), cell);
      }));
      this.liveFigures();
      this.errorBox.hidden = !run.error;
      this.errorBox.textContent = run.error || "";
      this.renderAgents(agents);
      this.cancelButton.disabled = !this.live;
      this.resumeButton.disabled = this.live || status === "completed";
      this.resumeButton.title = this.live ? "a baton drives it now" : status === "completed" ? "the run has completed"
        : "start a baton resume for it";
      if (!first) this.timeline.draw();
    }

    /** The header's steps, cost and running time: the run's last reload plus what happened since. */
    liveFigures() {
      if (!this.base || !this.cells) return;
      const since = this.model.since(this.base.seq);
      const steps = this.base.steps + since.steps;
      const cost = this.base.cost + since.cost;
      const elapsed = this.base.elapsed + (this.live ? Date.now() - this.base.at : 0);
      this.cells.steps.textContent = String(steps);
      this.cells.cost.textContent = fmtCost(cost) + this.base.budget;
      this.cells["running time"].textContent = fmtDuration(elapsed);
    }

    renderAgents(agents) {
      const notable = agents.filter((agent) => agent.status && agent.status !== "active");
      this.agentsBox.replaceChildren();
      if (!notable.length) return;
      const list = h("ul", { class: "agent-notes" });
      for (const agent of notable.slice(0, 50)) {
        list.append(h("li", null, h("span", { class: "mono strong", text: agent.id }), " ",
          statusPill(agent.status === "asking" ? "asking" : agent.status === "paused" ? "paused" : "running", { text: agent.status }),
          " at ", h("span", { class: "mono", text: agent.current_state || "" }),
          agent.pause_reason ? h("span", { class: "muted", text: " · " + agent.pause_reason }) : null,
          agent.error ? h("div", { class: "agent-error", text: agent.error }) : null));
      }
      if (notable.length > 50) list.append(h("li", { class: "muted", text: "… and " + (notable.length - 50) + " more" }));
      this.agentsBox.append(list);
    }

    showCommand(command, what) {
      if (!command) return;
      const code = h("code", { text: command });
      const copy = h("button", {
        type: "button",
        class: "small",
        text: "copy",
        onclick: () => {
          if (navigator.clipboard) navigator.clipboard.writeText(command).then(() => toast("copied"), () => {});
        },
      });
      this.cli.replaceChildren(h("span", { class: "cli-label", text: (what || "equivalent command") + ":" }), code, copy);
      this.cli.hidden = false;
      this.cli.dataset.command = command;
    }

    async cancel(agent) {
      try {
        const answer = await api("POST", this.path("/cancel"), agent ? { agent } : {});
        this.showCommand(answer && answer.command, agent ? "stopping " + agent : "cancel sent, as with");
        this.loadDetailSoon(300);
      } catch (error) {
        toast("cancel: " + error.message, "error");
      }
    }

    async resume() {
      const body = {};
      if (this.resumeBudget.value !== "") body.budget = Number(this.resumeBudget.value);
      if (this.resumeSteps.value !== "") body.max_steps = Number(this.resumeSteps.value);
      if (this.resumeTime.value.trim()) body.time_limit = this.resumeTime.value.trim();
      this.resumeButton.disabled = true;
      try {
        const answer = await api("POST", this.path("/resume"), body);
        this.showCommand(answer && answer.command, "resumed with");
        this.loadDetailSoon(300);
      } catch (error) {
        this.resumeButton.disabled = false;
        toast("resume: " + error.message, "error");
      }
    }

    async openRerun(commit) {
      const box = this.rerunBox;
      box.hidden = false;
      const from = h("select", { testid: "rerun-from", "aria-label": "rerun after" });
      const manual = h("input", { type: "number", min: "0", step: "1", class: "narrow", placeholder: "commit", testid: "rerun-commit" });
      const input = h("input", { type: "text", placeholder: "new input (optional)", testid: "rerun-input" });
      const runId = h("input", { type: "text", placeholder: "new run id (optional)" });
      const error = h("p", { class: "error", hidden: true });
      const submit = h("button", { type: "submit", class: "primary", text: "Start rerun", testid: "rerun-submit" });
      const form = h("form", { class: "rerun-form", testid: "rerun-form" },
        h("div", { class: "form-head" }, h("h3", { text: "Rerun: a new run from the state right after a step" }),
          h("button", { type: "button", class: "link", text: "close", onclick: () => {
            box.hidden = true;
            box.replaceChildren();
          } })),
        h("div", { class: "inline-fields" }, h("span", { text: "after" }), from, h("span", { text: "or commit" }), manual),
        h("div", { class: "inline-fields" }, input, runId),
        error,
        h("div", { class: "form-actions" }, submit));
      box.replaceChildren(form);
      if (commit !== null && commit !== undefined) manual.value = String(commit);
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const value = manual.value !== "" ? Number(manual.value) : Number(from.value);
        if (!Number.isFinite(value) || (manual.value === "" && from.value === "")) {
          error.hidden = false;
          error.textContent = "Pick a step to rerun after.";
          return;
        }
        const body = { from: value };
        if (input.value !== "") body.input = input.value;
        if (runId.value.trim()) body.run_id = runId.value.trim();
        submit.disabled = true;
        try {
          const answer = await api("POST", this.path("/rerun"), body);
          pendingCommand = { text: answer.command, what: "rerun started with" };
          location.hash = runHash(answer.run_id);
        } catch (failure) {
          submit.disabled = false;
          error.hidden = false;
          error.textContent = failure.message;
        }
      });
      try {
        const answer = await api("GET", this.path("/rerun-steps"));
        const steps = (answer && answer.steps) || [];
        const shown = steps.slice(-500).reverse();
        from.replaceChildren(h("option", { value: "", text: steps.length ? "pick a step…" : "no step can be rerun" }),
          ...shown.map((step) => h("option", {
            value: String(step.commit),
            text: "commit " + step.commit + ": " + step.agent + " " + step.state + " <" + step.tag + "> → " + stateLabel(step.target),
          })));
        if (steps.length > shown.length) from.append(h("option", { disabled: true, text: "… older steps: type their commit" }));
        if (commit !== null && commit !== undefined && shown.some((step) => step.commit === commit)) {
          from.value = String(commit);
          manual.value = "";
        } else if (commit !== null && commit !== undefined && steps.length && commit < steps[0].commit) {
          error.hidden = false;
          error.textContent = "The state after commit " + commit + " is no longer on disk (the journal was compacted); " +
            "a rerun can start after commits " + steps[0].commit + " to " + steps[steps.length - 1].commit + ".";
        }
        from.addEventListener("change", () => {
          manual.value = "";
        });
      } catch (failure) {
        from.replaceChildren(h("option", { value: "", text: "cannot list the steps" }));
      }
    }

    /** Open step (agent, step) in the inspector, as a click on its bar does; null closes it. */
    openStep(agent, step) {
      const hash = agent === null || agent === undefined ? runHash(this.id) : runHash(this.id, agent, step);
      if (location.hash !== hash) history.replaceState(null, "", hash);
      if (current && current.view === this) current.route = parseRoute();
      return this.showStep(agent, step);
    }

    showStep(agent, step) {
      if (agent === null || agent === undefined) {
        this.openKey = null;
        this.timeline.select(null);
        this.inspector.clear();
        return Promise.resolve();
      }
      step = Number(step);
      this.openKey = agent + "\u0000" + step;
      const index = this.model.byKey.get(this.openKey);
      this.timeline.select(index === undefined ? null : index);
      return this.inspector.open(agent, step);
    }

    pickState(state) {
      // The latest step at that state: the most useful one to look at.
      for (let i = this.model.steps.length - 1; i >= 0; i--) {
        const step = this.model.steps[i];
        if (step.state === state) {
          this.openStep(step.agent, step.step);
          return;
        }
      }
      toast(state + " has not run yet");
    }
  }

  // ---------------------------------------------------------------- start

  window.baton = {
    rendered: null,
    /** Open a step in the inspector (what a click on its timeline bar does); resolves when it shows. */
    openStep(agent, step) {
      if (!current || !(current.view instanceof RunView)) return Promise.reject(new Error("no run is shown"));
      return current.view.openStep(agent, step);
    },
    /** Where the bar of (agent, step) is drawn, in client coordinates, or null. */
    barCenter(agent, step) {
      if (!current || !(current.view instanceof RunView)) return null;
      const view = current.view;
      const index = view.model.byKey.get(agent + "\u0000" + step);
      return index === undefined ? null : view.timeline.barCenter(index);
    },
  };

  function init() {
    takeTokenFromHash();
    document.getElementById("forget-token").hidden = !token();
    document.getElementById("forget-token").addEventListener("click", () => {
      setToken("");
      needToken("");
    });
    document.getElementById("token-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const value = document.getElementById("token-input").value.trim();
      if (!value) return;
      setToken(value);
      // Try it once before every view asks with it.
      if (!(await checkHealth())) return;
      document.getElementById("token-box").hidden = true;
      remount();
    });
    window.addEventListener("hashchange", () => {
      if (/(^#|&)token=/.test(location.hash)) {
        takeTokenFromHash();
        remount();
        return;
      }
      route();
    });
    if (!token()) needToken("");
    else checkHealth();
    route();
  }

  /** Whether the daemon takes the token (and shows its version). */
  async function checkHealth() {
    try {
      const health = await api("GET", "/health");
      document.getElementById("version").textContent = health && health.version ? "v" + health.version : "";
      return true;
    } catch (error) {
      if (error.status !== 401) toast(error.message, "error");
      return error.status !== 401;
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
