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

  // A Python editor on a textarea: 4-space indents, Tab indents (a selection,
  // or inserts spaces), Shift-Tab dedents. ``options`` adds or overrides
  // CodeMirror options; ``options.extraKeys`` adds keys to these.
  function pythonEditor(textarea, options) {
    options = options || {};
    var keys = {
      Tab: function (cm) {
        if (cm.somethingSelected()) cm.indentSelection("add");
        else cm.replaceSelection("    ", "end");
      },
      "Shift-Tab": function (cm) { cm.indentSelection("subtract"); },
    };
    Object.keys(options.extraKeys || {}).forEach(function (key) { keys[key] = options.extraKeys[key]; });
    var settings = {
      mode: { name: "python", version: 3 },
      lineNumbers: true,
      indentUnit: 4,
      tabSize: 4,
      indentWithTabs: false,
      matchBrackets: true,
      viewportMargin: Infinity,
    };
    Object.keys(options).forEach(function (key) { if (key !== "extraKeys") settings[key] = options[key]; });
    settings.extraKeys = keys;
    return CodeMirror.fromTextArea(textarea, settings);
  }

  // Follows one submission's status URL until it is done: render(data) on
  // every answer, then onDone(); answers come every 0.5 s at first, every 2 s
  // later. Following another URL (or stop()) drops the answers still on their
  // way for the old one. onLost(message) after 40 rounds without an answer.
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
          timer = setTimeout(function () { poll(url, round + 1, mine); }, Math.min(500 + round * 150, 2000));
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
