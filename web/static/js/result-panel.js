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

  // JSON, indented, but a list of plain values on one line: 64 numbers are one line, not 64.
  function compactJSON(value, indent) {
    if (Array.isArray(value)) {
      if (!value.length) return "[]";
      if (value.every(function (x) { return x === null || typeof x !== "object"; })) {
        return "[" + value.map(function (x) { return compactJSON(x, ""); }).join(", ") + "]";
      }
      return "[\n" + value.map(function (x) { return indent + "  " + compactJSON(x, indent + "  "); }).join(",\n") + "\n" + indent + "]";
    }
    if (value !== null && typeof value === "object") {
      var keys = Object.keys(value);
      if (!keys.length) return "{}";
      return "{\n" + keys.map(function (k) { return indent + "  " + JSON.stringify(k) + ": " + compactJSON(value[k], indent + "  "); }).join(",\n") + "\n" + indent + "}";
    }
    var text = JSON.stringify(value);
    return text === undefined ? String(value) : text;
  }

  function pretty(value) {
    var text;
    try { text = compactJSON(value, ""); } catch (e) { text = String(value); }
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
    var cancel = $("cancel");
    if (cancel) cancel.hidden = true;
    ["categories", "probes", "hints"].forEach(function (id) { $(id).replaceChildren(); });
    if ($("live")) $("live").replaceChildren();
  }

  function renderCancel(data, actions) {
    // While it is queued or running: the candidate may stop it (code that never ends, a Submit sent too soon).
    if (!actions.cancel) return;
    var cancel = $("cancel");
    if (!cancel) {
      cancel = el("button", "button button-small button-secondary cancel-grading", "Cancel");
      cancel.id = "cancel";
      cancel.type = "button";
      cancel.title = "Stop this grading: nothing is scored";
      cancel.addEventListener("click", function () { actions.cancel(cancel.dataset.url, cancel); });
      $("result-message").insertAdjacentElement("afterend", cancel);
    }
    cancel.hidden = !(data.cancel_url || data.cancelling);
    cancel.dataset.url = data.cancel_url || "";
    cancel.disabled = !data.cancel_url;
    cancel.textContent = data.cancelling ? "Cancelling…" : "Cancel";
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

  // --- Structured diffs (a Run's failing probes; grader/diff.py computes them, every value already text) ---

  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }

  function sides(received, expected) {
    // "your result" and "expected" side by side, the differing one marked.
    var box = el("div", "diff-sides");
    [["your result", received], ["expected", expected]].forEach(function (pair) {
      var cell = el("div", "diff-side");
      cell.appendChild(el("span", "compare-label", pair[0]));
      cell.appendChild(el("code", "diff-value", pair[1] === null || pair[1] === undefined ? "nothing" : pair[1]));
      box.appendChild(cell);
    });
    if (received !== expected) box.classList.add("diff-sides-differ");
    return box;
  }

  function renderArray(node, item) {
    // An array: how many elements differ, the first few with both values, and the tolerance used.
    var facts = [];
    if (node.mismatches !== undefined) facts.push(node.mismatches + " of " + node.elements + " elements differ");
    if (node.tolerance) facts.push(node.tolerance);
    if (typeof node.max_abs_error === "number") facts.push("max abs error " + node.max_abs_error.toPrecision(3));
    if (typeof node.max_rel_error === "number") facts.push("max rel error " + node.max_rel_error.toPrecision(3));
    if (facts.length) item.appendChild(el("p", "diff-facts", facts.join(" · ")));
    if (!node.first || !node.first.length) return;
    var table = el("table", "diff-table");
    var head = el("tr");
    ["index", "your result", "expected"].forEach(function (t) { head.appendChild(el("th", "", t)); });
    table.appendChild(el("thead")).appendChild(head);
    var body = el("tbody");
    var equalRow = function (n) {
      var row = el("tr", "diff-equal-row");
      var cell = el("td", "", plural(n, "equal element", "equal elements"));
      cell.colSpan = 3;
      row.appendChild(cell);
      body.appendChild(row);
    };
    node.first.forEach(function (m) {
      if (m.equal_before) equalRow(m.equal_before);
      var row = el("tr", "diff-mismatch");
      row.appendChild(el("td", "", "[" + m.index.join(", ") + "]"));
      row.appendChild(el("td", "diff-received", m.received));
      row.appendChild(el("td", "", m.expected));
      body.appendChild(row);
    });
    if (node.equal_after) equalRow(node.equal_after);
    table.appendChild(body);
    var scroll = el("div", "diff-table-wrap");
    scroll.appendChild(table);
    item.appendChild(el("p", "diff-caption", node.mismatches > node.first.length ? "The first " + node.first.length + " that differ:" : "Where they differ:"));
    item.appendChild(scroll);
    if (node.worst && node.failure !== "shape") {
      item.appendChild(el("p", "diff-facts", "Worst at [" + node.worst.index.join(", ") + "]: yours " + node.worst.received + ", expected " + node.worst.expected));
    }
  }

  function renderNode(node, withoutSides) {
    // One entry of the tree: a collapsed run of equal entries, a count of differences left out, or a differing entry.
    if (node.collapsed !== undefined) {
      var range = node.collapsed === 1 ? node.first : node.first + " … " + node.last;
      var same = el("li", "diff-equal");
      same.appendChild(el("span", "diff-path", range));
      same.appendChild(el("span", "", node.collapsed === 1 ? "equal" : plural(node.collapsed, "equal entry", "equal entries")));
      return same;
    }
    if (node.omitted !== undefined) {
      return el("li", "diff-omitted", plural(node.omitted === true ? 1 : node.omitted, "more difference", "more differences") + " not shown");
    }
    var item = el("li", "diff-node" + (node.equal ? "" : " diff-differs") + (node.children ? "" : " diff-leaf"));
    var head = el("div", "diff-head");
    head.appendChild(el("code", "diff-path", node.path));
    if (node.note) head.appendChild(el("span", "diff-note", node.note));
    item.appendChild(head);
    if (!withoutSides && (!node.children || node.received !== node.expected)) item.appendChild(sides(node.received, node.expected));
    if (node.first !== undefined || node.tolerance) renderArray(node, item);
    if (node.children && node.children.length) {
      var list = el("ul", "diff-tree");
      node.children.forEach(function (child) { list.appendChild(renderNode(child)); });
      item.appendChild(list);
    }
    return item;
  }

  function renderDiff(diff) {
    var box = el("div", "diff");
    if (diff.equal) {
      // Two identical summaries side by side said nothing: the value is right, the probe's check wants more of it.
      box.appendChild(el("p", "diff-facts diff-same-value",
        "Your result has the same value as the reference's (" + diff.received + "). This probe checks more than the " +
        "value it returns (for example what your code changed, called or left behind): its message says what it found."));
      return box;
    }
    box.appendChild(el("span", "compare-label", "where your result differs"));
    box.appendChild(sides(diff.received, diff.expected));
    if (diff.custom_check) {
      box.appendChild(el("p", "diff-facts", "This probe has its own check, which may accept results that differ from the reference's; the differences below are from the reference's result."));
    }
    var tree = diff.tree;
    var list = el("ul", "diff-tree diff-root");
    if (tree.children && !tree.note) {
      tree.children.forEach(function (child) { list.appendChild(renderNode(child)); });
    } else if (tree.children || tree.note || tree.tolerance || tree.first) {
      // The whole result is one array, or a container of the wrong size: the types above, its details here.
      list.appendChild(renderNode(tree, true));
    } else {
      // The whole result is one value: the two sides above already say it all.
      box.querySelector(".diff-sides").classList.add("diff-leaf");
    }
    if (list.childNodes.length) box.appendChild(list);
    return box;
  }

  function renderRaised(p) {
    // A public probe that returned nothing: its error and the expected value side by side.
    var cmp = el("div", "compare compare-raised");
    var got = el("div", "compare-col");
    got.appendChild(el("span", "compare-label", "your code"));
    var lines = String(p.message || p.status || "").trim().split("\n");
    got.appendChild(el("p", "raised-summary", lines[lines.length - 1]));  // "ValueError: …", the traceback's last line
    got.appendChild(el("pre", "probe-message", p.message || p.status));
    var want = el("div", "compare-col expected-col");
    want.appendChild(el("span", "compare-label", "expected"));
    want.appendChild(el("p", "diff-facts", p.diff.expected));
    want.appendChild(el("pre", "expected-preview", p.diff.expected_preview));
    cmp.appendChild(got);
    cmp.appendChild(want);
    return cmp;
  }

  function renderRaw(p, open) {
    // The values as JSON, folded away when the structured diff above says where they differ.
    var details = el("details", "probe-raw");
    details.open = !!open;
    details.appendChild(el("summary", "", "raw values (JSON)"));
    var cmp = el("div", "compare");
    [["your result", p.observation], ["expected", p.expected]].forEach(function (pair) {
      var col = el("div", "compare-col");
      col.appendChild(el("span", "compare-label", pair[0]));
      col.appendChild(el("pre", "", pretty(pair[1])));
      cmp.appendChild(col);
    });
    details.appendChild(cmp);
    return details;
  }

  // Code that never ran (it does not compile, or it breaks a rule): every probe carries the same "not run" line,
  // so the list says it once instead of one identical card per probe; the message above says why.
  var NOT_RUN = { syntax_error: true, rule_violation: true };

  function renderProbes(data) {
    var probes = $("probes");
    probes.replaceChildren();
    var all = data.probes || [];
    if (data.done && NOT_RUN[data.verdict] && all.length && all.every(function (p) { return !p.passed; })) {
      var none = el("li", "probes-not-run");
      none.appendChild(el("span", "probe-mark", "✗"));
      var why = data.verdict === "syntax_error" ? "the code does not compile" : "the code breaks a rule";
      none.appendChild(el("span", "", "None of the " + plural(all.length, "probe", "probes") + " ran: " + why + "."));
      probes.appendChild(none);
      probes.dataset.submission = data.id;
      return;
    }
    all.forEach(function (p) {
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
      // A Run's probes are public: diffs and values for everyone. A Submit's too when the session shows hidden
      // probes in full (data.probe_details), and on the interviewer's view of any result (data.full,
      // web/interviews/runs.py); neither is ever set on a practice candidate's payload.
      var full = data.kind === "run" || data.probe_details === "full" || data.full === true;
      var raised = full && !p.passed && p.diff && !p.diff.tree;
      if (raised) {
        li.appendChild(renderRaised(p));
      } else {
        if (p.message) li.appendChild(el("pre", "probe-message", p.message));
        if (full && !p.passed) {
          if (p.diff && p.diff.tree) li.appendChild(renderDiff(p.diff));
          if ("observation" in p || "expected" in p) li.appendChild(renderRaw(p, !p.diff));
        }
      }
      if (!p.passed && p.error_report && window.ErrorReport) li.appendChild(window.ErrorReport.render(p.error_report));
      if (data.full === true && !p.passed && p.details && Object.keys(p.details).length) {
        var checkDetails = el("details", "probe-details");
        checkDetails.appendChild(el("summary", "", "the check's details (JSON)"));
        checkDetails.appendChild(el("pre", "", pretty(p.details)));
        li.appendChild(checkDetails);
      }
      if (p.stdout) {
        var details = el("details", "probe-stdout");
        details.appendChild(el("summary", "", "printed output"));
        details.appendChild(el("pre", "", p.stdout));
        li.appendChild(details);
      }
      probes.appendChild(li);
    });
    var moreWasOpen = probes.dataset.submission === String(data.id) && probes.querySelector(".probes-more > details[open]") !== null;
    collapsePassed(probes, data);
    collapseLaterFailures(probes, moreWasOpen);
  }

  // The first few failing probes stay open; the rest fold into one line at the end, so a result with dozens of
  // failures (12,843 px of them) starts with a summary: the categories, the hints, the probes to fix first.
  var OPEN_FAILURES = 3;

  function collapseLaterFailures(probes, wasOpen) {
    var failed = probes.querySelectorAll(":scope > li.probe-fail");
    if (failed.length <= OPEN_FAILURES + 1) return;  // folding one card would save nothing
    var later = Array.prototype.slice.call(failed, OPEN_FAILURES);
    var group = el("li", "probes-more");
    group.dataset.count = later.length;
    var details = el("details");
    details.open = wasOpen;
    var summary = el("summary", "probes-more-summary");
    summary.appendChild(el("span", "probe-mark", "✗"));
    summary.appendChild(el("span", "", plural(later.length, "more failing probe", "more failing probes")));
    summary.appendChild(el("span", "muted small", details.open ? "hide" : "show them"));
    details.appendChild(summary);
    var list = el("ol", "probes probes-more-list");
    later.forEach(function (li) { list.appendChild(li); });
    details.appendChild(list);
    details.addEventListener("toggle", function () { summary.lastChild.textContent = details.open ? "hide" : "show them"; });
    group.appendChild(details);
    probes.appendChild(group);
  }

  // Passed probes fold into one line ("9 passed", a <details> first in the list) so the failing
  // ones, left open below it, are what the eye meets. Re-rendering the same submission (polling)
  // keeps the line open if the candidate opened it.
  function collapsePassed(probes, data) {
    var passed = probes.querySelectorAll(":scope > li.probe-pass");
    var wasOpen = probes.dataset.submission === String(data.id) && probes.querySelector(".probes-passed > details[open]") !== null;
    probes.dataset.submission = data.id;
    if (!passed.length) return;
    var group = el("li", "probes-passed");
    group.dataset.count = passed.length;
    var details = el("details");
    details.open = wasOpen;
    var total = (data.probes || []).length;
    var summary = el("summary", "probes-passed-summary");
    summary.appendChild(el("span", "probe-mark", "✓"));
    summary.appendChild(el("span", "", passed.length + " passed" + (passed.length === total ? "" : " of " + total)));
    summary.appendChild(el("span", "muted small", passed.length === 1 ? "show it" : "show them"));
    details.appendChild(summary);
    var list = el("ol", "probes probes-passed-list");
    passed.forEach(function (li) { list.appendChild(li); });
    details.appendChild(list);
    details.addEventListener("toggle", function () {
      summary.lastChild.textContent = details.open ? "hide" : (passed.length === 1 ? "show it" : "show them");
    });
    group.appendChild(details);
    probes.insertBefore(group, probes.firstChild);
  }

  // The known mistake these failures look like (grader/diagnose.py): its author's words, on request like a hint,
  // above the hints since it is the most specific of them.
  function renderDiagnosis(box, found, actions) {
    found.forEach(function (d) {
      var card = el("div", "hint hint-diagnosis");
      card.id = "diagnosis";
      card.dataset.hintId = d.id;
      card.appendChild(el("span", "hint-tier", "Diagnosis"));
      if (d.shown) {
        var body = el("div", "hint-body prose");
        body.innerHTML = d.html; // rendered from Markdown and sanitised by the server (nh3)
        card.appendChild(body);
      } else {
        var byStatement = d.basis === "statement";
        card.appendChild(el("p", "muted small", byStatement
          ? "Your failures point at a part of the statement."
          : "Your failures resemble a mistake others have made on this challenge."));
        if (d.can_reveal && d.reveal_url) {
          var button = el("button", "button button-small button-secondary reveal-diagnosis",
            byStatement ? "Which part of the statement?" : "What mistake does this look like?");
          button.type = "button";
          button.addEventListener("click", function () { actions.reveal(d.reveal_url, button); });
          card.appendChild(button);
        }
      }
      box.appendChild(card);
    });
  }

  // Nothing is shown unasked: the revealed hints, a count of the rest, and one
  // button for the hint the server offers next (tier by tier, the probe to fix first).
  function renderHints(data, actions) {
    var box = $("hints");
    box.replaceChildren();
    renderDiagnosis(box, (data.hints || []).filter(function (h) { return h.kind === "diagnosis"; }), actions);
    var hints = (data.hints || []).filter(function (h) { return h.kind !== "diagnosis"; });
    if (!hints.length) return;
    box.appendChild(el("h3", "", "Hints"));
    var shown = hints.filter(function (h) { return h.shown; });
    var waiting = hints.length - shown.length;
    var summary = plural(hints.length, "hint", "hints") + " available: the failing probes unlocked " + (hints.length === 1 ? "it" : "them") + ". " +
      (shown.length ? "You have seen " + shown.length + "." : "None is shown until you ask.");
    box.appendChild(el("p", "muted small hint-summary", summary));
    shown.forEach(function (h) {
      var card = el("div", "hint hint-tier-" + h.tier);
      card.dataset.hintId = h.id;
      card.appendChild(el("span", "hint-tier", TIER_LABEL[h.tier] || "Hint"));
      if (h.probes && h.probes.length) card.appendChild(el("span", "hint-about", "about " + h.probes.join(", ")));
      var body = el("div", "hint-body prose");
      body.innerHTML = h.html; // rendered from Markdown and sanitised by the server (nh3)
      card.appendChild(body);
      box.appendChild(card);
    });
    var offered = hints.filter(function (h) { return h.offered; })[0];
    if (offered) {
      // Named after the failing probe it is about that the grader ranks first (heaviest, then earliest).
      var about = offered.probes && offered.probes.length ? " about " + offered.probes[0] : "";
      var label = (shown.length ? "Show the next hint" : "Show a hint") + about + " (tier " + offered.tier + ", " + (TIER_LABEL[offered.tier] || "hint").toLowerCase() + ")";
      var button = el("button", "button button-small button-secondary reveal-hint", label);
      button.type = "button";
      button.dataset.hintId = offered.id;
      button.addEventListener("click", function () { actions.reveal(offered.reveal_url, button); });
      box.appendChild(button);
    } else if (waiting) {
      box.appendChild(el("p", "muted small", "The other hints open once you have seen the one before them on the same topic."));
    }
  }

  // --- Live progress while a submission runs (the server's "live": probes finished so far) ---

  var LIVE_MARK = { passed: "✓", failed: "✗", done: "•" };
  var LIVE_TITLE = { passed: "passed", failed: "failed", done: "finished; judged with the result" };
  // A Run's probe that did not return (the runner's status), in the words of the verdicts.
  var LIVE_STATUS = {
    error: "raised", timeout: "time limit", stopped: "stopped after a time limit", memory: "memory limit", killed: "killed", crashed: "crashed",
    output_limit: "output limit", observation_limit: "result too large", no_result: "no result", bad_observation: "unreadable result",
  };

  function liveBox() {
    var box = $("live");
    if (!box) {
      box = el("div", "live-progress");
      box.id = "live";
      $("result-message").insertAdjacentElement("afterend", box);
    }
    return box;
  }

  function liveSummary(live) {
    var parts = [live.finished + " of " + plural(live.total, "probe", "probes") + " finished"];
    if (live.finished) parts.push(live.passed + " passed", live.failed + " failed");
    var later = live.finished - live.passed - live.failed;
    if (later) parts.push(later + " judged with the result");
    return parts.join(" · ");
  }

  // Draws the lines of a running submission; empty (hidden by CSS) once it is done.
  // A line keeps the moment it first appeared (data-shown-at), so the delay to the page can be measured.
  function renderLive(data) {
    var box = liveBox();
    var live = data.status === "running" ? data.live : null;
    if (data.status !== "running") { box.replaceChildren(); delete box.dataset.finished; return; }
    if (!live) {
      if (box.dataset.finished !== "0") box.replaceChildren(el("p", "live-summary muted small", "Starting the sandbox…"));
      box.dataset.finished = "0";
      delete box.dataset.submission;
      return;
    }
    var list = box.querySelector("ol.live-probes");
    if (!list || box.dataset.submission !== String(data.id)) {
      list = el("ol", "live-probes");
      box.replaceChildren(el("p", "live-summary"), el("span", "bar live-bar"), list);
      var bar = box.querySelector(".live-bar");
      bar.appendChild(el("span", "bar-fill"));
      bar.setAttribute("role", "progressbar");
      bar.setAttribute("aria-label", "Probes finished");
      bar.setAttribute("aria-valuemin", "0");
      box.dataset.submission = data.id;
    }
    box.dataset.finished = live.finished;
    // Only a change is written: the panel is a live region, and the same words written again may be read out again.
    var summary = box.querySelector(".live-summary");
    if (summary.textContent !== liveSummary(live)) summary.textContent = liveSummary(live);
    box.querySelector(".live-bar").setAttribute("aria-valuemax", String(live.total));
    box.querySelector(".live-bar").setAttribute("aria-valuenow", String(live.finished));
    box.querySelector(".live-bar .bar-fill").style.width = (live.total ? Math.round(100 * live.finished / live.total) : 0) + "%";
    live.probes.forEach(function (p, i) {
      if (list.children[i]) return;  // lines only ever come in order, and stay
      var li = el("li", "live-probe live-" + p.outcome);
      li.dataset.probe = p.name;
      li.dataset.outcome = p.outcome;
      li.dataset.shownAt = String(Date.now());
      li.title = LIVE_TITLE[p.outcome] || "";
      li.appendChild(el("span", "probe-mark", LIVE_MARK[p.outcome] || "•"));
      li.appendChild(el("span", "probe-name", p.name));
      if (p.status && p.status !== "ok") li.appendChild(el("span", "probe-status", LIVE_STATUS[p.status] || String(p.status).replace(/_/g, " ")));
      list.appendChild(li);
    });
  }

  function render(data, actions) {
    actions = actions || {};
    var panel = $("result");
    panel.dataset.status = data.status;
    panel.dataset.submission = data.id;
    panel.dataset.kind = data.kind;
    var status = $("status");
    var label = STATUS_LABEL[data.status] || data.status;
    // A queued grading says its place in line, so the wait is never silent.
    if (data.status === "queued" && typeof data.queue_ahead === "number") {
      label += data.queue_ahead === 0 ? " · next in line" : " · " + data.queue_ahead + " ahead of you";
    }
    status.textContent = (data.kind === "run" ? "Run" : "Submit") + " #" + data.id + " · " + label;
    status.className = "status-pill status-" + data.status;
    var verdict = $("verdict");
    verdict.textContent = data.verdict_label || "";
    verdict.dataset.verdict = data.verdict || "";
    verdict.className = "verdict" + (data.verdict ? " verdict-" + data.verdict : "");
    $("score").textContent = data.done ? formatScore(data.score) : "–";
    $("result-message").textContent = data.message || "";
    renderRegrade(data, actions);
    renderCancel(data, actions);
    renderLive(data);
    renderCategories(data);
    renderProbes(data);
    renderHints(data, actions);
    if (actions && actions.editor) markErrorLine(actions.editor, data);
  }

  // The line a syntax error names, marked in the candidate's editor (CodeMirror) until the next result.
  function markErrorLine(editor, data) {
    if (editor.errorLineHandle) {
      editor.removeLineClass(editor.errorLineHandle, "background", "cm-error-line");
      editor.errorLineHandle = null;
    }
    if (!data.done || !data.error_line || data.error_line > editor.lineCount()) return;
    var line = data.error_line - 1;
    editor.errorLineHandle = editor.addLineClass(line, "background", "cm-error-line");
    editor.scrollIntoView({ line: line, ch: 0 }, 60);
  }

  window.ResultPanel = { render: render, clear: clear, el: el, formatScore: formatScore, STATUS_LABEL: STATUS_LABEL };
})();
