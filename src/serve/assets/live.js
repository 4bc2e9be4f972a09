// Live updates: server-sent events read over fetch (so the token travels as a header,
// never in a URL), reconnecting with the last event id; the connection badge.
//
// An open stream holds one of the connections a browser keeps to the daemon, and over
// HTTP/1.1 it keeps six to one host, for all its tabs together. Six run pages open, or
// six left in the back/forward cache with their streams still open (Chromium keeps a
// page there whole, its fetches included), and every further request to the daemon,
// a new tab's page among them, waits for a connection that never comes. So a stream
// lets its connection go while its page is hidden or put away, and when the page is
// shown again it reconnects from the last event it read, as after a drop.

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

/** The streams started in this page and not stopped. */
const streams = new Set();

function shown() {
  return document.visibilityState !== "hidden";
}

document.addEventListener("visibilitychange", () => {
  for (const stream of streams) {
    if (shown()) stream.resume();
    else stream.suspend();
  }
});
window.addEventListener("pagehide", () => {
  for (const stream of streams) stream.suspend();
});
window.addEventListener("pageshow", (event) => {
  if (!event.persisted || !shown()) return;
  for (const stream of streams) stream.resume();
});

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
    // Started, but without a connection while its page is hidden.
    this.suspended = false;
    // Counts the resumes: a page hidden and shown again while one still reloads its
    // view is resumed twice, and only the last may connect.
    this.resumes = 0;
  }

  start(after) {
    this.lastId = after === undefined || after === null ? null : String(after);
    this.stopped = false;
    streams.add(this);
    this.suspended = !shown();
    if (!this.suspended) this.connect();
  }

  stop() {
    this.stopped = true;
    streams.delete(this);
    this.disconnect();
  }

  disconnect() {
    clearTimeout(this.timer);
    const controller = this.controller;
    // A read that ends for this abort sees a controller not its own and goes no further.
    this.controller = null;
    if (controller) controller.abort();
    this.setState("off");
  }

  /** Let the connection go until `resume`; what comes meanwhile is read then. */
  suspend() {
    if (this.stopped || this.suspended) return;
    this.suspended = true;
    this.disconnect();
  }

  async resume() {
    if (this.stopped || !this.suspended) return;
    this.suspended = false;
    const attempt = ++this.resumes;
    if (this.lastId === null) {
      // No event read yet, so none to go on after: what came meanwhile is loaded whole,
      // as after a resync that named no id.
      let next = null;
      try {
        next = await this.handlers.onResync(null);
      } catch (error) {
        // The views show their own error; connect all the same.
      }
      // Hidden and shown again meanwhile: a later resume reloads and connects.
      if (this.stopped || this.suspended || attempt !== this.resumes) return;
      if (next !== undefined && next !== null) this.lastId = String(next);
    }
    this.connect();
  }

  setState(state) {
    this.state = state;
    setConn(this, state);
  }

  async connect() {
    if (this.stopped || this.suspended) return;
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
        this.stop();
        return;
      }
      if (response.status === 404) {
        this.stop();
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
      if (this.stopped || controller !== this.controller) return;
      this.lastId = after === undefined || after === null ? null : String(after);
      this.connect();
      return;
    }
    this.setState("reconnecting");
    this.timer = setTimeout(() => this.connect(), 1000);
  }
}
