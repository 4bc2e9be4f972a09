// The home view: runs (filtered by status, live) and workflows, with the form that starts one.

import { STATUSES, baseName, field, fmtAge, fmtCost, fmtDuration, fmtWhen, h, parseTs, plural, statusPill, toast } from "./dom.js";
import { api } from "./api.js";
import { EventStream } from "./live.js";
import { nav, runHash, setCrumbs } from "./router.js";

export class HomeView {
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
      nav.pendingCommand = { text: answer.command, what: "started with" };
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
