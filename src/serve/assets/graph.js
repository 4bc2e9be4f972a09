// The workflow graph: states and their transitions as SVG, live agents marked on them.

import { h, plural, svg } from "./dom.js";

export class GraphView {
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

  /** Mark the states an agent stops before (`--break-before`). */
  markBreakpoints(states) {
    for (const [state, node] of this.nodes) {
      const on = states.has(state);
      node.group.classList.toggle("breakpoint", on);
      node.group.dataset.breakpoint = String(on);
    }
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
