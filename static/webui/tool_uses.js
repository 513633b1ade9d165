// A tool use on the chat page as a sentence a person reads (what the soul did with her memory,
// and what it found or why it fell back), with the raw call one click further away. chat.js
// calls PippaToolUses.detail(use, soul) for each tool use of a reply; text only, never HTML.
(function () {
  "use strict";
  function pretty(value) {
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }

  function quoted(text) {
    const one = String(text || "").replace(/\s+/g, " ").trim();
    return "“" + (one.length > 80 ? one.slice(0, 79) + "…" : one) + "”";
  }

  function things(count) {
    return count === 0 ? "nothing" : count === 1 ? "1 thing" : count + " things";
  }

  // A tool use as a sentence a person reads; the raw call stays one click further away.
  function toolSentence(use, soul) {
    const input = use.input || {};
    const output = use.output || {};
    if (use.name !== "memory") return soul + " used the tool " + quoted(use.name) + ".";
    if (output.error) {
      return soul + " could not use her memory just now" + (output.error === "memory_unavailable" ? " (it could not be reached)." : ".");
    }
    if (input.verb === "remember") return soul + " noted " + quoted(input.text) + " to remember.";
    if (input.verb === "ask") return soul + " asked her memory " + quoted(input.text) + "; the answer comes later.";
    const found = Array.isArray(output.items) ? output.items.length : 0;
    if (output.match === "fallback") {
      return soul + " looked in her memory for " + quoted(input.text) + ": nothing matched, so she looked at " + things(found) + " she remembers instead.";
    }
    return soul + " looked in her memory for " + quoted(input.text) + " and found " + things(found) + ".";
  }

  function toolUseDetail(use, soul) {
    const details = document.createElement("details");
    details.className = "tool-use";
    const summary = document.createElement("summary");
    summary.textContent = toolSentence(use, soul);
    details.appendChild(summary);
    const output = use.output || {};
    if (output.match === "fallback") {
      // A recall that fell back is not a match: the reader is told in words written for them.
      details.classList.add("fallback");
      const note = document.createElement("p");
      note.className = "fallback-note";
      note.textContent = "These are not matches but a fallback: the nearest things " + soul + " remembers, which may not be about what was asked.";
      details.appendChild(note);
    } else if (output.error) {
      details.classList.add("tool-error");
    }
    for (const item of Array.isArray(output.items) ? output.items : []) {
      const line = document.createElement("p");
      line.className = "tool-item";
      line.textContent = "• " + item.text;
      details.appendChild(line);
    }
    const raw = document.createElement("details");
    raw.className = "raw-call";
    const rawSummary = document.createElement("summary");
    rawSummary.textContent = "The raw call";
    raw.appendChild(rawSummary);
    for (const [label, value] of [["Input", use.input], ["Output", use.output]]) {
      const heading = document.createElement("div");
      heading.textContent = label;
      const pre = document.createElement("pre");
      pre.textContent = pretty(value);
      raw.append(heading, pre);
    }
    details.appendChild(raw);
    return details;
  }


  window.PippaToolUses = {
    detail(use, soul) {
      return toolUseDetail(use, soul || "Pippa");
    },
    quoted,
  };
})();
