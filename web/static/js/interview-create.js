// The challenge picker of the mock interview and template forms (templates/interviews/_picker.html).
//
// The form works without this script: a checkbox per challenge, an order and
// minutes beside each. This adds filters (text, track, difficulty, tag), a
// "Chosen" list in order with up / down / remove, and keeps the form's own
// fields in step: each chosen challenge's order input gets its place in the
// list, so the server reads the same fields either way. On the interview
// form the duration follows the sum of the chosen challenges' minutes until
// the coach types a duration of their own. The penalty field shows only with
// the "each hint costs points" policy. Text goes in with textContent only.
(function () {
  "use strict";

  var picker = document.getElementById("picker");
  if (!picker) return;
  var rows = Array.prototype.slice.call(picker.querySelectorAll(".picker-row"));
  var bySlug = {};
  rows.forEach(function (row) { bySlug[row.dataset.slug] = row; });

  function checkbox(row) { return row.querySelector('input[name="challenges"]'); }
  function positionInput(row) { return row.querySelector('input[name="position-' + row.dataset.slug + '"]'); }
  function minutesInput(row) { return row.querySelector('input[name="minutes-' + row.dataset.slug + '"]'); }
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // --- The chosen list: its order is the order the candidate sees ---
  var order = rows.filter(function (row) { return checkbox(row).checked; });
  order.sort(function (a, b) {
    var pa = parseInt(positionInput(a).value, 10), pb = parseInt(positionInput(b).value, 10);
    return (isNaN(pa) ? 1e6 : pa) - (isNaN(pb) ? 1e6 : pb) || rows.indexOf(a) - rows.indexOf(b);
  });

  var chosenBox = document.getElementById("picker-chosen-box");
  var chosenList = document.getElementById("picker-chosen");
  var emptyNote = document.getElementById("picker-empty");
  var totalNote = document.getElementById("picker-total");
  chosenBox.hidden = false;
  document.getElementById("picker-order-help").textContent = "Tick the challenges; they join the Chosen list in that order, and its arrows reorder them.";
  rows.forEach(function (row) { positionInput(row).closest("label").hidden = true; });

  function move(row, step) {
    var i = order.indexOf(row), j = i + step;
    if (i < 0 || j < 0 || j >= order.length) return;
    order[i] = order[j];
    order[j] = row;
    renderChosen();
  }
  function button(label, title, onClick) {
    var b = el("button", "button button-small button-secondary", label);
    b.type = "button";
    b.title = title;
    b.setAttribute("aria-label", title);
    b.addEventListener("click", onClick);
    return b;
  }
  function renderChosen() {
    chosenList.replaceChildren();
    var total = 0, allTimed = order.length > 0;
    order.forEach(function (row, i) {
      positionInput(row).value = String(i + 1);
      var title = row.dataset.title;
      var item = el("li");
      item.dataset.slug = row.dataset.slug;
      item.appendChild(el("span", "chosen-title", title));
      var minutes = parseInt(minutesInput(row).value, 10);
      if (isNaN(minutes)) allTimed = false; else total += minutes;
      var controls = el("span", "chosen-controls");
      controls.appendChild(el("span", "muted small", isNaN(minutes) ? "~" + row.dataset.typical + " min typical" : minutes + " min"));
      var up = button("↑", "Move " + title + " up", function () { move(row, -1); });
      up.disabled = i === 0;
      up.classList.add("move-up");
      var down = button("↓", "Move " + title + " down", function () { move(row, 1); });
      down.disabled = i === order.length - 1;
      down.classList.add("move-down");
      var remove = button("✕", "Remove " + title, function () { checkbox(row).checked = false; changed(row); });
      remove.classList.add("remove");
      controls.append(up, down, remove);
      item.appendChild(controls);
      chosenList.appendChild(item);
    });
    rows.forEach(function (row) {
      var picked = order.indexOf(row) >= 0;
      row.classList.toggle("picked", picked);
      if (!picked) positionInput(row).value = "";
    });
    emptyNote.hidden = order.length > 0;
    totalNote.textContent = order.length ? "(" + order.length + (allTimed ? ", " + total + " min" : "") + ")" : "";
    followDuration(allTimed ? total : 0);
  }
  function changed(row) {
    var i = order.indexOf(row);
    if (checkbox(row).checked && i < 0) order.push(row);
    if (!checkbox(row).checked && i >= 0) order.splice(i, 1);
    renderChosen();
  }
  rows.forEach(function (row) {
    checkbox(row).addEventListener("change", function () { changed(row); });
    minutesInput(row).addEventListener("input", renderChosen);
  });

  // --- Duration = the sum of the minutes, until the coach sets one ---
  var duration = document.getElementById("id_duration_minutes");
  var durationTouched = false;
  if (duration) duration.addEventListener("input", function () { durationTouched = true; });
  function followDuration(total) {
    if (!duration || durationTouched || !total) return;
    duration.value = String(Math.min(total, Number(duration.max) || 180));
  }

  // --- Filters ---
  var filters = document.getElementById("picker-filters");
  var text = document.getElementById("filter-text");
  var track = document.getElementById("filter-track");
  var difficulty = document.getElementById("filter-difficulty");
  var tag = document.getElementById("filter-tag");
  var count = document.getElementById("picker-count");
  filters.hidden = false;
  function applyFilters() {
    var words = text.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var tags = row.dataset.tags ? row.dataset.tags.split(" ") : [];
      var haystack = (row.dataset.title + " " + row.dataset.slug + " " + row.dataset.tags).toLowerCase();
      var match = (!track.value || row.dataset.track === track.value) &&
        (!difficulty.value || row.dataset.difficulty === difficulty.value) &&
        (!tag.value || tags.indexOf(tag.value) >= 0) &&
        words.every(function (w) { return haystack.indexOf(w) >= 0; });
      row.hidden = !match;
      if (match) shown += 1;
    });
    count.textContent = shown === rows.length ? rows.length + " challenges" : shown + " of " + rows.length + " shown";
  }
  [text, track, difficulty, tag].forEach(function (input) { input.addEventListener("input", applyFilters); });

  // --- The penalty field only matters with the penalty policy ---
  var penaltyField = document.getElementById("penalty-field");
  var policies = Array.prototype.slice.call(document.querySelectorAll('input[name="hint_policy"]'));
  function showPenalty() {
    var chosen = policies.filter(function (p) { return p.checked; })[0];
    if (penaltyField) penaltyField.hidden = !chosen || chosen.value !== "penalty";
  }
  policies.forEach(function (p) { p.addEventListener("change", showPenalty); });

  // The server's answer wins on a re-shown form: keep a duration it was sent with.
  durationTouched = Boolean(duration && duration.value && document.getElementById("form-errors"));
  renderChosen();
  applyFilters();
  showPenalty();
})();
