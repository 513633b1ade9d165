// "Pippa's memory in this chat" (pippa_memory/items/conversation_panel.py): reads what the
// conversation's pinned memory holds and how many memories came since from the JSON route, and
// offers "Bring up to date", which re-pins the conversation at its next message. Text only.
(function () {
  "use strict";
  const panel = document.getElementById("memory-panel");
  if (!panel) return;
  const line = document.getElementById("memory-panel-line");
  const summary = document.getElementById("memory-panel-summary");
  const list = document.getElementById("memory-panel-items");
  const newer = document.getElementById("memory-panel-newer");
  const refresh = document.getElementById("memory-panel-refresh");
  const refreshButton = document.getElementById("memory-refresh");
  const status = document.getElementById("memory-panel-status");
  const soul = panel.dataset.soul;
  const tokenInput = document.querySelector("input[name=csrfmiddlewaretoken]");

  function plural(count, one, many) {
    return count + " " + (count === 1 ? one : many);
  }

  function when(iso) {
    const date = new Date(iso);
    return date.toLocaleString(undefined, { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
  }

  function show(data) {
    summary.textContent = data.summary;
    list.replaceChildren();
    for (const item of data.items) {
      const row = document.createElement("li");
      const text = document.createElement("span");
      text.className = "memory-panel-text";
      text.textContent = item.text;
      const who = document.createElement("span");
      who.className = "meta";
      who.textContent = " · " + item.said;
      row.append(text, who);
      list.appendChild(row);
    }
    if (data.state === "pinned" && !data.items.length) {
      const row = document.createElement("li");
      row.className = "empty";
      row.textContent = soul + " remembered nothing you can see when this chat began.";
      list.appendChild(row);
    }
    const withoutMemory = ["absent", "too_large", "unusable"].includes(data.state);
    // A chat whose memory was too large or unusable may bring it in at once: always worth a try,
    // and never "up to date".
    const retryable = data.state === "too_large" || data.state === "unusable";
    const since = data.newer > 0 ? plural(data.newer, "memory", "memories") + " came since" : "";
    newer.hidden = !(data.state === "pinned" || withoutMemory) || (retryable && data.newer === 0);
    newer.textContent = since
      ? since + "; " + soul + " does not know " + (data.newer === 1 ? "it" : "them") + " in this chat yet."
      : "Nothing new since: this chat is up to date.";
    refresh.hidden = !(retryable || ((data.state === "pinned" || withoutMemory) && data.newer > 0));
    // The closed panel's one line: what is news first, short enough for a phone.
    let head = "";
    if (data.state === "temporary") head = " · none (temporary chat)";
    else if (data.state === "waiting") head = " · taken at your next message";
    else if (data.newer > 0) head = " · " + data.newer + " new since";
    else if (data.pinned_at) head = " · from " + when(data.pinned_at);
    line.textContent = head;
  }

  // Why it failed, in plain words: memory out of reach is said as such, without its causes
  // (those are for whoever runs the household, on the memory page and in the API).
  function failed(data, fallback) {
    const error = (data && data.error) || {};
    if (error.code === "memory_unavailable") {
      return soul + "'s memory cannot be reached right now; this chat goes on with what it has.";
    }
    return error.message || fallback;
  }

  async function load() {
    try {
      const response = await fetch(panel.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      const data = await response.json();
      if (response.ok) show(data);
      else summary.textContent = failed(data, "What this chat's memory holds cannot be read now.");
    } catch (e) {
      summary.textContent = "What this chat's memory holds cannot be read now: the server could not be reached.";
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
      if (response.ok) {
        show(data);
        status.textContent = data.refreshed;
      } else {
        status.textContent = "Not brought up to date: " + failed(data, "HTTP " + response.status);
      }
    } catch (e) {
      status.textContent = "Not brought up to date: the server could not be reached.";
    } finally {
      refreshButton.disabled = false;
    }
  });

  load();
  // After a reply, the chat may have taken its memory (its first message, or after a refresh).
  document.addEventListener("chat:replied", load);
})();
