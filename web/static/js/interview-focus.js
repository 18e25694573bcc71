// The candidate's interview page reports when it is left and when it comes back (Page Visibility API for
// the tab, blur/focus for the window) to join/<token>/focus, so the interviewer's replay can mark the moments
// (web/interviews/replay.py). Only transitions are sent: a tab switch fires visibilitychange and blur, and
// is one "lost". Stops for good once the interview is over (the server answers 409) or the page locks.
(function () {
  "use strict";

  var config = PageKit.config("page-config");
  if (!config.focusUrl || config.state !== "live") return;
  var csrfToken = PageKit.csrfToken();
  var away = false;
  var stopped = false;

  function isAway() { return document.visibilityState === "hidden" || !document.hasFocus(); }

  function send(state, reason) {
    // keepalive: the request survives the tab being hidden or closed right after.
    fetch(config.focusUrl, {
      method: "POST", credentials: "same-origin", keepalive: true,
      headers: { "X-CSRFToken": csrfToken, Accept: "application/json", "Content-Type": "application/json" },
      body: JSON.stringify({ state: state, reason: reason }),
    }).then(function (r) {
      if (r.status === 409 || r.status === 404) stopped = true; // over (or not this candidate's): nothing more to say
    }).catch(function () { /* a lost report is a lost marker, never an error for the candidate */ });
  }

  function check(reason) {
    var countdown = document.getElementById("countdown");
    if (stopped || (countdown && countdown.dataset.state === "ended")) return;
    var now = isAway();
    if (now === away) return;
    away = now;
    if (now) send("lost", document.visibilityState === "hidden" ? "tab" : "window");
    else send("regained", reason);
  }

  document.addEventListener("visibilitychange", function () { check("tab"); });
  window.addEventListener("blur", function () { check("window"); });
  window.addEventListener("focus", function () { check("window"); });
})();
