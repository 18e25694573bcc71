// The progress page's chart of scores over attempts (Chart.js, vendored; no other page loads it).
// Its data is the JSON in #score-series: one entry per challenge, each with its graded Submits
// in order. "All challenges" draws every Submit as a point, oldest first, coloured by track, so
// 25 challenges stay readable; picking one challenge in #chart-challenge draws its line, attempt
// by attempt. Clicking a point opens that submission's page. Labels are set as text by Chart.js
// (canvas), never inserted as HTML.
(function () {
  "use strict";

  var series = JSON.parse(document.getElementById("score-series").textContent);
  var trackTitles = JSON.parse(document.getElementById("track-titles").textContent);
  var canvas = document.getElementById("score-canvas");
  var pick = document.getElementById("chart-challenge");
  if (!canvas || !window.Chart || !series.length) return;

  var PALETTE = ["#5b4bdb", "#12805c", "#c2372d", "#a15c00", "#1864ab", "#8b5cf6", "#0e7490", "#be185d"];
  var tracks = [];
  series.forEach(function (s) { if (tracks.indexOf(s.track) < 0) tracks.push(s.track); });
  function colour(track) { return PALETTE[tracks.indexOf(track) % PALETTE.length]; }
  var detailUrl = canvas.dataset.detailUrl || "/submissions/0/";

  // Every Submit in the order sent: x is its number among all of them.
  var all = [];
  series.forEach(function (s) {
    s.points.forEach(function (p) { all.push({ s: s, p: p }); });
  });
  all.sort(function (a, b) { return a.p.at < b.p.at ? -1 : a.p.at > b.p.at ? 1 : a.p.id - b.p.id; });

  function point(x, item) {
    return { x: x, y: item.p.score, id: item.p.id, title: item.s.title, attempt: item.p.attempt, verdict: item.p.verdict };
  }

  function allDatasets() {
    return tracks.map(function (track) {
      var data = [];
      all.forEach(function (item, i) { if (item.s.track === track) data.push(point(i + 1, item)); });
      return { label: trackTitles[track] || track, data: data, clip: 8, backgroundColor: colour(track), borderColor: colour(track), pointRadius: 4, pointHoverRadius: 6 };
    });
  }

  function oneDataset(slug) {
    var s = series.filter(function (c) { return c.slug === slug; })[0];
    return [{
      label: s.title,
      data: s.points.map(function (p) { return point(p.attempt, { s: s, p: p }); }),
      showLine: true, clip: 8, borderColor: colour(s.track), backgroundColor: colour(s.track), pointRadius: 4, pointHoverRadius: 6, tension: 0,
    }];
  }

  // Half-steps pad the first and last points off the edges; only whole submit numbers get a label.
  function wholeOnly(value) { return Number.isInteger(value) ? value : ""; }

  function verdictText(v) { return v ? String(v).replace(/_/g, " ") : ""; }

  var chart = new Chart(canvas, {
    type: "scatter",
    data: { datasets: allDatasets() },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      layout: { padding: { top: 8, right: 8 } },
      elements: { point: { hitRadius: 6 } },
      scales: {
        x: { title: { display: true, text: "Submit number (all challenges, oldest first)" }, ticks: { callback: wholeOnly }, min: 0.5, max: all.length + 0.5 },
        y: { title: { display: true, text: "Score (%)" }, min: 0, max: 100, ticks: { stepSize: 20 } },
      },
      plugins: {
        legend: { position: "bottom" },
        tooltip: {
          callbacks: {
            title: function (items) { return items.length ? items[0].raw.title : ""; },
            label: function (item) {
              return "attempt " + item.raw.attempt + ": " + Number(item.raw.y).toFixed(1) + "% " + verdictText(item.raw.verdict);
            },
          },
        },
      },
      onClick: function (_event, elements) {
        if (!elements.length) return;
        var raw = chart.data.datasets[elements[0].datasetIndex].data[elements[0].index];
        window.location.href = detailUrl.replace(/0\/$/, raw.id + "/");
      },
    },
  });

  if (pick) {
    pick.addEventListener("change", function () {
      var one = !!pick.value;
      chart.data.datasets = one ? oneDataset(pick.value) : allDatasets();
      chart.options.scales.x.max = (one ? chart.data.datasets[0].data.length : all.length) + 0.5;
      chart.options.scales.x.title.text = one ? "Attempt (Submits of this challenge, oldest first)" : "Submit number (all challenges, oldest first)";
      chart.options.plugins.legend.display = !one;
      chart.update();
      canvas.dataset.view = pick.value || "all";
    });
  }
  canvas.dataset.view = "all";
  canvas.dataset.points = String(all.length);
})();
