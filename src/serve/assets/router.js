// Hash routes and what is shown: which view is mounted (`nav.current`) and a command to
// show once the next run view opens (`nav.pendingCommand`).

import { h } from "./dom.js";

export function parseRoute() {
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

export function runHash(run, agent, step) {
  let hash = "#/runs/" + encodeURIComponent(run);
  if (agent !== null && agent !== undefined) hash += "/steps/" + encodeURIComponent(agent) + "/" + step;
  return hash;
}

export const nav = { current: null, pendingCommand: null };

export function setCrumbs(items) {
  const crumbs = document.getElementById("crumbs");
  crumbs.replaceChildren();
  items.forEach((item, index) => {
    if (index) crumbs.append(h("span", { class: "sep", text: "/" }));
    crumbs.append(item.href ? h("a", { href: item.href, text: item.text }) : h("span", { text: item.text }));
  });
}
