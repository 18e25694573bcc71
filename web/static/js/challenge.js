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
  var draftKey = "draft:" + config.slug + ":" + config.version;

  var $ = PageKit.byId;
  var runButton = $("run");
  var submitButton = $("submit");
  var formError = $("form-error");
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

  // Keep an unsent draft across reloads, per challenge version.
  try {
    var draft = window.localStorage.getItem(draftKey);
    if (draft !== null && draft !== starter) editor.setValue(draft);
  } catch (e) { /* storage disabled: no drafts */ }
  var saveTimer = null;
  editor.on("change", function () {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(function () {
      try { window.localStorage.setItem(draftKey, editor.getValue()); } catch (e) { /* full or disabled */ }
    }, 400);
  });
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
    formError.textContent = message;
    formError.hidden = !message;
  }

  function setBusy(value) {
    busy = value;
    if (runButton) runButton.disabled = value;
    if (submitButton) submitButton.disabled = value;
  }

  // --- Rendering a submission: the shared result panel, then this page's history table ---
  function render(data) {
    ResultPanel.render(data, { reveal: reveal, regrade: regradeSubmission });
    updateHistory(data);
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
