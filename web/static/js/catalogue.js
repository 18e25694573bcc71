// Catalogue filters: apply a filter as soon as it is chosen (the form also works without JS).
document.querySelectorAll("#filters select").forEach(function (select) {
  select.addEventListener("change", function () { select.form.submit(); });
});
