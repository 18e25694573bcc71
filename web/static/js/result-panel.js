// The result panel of a Run or Submit: status, verdict, score, categories, probes and hints.
// Shared by the challenge page (challenge.js) and the mock interview's candidate page
// (interview-candidate.js), so what a candidate sees, and how safely it is shown, is
// written once. Everything that came from a sandbox (messages, printed output,
// observations) is inserted with textContent, never as HTML; hint texts are the one
// exception: the server renders them from Markdown and sanitises them (nh3).
//
// The page keeps the panel's markup (templates/challenges/_result_panel.html) and
// passes the actions the panel offers: reveal(url, button) for a hint, and
// regrade(url, button) for a submission the platform failed to grade.
(function () {
  "use strict";

  var $ = function (id) { return document.getElementById(id); };
  var STATUS_LABEL = { queued: "Queued", running: "Running…", done: "Done" };
  var TIER_LABEL = ["", "Nudge", "Concept", "Near-solution"];

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function pretty(value) {
    var text;
    try { text = JSON.stringify(value, null, 1); } catch (e) { text = String(value); }
    if (text === undefined) text = String(value);
    return text.length > 4000 ? text.slice(0, 4000) + "\n… (truncated)" : text;
  }

  function formatScore(score) {
    return score === null || score === undefined ? "–" : Number(score).toFixed(1);
  }

  function clear() {
    var panel = $("result");
    panel.dataset.status = "idle";
    delete panel.dataset.submission;
    delete panel.dataset.kind;
    $("status").textContent = "No run yet";
    $("status").className = "status-pill";
    $("verdict").textContent = "";
    $("score").textContent = "–";
    $("result-message").textContent = "";
    var regrade = $("regrade");
    if (regrade) regrade.hidden = true;
    ["categories", "probes", "hints"].forEach(function (id) { $(id).replaceChildren(); });
  }

  function renderRegrade(data, actions) {
    // The platform failed to grade it (internal_error): offer to grade the same code again.
    if (!actions.regrade) return;
    var regrade = $("regrade");
    if (!regrade) {
      regrade = el("button", "button regrade", "Regrade");
      regrade.id = "regrade";
      regrade.type = "button";
      regrade.addEventListener("click", function () { actions.regrade(regrade.dataset.url, regrade); });
      $("result-message").insertAdjacentElement("afterend", regrade);
    }
    regrade.hidden = !data.regrade_url;
    regrade.dataset.url = data.regrade_url || "";
    regrade.disabled = false;
  }

  function renderCategories(data) {
    var categories = $("categories");
    categories.replaceChildren();
    Object.keys(data.categories || {}).forEach(function (name) {
      var cat = data.categories[name];
      var li = el("li", "category");
      li.dataset.category = name;
      li.appendChild(el("span", "category-name", name));
      var bar = el("span", "bar");
      var fill = el("span", "bar-fill");
      fill.style.width = Math.max(0, Math.min(100, Number(cat.score) || 0)) + "%";
      bar.appendChild(fill);
      li.appendChild(bar);
      li.appendChild(el("span", "category-score", formatScore(cat.score) + " · " + cat.passed + "/" + cat.total));
      categories.appendChild(li);
    });
  }

  function renderProbes(data) {
    var probes = $("probes");
    probes.replaceChildren();
    (data.probes || []).forEach(function (p) {
      var li = el("li", "probe " + (p.passed ? "probe-pass" : "probe-fail"));
      li.dataset.probe = p.name;
      li.dataset.passed = p.passed ? "true" : "false";
      var head = el("div", "probe-head");
      head.appendChild(el("span", "probe-mark", p.passed ? "✓" : "✗"));
      head.appendChild(el("span", "probe-name", p.name));
      head.appendChild(el("span", "tag", p.category));
      if (!p.passed && p.status) head.appendChild(el("span", "probe-status", String(p.status).replace(/_/g, " ")));
      if (p.duration_ms !== undefined && p.duration_ms !== null) head.appendChild(el("span", "muted small", p.duration_ms + " ms"));
      li.appendChild(head);
      if (p.description) li.appendChild(el("p", "probe-desc", p.description));
      if (p.message) li.appendChild(el("pre", "probe-message", p.message));
      if (data.kind === "run" && !p.passed && ("observation" in p || "expected" in p)) {
        var cmp = el("div", "compare");
        var got = el("div", "compare-col");
        got.appendChild(el("span", "compare-label", "your result"));
        got.appendChild(el("pre", "", pretty(p.observation)));
        var want = el("div", "compare-col");
        want.appendChild(el("span", "compare-label", "expected"));
        want.appendChild(el("pre", "", pretty(p.expected)));
        cmp.appendChild(got);
        cmp.appendChild(want);
        li.appendChild(cmp);
      }
      if (p.stdout) {
        var details = el("details", "probe-stdout");
        details.appendChild(el("summary", "", "printed output"));
        details.appendChild(el("pre", "", p.stdout));
        li.appendChild(details);
      }
      probes.appendChild(li);
    });
  }

  // Nothing is shown unasked: the revealed hints, a count of the rest, and one
  // button for the hint the server offers next (tier by tier, the probe to fix first).
  function renderHints(data, actions) {
    var box = $("hints");
    box.replaceChildren();
    var hints = data.hints || [];
    if (!hints.length) return;
    box.appendChild(el("h3", "", "Hints"));
    var shown = hints.filter(function (h) { return h.shown; });
    var waiting = hints.length - shown.length;
    var summary = "The failing probes unlocked " + hints.length + (hints.length === 1 ? " hint" : " hints") +
      (shown.length ? "; you have seen " + shown.length + "." : ". None is shown until you ask.");
    box.appendChild(el("p", "muted small hint-summary", summary));
    shown.forEach(function (h) {
      var card = el("div", "hint hint-tier-" + h.tier);
      card.dataset.hintId = h.id;
      card.appendChild(el("span", "hint-tier", TIER_LABEL[h.tier] || "Hint"));
      var body = el("div", "hint-body prose");
      body.innerHTML = h.html; // rendered from Markdown and sanitised by the server (nh3)
      card.appendChild(body);
      box.appendChild(card);
    });
    var offered = hints.filter(function (h) { return h.offered; })[0];
    if (offered) {
      var label = (shown.length ? "Show the next hint" : "Show a hint") + " (" + (TIER_LABEL[offered.tier] || "hint").toLowerCase() + ")";
      var button = el("button", "button button-small button-secondary reveal-hint", label);
      button.type = "button";
      button.dataset.hintId = offered.id;
      button.addEventListener("click", function () { actions.reveal(offered.reveal_url, button); });
      box.appendChild(button);
    } else if (waiting) {
      box.appendChild(el("p", "muted small", "The other hints open once you have seen the one before them on the same topic."));
    }
  }

  function render(data, actions) {
    actions = actions || {};
    var panel = $("result");
    panel.dataset.status = data.status;
    panel.dataset.submission = data.id;
    panel.dataset.kind = data.kind;
    var status = $("status");
    status.textContent = (data.kind === "run" ? "Run" : "Submit") + " #" + data.id + " · " + (STATUS_LABEL[data.status] || data.status);
    status.className = "status-pill status-" + data.status;
    var verdict = $("verdict");
    verdict.textContent = data.verdict_label || "";
    verdict.dataset.verdict = data.verdict || "";
    verdict.className = "verdict" + (data.verdict ? " verdict-" + data.verdict : "");
    $("score").textContent = data.done ? formatScore(data.score) : "–";
    $("result-message").textContent = data.message || "";
    renderRegrade(data, actions);
    renderCategories(data);
    renderProbes(data);
    renderHints(data, actions);
  }

  window.ResultPanel = { render: render, clear: clear, el: el, formatScore: formatScore, STATUS_LABEL: STATUS_LABEL };
})();
