// The chat page: renders the stored history, sends messages to the JSON API, shows replies and
// their tool uses, and offers a retry when the vessel failed (the user's message stays saved).
(function () {
  "use strict";
  const chat = document.getElementById("chat");
  const form = document.getElementById("send");
  const textarea = document.getElementById("text");
  const button = form.querySelector("button[type=submit]");
  const status = document.getElementById("status");
  const errorBox = document.getElementById("chat-error");
  const retryButton = document.getElementById("retry");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;

  function pretty(value) {
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }

  function toolUseDetail(use) {
    const details = document.createElement("details");
    details.className = "tool-use";
    const summary = document.createElement("summary");
    const verb = use.input && use.input.verb ? " · " + use.input.verb : "";
    summary.textContent = "Tool: " + use.name + verb;
    details.appendChild(summary);
    const output = use.output || {};
    if (output.match === "fallback") {
      // A recall that fell back is not a match: the reader is told, as the model is.
      details.classList.add("fallback");
      const mark = document.createElement("span");
      mark.className = "fallback-mark";
      mark.textContent = " · fallback, not a match";
      summary.appendChild(mark);
      if (output.note) {
        const note = document.createElement("p");
        note.className = "fallback-note";
        note.textContent = output.note;
        details.appendChild(note);
      }
    } else if (output.error) {
      details.classList.add("tool-error");
      const mark = document.createElement("span");
      mark.textContent = " · " + output.error.replace(/_/g, " ");
      summary.appendChild(mark);
    }
    for (const [label, value] of [["Input", use.input], ["Output", use.output]]) {
      const heading = document.createElement("div");
      heading.textContent = label;
      const pre = document.createElement("pre");
      pre.textContent = pretty(value);
      details.append(heading, pre);
    }
    return details;
  }

  function render(message) {
    const item = document.createElement("div");
    item.className = "message " + message.role;
    item.dataset.id = message.id;
    item.id = "message-" + message.id;  // the memory page links to a turn here
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = message.role === "user" ? "You" : "Reply" + (message.vessel ? " · " + message.vessel : "");
    const body = document.createElement("div");
    body.className = "content";
    body.textContent = message.content;
    item.append(who, body);
    for (const use of message.tool_uses || []) item.appendChild(toolUseDetail(use));
    chat.appendChild(item);
    item.scrollIntoView({ block: "end" });
  }

  function showError(text) {
    errorBox.querySelector(".text").textContent = text + " ";
    errorBox.hidden = false;
  }

  async function call(url, body) {
    button.disabled = true;
    retryButton.disabled = true;
    status.textContent = "Waiting for the reply…";
    errorBox.hidden = true;
    try {
      const response = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
        body: JSON.stringify(body),
      });
      let data = {};
      try { data = await response.json(); } catch (e) { data = {}; }
      if (response.ok) {
        if (!document.querySelector('.message[data-id="' + data.user.id + '"]')) render(data.user);
        render(data.assistant);
        return true;
      }
      const error = data.error || {};
      const saved = error.details && error.details.user_message;
      if (saved && !document.querySelector('.message[data-id="' + saved.id + '"]')) render(saved);
      showError(error.message || "Something went wrong (HTTP " + response.status + ").");
      // The message was kept: clear the box so it is not sent twice; Retry answers it.
      return Boolean(saved);
    } catch (e) {
      showError("The server could not be reached. Your message may not have been sent.");
      return false;
    } finally {
      button.disabled = false;
      retryButton.disabled = false;
      status.textContent = "";
    }
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    const text = textarea.value.trim();
    if (!text) return;
    if (await call(form.dataset.messagesUrl, { text: text })) textarea.value = "";
  });
  textarea.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
  retryButton.addEventListener("click", function () { call(form.dataset.retryUrl, {}); });

  for (const message of JSON.parse(document.getElementById("history").textContent)) render(message);
  if (JSON.parse(document.getElementById("last-unanswered").textContent)) {
    showError("Your last message has no reply yet.");
  }
})();
