// The timeline canvas: one lane per agent, a bar per step, zoom and pan, hit-testing.

import { fmtCost, fmtDuration, h, plural, stateLabel } from "./dom.js";
import { onBackend } from "./step.js";

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

export class TimelineView {
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
