// One Run or Submit of a mock interview, for its interviewer (/interviews/<id>/submissions/<pk>/): the shared
// result panel drawn from the whole stored result (payload.full: diffs, observations and error pictures of
// every probe, hidden ones included), followed while it is graded; every hint it unlocked with its text and
// whether the candidate revealed it. Hint texts are the server's sanitised HTML; everything else is text.
(function () {
  "use strict";

  var $ = PageKit.byId;
  var el = ResultPanel.el;
  var data = PageKit.config("run-payload");
  var TIER = ["", "Nudge", "Concept", "Near-solution"];

  function showError(message) {
    $("form-error").textContent = message;
    $("form-error").hidden = !message;
  }

  function renderHints(payload) {
    var list = $("unlocked-hints");
    list.replaceChildren();
    (payload.unlocked_hints || []).forEach(function (h) {
      var li = el("li", "unlocked-hint hint hint-tier-" + h.tier);
      li.dataset.hintId = h.id;
      li.dataset.revealed = h.revealed ? "true" : "false";
      var head = el("div", "hint-head");
      if (h.kind === "diagnosis") {
        // The known mistake the failures look like, and the shipped wrong solution it came from (never the candidate's to see).
        li.classList.add("hint-diagnosis");
        if (h.solution) {
          var how = h.similarity >= 1 ? "the same failures as" : Math.round(h.similarity * 100) + "% like";
          head.appendChild(el("span", "hint-tier", "Diagnosis · " + how + " solutions/" + h.solution + ".py"));
        } else {
          // No known mistake was near: the parts of the statement (coverage.toml) whose every probe failed.
          head.appendChild(el("span", "hint-tier", "Diagnosis · no known mistake near; statement parts " + (h.rules || []).join(", ")));
        }
      } else {
        head.appendChild(el("span", "hint-tier", (TIER[h.tier] || "Hint") + " · " + h.id));
      }
      head.appendChild(el("span", "tag " + (h.revealed ? "hint-revealed" : "hint-unrevealed"),
        h.revealed ? "revealed by the candidate at " + h.revealed_clock : "not revealed"));
      if (h.probes && h.probes.length) head.appendChild(el("span", "muted small", "about " + h.probes.join(", ")));
      li.appendChild(head);
      var body = el("div", "hint-body prose");
      body.innerHTML = h.html; // rendered from Markdown and sanitised by the server (nh3)
      li.appendChild(body);
      list.appendChild(li);
    });
    if (!list.children.length) list.appendChild(el("li", "muted", payload.done ? "None." : "Known once it is graded."));
  }

  function render(payload) {
    ResultPanel.render(payload, {});
    var facts = $("run-facts");
    facts.dataset.verdict = payload.verdict || "";
    renderHints(payload);
  }

  var poller = PageKit.submissionPoller(render, function () {}, showError);
  render(data);
  if (!data.done && data.url) poller.follow(data.url);

  var code = $("submitted-code");
  if (code && window.CodeMirror && CodeMirror.runMode) CodeMirror.runMode(code.textContent, "python", code);
})();
