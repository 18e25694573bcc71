// The interviewer's live view: polls live.json every 2 s and redraws, without
// a reload, the clock, each challenge's latest code, runs and submits with
// their scores (each linked to its page with the probe details), and the hints
// shown. The replay is interview-replay.js's. Notes, rubric and recommendation
// are saved through the assess endpoint. Candidate code is inserted as text,
// never as HTML; hint texts are the server's sanitised HTML of their Markdown.
(function () {
  "use strict";

  var config = PageKit.config("page-config");
  var csrfToken = PageKit.csrfToken();
  var $ = PageKit.byId;
  var POLL_MS = 2000;

  // The result panel's helpers: the same text-only element builder and score format as the candidate's pages.
  var el = ResultPanel.el;
  var formatScore = ResultPanel.formatScore;
  var STATUS_LABEL = ResultPanel.STATUS_LABEL;
  function time(iso) { return iso ? new Date(iso).toLocaleTimeString([], { hour12: false }) : ""; }
  function showCode(pre, code) {
    pre.textContent = "";
    CodeMirror.runMode(code, "python", pre); // runMode builds text nodes and spans, no HTML parsing
  }
  function clock(seconds) {
    var s = Math.max(0, Math.floor(seconds));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    return (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(sec).padStart(2, "0");
  }

  function renderChallenge(c) {
    var section = document.querySelector('.live-challenge[data-slug="' + c.slug + '"]');
    if (!section) return;
    var pre = section.querySelector(".latest-code");
    if (c.latest_code !== null && pre.dataset.code !== c.latest_code) {
      pre.dataset.code = c.latest_code;
      showCode(pre, c.latest_code);
    }
    pre.dataset.snapshotCount = String(c.snapshot_count);
    section.querySelector(".latest-at").textContent = c.latest_at ? "(saved " + time(c.latest_at) + ", " + c.snapshot_count + " autosaves)" : "(nothing saved yet)";

    // The session's settings: the score that counts after the hint penalty ("100 - 10 for 1 hint = 90").
    var scoreLine = section.querySelector(".score-line");
    if (scoreLine) scoreLine.textContent = c.score_line || "";

    var body = section.querySelector("tbody.submissions");
    c.submissions.forEach(function (s) {
      var row = body.querySelector('tr[data-submission="' + s.id + '"]');
      if (!row) { row = document.createElement("tr"); row.dataset.submission = s.id; body.appendChild(row); }
      row.dataset.status = s.status;
      row.dataset.kind = s.kind;
      var verdict = el("td", "verdict verdict-" + (s.verdict || ""), s.verdict_label || "–");
      row.replaceChildren(
        el("td", "", s.id), el("td", "", s.kind === "run" ? "Run" : "Submit"), el("td", "", time(s.created_at)),
        el("td", "", (STATUS_LABEL[s.status] || s.status) + (s.progress ? " " + s.progress.finished + "/" + s.progress.total + " probes, " + s.progress.passed + " passed" : "")),
        verdict, el("td", "score", s.done ? formatScore(s.score) : "–"), el("td", "run-cell")
      );
      var link = el("a", "run-link", s.done ? "details" : "follow");
      link.href = s.url;
      link.setAttribute("aria-label", (s.kind === "run" ? "Run" : "Submit") + " #" + s.id + ": probe details");
      row.lastChild.appendChild(link);
    });

    var hints = section.querySelector("ul.hints");
    hints.replaceChildren();
    c.hints.forEach(function (h) {
      var li = el("li", "", time(h.revealed_at) + " · tier " + h.tier + " · ");
      li.dataset.hintId = h.hint_id;
      var text = el("div", "prose hint-text");
      text.innerHTML = h.html; // rendered from Markdown and sanitised by the server (nh3), as the candidate saw it
      li.appendChild(text);
      hints.appendChild(li);
    });
    if (!c.hints.length) hints.appendChild(el("li", "muted", "None yet."));
  }

  function render(data) {
    var state = $("live-state");
    state.dataset.state = data.state;
    state.textContent = { scheduled: "Waiting for the candidate", live: "Live", ended: "Ended" }[data.state] || data.state;
    state.className = "status-pill status-" + data.state;
    var remaining = $("remaining");
    remaining.dataset.remaining = String(data.remaining_seconds);
    remaining.textContent = clock(data.remaining_seconds);
    data.challenges.forEach(renderChallenge);
    var end = $("end-interview");
    if (end) end.disabled = data.state === "ended";
  }

  var failures = 0;
  function poll() {
    fetch(config.stateUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then(function (data) { failures = 0; showError(""); render(data); })
      .catch(function () { failures += 1; if (failures > 3) showError("Lost contact with the server; retrying."); })
      .then(function () { setTimeout(poll, POLL_MS); });
  }

  // --- Notes, rubric, recommendation ---
  function showError(message) { $("form-error").textContent = message; $("form-error").hidden = !message; }
  function assess(payload, what) {
    var status = $("assess-status");
    status.dataset.saved = "false";
    status.textContent = "Saving…";
    return fetch(config.assessUrl, {
      method: "POST", credentials: "same-origin", body: JSON.stringify(payload),
      headers: { "X-CSRFToken": csrfToken, Accept: "application/json", "Content-Type": "application/json" },
    }).then(function (r) { return r.json().then(function (data) { return { ok: r.ok, data: data }; }); })
      .then(function (answer) {
        if (!answer.ok) { status.textContent = ""; showError(answer.data.error || "Not saved."); return; }
        showError("");
        status.dataset.saved = "true";
        status.textContent = what + " saved at " + new Date().toLocaleTimeString([], { hour12: false });
      })
      .catch(function () { status.textContent = ""; showError("Could not reach the server; not saved."); });
  }
  Object.keys(config.rubric || {}).forEach(function (criterion) {
    var entry = config.rubric[criterion];
    var select = document.querySelector('select[name="score-' + criterion + '"]');
    var comment = document.querySelector('input[name="comment-' + criterion + '"]');
    if (select) select.value = String(entry.score);
    if (comment) comment.value = entry.comment;
  });
  $("save-notes").addEventListener("click", function () { assess({ notes: $("notes").value }, "Notes"); });
  // Notes also save themselves a few seconds after typing stops.
  var notesTimer = null;
  $("notes").addEventListener("input", function () {
    clearTimeout(notesTimer);
    notesTimer = setTimeout(function () { assess({ notes: $("notes").value }, "Notes"); }, 3000);
  });
  $("save-assessment").addEventListener("click", function () {
    var rubric = {};
    document.querySelectorAll("select[name^=score-]").forEach(function (select) {
      if (!select.value) return;
      var criterion = select.dataset.criterion;
      var comment = document.querySelector('input[name="comment-' + criterion + '"]');
      rubric[criterion] = { score: Number(select.value), comment: comment ? comment.value : "" };
    });
    assess({ rubric: rubric, recommendation: $("recommendation").value, notes: $("notes").value }, "Assessment");
  });
  $("end-form").addEventListener("submit", function (event) {
    if (!window.confirm("End the interview now? The candidate's editor locks.")) event.preventDefault();
  });

  // Keystroke-level code and the candidate's cursor over a websocket; the poll above is the fallback (interview-keys.js).
  if (window.InterviewKeys && config.keysSocket) {
    InterviewKeys.watch({ path: config.keysSocket, sections: document.querySelectorAll(".live-challenge"), indicator: $("keys-status") });
  }
  poll();
})();
