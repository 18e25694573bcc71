// What every page with code on it shares: its JSON config, the CSRF token,
// statement code blocks highlighted like the editor, Python editors with
// the same indentation keys, and following a submission until it is graded. Loaded before each page's own script
// (challenge.js, interview-candidate.js, interview-live.js, authoring.js), so
// a change to how code is edited or shown is made once.
(function () {
  "use strict";

  function byId(id) { return document.getElementById(id); }

  // The JSON a template put in <script type="application/json" id=...>.
  function config(id) { return JSON.parse(byId(id).textContent); }

  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // Python code blocks of rendered statements (Markdown) get the editor's colours;
  // runMode builds text nodes and spans, no HTML parsing.
  function highlightStatements(selector) {
    document.querySelectorAll(selector).forEach(function (code) {
      var lang = (code.className.match(/language-(\w+)/) || [])[1];
      if (lang === "python" || lang === "py" || lang === "pycon" || !lang) {
        code.parentNode.classList.add("cm-s-default");
        CodeMirror.runMode(code.textContent, "python", code);
      }
    });
  }

  // Moves the focus to the next (or previous) control outside the editor, as
  // Tab would from an ordinary field. CodeMirror's own keymap binds Tab, so
  // the browser's default cannot be let through.
  var FOCUSABLE = "a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), " +
    "select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex='-1'])";
  function leaveEditor(cm, forward) {
    var wrapper = cm.getWrapperElement();
    var candidates = Array.prototype.filter.call(document.querySelectorAll(FOCUSABLE), function (el) {
      return !wrapper.contains(el) && el.offsetParent !== null;
    });
    var after = candidates.filter(function (el) {
      return wrapper.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING;
    });
    var before = candidates.filter(function (el) {
      return wrapper.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING;
    });
    var target = forward ? after[0] : before[before.length - 1];
    if (target) target.focus();
  }

  // A Python editor on a textarea: 4-space indents, Tab indents (a selection,
  // or inserts spaces), Shift-Tab dedents; Esc then Tab (or Shift-Tab) leaves
  // the editor like any other field, so a keyboard can reach Run and Submit.
  // It draws only the lines in view (CodeMirror's default viewport), so a
  // megabyte pasted in stays responsive; the frame is resizable (site.css) and
  // the editor follows its size. ``options`` adds or overrides CodeMirror
  // options; ``options.extraKeys`` adds keys to these.
  function pythonEditor(textarea, options) {
    options = options || {};
    var escaped = false;
    function tabOr(forward, action) {
      return function (cm) {
        if (escaped) { escaped = false; leaveEditor(cm, forward); return; }
        action(cm);
      };
    }
    var keys = {
      Tab: tabOr(true, function (cm) {
        if (cm.somethingSelected()) cm.indentSelection("add");
        else cm.replaceSelection("    ", "end");
      }),
      "Shift-Tab": tabOr(false, function (cm) { cm.indentSelection("subtract"); }),
      Esc: function () { escaped = true; },
    };
    Object.keys(options.extraKeys || {}).forEach(function (key) { keys[key] = options.extraKeys[key]; });
    var settings = {
      mode: { name: "python", version: 3 },
      lineNumbers: true,
      indentUnit: 4,
      tabSize: 4,
      indentWithTabs: false,
      matchBrackets: true,
    };
    // The text field CodeMirror types into is named like the textarea it replaces, for screen readers.
    var label = textarea.getAttribute("aria-label");
    if (label) settings.screenReaderLabel = label;
    Object.keys(options).forEach(function (key) { if (key !== "extraKeys") settings[key] = options[key]; });
    settings.extraKeys = keys;
    var cm = CodeMirror.fromTextArea(textarea, settings);
    // Any key but Esc and the Tab it announces cancels the escape.
    cm.on("keydown", function (_cm, event) { if (event.key !== "Escape" && event.key !== "Tab") escaped = false; });
    cm.on("blur", function () { escaped = false; });
    if (window.ResizeObserver) {
      new ResizeObserver(function () { cm.refresh(); }).observe(cm.getWrapperElement());
    }
    return cm;
  }

  // Follows one submission's status URL until it is done: render(data) on
  // every answer, then onDone(); answers come every 0.5 s at first, every 2 s
  // later, and every RUNNING_POLL_MS while it runs (its live progress). Following another URL (or stop()) drops the answers still on their
  // way for the old one. onLost(message) after 40 rounds without an answer.
  var RUNNING_POLL_MS = 250;

  function submissionPoller(render, onDone, onLost) {
    var timer = null;
    var generation = 0;
    function poll(url, round, mine) {
      clearTimeout(timer);
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) throw new Error("status " + response.status);
          return response.json();
        })
        .then(function (data) {
          if (mine !== generation) return;
          render(data);
          if (data.done) { onDone(); return; }
          // While it runs the probes' live lines arrive: look often, so each shows within about half a second.
          var wait = data.status === "running" ? RUNNING_POLL_MS : Math.min(500 + round * 150, 2000);
          timer = setTimeout(function () { poll(url, round + 1, mine); }, wait);
        })
        .catch(function () {
          if (mine !== generation) return;
          if (round > 40) { onLost("Lost contact with the server; reload the page to see the result."); return; }
          timer = setTimeout(function () { poll(url, round + 1, mine); }, 2000);
        });
    }
    return {
      follow: function (url) { poll(url, 0, ++generation); },
      stop: function () { generation++; clearTimeout(timer); },
    };
  }

  window.PageKit = {
    byId: byId,
    submissionPoller: submissionPoller,
    config: config,
    csrfToken: csrfToken,
    highlightStatements: highlightStatements,
    pythonEditor: pythonEditor,
  };
})();
