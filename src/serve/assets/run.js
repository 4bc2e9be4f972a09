// One run's view: its header and actions, the timeline, the graph, the inspector and the
// asks, kept live from the run's event stream.

import { baseName, fmtCost, fmtDuration, fmtWhen, h, stateLabel, statusPill, toast } from "./dom.js";
import { api } from "./api.js";
import { EventStream } from "./live.js";
import { nav, parseRoute, runHash, setCrumbs } from "./router.js";
import { ASK_EVENTS, DETAIL_EVENTS, Model, STATUS_EVENTS, STEP_EVENTS } from "./timeline-model.js";
import { TimelineView } from "./timeline.js";
import { GraphView } from "./graph.js";
import { Inspector } from "./step.js";
import { AsksView } from "./asks.js";
import { SteppingView } from "./stepping.js";

export class RunView {
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
    if (nav.pendingCommand) {
      this.showCommand(nav.pendingCommand.text, nav.pendingCommand.what);
      nav.pendingCommand = null;
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
    this.stepping.destroy();
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
    this.steppingBox = h("section", { class: "card stepping", testid: "stepping", hidden: true });

    const head = h("section", { class: "run-head panel" },
      h("div", { class: "title-line" },
        h("h1", { class: "mono", text: this.id }), this.statusPill, this.liveNote,
        h("span", { class: "spacer" }),
        h("div", { class: "actions" }, this.cancelButton, this.resumeButton, resumeOptions, this.rerunButton)),
      this.metrics, this.errorBox, this.agentsBox, this.rerunBox, this.cli, this.errorLine);

    const timelineCard = h("section", { class: "card timeline-card" });
    const graphCard = h("section", { class: "card graph-card" });
    this.inspectorPanel = h("aside", { class: "card inspector", testid: "step-inspector" });
    this.root.append(h("div", { class: "run" }, head, this.asksBox, this.steppingBox,
      h("div", { class: "run-body" }, h("div", { class: "run-left" }, timelineCard, graphCard), this.inspectorPanel)));

    this.timeline = new TimelineView(timelineCard, this.model, { open: (agent, step) => this.openStep(agent, step) });
    this.timeline.clock = () => (this.model.startedAt === null ? 0 : Date.now() - this.model.startedAt);
    this.graph = new GraphView(graphCard, { pick: (state) => this.pickState(state) });
    this.inspector = new Inspector(this.inspectorPanel, this);
    this.asks = new AsksView(this.asksBox, this);
    this.stepping = new SteppingView(this.steppingBox, this);
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
      if (this.detail) this.stepping.show(this.detail.run, this.live);
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
    this.stepping.show(run, this.live);
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
        nav.pendingCommand = { text: answer.command, what: "rerun started with" };
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
    if (nav.current && nav.current.view === this) nav.current.route = parseRoute();
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
    // Picking breakpoints: a click sets or clears one before the state.
    if (this.stepping.pick(state)) return;
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
