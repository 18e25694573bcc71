// The scorecard's Print button (the CSP allows no inline onclick).
(function () {
  "use strict";
  var button = document.getElementById("print");
  if (button) button.addEventListener("click", function () { window.print(); });
})();
