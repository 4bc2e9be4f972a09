// Step-by-step execution in the inspector (issue 24): the run's breakpoints (set and
// cleared by clicking states on the graph), the agents stopped at one, what each runs
// next (the rendered prompt, or the script's command and environment), and a form to
// edit its input, its next state or its prompt before pressing Continue or Step.
//
// Everything goes through the API (`POST …/breakpoints`, `GET …/agents/A/next`,
// `POST …/agents/A/continue`); texts from the run reach the page as text only.

import { h, textBlock, toast } from "./dom.js";
import { api } from "./api.js";

export class SteppingView {
  constructor(box, run) {
    this.box = box;
    this.run = run;
    this.breakpoints = { before: [], after: [], step: false };
    this.picking = false;
    this.shownStops = "";
    this.destroyed = false;
    this.pickToggle = h("input", { type: "checkbox", testid: "breakpoint-pick",
      onchange: () => {
        this.picking = this.pickToggle.checked;
        this.box.classList.toggle("picking", this.picking);
      } });
    this.stepToggle = h("input", { type: "checkbox", testid: "breakpoint-step",
      onchange: () => this.send({ ...this.breakpoints, step: this.stepToggle.checked }) });
    this.list = h("span", { class: "mono", testid: "breakpoint-list" });
    this.stops = h("div", { class: "stops", testid: "stopped-agents" });
    box.append(h("div", { class: "card-head" }, h("h2", { text: "Step by step" })),
      h("div", { class: "inline-fields" },
        h("label", null, this.pickToggle, " click a state on the graph to stop before it"),
        h("label", null, this.stepToggle, " stop every agent after each step")),
      h("p", { class: "muted" }, "breakpoints: ", this.list),
      this.stops);
  }

  destroy() {
    this.destroyed = true;
  }

  /** The run's state changed: its breakpoints and its stopped agents. */
  show(run, live) {
    this.live = live;
    const params = (run && run.launch_params && run.launch_params.breakpoints) || {};
    this.breakpoints = { before: params.before || [], after: params.after || [], step: !!params.step };
    this.stepToggle.checked = this.breakpoints.step;
    this.pickToggle.disabled = !live;
    this.stepToggle.disabled = !live;
    const parts = this.breakpoints.before.map((state) => "before " + state)
      .concat(this.breakpoints.after.map((state) => "after " + state));
    if (this.breakpoints.step) parts.push("every step");
    this.list.textContent = parts.length ? parts.join(", ") : "none";
    this.list.dataset.before = this.breakpoints.before.join(",");
    if (this.run.graph) this.run.graph.markBreakpoints(new Set(this.breakpoints.before));
    const stopped = ((run && run.agents) || []).filter((agent) => agent.pause_reason === "breakpoint");
    const key = stopped.map((agent) => agent.id + "@" + agent.current_state + "#" + agent.steps_started).join("|");
    if (key === this.shownStops) return;
    this.shownStops = key;
    this.stops.replaceChildren(...stopped.map((agent) => this.stopCard(agent)));
    this.box.hidden = !live && !stopped.length && !parts.length;
  }

  /** A click on a state while picking: toggle a breakpoint before it. */
  pick(state) {
    if (!this.picking) return false;
    const before = new Set(this.breakpoints.before);
    if (before.has(state)) before.delete(state);
    else before.add(state);
    this.send({ ...this.breakpoints, before: [...before] });
    return true;
  }

  async send(breakpoints) {
    try {
      const answer = await api("POST", this.run.path("/breakpoints"), breakpoints);
      this.breakpoints = answer;
      this.run.loadDetailSoon(100);
    } catch (error) {
      toast("breakpoints: " + error.message, "error");
    }
  }

  stopCard(agent) {
    const next = h("div", { class: "next", testid: "next-step" }, h("p", { class: "muted", text: "reading what is next…" }));
    const input = h("textarea", { rows: 3, testid: "edit-input", "aria-label": "input" });
    input.value = agent.pending_result === undefined || agent.pending_result === null ? "" : agent.pending_result;
    const goto = h("input", { type: "text", placeholder: agent.current_state, testid: "edit-goto", "aria-label": "go to state" });
    const prompt = h("textarea", { rows: 4, placeholder: "(the rendered prompt)", testid: "edit-prompt", "aria-label": "next prompt" });
    const error = h("p", { class: "error", hidden: true, testid: "stop-error" });
    const original = input.value;
    const go = async (step) => {
      const body = {};
      if (input.value !== original) body.input = input.value;
      if (goto.value.trim()) body.goto = goto.value.trim();
      if (prompt.value !== "") body.prompt = prompt.value;
      error.hidden = true;
      try {
        if (step && !this.breakpoints.step) await api("POST", this.run.path("/breakpoints"), { ...this.breakpoints, step: true });
        const answer = await api("POST", this.run.path("/agents/" + encodeURIComponent(agent.id) + "/continue"), body);
        this.run.showCommand(answer && answer.command, "continued as with");
        this.run.loadDetailSoon(100);
      } catch (failure) {
        error.hidden = false;
        error.textContent = failure.message;
      }
    };
    const card = h("form", { class: "stop", testid: "stopped-agent", data: { agent: agent.id, state: agent.current_state } },
      h("h3", null, h("span", { class: "mono strong", text: agent.id }), " stopped before ",
        h("span", { class: "mono", text: agent.current_state })),
      h("p", { class: "muted", text: agent.error || "" }),
      next,
      h("label", null, "input", input),
      h("label", null, "go to", goto),
      h("label", null, "replace the next prompt (sent as written, once)", prompt),
      error,
      h("div", { class: "form-actions" },
        h("button", { type: "submit", class: "primary", text: "Continue", testid: "continue-agent" }),
        h("button", { type: "button", text: "Step", testid: "step-agent",
          title: "continue, then stop every agent after its next step", onclick: () => go(true) })));
    card.addEventListener("submit", (event) => {
      event.preventDefault();
      go(false);
    });
    this.loadNext(agent, next);
    return card;
  }

  async loadNext(agent, box) {
    try {
      const answer = await api("GET", this.run.path("/agents/" + encodeURIComponent(agent.id) + "/next"));
      if (this.destroyed) return;
      if (answer.error) {
        box.replaceChildren(h("p", { class: "error", text: "cannot show what is next: " + answer.error }));
        return;
      }
      const lines = [answer.header.trim()];
      if (answer.session) lines.push("session: " + answer.session);
      box.replaceChildren(h("pre", { class: "next-head", text: lines.join("\n") }),
        textBlock(answer.text, { class: "next-text", testid: "next-text", data: { kind: answer.kind } }));
    } catch (error) {
      box.replaceChildren(h("p", { class: "error", text: "cannot show what is next: " + error.message }));
    }
  }
}
