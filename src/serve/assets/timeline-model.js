// The timeline's model: a run's events folded into agents, lanes and steps, so the
// canvas, the graph and the inspector draw from one place.

import { parseTs } from "./dom.js";

export const STEP_EVENTS = new Set(["StateStarted", "StateCompleted", "ErrorOccurred", "AgentPaused", "TransitionOccurred",
  "AgentSpawned", "AgentTerminated", "ClaudeInvocationStarted"]);
export const STATUS_EVENTS = new Set(["WorkflowStarted", "WorkflowCompleted", "WorkflowAsking", "WorkflowPaused",
  "WorkflowInterrupted", "WorkflowStopping", "RunFailed", "WorkflowWaiting", "WorkflowResuming", "AgentPaused",
  "AgentAsking", "JoinWaiting", "JoinCompleted"]);
export const ASK_EVENTS = new Set(["AgentAsking", "WorkflowAsking", "WorkflowStarted", "TransitionOccurred"]);
export const DETAIL_EVENTS = new Set(["ScriptOutput", "PromptRendered", "ClaudeStreamOutput"]);

/**
 * The run's steps and lanes as `GET …/steps` gives them, kept up to date from
 * trace events the same way the daemon builds them (`src/serve/timeline.rs`).
 */
export class Model {
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
