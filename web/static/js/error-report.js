// Where a float tensor is wrong, as a picture: a probe's error report (grader/error_report.py)
// drawn as a heat-map of error/bound (chartjs-chart-matrix) and a histogram of log10(error/bound)
// (Chart.js), both vendored. The result panel (result-panel.js) calls ErrorReport.render(report)
// for a failing probe that has one. A public probe's report has values (max abs/rel/ULP error, a
// summary line); a hidden one's (report.hidden) only positions, counts and decades of the ratio.
// Every label is set as text (textContent, or drawn on a canvas by Chart.js), never as HTML.
(function () {
  "use strict";

  // The grader's encoding: one character per cell; level k of LEVELS, or "!" for NaN/Inf on one side only.
  var LEVELS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  var NONFINITE = "!";
  var LOWEST_DECADE = -6;
  var STEPS = 5; // levels per decade
  var BOUND_LEVEL = 30; // ratio 1: above is out of bound
  var TOP_LEVEL = LEVELS.length - 1;
  var NONFINITE_COLOUR = "#6b21a8";

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function mix(a, b, t) {
    var pa = [1, 3, 5].map(function (i) { return parseInt(a.slice(i, i + 2), 16); });
    var pb = [1, 3, 5].map(function (i) { return parseInt(b.slice(i, i + 2), 16); });
    return "rgb(" + pa.map(function (x, i) { return Math.round(x + (pb[i] - x) * t); }).join(", ") + ")";
  }

  // Within the bound: pale to a calm green as the error nears it; over it: amber to dark red.
  function levelColour(k) {
    if (k <= BOUND_LEVEL) return mix("#f2f6f3", "#7cc49a", k / BOUND_LEVEL);
    var t = (k - BOUND_LEVEL - 1) / (TOP_LEVEL - BOUND_LEVEL - 1);
    return t < 0.4 ? mix("#fdd07a", "#e8590c", t / 0.4) : mix("#e8590c", "#6e0b0b", (t - 0.4) / 0.6);
  }

  function cellColour(ch) { return ch === NONFINITE ? NONFINITE_COLOUR : levelColour(LEVELS.indexOf(ch)); }

  function power(e) { return { "-1": "0.1", "0": "1", "1": "10" }[e] || "1e" + e; }

  function fmt(e) { return Math.pow(10, e).toPrecision(3).replace(/\.?0+$/, "").replace(/\.?0+e/, "e"); }

  // What a cell's character says about the worst element it covers.
  function levelText(ch, hidden) {
    if (ch === NONFINITE) return "NaN or infinite where the expected value is not (or the other way round)";
    var k = LEVELS.indexOf(ch);
    if (hidden && k <= BOUND_LEVEL - 3 * STEPS) return "error at most 1e-3 of the bound";
    if (hidden && k === TOP_LEVEL) return "error over 1e4 times the bound";
    if (k === 0) return "error at most 1e-6 of the bound (or exact)";
    if (k === TOP_LEVEL) return "error over 1e6 times the bound (or any error where the bound is 0)";
    var hi = LOWEST_DECADE + k / STEPS;
    var lo = hi - (hidden ? 1 : 1 / STEPS);
    var range = fmt(lo) + " to " + fmt(hi) + " times the bound";
    return "error " + range + (k > BOUND_LEVEL ? ": out of bound" : ": within the bound");
  }

  function splitStart(i, size, cells) { return Math.floor((i * size) / cells); }

  function range(i, size, cells) {
    var a = splitStart(i, size, cells);
    var b = splitStart(i + 1, size, cells) - 1;
    return a === b ? String(a) : a + "–" + b;
  }

  // A flattened row index as the original leading dims' indices.
  function unflatten(flat, shape) {
    var out = [];
    for (var d = shape.length - 1; d >= 0; d--) {
      out.unshift(flat % shape[d]);
      flat = Math.floor(flat / shape[d]);
    }
    return out;
  }

  function dimsText(dims) {
    if (dims.length === 1) return "dim " + dims[0];
    return "dims " + dims.slice(0, -1).join(", ") + " and " + dims[dims.length - 1];
  }

  function axisTitle(axis, name, shape) {
    var cellsWord = axis.cells === axis.size ? "" : " → " + axis.cells + (name === "row" ? " rows" : " columns");
    if (name === "row") {
      if (!axis.dims.length) return "";
      var what = axis.dims.length === 1 ? "dim " + axis.dims[0] + " (" + axis.size + ")"
        : dimsText(axis.dims) + " flattened (" + axis.shape.join(" × ") + " = " + axis.size + ")";
      return "Rows: " + what + cellsWord;
    }
    var last = shape.length > 1 ? ", the last" : "";
    return "Columns: dim " + axis.dims[0] + last + " (" + axis.size + ")" + cellsWord;
  }

  function worstCell(report, grid) {
    var w = report.worst_index || [];
    if (!w.length || !grid) return null;
    var col = w[w.length - 1];
    var row = 0;
    if (grid.rows.dims.length) {
      row = 0;
      grid.rows.shape.forEach(function (n, d) { row = row * n + w[d]; });
    }
    var cellOf = function (index, size, cells) {
      for (var i = cells - 1; i >= 0; i--) if (splitStart(i, size, cells) <= index) return i;
      return 0;
    };
    return { x: cellOf(col, grid.cols.size, grid.cols.cells), y: cellOf(row, grid.rows.size, grid.rows.cells) };
  }

  // Chart.js keeps every chart it made; drop the ones whose canvas a re-render took off the page.
  function forgetDetached() {
    if (!window.Chart || !Chart.instances) return;
    Object.keys(Chart.instances).forEach(function (id) {
      var chart = Chart.instances[id];
      if (chart && chart.canvas && !chart.canvas.isConnected) chart.destroy();
    });
  }

  function drawMap(canvas, report) {
    var grid = report.map;
    var hidden = !!report.hidden;
    var worst = worstCell(report, grid);
    var data = [];
    for (var y = 0; y < grid.rows.cells; y++) {
      for (var x = 0; x < grid.cols.cells; x++) data.push({ x: x, y: y, v: grid.cells.charAt(y * grid.cols.cells + x) });
    }
    var isWorst = function (d) { return worst && d.x === worst.x && d.y === worst.y; };
    var rowTitle = axisTitle(grid.rows, "row", report.shape);
    return new Chart(canvas, {
      type: "matrix",
      data: {
        datasets: [{
          label: "error / bound",
          data: data,
          backgroundColor: function (c) { return c.raw ? cellColour(c.raw.v) : "transparent"; },
          borderColor: function (c) { return c.raw && isWorst(c.raw) ? "#111827" : "rgba(255,255,255,0.35)"; },
          borderWidth: function (c) { return c.raw && isWorst(c.raw) ? 2 : 0.5; },
          width: function (c) { var a = c.chart.chartArea; return a ? Math.max(1, a.width / grid.cols.cells - 0.5) : 0; },
          height: function (c) { var a = c.chart.chartArea; return a ? Math.max(1, a.height / grid.rows.cells - 0.5) : 0; },
        }],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              title: function (items) {
                var d = items[0].raw;
                var col = "dim " + grid.cols.dims[0] + " = " + range(d.x, grid.cols.size, grid.cols.cells);
                if (!grid.rows.dims.length) return col;
                var a = splitStart(d.y, grid.rows.size, grid.rows.cells);
                var b = splitStart(d.y + 1, grid.rows.size, grid.rows.cells) - 1;
                var from = unflatten(a, grid.rows.shape);
                var to = unflatten(b, grid.rows.shape);
                var rows = grid.rows.dims.length === 1 ? "dim " + grid.rows.dims[0] + " = " + range(d.y, grid.rows.size, grid.rows.cells)
                  : "[" + from.join(", ") + "]" + (a === b ? "" : " to [" + to.join(", ") + "]");
                return rows + ", " + col;
              },
              label: function (item) {
                var text = "worst here: " + levelText(item.raw.v, hidden);
                return isWorst(item.raw) ? [text, "the worst element of the tensor is in this cell"] : text;
              },
            },
          },
        },
        scales: {
          x: {
            type: "linear", offset: false, min: -0.5, max: grid.cols.cells - 0.5,
            grid: { display: false },
            ticks: { precision: 0, maxRotation: 0, autoSkipPadding: 8, callback: function (v) { return Number.isInteger(v) && v >= 0 && v < grid.cols.cells ? splitStart(v, grid.cols.size, grid.cols.cells) : ""; } },
            title: { display: true, text: axisTitle(grid.cols, "col", report.shape) },
          },
          y: {
            type: "linear", offset: false, reverse: true, min: -0.5, max: grid.rows.cells - 0.5,
            grid: { display: false },
            display: !!grid.rows.dims.length,
            ticks: { precision: 0, callback: function (v) { return Number.isInteger(v) && v >= 0 && v < grid.rows.cells ? splitStart(v, grid.rows.size, grid.rows.cells) : ""; } },
            title: { display: !!rowTitle, text: rowTitle },
          },
        },
      },
    });
  }

  // A dashed line at the bound (the edge 0 of log10(error/bound)), between the bins either side of it.
  var boundLine = {
    id: "errorReportBound",
    afterDatasetsDraw: function (chart, _args, opts) {
      var meta = chart.getDatasetMeta(0);
      var left = meta.data[opts.index - 1];
      var right = meta.data[opts.index];
      if (!left || !right) return;
      var x = (left.x + right.x) / 2;
      var ctx = chart.ctx;
      var area = chart.chartArea;
      ctx.save();
      ctx.strokeStyle = "#111827";
      ctx.setLineDash([5, 4]);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(x, area.top);
      ctx.lineTo(x, area.bottom);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = "#111827";
      ctx.font = "600 11px system-ui, sans-serif";
      ctx.textAlign = "left";
      ctx.fillText("bound", x + 4, area.top + 11);
      ctx.restore();
    },
  };

  function drawHistogram(canvas, report) {
    var h = report.histogram;
    var edges = h.edges;
    // Each bar is labelled by its decade's upper end; the tooltip gives the whole range.
    var labels = ["≤" + power(edges[0])];
    var ranges = ["at most " + power(edges[0]) + " (exact included)"];
    for (var i = 0; i < edges.length - 1; i++) {
      labels.push(power(edges[i + 1]));
      ranges.push("over " + power(edges[i]) + ", up to " + power(edges[i + 1]));
    }
    labels.push(">" + power(edges[edges.length - 1]));
    ranges.push("over " + power(edges[edges.length - 1]));
    var counts = h.counts.slice();
    var colours = counts.map(function (_c, i) {
      // Bin i > 0 covers (edges[i-1], edges[i]]: within the bound up to the edge 0.
      var top = i === 0 ? edges[0] : i > edges.length - 1 ? Infinity : edges[i];
      return top <= 0 ? "#52a675" : "#d9480f";
    });
    if (h.nonfinite) {
      labels.push("NaN/Inf");
      counts.push(h.nonfinite);
      colours.push(NONFINITE_COLOUR);
    }
    var boundIndex = edges.indexOf(0) + 1; // the first bin over the bound
    return new Chart(canvas, {
      type: "bar",
      data: { labels: labels, datasets: [{ label: "elements", data: counts, backgroundColor: colours, barPercentage: 0.95, categoryPercentage: 0.95 }] },
      plugins: [boundLine],
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        plugins: {
          legend: { display: false },
          errorReportBound: { index: boundIndex },
          tooltip: {
            callbacks: {
              title: function (items) {
                var i = items[0].dataIndex;
                return i >= ranges.length ? "NaN or Inf on one side only" : "error / bound " + ranges[i];
              },
              label: function (item) { return item.raw + " element" + (item.raw === 1 ? "" : "s"); },
            },
          },
        },
        scales: {
          x: { title: { display: true, text: "error / bound, by decade (each bar up to its label)" }, ticks: { maxRotation: 50, autoSkip: false, font: { size: 10 } } },
          y: { type: "logarithmic", min: 0.8, max: Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, counts.concat([1])) * 1.5))), title: { display: true, text: "elements (log scale)" }, ticks: { callback: function (v) { return [1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7].indexOf(v) >= 0 ? v.toLocaleString("en") : ""; } } },
        },
      },
    });
  }

  function legend() {
    var box = el("div", "error-legend");
    box.setAttribute("aria-label", "Colour scale of the heat-map");
    box.appendChild(el("span", "error-legend-title", "error / bound"));
    var bar = el("span", "error-legend-bar");
    var stops = [];
    for (var k = 0; k <= TOP_LEVEL; k += 1) stops.push(levelColour(k) + " " + ((k / TOP_LEVEL) * 100).toFixed(1) + "%");
    bar.style.background = "linear-gradient(to right, " + stops.join(", ") + ")";
    var ticks = el("span", "error-legend-ticks");
    [["≤1e-6", 0], ["1e-3", 15], ["1 (bound)", 30], ["1e3", 45], ["≥1e6", TOP_LEVEL]].forEach(function (t) {
      var tick = el("span", "error-legend-tick" + (t[1] === BOUND_LEVEL ? " error-legend-bound" : ""), t[0]);
      tick.style.left = ((t[1] / TOP_LEVEL) * 100).toFixed(1) + "%";
      ticks.appendChild(tick);
    });
    bar.appendChild(ticks);
    box.appendChild(bar);
    var nan = el("span", "error-legend-nan");
    var swatch = el("span", "error-legend-swatch");
    swatch.style.background = NONFINITE_COLOUR;
    nan.appendChild(swatch);
    nan.appendChild(document.createTextNode("NaN/Inf mismatch"));
    box.appendChild(nan);
    return box;
  }

  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }

  function facts(report) {
    if (!report.hidden && report.summary) return report.summary;
    var parts = [report.over_bound + " of " + plural(report.elements, "element", "elements") + " over their bound"];
    if (report.worst_index && report.worst_index.length) parts.push("the worst at [" + report.worst_index.join(", ") + "]");
    if (report.nan_mismatches || report.inf_mismatches) parts.push(report.nan_mismatches + " NaN and " + report.inf_mismatches + " Inf mismatches");
    return parts.join("; ");
  }

  function render(report) {
    var box = el("div", "error-report");
    box.appendChild(el("span", "compare-label", "where the tensor is wrong"));
    if (report.label) box.appendChild(el("p", "error-report-label", report.label));
    box.appendChild(el("p", "diff-facts error-report-facts", facts(report)));
    if (report.hidden) {
      box.appendChild(el("p", "diff-facts muted", "A hidden probe: where the errors are and how far over their bound, in whole decades; no values."));
    }
    if (!window.Chart) return box; // the page did not load the charts: the facts above still say it
    var charts = el("div", "error-charts");
    var pending = [];
    if (report.map && report.map.cells) {
      var fig = el("figure", "error-figure error-map-figure");
      var holder = el("div", "error-chart error-map-chart");
      holder.style.height = report.map.rows.cells === 1 ? "120px" : Math.min(360, Math.max(170, 16 * report.map.rows.cells + 90)) + "px";
      var canvas = el("canvas", "error-map");
      canvas.setAttribute("role", "img");
      canvas.setAttribute("aria-label", "Heat-map of error over bound: " + facts(report));
      holder.appendChild(canvas);
      fig.appendChild(holder);
      var caption = "Each cell is the largest error / bound of the elements it covers";
      if (report.worst_index && report.worst_index.length) caption += "; the outlined cell holds the worst element, [" + report.worst_index.join(", ") + "]";
      fig.appendChild(el("figcaption", "", caption + "."));
      fig.appendChild(legend());
      charts.appendChild(fig);
      pending.push(function () { drawMap(canvas, report); });
    }
    if (report.histogram && report.histogram.counts && report.histogram.counts.length) {
      var hfig = el("figure", "error-figure error-histogram-figure");
      var hholder = el("div", "error-chart");
      hholder.style.height = "240px";
      var hcanvas = el("canvas", "error-histogram");
      hcanvas.setAttribute("role", "img");
      hcanvas.setAttribute("aria-label", "Histogram of error over bound, in decades");
      hholder.appendChild(hcanvas);
      hfig.appendChild(hholder);
      hfig.appendChild(el("figcaption", "", "How many elements have each error / bound (green within the bound, red over it)."));
      charts.appendChild(hfig);
      pending.push(function () { drawHistogram(hcanvas, report); });
    }
    box.appendChild(charts);
    // Chart.js sizes a chart from its parent: draw once the panel is on the page.
    var attempts = 0;
    var draw = function () {
      if (!box.isConnected) {
        if (++attempts < 50) window.requestAnimationFrame(draw);
        return;
      }
      forgetDetached();
      pending.forEach(function (fn) { fn(); });
      box.dataset.drawn = "true";
    };
    window.requestAnimationFrame(draw);
    return box;
  }

  window.ErrorReport = { render: render, levelText: levelText };
})();
