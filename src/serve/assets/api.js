// The daemon's token (kept in this tab's sessionStorage) and its JSON API: every call
// carries the token as a bearer header; a 401 asks for the token again.

import { h } from "./dom.js";

export const API = "/api/v1";
const TOKEN_KEY = "baton.token";


function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  } catch (error) {
    return "";
  }
}

export function setToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch (error) {
    // Storage refused (a sandboxed page): the token lasts until reload.
  }
  memoryToken = token;
  document.getElementById("forget-token").hidden = !token;
}
let memoryToken = "";
export function token() {
  return getToken() || memoryToken;
}

/** `#token=T`, `#token=T&/runs/X` or `#/runs/X&token=T`: keep T, drop it from the URL. */
export function takeTokenFromHash() {
  const hash = location.hash;
  const match = /(^#|&)token=([^&]*)/.exec(hash);
  if (!match) return;
  let value = match[2];
  try {
    value = decodeURIComponent(value);
  } catch (error) {
    // Not percent-encoded after all: use it as it is.
  }
  value = value.trim();
  if (value) setToken(value);
  let rest = hash.slice(1).split("&").filter((part) => !part.startsWith("token=")).join("&");
  if (!rest.startsWith("/")) rest = "/" + rest;
  history.replaceState(null, "", location.pathname + location.search + "#" + rest);
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function needToken(message) {
  const box = document.getElementById("token-box");
  const error = document.getElementById("token-error");
  error.hidden = !message;
  error.textContent = message || "";
  if (box.hidden) {
    box.hidden = false;
    const input = document.getElementById("token-input");
    input.value = "";
    input.focus();
  }
}

/** A button that downloads one of an ask's display files. */
export function displayFile(ask, item) {
  const name = item && typeof item === "object" ? String(item.name) : String(item);
  const source = item && typeof item === "object" ? String(item.source) : name;
  const button = h("button", { type: "button", class: "tag mono", testid: "ask-display-file", text: name,
    title: "download " + source, data: { name } });
  button.addEventListener("click", () => {
    const path = "/runs/" + encodeURIComponent(ask.run_id) + "/asks/" + encodeURIComponent(ask.ask_id) + "/files/" +
      encodeURIComponent(name);
    download(path, name).catch((error) => { button.title = String(error && error.message); button.classList.add("failed"); });
  });
  return button;
}

export async function api(method, path, body, options) {
  const current = token();
  if (!current) {
    needToken("");
    throw new ApiError(401, "no token");
  }
  const headers = { Authorization: "Bearer " + current, Accept: "application/json" };
  let payload;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(API + path, {
      method,
      headers,
      body: payload,
      cache: "no-store",
      signal: options && options.signal,
    });
  } catch (error) {
    if (error && error.name === "AbortError") throw error;
    throw new ApiError(0, "the daemon cannot be reached (" + (error && error.message) + ")");
  }
  if (response.status === 401) {
    needToken("The daemon refused this token; it may have been rotated.");
    throw new ApiError(401, "token refused");
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (error) {
    data = null;
  }
  if (!response.ok) {
    const message = (data && data.error) || text || response.statusText || "HTTP " + response.status;
    throw new ApiError(response.status, message);
  }
  return data;
}

/** Fetch a file with the token and hand it to the browser as a download. */
async function download(path, name) {
  const current = token();
  if (!current) {
    needToken("");
    return;
  }
  const response = await fetch(API + path, { headers: { Authorization: "Bearer " + current }, cache: "no-store" });
  if (!response.ok) throw new ApiError(response.status, "cannot fetch " + name + " (HTTP " + response.status + ")");
  const url = URL.createObjectURL(await response.blob());
  const link = h("a", { href: url, download: name });
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
