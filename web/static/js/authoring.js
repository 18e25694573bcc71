// The authoring page: code editors, the statement's live preview, hint rows,
// and Validate with its report arriving without a reload.
//
// The preview HTML comes from the server (/author/preview), rendered and
// sanitised exactly as the challenge page renders statements; it is the only
// HTML inserted. Report lines and messages are inserted as text.
(function () {
  "use strict";

  var config = PageKit.config("author-config");
  var csrfToken = PageKit.csrfToken();
  var $ = PageKit.byId;
  var dirty = false;

  // --- Code editors ---
  window.authorEditors = {};
  document.querySelectorAll("textarea.code-input").forEach(function (area) {
    var cm = PageKit.pythonEditor(area);
    cm.on("change", function () { dirty = true; });
    window.authorEditors[area.name] = cm;
  });
  var form = $("challenge-form");
  form.addEventListener("input", function () { dirty = true; });
  form.addEventListener("submit", function () { dirty = false; });

  // --- Statement preview (debounced) ---
  var statement = $("id_statement");
  var preview = $("statement-preview");
  var previewTimer = null;
  var previewSeq = 0;
  function renderPreview() {
    var seq = ++previewSeq;
    var body = new FormData();
    body.append("text", statement.value);
    fetch(config.previewUrl, {
      method: "POST", body: body, credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken, "Accept": "application/json" }
    }).then(function (r) { return r.json(); }).then(function (data) {
      if (seq !== previewSeq) return; // an older answer arriving late
      if (data.html !== undefined) preview.innerHTML = data.html; // sanitised by the server
      else preview.textContent = data.error || "Preview unavailable.";
    }).catch(function () { preview.textContent = "Preview unavailable (network)."; });
  }
  statement.addEventListener("input", function () {
    clearTimeout(previewTimer);
    previewTimer = setTimeout(renderPreview, 300);
  });
  renderPreview();

  // --- Hint rows ---
  var hintRows = $("hint-rows");
  $("add-hint").addEventListener("click", function () {
    var row = hintRows.querySelector("tr.hint-row").cloneNode(true);
    row.querySelectorAll("input, textarea").forEach(function (el) { el.value = ""; });
    row.querySelector("select").value = "1";
    hintRows.appendChild(row);
    dirty = true;
  });
  hintRows.addEventListener("click", function (event) {
    if (!event.target.classList.contains("remove-hint")) return;
    var row = event.target.closest("tr");
    if (hintRows.querySelectorAll("tr.hint-row").length > 1) row.remove();
    else row.querySelectorAll("input, textarea").forEach(function (el) { el.value = ""; });
    dirty = true;
  });

  // --- Validate ---
  var validateForm = $("validate-form");
  if (!validateForm) return; // a new challenge: nothing saved to validate yet
  var panel = $("validation");
  var statusPill = $("validation-status");
  var verdict = $("validation-verdict");
  var lines = $("validation-lines");
  var message = $("validation-message");
  var validateError = $("validate-error");
  var validateButton = $("validate");
  var publishButton = $("publish");
  var pollTimer = null;
  var labels = { queued: "Queued", running: "Running", done: "Done", failed: "Failed" };

  function show(run) {
    panel.dataset.status = run.status;
    panel.dataset.ok = run.ok ? "true" : "false";
    statusPill.textContent = labels[run.status] || run.status;
    verdict.textContent = run.status === "done" ? (run.ok ? "Passed" : "Failed") : (run.status === "failed" ? "Crashed" : "");
    message.textContent = run.message || "";
    lines.textContent = (run.lines || []).join("\n");
    if (run.seconds !== null && run.seconds !== undefined) statusPill.textContent += " in " + run.seconds.toFixed(1) + " s";
    validateButton.disabled = !run.finished;
    if (publishButton) publishButton.disabled = !run.passed;
  }

  function poll(url) {
    clearTimeout(pollTimer);
    fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (run) {
        if (run.error) { validateError.textContent = run.error; validateError.hidden = false; return; }
        show(run);
        if (!run.finished) pollTimer = setTimeout(function () { poll(url); }, 1000);
      })
      .catch(function () { pollTimer = setTimeout(function () { poll(url); }, 3000); });
  }

  validateForm.addEventListener("submit", function (event) {
    event.preventDefault();
    validateError.hidden = true;
    if (dirty) {
      validateError.textContent = "You have unsaved changes: Validate checks the saved draft version. Save first to validate them.";
      validateError.hidden = false;
    }
    validateButton.disabled = true;
    fetch(validateForm.action, {
      method: "POST", credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken, "Accept": "application/json" }
    }).then(function (r) { return r.json(); }).then(function (run) {
      if (run.error) {
        validateError.textContent = run.error;
        validateError.hidden = false;
        validateButton.disabled = false;
        return;
      }
      show(run);
      poll(run.url);
    }).catch(function () {
      validateError.textContent = "Could not reach the server; try again.";
      validateError.hidden = false;
      validateButton.disabled = false;
    });
  });

  if (config.run && !config.run.finished) poll(config.runUrl);
})();
