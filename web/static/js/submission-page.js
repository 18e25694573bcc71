// One submission's page (/submissions/<id>/): the shared result panel drawn from the
// payload the server put in #submission-payload (the candidate's view of the result),
// followed until graded when it is still queued or running; a hint it unlocked can be
// asked for here as on the challenge page. The code sent is highlighted like the editor
// (runMode builds text nodes, no HTML).
(function () {
  "use strict";

  var $ = PageKit.byId;
  var data = PageKit.config("submission-payload");
  var formError = $("form-error");

  function showError(message) {
    formError.textContent = message;
    formError.hidden = !message;
  }

  function post(url) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "X-CSRFToken": PageKit.csrfToken(), Accept: "application/json" },
    }).then(function (response) {
      return response.json().catch(function () { return { error: "The server answered " + response.status + "." }; })
        .then(function (body) { return { ok: response.ok, data: body }; });
    });
  }

  var poller = PageKit.submissionPoller(render, function () {}, showError);

  function act(url, button, fallback, follow) {
    if (!url) return;
    button.disabled = true;
    post(url).then(function (answer) {
      if (!answer.ok) { showError(answer.data.error || fallback); button.disabled = false; return; }
      showError("");
      render(answer.data);
      if (follow && !answer.data.done) poller.follow(answer.data.url);
    }).catch(function () {
      showError("Could not reach the server.");
      button.disabled = false;
    });
  }

  function render(payload) {
    ResultPanel.render(payload, {
      reveal: function (url, button) { act(url, button, "Could not reveal the hint.", false); },
      regrade: function (url, button) { act(url, button, "Could not regrade.", true); },
    });
  }

  render(data);
  if (!data.done && data.url) poller.follow(data.url);

  var code = $("submitted-code");
  if (code && window.CodeMirror && CodeMirror.runMode) CodeMirror.runMode(code.textContent, "python", code);
})();
