// The challenge page: the editor, Run/Submit, the live result panel and the history.
//
// Run/Submit POST the editor's text as the raw request body and get back a
// submission id and its status URL, which is polled until the submission is
// done. The result panel is result-panel.js (shared with the mock interview's
// candidate page): everything that came from a sandbox is inserted there with
// textContent, never as HTML; hint texts are the server's sanitised HTML.
(function () {
  "use strict";

  var config = PageKit.config("page-config");
  var starter = PageKit.config("starter-code");
  var csrfToken = PageKit.csrfToken();
  var draftKey = "unsaved-draft:" + config.slug;  // per challenge, not per version (a new version keeps the code)

  var $ = PageKit.byId;
  var runButton = $("run");
  var submitButton = $("submit");
  var busy = false;

  // --- Statement code blocks: highlight with the same mode as the editor ---
  PageKit.highlightStatements("#statement pre > code");

  // --- Editor ---
  var editor = PageKit.pythonEditor($("editor"), {
    autoCloseBrackets: true,
    styleActiveLine: true,
    extraKeys: {
      "Ctrl-/": "toggleComment",
      "Cmd-/": "toggleComment",
      "Ctrl-Enter": function () { send("run"); },
      "Cmd-Enter": function () { send("run"); },
      "Shift-Ctrl-Enter": function () { send("submit"); },
      "Shift-Cmd-Enter": function () { send("submit"); },
    },
  });
  window.challengeEditor = editor;

  // --- Read-only given modules: one tab each beside the candidate's file ---
  var givenEditors = [];
  document.querySelectorAll("textarea.given-source").forEach(function (area) {
    givenEditors.push(PageKit.pythonEditor(area, { readOnly: true }));
  });
  var tabs = Array.prototype.slice.call(document.querySelectorAll("#file-tabs [role=tab]"));
  function showTab(tab) {
    tabs.forEach(function (t) {
      var selected = t === tab;
      t.setAttribute("aria-selected", selected ? "true" : "false");
      t.tabIndex = selected ? 0 : -1;
      $(t.getAttribute("aria-controls")).hidden = !selected;
    });
    $("reset-code").hidden = tab.id !== "tab-entry";
    // A CodeMirror laid out while hidden has no size until refreshed.
    var panel = $(tab.getAttribute("aria-controls"));
    var cm = panel.querySelector(".CodeMirror");
    if (cm && cm.CodeMirror) cm.CodeMirror.refresh();
  }
  tabs.forEach(function (tab, i) {
    tab.addEventListener("click", function () { showTab(tab); });
    tab.addEventListener("keydown", function (event) {
      var step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      var next = tabs[(i + step + tabs.length) % tabs.length];
      showTab(next);
      next.focus();
    });
  });

  // --- Drafts: the server keeps the code per user and challenge (any device, any version); the editor opened with it.
  // An edit is saved a moment after typing stops. This browser also keeps the text whose save has not been
  // confirmed yet, so a save lost offline is put back on the next visit (and saved then).
  var saveTimer = null;
  var unsaved = null;
  try { unsaved = window.localStorage.getItem(draftKey); } catch (e) { /* storage disabled */ }
  if (unsaved !== null && unsaved !== editor.getValue()) editor.setValue(unsaved);

  function remember(text) {
    try {
      if (text === null) window.localStorage.removeItem(draftKey); else window.localStorage.setItem(draftKey, text);
    } catch (e) { /* full or disabled */ }
  }

  function saveDraft() {
    if (!config.draftUrl) return;
    var text = editor.getValue();
    postJSON(config.draftUrl, text, "text/plain; charset=utf-8").then(function (answer) {
      if (answer.ok && editor.getValue() === text) remember(null);
    }).catch(function () { /* offline: the browser's copy stays until a save goes through */ });
  }

  editor.on("change", function () {
    remember(editor.getValue());
    clearTimeout(saveTimer);
    saveTimer = setTimeout(saveDraft, 1200);
  });
  if (unsaved !== null) saveDraft();
  $("reset-code").addEventListener("click", function () {
    if (editor.getValue() === starter || window.confirm("Replace your code with the starter code?")) {
      editor.setValue(starter);
    }
  });

  // --- Helpers ---
  var el = ResultPanel.el;
  var formatScore = ResultPanel.formatScore;
  var STATUS_LABEL = ResultPanel.STATUS_LABEL;

  function showError(message) {
    if (message) showStatus(message, "refused");
    else if (actionStatus && actionStatus.dataset.state === "refused") showStatus("");
  }

  // --- The status beside Run/Submit: what the candidate just asked for, where their eyes are ---
  // At 1280x900 the result panel starts below the fold: the line says queued / running / the verdict (or why the
  // request was refused) beside the buttons, and the page scrolls to the result when a grading sent from here ends.
  var actionStatus = $("action-status");
  var actionHint = $("action-hint");
  var sentId = null;  // the submission this page sent; its result is scrolled to once, when it is done

  function showStatus(text, state) {
    if (!actionStatus) return;
    actionStatus.textContent = text;
    actionStatus.dataset.state = state || "";
    actionStatus.setAttribute("role", state === "refused" ? "alert" : "status");
    actionStatus.hidden = !text;
    if (actionHint) actionHint.hidden = !!text;
  }

  function followInStatus(data) {
    if (data.id !== sentId) return;
    var what = (data.kind === "run" ? "Run" : "Submit") + " #" + data.id + " · ";
    if (!data.done) {
      var label = STATUS_LABEL[data.status] || data.status;
      if (data.status === "queued" && typeof data.queue_ahead === "number") {
        label += data.queue_ahead === 0 ? ", next in line" : ", " + data.queue_ahead + " ahead of you";
      }
      if (data.status === "running" && data.live && typeof data.live.finished === "number" && data.live.total) {
        label += ", " + data.live.finished + " of " + data.live.total + " probes";
      }
      showStatus(what + label, data.status);
      return;
    }
    sentId = null;
    if (data.verdict === "syntax_error") {
      // The whole answer fits the line, and the editor (its line marked) is what to look at next: no scrolling away.
      showStatus(what + (data.message || data.verdict_label), "done");
      actionStatus.dataset.verdict = data.verdict;
      return;
    }
    showStatus(what + (data.verdict_label || "done") + (data.score !== null && data.score !== undefined ? " · " + formatScore(data.score) : ""), "done");
    actionStatus.dataset.verdict = data.verdict || "";
    var panel = $("result");
    if (panel && panel.getBoundingClientRect().top > window.innerHeight * 0.6) {
      panel.scrollIntoView({ behavior: "smooth", block: "start" });
    }
  }

  function setBusy(value) {
    busy = value;
    if (runButton) runButton.disabled = value;
    if (submitButton) submitButton.disabled = value;
  }

  // --- Rendering a submission: the shared result panel, then this page's history table ---
  function render(data) {
    ResultPanel.render(data, { reveal: reveal, regrade: regradeSubmission, cancel: cancelSubmission, editor: editor });
    updateHistory(data);
    followInStatus(data);
  }

  function updateHistory(data) {
    var table = $("history");
    if (!table) return;
    var body = table.tBodies[0];
    var empty = body.querySelector(".history-empty");
    if (empty) empty.remove();
    var row = body.querySelector('tr[data-submission="' + data.id + '"]');
    if (!row) {
      row = document.createElement("tr");
      row.dataset.submission = data.id;
      row.dataset.url = data.url;
      row.tabIndex = 0;
      body.insertBefore(row, body.firstChild);
    }
    var when = data.created_at ? new Date(data.created_at) : null;
    row.replaceChildren(
      el("td", "", data.id),
      el("td", "", data.kind === "run" ? "Run" : "Submit"),
      el("td", "", when ? when.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hour12: false }) : ""),
      el("td", "", STATUS_LABEL[data.status] || data.status),
      (function () { var td = el("td"); td.appendChild(el("span", "verdict-text verdict-" + (data.verdict || ""), data.verdict_label || "–")); return td; })(),
      el("td", "", data.done ? formatScore(data.score) : "–")
    );
    body.querySelectorAll("tr").forEach(function (r) { r.classList.toggle("selected", r === row); });
  }

  // --- Talking to the server ---
  function postJSON(url, body, contentType) {
    var headers = { "X-CSRFToken": csrfToken, Accept: "application/json" };
    if (contentType) headers["Content-Type"] = contentType;
    return fetch(url, { method: "POST", headers: headers, body: body, credentials: "same-origin" }).then(function (response) {
      return response.json().catch(function () { return { error: "The server answered " + response.status + "." }; })
        .then(function (data) { return { ok: response.ok, status: response.status, data: data }; });
    });
  }

  function send(kind) {
    if (busy) return;
    if (!config.authenticated) { window.location.href = config.loginUrl; return; }
    showError("");
    setBusy(true);
    var code = editor.getValue();
    postJSON(kind === "run" ? config.runUrl : config.submitUrl, code, "text/plain; charset=utf-8")
      .then(function (answer) {
        if (!answer.ok) {
          showError(answer.data.error || "The request was refused (" + answer.status + ").");
          setBusy(false);
          return;
        }
        sentId = answer.data.id;
        render({ id: answer.data.id, kind: answer.data.kind, status: answer.data.status, url: answer.data.url,
                 done: false, created_at: new Date().toISOString() });
        poller.follow(answer.data.url);
      })
      .catch(function () {
        showError("Could not reach the server. Check your connection and try again.");
        setBusy(false);
      });
  }


  // Follows the submission being shown until it is graded (page-kit.js).
  var poller = PageKit.submissionPoller(
    render,
    function () { setBusy(false); },
    function (message) { showError(message); setBusy(false); }
  );

  function regradeSubmission(url, button) {
    if (!url || busy) return;
    button.disabled = true;
    setBusy(true);
    postJSON(url, null).then(function (answer) {
      if (!answer.ok) { showError(answer.data.error || "Could not regrade."); button.disabled = false; setBusy(false); return; }
      showError("");
      render(answer.data);
      poller.follow(answer.data.url);
    }).catch(function () {
      showError("Could not reach the server.");
      button.disabled = false;
      setBusy(false);
    });
  }

  // Stop a queued or running grading: the answer is the submission as it is now (done at once if it was queued,
  // "cancelling" if it runs); the poller goes on following it until the worker has stopped it.
  function cancelSubmission(url, button) {
    if (!url) return;
    button.disabled = true;
    postJSON(url, null).then(function (answer) {
      if (!answer.ok) { showError(answer.data.error || "Could not cancel."); button.disabled = false; return; }
      showError("");
      render(answer.data);
    }).catch(function () {
      showError("Could not reach the server.");
      button.disabled = false;
    });
  }

  function reveal(url, button) {
    button.disabled = true;
    postJSON(url, null).then(function (answer) {
      if (!answer.ok) { showError(answer.data.error || "Could not reveal the hint."); button.disabled = false; return; }
      showError("");
      render(answer.data);
    }).catch(function () {
      showError("Could not reach the server.");
      button.disabled = false;
    });
  }

  if (runButton) runButton.addEventListener("click", function () { send("run"); });
  if (submitButton) submitButton.addEventListener("click", function () { send("submit"); });

  // Clicking a past submission shows its result (and follows it if it is still running).
  var history = $("history");
  if (history) {
    var open = function (row) {
      if (!row || !row.dataset.url) return;
      poller.follow(row.dataset.url);
    };
    history.addEventListener("click", function (event) { open(event.target.closest("tr[data-submission]")); });
    history.addEventListener("keydown", function (event) {
      if (event.key === "Enter") open(event.target.closest("tr[data-submission]"));
    });
    // Show the latest submission at once, so a reload keeps the result on screen.
    open(history.querySelector("tbody tr[data-submission]"));
  }
})();
