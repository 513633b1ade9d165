// The chat page: renders the stored history, sends messages to the API as server-sent events
// (webui/api/streams.py), shows a reply's text as it arrives and its tool uses as they run, offers
// Stop while a reply is written, and Retry when the vessel failed (the user's message stays saved).
// An answer that is not a stream (a refusal before the turn starts) is read as the JSON route's.
// A reply's Markdown comes from the server already rendered and sanitised (``html``,
// webui/text/reply_markdown.py) and is inserted in one place only, insertSanitisedReplyHtml; a member's
// own messages, and a reply while it is being written, are plain text.
(function () {
  "use strict";
  const chat = document.getElementById("chat");
  const form = document.getElementById("send");
  const textarea = document.getElementById("text");
  const button = form.querySelector("button[type=submit]");
  const status = document.getElementById("status");
  const errorBox = document.getElementById("chat-error");
  const retryButton = document.getElementById("retry");
  const stopButton = document.getElementById("stop");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  // Whether a send or retry is running: a second one (Ctrl+Enter ignores the disabled Send button)
  // would be refused and, finishing, forget the running turn's Stop.
  let inFlight = false;
  // The saved message that failed and Retry answers (its id); null when there is none to retry.
  let retryId = null;
  // Whether Stop was pressed for the running reply: the status line then says so, not "being written".
  let stopping = false;
  // Whether the error shown is the composer's own over-the-limit sentence (it goes by itself).
  let overLimitShown = false;

  // The soul's name, for the words the page says (data-soul on the form).
  const soul = form.dataset.soul || "Pippa";
  const quoted = window.PippaToolUses.quoted;
  const toolUseDetail = (use) => window.PippaToolUses.detail(use, soul);

  // The one place HTML enters the page: a reply's ``html``, rendered and sanitised on the server.
  function insertSanitisedReplyHtml(body, html) {
    body.classList.add("markdown");
    body.innerHTML = html;
  }

  // What rode the reply, shown under it (background answers, remembers on their way to memory):
  // notes the server gives beside the message, never part of it. Text only, never HTML.
  function messageNotes(message) {
    const notes = message.notes || [];
    if (!notes.length) return null;
    const list = document.createElement("ul");
    list.className = "message-notes";
    for (const note of notes) {
      const line = document.createElement("li");
      line.className = "message-note note-" + String(note.kind).replace(/[^a-z0-9_-]/gi, "");
      line.textContent = note.text;
      list.appendChild(line);
    }
    return list;
  }

  function render(message) {
    const item = document.createElement("div");
    item.className = "message " + message.role;
    item.dataset.id = message.id;
    item.id = "message-" + message.id;  // the memory page links to a turn here
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = message.role === "user" ? "You" : soul;
    // Stopped by its reader, or interrupted by a server restart: what was written until then, kept.
    const ending = message.stopped ? "stopped" : message.interrupted ? "interrupted" : null;
    if (ending) {
      item.classList.add(ending);
      const mark = document.createElement("span");
      mark.className = ending + "-mark";
      mark.textContent = ending === "stopped" ? " · stopped" : " · interrupted: the server restarted while this was written";
      who.appendChild(mark);
    } else if (message.interrupted) {
      // Its server process ended while writing it: what had arrived, kept as it was.
      item.classList.add("stopped");
      const mark = document.createElement("span");
      mark.className = "stopped-mark";
      mark.textContent = " · interrupted";
      who.appendChild(mark);
    }
    const body = document.createElement("div");
    body.className = "content";
    if (message.role === "assistant" && typeof message.html === "string") insertSanitisedReplyHtml(body, message.html);
    else body.textContent = message.content;
    item.append(who, body);
    for (const use of message.tool_uses || []) item.appendChild(toolUseDetail(use));
    const notes = messageNotes(message);
    if (notes) item.appendChild(notes);
    chat.appendChild(item);
    revealAboveComposer(item);
    return item;
  }

  // Scroll ``item`` into view with its bottom above the composer, which sticks to the window's
  // bottom and is as tall as its hint and character count make it at the moment.
  function revealAboveComposer(item) {
    item.style.scrollMarginBottom = form.offsetHeight + 16 + "px";
    item.scrollIntoView({ block: "end" });
  }

  function shown(message) {
    return document.querySelector('.message[data-id="' + message.id + '"]');
  }

  // Shows the error; Retry only when ``failedId`` names the saved message it would answer.
  // ``about`` is the message on the page the error is about (by default the one ``failedId``
  // names): the error sits in the composer, which sticks to the window's bottom and grows by it,
  // so the page scrolls that message above the taller composer: both show, neither covers.
  function showError(text, failedId, about) {
    retryId = failedId || null;
    retryButton.hidden = retryId === null;
    errorBox.querySelector(".text").textContent = text + " ";
    errorBox.hidden = false;
    overLimitShown = false;
    const message = about || (failedId && document.getElementById("message-" + failedId));
    if (message) revealAboveComposer(message);
    else form.scrollIntoView({ block: "end" });
  }

  // Server-sent events from a fetch body: "event:" and "data:" lines, a blank line ends an event.
  function eventParser(onEvent) {
    let buffer = "";
    return function (chunk) {
      buffer += chunk.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) onEvent(name, JSON.parse(data.join("\n")));
      }
    };
  }

  // The reply being written: its text as it arrives and its tool uses as they run.
  function writingReply() {
    const item = document.createElement("div");
    item.className = "message assistant writing";
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = soul + " · writing…";
    const body = document.createElement("div");
    body.className = "content";
    item.append(who, body);
    chat.appendChild(item);
    const tools = {};
    return {
      item: item,
      add: function (text) {
        body.textContent += text;
        revealAboveComposer(item);
      },
      tool: function (use) {
        let line = tools[use.id];
        if (!line) {
          line = tools[use.id] = document.createElement("div");
          line.className = "tool-use running";
          item.appendChild(line);
        }
        const running = use.state === "started";
        line.classList.toggle("running", running);
        const doing = { recall: "looking in her memory", remember: "noting something to remember", ask: "asking her memory" };
        const what = use.name === "memory" && doing[use.verb] ? doing[use.verb] : "using the tool " + quoted(use.name);
        line.textContent = soul + (running ? " is " + what + "…" : " is done " + what + ".");
      },
    };
  }

  function showFailure(error, httpStatus, about) {
    const saved = error.details && error.details.user_message;
    if (saved && !shown(saved)) render(saved);
    if (error.code === "turn_in_progress") {
      // Nothing was saved and another reply is running: no Retry, only the plain sentence.
      showError("A reply is still being written in this conversation; wait for it, then send again.");
      return false;
    }
    showError(error.message || "Something went wrong (HTTP " + httpStatus + "); your message is kept, try again.", saved && saved.id, about);
    // The message was kept: clear the box so it is not sent twice; Retry answers it.
    return Boolean(saved);
  }

  // The title the first turn gave the conversation, shown as soon as the reply says it.
  function showTitle(conversation) {
    if (!conversation || !conversation.title) return;
    const heading = document.getElementById("conversation-title");
    if (heading) heading.textContent = conversation.title;
    document.title = document.title.replace(/^.*?( · Household)$/, conversation.title + "$1");
    const rename = document.querySelector("form.rename input[name=title]");
    if (rename && !rename.value) rename.value = conversation.title;
  }

  async function answered(response) {
    let data = {};
    try { data = await response.json(); } catch (e) { data = {}; }
    if (response.ok) {
      showTitle(data.conversation);
      if (!shown(data.user)) render(data.user);
      render(data.assistant);
      return true;
    }
    return showFailure(data.error || {}, response.status);
  }

  async function streamed(response, sentText) {
    let reply = null;
    let pending = null;
    let outcome = null;
    const handle = eventParser(function (name, data) {
      if (name === "turn") {
        stopButton.dataset.turnId = data.turn_id;
        stopButton.hidden = false;
        stopButton.disabled = false;
        if (sentText) pending = render({ role: "user", content: sentText, id: "" });
        reply = writingReply();
      } else if (name === "delta") {
        if (!stopping) status.textContent = "The reply is being written…";
        reply.add(data.text);
      } else if (name === "tool") {
        reply.tool(data);
      } else if (name === "done") {
        if (pending) pending.remove();
        if (reply) reply.item.remove();
        showTitle(data.conversation);
        if (!shown(data.user)) render(data.user);
        render(data.assistant);
        document.dispatchEvent(new CustomEvent("chat:replied"));
        outcome = true;
      } else if (name === "error") {
        if (pending) pending.remove();
        // A reply written but not saved stays on the page, so its text is not lost.
        const kept = reply && data.error && data.error.code === "reply_not_saved";
        if (kept) reply.item.classList.add("cut-off");
        else if (reply) reply.item.remove();
        outcome = showFailure(data.error || {}, data.status, kept ? reply.item : null);
      }
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        handle(value);
      }
    } catch (e) {
      // A broken connection after the last event changes nothing: the outcome stands.
    }
    if (outcome !== null) return outcome;
    // The stream broke off: the server still finishes the reply and saves it.
    if (reply) reply.item.classList.add("cut-off");
    showError("The connection was lost while the reply was being written. If the server goes on writing it, it is saved when done; if the server itself stopped, what had arrived is kept, marked interrupted, and you can send again within half a minute. Reload the page to see it.");
    return Boolean(pending);
  }

  async function call(url, body) {
    if (inFlight) return false;
    inFlight = true;
    button.disabled = true;
    retryButton.disabled = true;
    status.textContent = "Waiting for the reply…";
    errorBox.hidden = true;
    try {
      const response = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "text/event-stream, application/json" },
        body: JSON.stringify(body),
      });
      const type = response.headers.get("Content-Type") || "";
      // Anything but a stream (a refusal before the turn starts) is the JSON route's answer.
      if (!type.startsWith("text/event-stream") || !response.body) return await answered(response);
      return await streamed(response, body.text);
    } catch (e) {
      showError("The server could not be reached. Your message may not have been sent.");
      return false;
    } finally {
      button.disabled = false;
      retryButton.disabled = false;
      stopButton.hidden = true;
      delete stopButton.dataset.turnId;
      status.textContent = stopping ? "Stopped." : "";
      stopping = false;
      inFlight = false;
    }
  }

  stopButton.addEventListener("click", async function () {
    const turnId = stopButton.dataset.turnId;
    if (!turnId) return;
    stopButton.disabled = true;
    stopping = true;
    status.textContent = "Stopping…";
    try {
      const response = await fetch(form.dataset.stopUrl, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
        body: JSON.stringify({ turn_id: turnId }),
      });
      if (response.status !== 202) {
        // Nothing to stop: the reply ended, or no process was writing it any more (says so).
        const data = await response.json().catch(function () { return {}; });
        stopping = false;
        status.textContent = (data.error && data.error.message) || "There was no reply to stop.";
      }
    } catch (e) {
      stopButton.disabled = false;
      stopping = false;
      showError("Stop did not reach the server; the reply is still being written.");
    }
  });

  // The composer: the server's limit (data-max-chars), counted as the server counts (characters,
  // not UTF-16 units, spaces around the message dropped), shown once the message nears it.
  const maxChars = Number(form.dataset.maxChars) || 0;
  const charCount = document.getElementById("char-count");

  function messageLength(text) {
    return Array.from(text.trim()).length;
  }

  function showCharCount() {
    const length = messageLength(textarea.value);
    const near = maxChars > 0 && length >= maxChars * 0.8;
    charCount.hidden = !near;
    charCount.classList.toggle("over", near && length > maxChars);
    charCount.textContent = near ? length + " / " + maxChars + " characters" : "";
  }

  // A message over the limit is refused here, with a plain sentence and no Retry: nothing is
  // sent, and nothing is cut (the box has no maxlength, which would cut a paste without a word).
  // The sentence shows as soon as the box holds too much (a paste, say) and goes once it does not.
  function overLimitRefusal(text) {
    const length = messageLength(text);
    if (!maxChars || length <= maxChars) return null;
    return "This message has " + length + " characters; a message may have at most " + maxChars +
      ". Shorten it or send it in parts. Nothing was sent.";
  }

  function sayIfOverLimit() {
    const refusal = overLimitRefusal(textarea.value);
    if (refusal) {
      showError(refusal);
      overLimitShown = true;
    } else if (overLimitShown) {
      errorBox.hidden = true;
      overLimitShown = false;
    }
  }

  // Enter sends; Shift+Enter starts a new line (as the hint under the box says). Ctrl/Cmd+Enter
  // sends too; Enter that finishes an input method's composition sends nothing.
  function composerKeydown(event) {
    if (event.key !== "Enter" || event.isComposing || event.shiftKey || event.altKey) return;
    event.preventDefault();
    form.requestSubmit();
  }

  textarea.addEventListener("input", showCharCount);
  textarea.addEventListener("input", sayIfOverLimit);
  textarea.addEventListener("keydown", composerKeydown);
  showCharCount();

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    const text = textarea.value.trim();
    if (!text) return;
    const refusal = overLimitRefusal(text);
    if (refusal) {
      showError(refusal);
      overLimitShown = true;
      return;
    }
    const sent = await call(form.dataset.messagesUrl, { text: text });
    // Clear what was sent, but never what the member typed while the reply was being written.
    if (sent && textarea.value.trim() === text) textarea.value = "";
    showCharCount();
  });
  retryButton.addEventListener("click", function () {
    if (retryId) call(form.dataset.retryUrl, { message: retryId });
  });

  const history = JSON.parse(document.getElementById("history").textContent);
  for (const message of history) render(message);
  // A notice from the server (a rename's result, say) is at the top, by the title where the
  // change was made: show it there rather than the last message.
  const notice = document.querySelector("main > .notice");
  if (notice) window.scrollTo(0, 0);
  if (JSON.parse(document.getElementById("last-unanswered").textContent)) {
    // What a reply had when its server process died, kept on the server for the next turn.
    const arrived = JSON.parse(document.getElementById("what-arrived").textContent);
    if (arrived) {
      const cut = writingReply();
      cut.add(arrived);
      cut.item.classList.replace("writing", "cut-off");
      cut.item.querySelector(".who").textContent = soul + " · interrupted";
    }
    showError(arrived
      ? "The server stopped while writing this reply; what had arrived is shown. Send a new message to keep it (marked interrupted), or Retry for a whole answer."
      : "Your last message has no reply yet.", history[history.length - 1].id);
  }
})();
