// The run inspector of `baton serve`: one page, hash routes, no framework, no bundler —
// the browser loads these ES modules as they are.
//
// Routes: `#/` (runs and workflows), `#/runs/RUN` (one run),
// `#/runs/RUN/steps/AGENT/STEP` (one run with a step open). A URL fragment
// `#token=T` or `#token=T&/runs/RUN` hands the page its token: it is kept in
// this tab's sessionStorage and removed from the address bar.
//
// Safety: every text that comes from a run (prompts, outputs, names, results)
// reaches the page through textContent or an SVG/canvas text call, never as
// markup; the page is served with `default-src 'self'`, so nothing here is
// inline or evaluated.
//
// One module per view (home, run, timeline, graph, step, asks) so each has a room
// of its own; this one mounts them.

import { toast } from "./dom.js";
import { api, needToken, setToken, takeTokenFromHash, token } from "./api.js";
import { nav, parseRoute } from "./router.js";
import { HomeView } from "./home.js";
import { RunView } from "./run.js";

function route() {
  const next = parseRoute();
  if (nav.current && nav.current.route.name === "run" && next.name === "run" && nav.current.route.run === next.run) {
    nav.current.route = next;
    nav.current.view.showStep(next.agent, next.step);
    return;
  }
  if (nav.current) nav.current.view.destroy();
  const root = document.getElementById("view");
  root.replaceChildren();
  const view = next.name === "run" ? new RunView(root, next) : new HomeView(root);
  nav.current = { route: next, view };
}

function remount() {
  if (nav.current) nav.current.view.destroy();
  nav.current = null;
  route();
}


// ---------------------------------------------------------------- start

window.baton = {
  rendered: null,
  /** Open a step in the inspector (what a click on its timeline bar does); resolves when it shows. */
  openStep(agent, step) {
    if (!nav.current || !(nav.current.view instanceof RunView)) return Promise.reject(new Error("no run is shown"));
    return nav.current.view.openStep(agent, step);
  },
  /** Where the bar of (agent, step) is drawn, in client coordinates, or null. */
  barCenter(agent, step) {
    if (!nav.current || !(nav.current.view instanceof RunView)) return null;
    const view = nav.current.view;
    const index = view.model.byKey.get(agent + "\u0000" + step);
    return index === undefined ? null : view.timeline.barCenter(index);
  },
};

function init() {
  takeTokenFromHash();
  document.getElementById("forget-token").hidden = !token();
  document.getElementById("forget-token").addEventListener("click", () => {
    setToken("");
    needToken("");
  });
  document.getElementById("token-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = document.getElementById("token-input").value.trim();
    if (!value) return;
    setToken(value);
    // Try it once before every view asks with it.
    if (!(await checkHealth())) return;
    document.getElementById("token-box").hidden = true;
    remount();
  });
  window.addEventListener("hashchange", () => {
    if (/(^#|&)token=/.test(location.hash)) {
      takeTokenFromHash();
      remount();
      return;
    }
    route();
  });
  if (!token()) needToken("");
  else checkHealth();
  route();
}

/** Whether the daemon takes the token (and shows its version). */
async function checkHealth() {
  try {
    const health = await api("GET", "/health");
    document.getElementById("version").textContent = health && health.version ? "v" + health.version : "";
    return true;
  } catch (error) {
    if (error.status !== 401) toast(error.message, "error");
    return error.status !== 401;
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
