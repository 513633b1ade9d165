// "Pippa's memory in this chat" (pippa_memory/items/conversation_panel.py): reads where the
// conversation's memory stands from the JSON route and shows it as the server words it
// (pippa_memory/items/conversation_words.py: a heading, at most one sentence, what came since, an
// ask's answer waiting, the closed line; times already in the member's own zone). "Bring up to
// date" shows only when the server offers it (can_refresh), and never while memory cannot be
// reached. Text only.
(function () {
  "use strict";
  const panel = document.getElementById("memory-panel");
  if (!panel) return;
  // The panel's parts are named memory-panel-<part> in the template.
  const part = (name) => document.getElementById("memory-panel-" + name);
  const line = part("line");
  const heading = part("heading");
  const summary = part("summary");
  const list = part("items");
  const newer = part("newer");
  const answer = part("answer");
  const refresh = part("refresh");
  const refreshButton = document.getElementById("memory-refresh");
  const status = part("status");
  const soul = panel.dataset.soul;
  const tokenInput = document.querySelector("input[name=csrfmiddlewaretoken]");

  // A sentence in its place, or the place hidden when there is none.
  function say(element, text) {
    element.textContent = text || "";
    element.hidden = !text;
  }

  function item(memory) {
    const row = document.createElement("li");
    const text = document.createElement("span");
    text.className = "memory-panel-text";
    text.textContent = memory.text;
    const who = document.createElement("span");
    who.className = "meta";
    who.textContent = " · " + memory.said + " · ";
    const scope = document.createElement("span");
    scope.className = "scope " + (memory.scope === "private" ? "private" : "household");
    scope.textContent = memory.scope_words;
    row.append(text, who, scope);
    return row;
  }

  function show(data) {
    say(heading, data.heading);
    say(summary, data.summary);
    list.replaceChildren(...data.items.map(item));
    list.hidden = data.items.length === 0;
    say(newer, data.newer_text);
    say(answer, data.answer);
    refresh.hidden = !data.can_refresh;
    line.textContent = " · " + data.line;
  }

  // Memory out of reach: one sentence, nothing offered (those causes are for whoever runs the
  // household, on the memory page and in the API).
  function unreachable(data, fallback) {
    const error = (data && data.error) || {};
    const text = error.code === "memory_unavailable"
      ? soul + "'s memory cannot be reached right now; this chat goes on with what it has."
      : error.message || fallback;
    say(heading, text);
    for (const element of [summary, newer, answer]) say(element, "");
    list.hidden = true;
    refresh.hidden = true;
    line.textContent = " · unavailable";
    return text;
  }

  async function load() {
    try {
      const response = await fetch(panel.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      const data = await response.json();
      if (response.ok) show(data);
      else unreachable(data, "What this chat's memory holds cannot be read now.");
    } catch (e) {
      unreachable(null, "What this chat's memory holds cannot be read now: the server could not be reached.");
    }
  }

  refreshButton.addEventListener("click", async function () {
    refreshButton.disabled = true;
    status.textContent = "";
    try {
      const response = await fetch(panel.dataset.refreshUrl, {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "application/json", "X-CSRFToken": tokenInput ? tokenInput.value : "" },
      });
      const data = await response.json();
      // Done: the heading now says what happens (one sentence, not two).
      const error = (!response.ok && data && data.error) || {};
      if (response.ok) show(data);
      else if (error.code === "memory_unavailable") {
        unreachable(data, "");
        status.textContent = "Not brought up to date.";
      } else status.textContent = "Not brought up to date: " + (error.message || "HTTP " + response.status);
    } catch (e) {
      status.textContent = "Not brought up to date: the server could not be reached.";
    } finally {
      refreshButton.disabled = false;
    }
  });

  load();
  // After a reply, the chat may have taken its memory (its first message, or after a refresh),
  // and an answer that was waiting has ridden it.
  document.addEventListener("chat:replied", load);
})();
