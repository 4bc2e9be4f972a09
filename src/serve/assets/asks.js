// Questions (asks): what paused agents wait for, answered from the page.

import { field, fmtAge, fmtCountdown, h, parseTs, plural, textBlock } from "./dom.js";
import { api, displayFile } from "./api.js";

export class AsksView {
  constructor(box, view) {
    this.box = box;
    this.view = view;
    this.forms = new Map();
    this.timer = setInterval(() => this.tick(), 1000);
  }

  destroy() {
    clearInterval(this.timer);
  }

  show(asks) {
    const seen = new Set();
    for (const ask of asks) {
      seen.add(ask.ask_id);
      if (!this.forms.has(ask.ask_id)) {
        const entry = this.form(ask);
        this.forms.set(ask.ask_id, entry);
        this.box.append(entry.form);
      }
    }
    for (const [id, entry] of this.forms) {
      if (!seen.has(id) && !entry.sending) {
        entry.form.remove();
        this.forms.delete(id);
      }
    }
    this.box.hidden = this.forms.size === 0;
    this.tick();
  }

  tick() {
    const now = Date.now();
    for (const entry of this.forms.values()) {
      if (entry.deadline === null) continue;
      const left = entry.deadline - now;
      entry.countdown.dataset.remainingMs = String(Math.max(0, left));
      entry.countdown.textContent = left > 0
        ? "times out in " + fmtCountdown(left) + (entry.ask.timeout_next ? " → " + entry.ask.timeout_next : ", then the agent pauses")
        : "timed out" + (entry.ask.timeout_next ? ": goes to " + entry.ask.timeout_next : ": the agent pauses");
      entry.countdown.classList.toggle("urgent", left < 60000);
    }
  }

  form(ask) {
    const text = h("textarea", { testid: "ask-text", name: "text", rows: 3, placeholder: "your answer" });
    const files = [];
    const fileFields = [];
    const slots = Array.isArray(ask.slots) ? ask.slots : [];
    for (const slot of slots) {
      const name = typeof slot === "string" ? slot.split(":")[0].trim() : slot.name;
      const mime = typeof slot === "string" ? (slot.split(":")[1] || "").split("|").filter(Boolean) : [].concat(slot.mime || slot.mimes || []);
      const input = h("input", { type: "file", name, accept: mime.join(",") || null, testid: "ask-file", data: { slot: name } });
      files.push(input);
      fileFields.push(field(name, input, mime.length ? mime.join(", ") : null));
    }
    if (ask.mode === "bucket" || (ask.bucket && !slots.length)) {
      const bucket = ask.bucket || {};
      const mime = [].concat(bucket.mime || []);
      const input = h("input", { type: "file", name: "files", multiple: true, accept: mime.join(",") || null,
        testid: "ask-file", data: { bucket: "true" } });
      files.push(input);
      const caps = [];
      if (bucket.max_count) caps.push("up to " + plural(bucket.max_count, "file"));
      if (bucket.max_size) caps.push(fmtBytes(bucket.max_size) + " each");
      if (bucket.max_total_size) caps.push(fmtBytes(bucket.max_total_size) + " in all");
      if (mime.length) caps.push(mime.join(", "));
      fileFields.push(field("Files", input, caps.join(" · ")));
    }
    const display = Array.isArray(ask.display_files) ? ask.display_files : [];
    const countdown = h("span", { class: "countdown", testid: "ask-countdown" });
    const deadline = parseTs(ask.deadline);
    if (deadline === null) countdown.textContent = ask.timeout ? "times out after " + ask.timeout : "no time limit";
    const error = h("p", { class: "error", hidden: true });
    const submit = h("button", { type: "submit", class: "primary", testid: "ask-submit", text: "Answer" });
    const form = h("form", { class: "ask-form", testid: "ask-form", data: { askId: ask.ask_id, agent: ask.agent_id } },
      h("div", { class: "ask-head" },
        h("span", { class: "pill status-asking", text: "question" }),
        h("span", { class: "mono strong", text: ask.agent_id }),
        h("span", { class: "muted", text: "→ " + (ask.next_state || "") }),
        h("span", { class: "spacer" }),
        countdown),
      textBlock(ask.prompt, { class: "ask-prompt" }),
      display.length ? h("div", { class: "display-files" }, h("span", { class: "sub", text: "files to look at: " }),
        display.map((item) => displayFile(ask, item))) : null,
      h("label", { class: "field" }, h("span", { class: "label", text: "Answer" }), text),
      fileFields,
      error,
      h("div", { class: "form-actions" }, submit, h("span", { class: "muted", text: "asked " + fmtAge(ask.asked_at) })));
    const entry = { ask, form, countdown, deadline, sending: false };
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const chosen = files.filter((input) => input.files && input.files.length);
      let body;
      if (chosen.length) {
        body = new FormData();
        body.append("text", text.value);
        for (const input of chosen) for (const file of input.files) body.append(input.name, file, file.name);
      } else body = { text: text.value };
      submit.disabled = true;
      entry.sending = true;
      error.hidden = true;
      try {
        const answer = await api("POST", "/runs/" + encodeURIComponent(this.view.id) + "/asks/" + encodeURIComponent(ask.ask_id), body);
        this.view.showCommand(answer && answer.command, "answered with");
        form.classList.add("answered");
        form.dataset.answered = "true";
        submit.textContent = "Answered";
        setTimeout(() => {
          entry.sending = false;
          this.view.loadAsks();
        }, 1500);
      } catch (failure) {
        entry.sending = false;
        submit.disabled = false;
        error.hidden = false;
        error.textContent = failure.status === 404 ? "This question no longer waits (answered or timed out)." : failure.message;
        if (failure.status === 404) this.view.loadAsks();
      }
    });
    return entry;
  }
}

function fmtBytes(bytes) {
  if (bytes >= 1048576) return (bytes / 1048576).toFixed(bytes % 1048576 ? 1 : 0) + " MiB";
  if (bytes >= 1024) return (bytes / 1024).toFixed(bytes % 1024 ? 1 : 0) + " KiB";
  return bytes + " bytes";
}
