// The step inspector: one step's prompt, output, transition, cost and session, read on demand.

import { fmtCost, fmtDuration, h, plural, stateLabel, statusPill, textBlock } from "./dom.js";
import { api } from "./api.js";

export class Inspector {
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
export function onBackend(backend, model) {
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
