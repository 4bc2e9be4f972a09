// Live updates: server-sent events read over fetch (so the token travels as a header,
// never in a URL), reconnecting with the last event id; the connection badge.

import { API, needToken, token } from "./api.js";

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
export class EventStream {
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
