// Evidence in the rubric (the interviewer's live view): each rubric row lists
// the moments it cites ("gradients: failed double_backward at 12:41") and
// has "Cite a moment", which opens #cite-dialog: the interview's moments
// (moments.json, fetched each time so the newest run is there), newest
// first, filtered by text and kind; for a run or submit, a probe picker with
// the failed probes first; a short comment. Citing and removing answer every
// row's citations, which are redrawn. Everything from the server (labels,
// probe names, comments) is inserted as text, never as HTML.
(function () {
  "use strict";

  var config = PageKit.config("page-config");
  var csrfToken = PageKit.csrfToken();
  var $ = PageKit.byId;
  var dialog = $("cite-dialog");
  if (!dialog || !config.momentsUrl) return;

  var KIND_LABEL = { run: "Run", submit: "Submit", hint: "Hint", snapshot: "Autosave", focus: "Focus", note: "Note" };
  var KIND_PLURAL = { run: "Runs", submit: "Submits", hint: "Hints", snapshot: "Autosaves", focus: "Focus changes", note: "Notes" };
  var OUTCOME_MARK = { failed: "✗", passed: "✓", fixed: "✓" };
  var moments = [];
  var criterion = "";

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function post(url, payload) {
    return fetch(url, {
      method: "POST", credentials: "same-origin", body: JSON.stringify(payload),
      headers: { "X-CSRFToken": csrfToken, Accept: "application/json", "Content-Type": "application/json" },
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) { return { ok: r.ok, status: r.status, data: data }; });
    });
  }

  // --- Each row's citations ---

  function citationItem(c) {
    var li = el("li", "citation citation-" + c.kind);
    li.dataset.key = c.key;
    li.dataset.citation = String(c.id);
    var text = el("a", "citation-text", c.text);
    text.href = c.links.timeline;
    text.title = "Open this moment on the timeline";
    li.appendChild(text);
    if (c.challenge) li.appendChild(el("span", "muted", " · " + c.challenge));
    if (c.links.submission) {
      li.appendChild(document.createTextNode(" · "));
      var details = el("a", "citation-submission", c.submission_label);
      details.href = c.links.submission;
      li.appendChild(details);
    }
    if (c.comment) li.appendChild(el("q", "citation-comment", c.comment));
    var remove = el("button", "link-button uncite", "Remove");
    remove.type = "button";
    remove.setAttribute("aria-label", "Remove the citation " + c.text);
    remove.addEventListener("click", function () { uncite(c, remove); });
    li.appendChild(remove);
    return li;
  }

  function renderCitations(all) {
    document.querySelectorAll(".citation-error").forEach(function (line) { line.hidden = true; });
    document.querySelectorAll("ul.citations[data-criterion]").forEach(function (list) {
      var rows = all[list.dataset.criterion] || [];
      list.replaceChildren.apply(list, rows.map(citationItem));
    });
  }

  // A refusal to remove is shown under the row (the page's own error line is cleared by every poll).
  function rowError(criterion, message) {
    var list = document.querySelector('ul.citations[data-criterion="' + criterion + '"]');
    var line = list.parentNode.querySelector(".citation-error");
    if (!line) { line = el("p", "form-error citation-error"); line.setAttribute("role", "alert"); list.after(line); }
    line.textContent = message;
    line.hidden = !message;
  }

  function uncite(c, button) {
    button.disabled = true;
    rowError(c.criterion, "");
    post(config.unciteUrl, { id: c.id }).then(function (answer) {
      if (answer.data.citations) renderCitations(answer.data.citations);
      if (answer.ok) return;
      rowError(c.criterion, answer.data.error || "Not removed.");
      if (answer.status === 404) button.closest("li").remove(); // gone already (another tab removed it)
      else button.disabled = false;
    }).catch(function () { button.disabled = false; rowError(c.criterion, "Could not reach the server; not removed."); });
  }

  // --- The dialog ---

  function showError(message) { $("cite-error").textContent = message; $("cite-error").hidden = !message; }

  function selectedMoment() {
    var checked = dialog.querySelector("input[name=moment]:checked");
    if (!checked) return null;
    return moments.filter(function (m) { return m.key === checked.value; })[0] || null;
  }

  function probeSummary(m) {
    if (m.kind !== "run" && m.kind !== "submit") return "";
    if (!m.graded) return "not graded yet";
    var failed = m.probes.filter(function (p) { return !p.passed; }).length;
    return failed ? failed + " of " + m.probes.length + " probes failed" : "all " + m.probes.length + " probes passed";
  }

  function searchText(m) {
    var probes = m.probes.map(function (p) { return p.name + " " + p.category + " " + p.outcome; }).join(" ");
    return [m.label, m.challenge, m.clock, KIND_LABEL[m.kind] || m.kind, probes].join(" ").toLowerCase();
  }

  function renderMoments() {
    var list = $("moment-list");
    var previous = (selectedMoment() || {}).key;
    var words = $("moment-filter").value.toLowerCase().split(/\s+/).filter(Boolean);
    var kind = $("moment-kind").value;
    var shown = moments.filter(function (m) {
      if (kind && m.kind !== kind) return false;
      var text = searchText(m);
      return words.every(function (w) { return text.indexOf(w) !== -1; });
    });
    list.replaceChildren.apply(list, shown.map(function (m) {
      var label = el("label", "moment moment-" + m.kind);
      label.dataset.key = m.key;
      label.dataset.kind = m.kind;
      var input = el("input");
      input.type = "radio";
      input.name = "moment";
      input.value = m.key;
      input.checked = m.key === previous;
      input.addEventListener("change", momentPicked);
      var time = el("time", "moment-clock", m.clock);
      time.dateTime = m.at;
      var body = el("span", "moment-body");
      var kindLabel = KIND_LABEL[m.kind] || m.kind;
      // A run's or submit's label already starts with its kind ("Submit #12: ..."); the others get a tag.
      if (m.label.indexOf(kindLabel) !== 0) body.appendChild(el("span", "tag moment-kind", kindLabel));
      body.appendChild(el("span", "moment-label" + (m.verdict ? " verdict-" + m.verdict : ""), " " + m.label));
      if (m.challenge) body.appendChild(el("span", "muted", " · " + m.challenge));
      var probes = probeSummary(m);
      if (probes) body.appendChild(el("span", "muted small moment-probes", " · " + probes));
      label.append(input, time, body);
      return label;
    }));
    $("moment-count").textContent = moments.length
      ? shown.length + " of " + moments.length + " moments" + (shown.length ? "" : ": none matches the filter")
      : "Nothing has happened yet: moments appear once the candidate autosaves, runs, submits or asks for a hint.";
    momentPicked();
  }

  function momentPicked() {
    var m = selectedMoment();
    var pick = $("probe-pick");
    var select = $("moment-probe");
    $("cite-save").disabled = !m;
    if (!m || (m.kind !== "run" && m.kind !== "submit")) { pick.hidden = true; select.replaceChildren(); return; }
    if (select.dataset.key === m.key) return; // keep the probe chosen for this moment
    select.dataset.key = m.key;
    var whole = el("option", "", "The whole " + (KIND_LABEL[m.kind] || m.kind).toLowerCase() + " (" + m.label + ")");
    whole.value = "";
    var options = [whole];
    // The server lists failed probes first; the first failed one is preselected, as the likeliest evidence.
    m.probes.forEach(function (p) {
      var option = el("option", "", (OUTCOME_MARK[p.outcome] || "") + " " + p.outcome + ": " + p.name + (p.category ? " (" + p.category + ")" : ""));
      option.value = p.name;
      option.dataset.outcome = p.outcome;
      options.push(option);
    });
    select.replaceChildren.apply(select, options);
    var firstFailed = m.probes.filter(function (p) { return !p.passed; })[0];
    select.value = firstFailed ? firstFailed.name : "";
    pick.hidden = false;
  }

  function fillKinds(kinds) {
    var select = $("moment-kind");
    if (select.dataset.filled) return;
    select.dataset.filled = "true";
    kinds.forEach(function (kind) {
      var option = el("option", "", KIND_PLURAL[kind] || kind);
      option.value = kind;
      select.appendChild(option);
    });
  }

  function open(button) {
    criterion = button.dataset.criterion;
    dialog.dataset.criterion = criterion;
    $("cite-criterion").textContent = button.dataset.label || criterion;
    $("cite-comment").value = "";
    $("moment-filter").value = "";
    $("moment-kind").value = "";
    $("moment-probe").dataset.key = "";
    showError("");
    moments = [];
    $("moment-list").replaceChildren();
    $("moment-count").textContent = "Loading the interview's moments…";
    $("probe-pick").hidden = true;
    $("cite-save").disabled = true;
    dialog.showModal();
    $("moment-filter").focus();
    fetch(config.momentsUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then(function (data) { fillKinds(data.kinds || []); moments = data.moments; renderMoments(); })
      .catch(function () { $("moment-count").textContent = ""; showError("Could not load the moments; close and try again."); });
  }

  function save() {
    var m = selectedMoment();
    if (!m) { showError("Pick a moment first."); return; }
    var probe = !$("probe-pick").hidden ? $("moment-probe").value : "";
    $("cite-save").disabled = true;
    post(config.citeUrl, { criterion: criterion, key: m.key, probe: probe, comment: $("cite-comment").value })
      .then(function (answer) {
        $("cite-save").disabled = false;
        if (!answer.ok) { showError(answer.data.error || "Not cited."); return; }
        renderCitations(answer.data.citations);
        dialog.close();
      })
      .catch(function () { $("cite-save").disabled = false; showError("Could not reach the server; not cited."); });
  }

  document.querySelectorAll("button.cite-open").forEach(function (button) {
    button.addEventListener("click", function () { open(button); });
  });
  $("moment-filter").addEventListener("input", renderMoments);
  $("moment-kind").addEventListener("change", renderMoments);
  $("cite-save").addEventListener("click", save);
  $("cite-cancel").addEventListener("click", function () { dialog.close(); });
  $("cite-comment").addEventListener("keydown", function (event) { if (event.key === "Enter") save(); });

  renderCitations(config.citations || {});
})();
