// The candidate's mock interview page: tabs per challenge, one editor, the
// countdown, autosave, Run/Submit and the result panel.
//
// The server's clock is the truth: the page gets the remaining seconds (at
// load and from state.json every 5 s) and only counts down between polls.
// When the interview is over the page locks the editor and the buttons; the
// server refuses runs, submits and autosaves by then anyway (409). Results
// come from the same submission status URLs as the challenge page and are
// shown by the same result panel (result-panel.js): what came from a sandbox is
// inserted with textContent, hint texts are server-sanitised HTML.
(function () {
  "use strict";

  var config = PageKit.config("page-config");
  var csrfToken = PageKit.csrfToken();
  var $ = PageKit.byId;
  var AUTOSAVE_MS = 3000;
  var STATE_POLL_MS = 5000;

  var challenges = {};
  config.challenges.forEach(function (c) { challenges[c.slug] = c; });
  var current = config.challenges[0];
  var locked = config.state !== "live";
  var busy = false;

  PageKit.highlightStatements(".statement pre > code");

  // --- One editor, one document per challenge (each keeps its own undo history) ---
  var editor = PageKit.pythonEditor($("editor"), {
    autoCloseBrackets: true, styleActiveLine: true, readOnly: locked,
    extraKeys: {
      "Ctrl-/": "toggleComment", "Cmd-/": "toggleComment",
      "Ctrl-Enter": function () { send("run"); }, "Shift-Ctrl-Enter": function () { send("submit"); },
      "Cmd-Enter": function () { send("run"); }, "Shift-Cmd-Enter": function () { send("submit"); },
    },
  });
  window.interviewEditor = editor;
  config.challenges.forEach(function (c, i) {
    c.doc = i === 0 ? editor.getDoc() : CodeMirror.Doc(c.code, { name: "python", version: 3 });
    c.saved = c.code; // what the server has (the latest snapshot, or the starter)
  });
  // Every keystroke to the interviewer's live view, beside the autosave (interview-keys.js).
  if (!locked && window.InterviewKeys && config.keysSocket) {
    InterviewKeys.candidate({
      path: config.keysSocket,
      docs: config.challenges.map(function (c) { return { slug: c.slug, doc: c.doc }; }),
      onLocked: function (message) { lock(message); },
      onState: function (state) { $("editor").closest(".editor-frame").dataset.keys = state; },
      onRefused: function (message) { saveStatus.textContent = message; },
    });
  }

  function showError(message) { $("form-error").textContent = message; $("form-error").hidden = !message; }

  function postRaw(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin", body: body,
      headers: { "X-CSRFToken": csrfToken, Accept: "application/json", "Content-Type": "text/plain; charset=utf-8" },
    }).then(function (r) {
      return r.json().catch(function () { return { error: "The server answered " + r.status + "." }; })
        .then(function (data) { return { ok: r.ok, status: r.status, data: data }; });
    });
  }

  // --- Tabs ---
  document.querySelectorAll("#challenge-tabs .tab").forEach(function (tab) {
    tab.addEventListener("click", function () { open(tab.dataset.slug); });
  });
  function open(slug) {
    autosave(current);
    current = challenges[slug];
    editor.swapDoc(current.doc);
    document.querySelectorAll("#challenge-tabs .tab").forEach(function (t) { t.classList.toggle("active", t.dataset.slug === slug); });
    document.querySelectorAll(".statement").forEach(function (s) { s.hidden = s.dataset.slug !== slug; });
    clearResult();
    var last = current.history[current.history.length - 1];
    // Another challenge's submission may still be grading: its answers must not land in this tab.
    if (last) poller.follow(last.url); else poller.stop();
  }

  // --- The clock ---
  var remaining = Number(config.remaining_seconds);
  var countdown = $("countdown");
  function showClock() {
    var s = Math.max(0, Math.floor(remaining));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    countdown.textContent = (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(sec).padStart(2, "0");
    countdown.dataset.remaining = String(s);
  }
  function lock(message) {
    if (locked && countdown.dataset.state === "ended") return;
    locked = true;
    countdown.dataset.state = "ended";
    remaining = 0;
    showClock();
    editor.setOption("readOnly", true);
    $("run").disabled = true;
    $("submit").disabled = true;
    var banner = $("locked-banner");
    banner.textContent = (message || "Time is up.") + " Your work is saved; the editor is locked.";
    banner.hidden = false;
  }
  showClock();
  if (locked) lock(config.message);
  setInterval(function () {
    if (locked) return;
    remaining -= 1;
    showClock();
    if (remaining <= 0) checkState(); // ask the server rather than trusting this clock
  }, 1000);
  function checkState() {
    fetch(config.stateUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data) return;
        if (data.state === "ended") { lock(data.message); return; }
        remaining = data.remaining_seconds;
        showClock();
      })
      .catch(function () { /* offline: keep counting; the server still enforces the end */ });
  }
  setInterval(checkState, STATE_POLL_MS);

  // --- Autosave: every few seconds, only when the code changed ---
  var saveStatus = $("autosave-status");
  var saving = false;
  function autosave(c) {
    if (locked || saving) return;
    var code = c.doc.getValue();
    if (code === c.saved) return;
    saving = true;
    postRaw(c.autosaveUrl, code).then(function (answer) {
      saving = false;
      if (answer.ok) {
        c.saved = code;
        saveStatus.dataset.savedAt = answer.data.at;
        saveStatus.textContent = "Saved " + new Date(answer.data.at).toLocaleTimeString();
      } else if (answer.status === 409) {
        lock(answer.data.error);
      } else {
        saveStatus.textContent = answer.data.error || "Not saved (" + answer.status + ")";
      }
    }).catch(function () { saving = false; saveStatus.textContent = "Offline: not saved yet"; });
  }
  setInterval(function () { autosave(current); }, AUTOSAVE_MS);

  // --- Run / Submit ---
  function setBusy(value) {
    busy = value;
    $("run").disabled = value || locked;
    $("submit").disabled = value || locked;
  }
  function send(kind) {
    if (busy || locked) return;
    showError("");
    setBusy(true);
    var c = current;
    postRaw(kind === "run" ? c.runUrl : c.submitUrl, editor.getValue()).then(function (answer) {
      if (!answer.ok) {
        if (answer.status === 409) lock(answer.data.error);
        showError(answer.data.error || "The request was refused (" + answer.status + ").");
        setBusy(false);
        return;
      }
      c.history.push({ id: answer.data.id, url: answer.data.url });
      c.saved = editor.getValue(); // the server stored this code with the submission
      render({ id: answer.data.id, kind: answer.data.kind, status: answer.data.status, done: false });
      poller.follow(answer.data.url);
    }).catch(function () { showError("Could not reach the server."); setBusy(false); });
  }
  $("run").addEventListener("click", function () { send("run"); });
  $("submit").addEventListener("click", function () { send("submit"); });


  // Follows the submission being shown until it is graded (page-kit.js).
  var poller = PageKit.submissionPoller(
    render,
    function () { setBusy(false); },
    function (message) { showError(message); setBusy(false); }
  );

  // --- The result panel: result-panel.js, shared with the challenge page ---
  function clearResult() { ResultPanel.clear(); }
  function render(data) { ResultPanel.render(data, { reveal: reveal, regrade: regrade, cancel: cancel, editor: editor }); }
  function cancel(url, button) {
    // Stop a queued or running grading (services/cancel.py); the poller follows it until it has stopped.
    if (!url) return;
    button.disabled = true;
    postRaw(url, "").then(function (answer) {
      if (!answer.ok) { showError(answer.data.error || "Could not cancel."); button.disabled = false; return; }
      showError("");
      render(answer.data);
    }).catch(function () { showError("Could not reach the server."); button.disabled = false; });
  }
  function reveal(url, button) {
    button.disabled = true;
    postRaw(url, "").then(function (answer) {
      if (!answer.ok) { showError(answer.data.error || "Could not reveal the hint."); button.disabled = false; return; }
      showError("");
      render(answer.data);
    }).catch(function () { showError("Could not reach the server."); button.disabled = false; });
  }
  function regrade(url, button) {
    // A submission the platform failed to grade; allowed after the end too (it was sent in time).
    if (!url || busy) return;
    button.disabled = true;
    postRaw(url, "").then(function (answer) {
      if (!answer.ok) { showError(answer.data.error || "Could not regrade."); button.disabled = false; return; }
      showError("");
      render(answer.data);
      poller.follow(answer.data.url);
    }).catch(function () { showError("Could not reach the server."); button.disabled = false; });
  }

  var first = current.history[current.history.length - 1];
  if (first) poller.follow(first.url);
})();
