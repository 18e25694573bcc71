// The interviewer's replay of a mock interview, one player per challenge: the live view and the scorecard
// both hold <section id="replay" data-replay-url=...> with a <div class="replay" data-slug=...> per challenge.
//
// The moments come from replay.json (web/interviews/timeline.py: every event with a stable key, its offset
// in seconds since the clock started, a label); the code of each autosave from the challenge's code timeline
// (fetched once per snapshot). A player has play/pause, a speed from 1x to 32x, a seek bar under a track of
// markers (runs, submits coloured by verdict, hint reveals, the candidate leaving and coming back, notes taken
// at a moment, autosaves as ticks), the moment at the playhead, the code at the playhead (keystroke by keystroke when
// the keystroke stream reached the server, else at each autosave), and a line diff
// between two points A and B picked on the timeline. Playback skips idle stretches: a gap of more than
// idle_gap_seconds with no moment passes in an instant after a short look at the last moment.
//
// Everything that came from the candidate (code, labels) is inserted as text, never as HTML.
// On the live view (data-live="true") the player follows the candidate while its playhead is at the end. The
// latest code is on both pages already (data-latest-label names where), so at the end it is not shown twice.
(function () {
  "use strict";

  var SPEEDS = [1, 2, 4, 8, 16, 32];
  var TICK_MS = 100;
  var LOOK_SECONDS = 0.75; // wall-clock time each side of a moment before an idle stretch is skipped
  var REFRESH_MS = 3000;
  var CONTEXT_LINES = 3;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function clock(seconds) {
    var s = Math.max(0, Math.floor(seconds || 0));
    return String(Math.floor(s / 60)).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
  }

  // --- Pure helpers (exposed for the browser test) ---

  // Where playback goes from t after advancing by dt (interview seconds) at this speed, given the sorted
  // offsets of the moments and the end of the span: an idle stretch (a gap over idleGap between two moments)
  // is skipped once LOOK_SECONDS of wall-clock time has passed since the moment before it, landing
  // LOOK_SECONDS before the next one. Returns {t, skipped}.
  function advance(points, t, dt, speed, idleGap, span) {
    var next = t + dt;
    var look = LOOK_SECONDS * speed;
    var prev = 0, after = span;
    for (var i = 0; i < points.length; i++) {
      if (points[i] <= next) prev = points[i];
      else { after = points[i]; break; }
    }
    var skipped = 0;
    if (after - prev > idleGap && next - prev >= look && after - look > next) {
      skipped = after - look - next;
      next = after - look;
    }
    return { t: Math.min(next, span), skipped: skipped };
  }

  // The text after CodeMirror's changes, each {from: [line, ch], to: [line, ch], text}, in order (web/interviews/keys.py's
  // apply_ops, which checked them when they arrived; ch counts UTF-16 code units, as JavaScript strings do).
  function applyOps(text, ops) {
    (ops || []).forEach(function (op) {
      var lines = text.split("\n");
      function index(pos) {
        var i = 0;
        for (var l = 0; l < pos[0]; l++) i += lines[l].length + 1;
        return i + pos[1];
      }
      text = text.slice(0, index(op.from)) + op.text + text.slice(index(op.to));
    });
    return text;
  }

  // A line diff of two texts (longest common subsequence of lines, common ends trimmed first):
  // [{op: "same"|"add"|"del", text}] in order.
  function lineDiff(a, b) {
    var x = a === "" ? [] : a.split("\n"), y = b === "" ? [] : b.split("\n");
    var start = 0;
    while (start < x.length && start < y.length && x[start] === y[start]) start++;
    var endX = x.length, endY = y.length;
    while (endX > start && endY > start && x[endX - 1] === y[endY - 1]) { endX--; endY--; }
    var mx = x.slice(start, endX), my = y.slice(start, endY);
    var middle = [];
    if (mx.length * my.length > 4000000) {
      // Too large to align line by line: the changed block as removed, then added.
      mx.forEach(function (t) { middle.push({ op: "del", text: t }); });
      my.forEach(function (t) { middle.push({ op: "add", text: t }); });
    } else {
      var n = mx.length, m = my.length, i, j;
      var table = [];
      for (i = 0; i <= n; i++) table.push(new Uint32Array(m + 1));
      for (i = n - 1; i >= 0; i--) {
        for (j = m - 1; j >= 0; j--) {
          table[i][j] = mx[i] === my[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
        }
      }
      i = 0; j = 0;
      while (i < n && j < m) {
        if (mx[i] === my[j]) { middle.push({ op: "same", text: mx[i] }); i++; j++; }
        else if (table[i + 1][j] >= table[i][j + 1]) { middle.push({ op: "del", text: mx[i] }); i++; }
        else { middle.push({ op: "add", text: my[j] }); j++; }
      }
      for (; i < n; i++) middle.push({ op: "del", text: mx[i] });
      for (; j < m; j++) middle.push({ op: "add", text: my[j] });
    }
    var out = x.slice(0, start).map(function (t) { return { op: "same", text: t }; });
    return out.concat(middle, x.slice(endX).map(function (t) { return { op: "same", text: t }; }));
  }

  window.InterviewReplay = { advance: advance, lineDiff: lineDiff, clock: clock, applyOps: applyOps };

  var root = document.getElementById("replay");
  if (!root) return;
  var replayUrl = root.dataset.replayUrl;
  var isLive = root.dataset.live === "true";
  var latestLabel = root.dataset.latestLabel || ""; // where the page shows the latest code already
  var data = null; // the latest replay.json
  var players = [];

  function markerClass(e) {
    var names = ["replay-marker", "marker-" + e.kind];
    if (e.kind === "submit" || e.kind === "run") names.push(e.verdict ? (e.verdict === "accepted" ? "marker-accepted" : "marker-failed") : "marker-pending");
    if (e.kind === "focus") names.push("marker-focus-" + e.state);
    return names.join(" ");
  }

  function Player(box) {
    this.box = box;
    this.slug = box.dataset.slug;
    this.t = 0;
    this.playing = false;
    this.speed = 1;
    this.skipped = 0;
    this.following = true; // at the end, keeping up with the candidate
    this.a = null;
    this.b = null;
    this.snapshots = []; // {id, offset, code}, in order
    // The keystroke stream's states (web/interviews/keys.py's KeyEvent): {id, offset, code, keys: true} after each
    // applied edit or reset, in order. When there are any, the code at the playhead is these, not the autosaves.
    this.keyStates = [];
    this.keyText = null;
    this.keyAfter = 0;
    this.moreKeys = false;
    this.loadedOnce = false;
    this.loading = false;
    this.build();
  }

  Player.prototype.build = function () {
    var self = this, box = this.box;
    box.replaceChildren();
    this.empty = el("p", "muted small replay-empty", "Nothing to replay yet: the clock starts when the candidate opens the link.");
    box.appendChild(this.empty);
    var body = this.body = el("div", "replay-body");
    body.hidden = true;

    var controls = el("div", "replay-controls");
    this.play = el("button", "button button-small replay-play", "Play");
    this.play.type = "button";
    this.play.setAttribute("aria-pressed", "false");
    this.play.addEventListener("click", function () { self.toggle(); });
    controls.appendChild(this.play);
    var speedLabel = el("label", "replay-speed-label small", "Speed ");
    this.speedSelect = el("select", "replay-speed");
    SPEEDS.forEach(function (s) {
      var option = el("option", "", s + "x");
      option.value = String(s);
      self.speedSelect.appendChild(option);
    });
    this.speedSelect.addEventListener("change", function () { self.speed = Number(self.speedSelect.value); self.box.dataset.speed = self.speedSelect.value; });
    speedLabel.appendChild(this.speedSelect);
    controls.appendChild(speedLabel);
    this.time = el("span", "replay-time", "00:00 / 00:00");
    controls.appendChild(this.time);
    this.status = el("span", "muted small replay-status");
    controls.appendChild(this.status);
    body.appendChild(controls);

    this.track = el("div", "replay-track");
    this.track.setAttribute("role", "group");
    this.track.setAttribute("aria-label", "Moments on the timeline; each marker moves the playhead to it");
    this.head = el("span", "replay-head");
    body.appendChild(this.track);
    this.seek = el("input", "replay-seek");
    this.seek.type = "range";
    this.seek.min = "0";
    this.seek.step = "0.1";
    this.seek.setAttribute("aria-label", "Replay position, seconds since the start");
    this.seek.addEventListener("input", function () { self.pause(); self.jump(Number(self.seek.value)); });
    body.appendChild(this.seek);
    this.idleNote = el("p", "muted small replay-idle-note");
    body.appendChild(this.idleNote);

    this.moment = el("p", "replay-moment");
    this.moment.setAttribute("aria-live", "polite");
    body.appendChild(this.moment);
    this.codeNote = el("p", "muted small replay-code-note");
    body.appendChild(this.codeNote);
    this.code = el("pre", "code-view cm-s-default replay-code");
    body.appendChild(this.code);

    var diffBar = el("div", "replay-diff-controls");
    diffBar.appendChild(el("span", "small", "Compare two points: move the playhead, then "));
    this.setA = el("button", "button button-secondary button-small replay-set-a", "Set A here");
    this.setB = el("button", "button button-secondary button-small replay-set-b", "Set B here");
    this.clearAB = el("button", "button button-secondary button-small replay-clear-diff", "Clear");
    [this.setA, this.setB, this.clearAB].forEach(function (b) { b.type = "button"; diffBar.appendChild(b); });
    this.setA.addEventListener("click", function () { self.a = self.t; self.drawDiff(); self.drawMarkers(); });
    this.setB.addEventListener("click", function () { self.b = self.t; self.drawDiff(); self.drawMarkers(); });
    this.clearAB.addEventListener("click", function () { self.a = self.b = null; self.drawDiff(); self.drawMarkers(); });
    body.appendChild(diffBar);
    this.diffSummary = el("p", "small replay-diff-summary");
    this.diff = el("pre", "code-view replay-diff");
    this.diff.hidden = true;
    body.appendChild(this.diffSummary);
    body.appendChild(this.diff);

    var moments = el("details", "replay-moments");
    moments.appendChild(el("summary", "", "All moments"));
    this.list = el("ol", "replay-list plain-list");
    moments.appendChild(this.list);
    body.appendChild(moments);
    box.appendChild(body);
  };

  Player.prototype.events = function () {
    var slug = this.slug;
    return (data ? data.events : []).filter(function (e) { return e.offset !== null && (e.challenge === null || e.challenge === slug); });
  };

  Player.prototype.points = function () {
    var seen = {};
    return this.events().map(function (e) { return e.offset; }).filter(function (t) {
      if (seen[t]) return false;
      seen[t] = true;
      return true;
    }).sort(function (a, b) { return a - b; });
  };

  Player.prototype.update = function () {
    if (!data || !data.started_at) { this.empty.hidden = false; this.body.hidden = true; return; }
    this.empty.hidden = true;
    this.body.hidden = false;
    var span = Math.max(1, data.span);
    var atEnd = this.following && !this.playing;
    this.seek.max = span.toFixed(1);
    if (atEnd) this.t = span;
    this.idleNote.textContent = "Playback skips idle stretches: when nothing happens for more than " + data.idle_gap_seconds +
      " s (no edit, run, hint, focus change or note), it jumps ahead to the next moment.";
    this.drawMarkers();
    this.drawList();
    this.loadCode();
    this.render();
  };

  // Markers are kept from one poll to the next (only moved, relabelled, added or removed), so a marker the
  // interviewer has focused with the keyboard keeps its focus while the live view's timeline grows.
  Player.prototype.drawMarkers = function () {
    var self = this, span = Math.max(1, data.span);
    var kept = {};
    Array.prototype.forEach.call(this.track.querySelectorAll("[data-key]"), function (node) { kept[node.dataset.key] = node; });
    var order = [];
    this.events().forEach(function (e) {
      var node = kept[e.key];
      delete kept[e.key];
      if (e.kind === "snapshot") {
        if (!node) { node = el("span", "replay-tick"); node.dataset.key = e.key; }
      } else {
        if (!node) {
          node = el("button");
          node.type = "button";
          node.dataset.key = e.key;
          node.dataset.kind = e.kind;
          node.addEventListener("click", function () { self.pause(); self.jump(Number(node.dataset.offset)); });
        }
        node.className = markerClass(e);
        if (e.verdict) node.dataset.verdict = e.verdict; else delete node.dataset.verdict;
        if (e.state) node.dataset.state = e.state;
        node.dataset.offset = String(e.offset);
        node.title = e.clock + " · " + e.label;
        node.setAttribute("aria-label", e.clock + ": " + e.label);
      }
      node.style.left = Math.min(100, 100 * e.offset / span) + "%";
      order.push(node);
    });
    Object.keys(kept).forEach(function (key) { kept[key].remove(); });
    order.forEach(function (node) { if (node.parentNode !== self.track) self.track.appendChild(node); });
    this.track.querySelectorAll(".replay-flag").forEach(function (flag) { flag.remove(); });
    [["a", this.a], ["b", this.b]].forEach(function (pair) {
      if (pair[1] === null) return;
      var flag = el("span", "replay-flag replay-flag-" + pair[0], pair[0].toUpperCase());
      flag.style.left = Math.min(100, 100 * pair[1] / span) + "%";
      self.track.appendChild(flag);
    });
    this.track.appendChild(this.head);
  };

  Player.prototype.drawList = function () {
    var self = this;
    var moments = this.events().filter(function (e) { return e.kind !== "snapshot"; });
    var signature = moments.map(function (e) { return e.key + " " + e.clock + " " + e.label; }).join("\n");
    if (this.list.dataset.signature === signature) return; // unchanged: keep the keyboard's place in it
    this.list.dataset.signature = signature;
    this.list.replaceChildren();
    moments.forEach(function (e) {
      var li = el("li", "replay-item replay-item-" + e.kind);
      li.dataset.key = e.key;
      var go = el("button", "link-button", e.clock);
      go.type = "button";
      go.setAttribute("aria-label", "Move the playhead to " + e.clock);
      go.addEventListener("click", function () { self.pause(); self.jump(e.offset); });
      li.appendChild(go);
      li.appendChild(el("span", "", " " + e.label));
      if (e.url) {
        li.appendChild(document.createTextNode(" · "));
        var link = el("a", "replay-run-link", "details");
        link.href = e.url;
        li.appendChild(link);
      }
      self.list.appendChild(li);
    });
  };

  Player.prototype.loadCode = function () {
    var self = this;
    var wanted = this.events().filter(function (e) { return e.kind === "snapshot"; });
    var have = this.snapshots.length ? this.snapshots[this.snapshots.length - 1].id : 0;
    var newSnapshots = wanted.length && wanted[wanted.length - 1].id > have;
    // Keystrokes arrive between autosaves: the live view asks on every refresh, the scorecard once (and for the rest).
    var keysDue = !this.loadedOnce || this.moreKeys || (isLive && data.state === "live");
    if (this.loading || (!newSnapshots && !keysDue)) return;
    var challenge = data.challenges.filter(function (c) { return c.slug === self.slug; })[0];
    if (!challenge) return;
    this.loading = true;
    var start = new Date(data.started_at).getTime();
    var url = challenge.code_url + "?after=" + have + "&keys_after=" + this.keyAfter;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (answer) {
        self.loading = false;
        if (!answer) return;
        // The moment of each autosave is its event's offset (the server's, to the microsecond), so the code at a
        // run's marker is the code the run sent (saved at the same instant).
        var offsets = {};
        wanted.forEach(function (e) { offsets[e.id] = e.offset; });
        answer.snapshots.forEach(function (s) {
          if (!self.snapshots.length || s.id > self.snapshots[self.snapshots.length - 1].id) {
            var offset = s.id in offsets ? offsets[s.id] : Math.max(0, (new Date(s.at).getTime() - start) / 1000);
            self.snapshots.push({ id: s.id, offset: offset, code: s.code });
          }
        });
        (answer.keys || []).forEach(function (k) {
          if (k.id <= self.keyAfter) return;
          self.keyAfter = k.id;
          if (k.kind === "reset") self.keyText = k.text;
          else if (self.keyText === null) return; // an edit with no text to apply it to: wait for the next reset
          else self.keyText = applyOps(self.keyText, k.ops);
          var offset = Math.max(0, (new Date(k.at).getTime() - start) / 1000);
          self.keyStates.push({ id: "k" + k.id, offset: offset, code: self.keyText, keys: true });
        });
        self.moreKeys = !!answer.more_keys;
        self.loadedOnce = true;
        self.box.dataset.codeSource = self.keyStates.length ? "keys" : "autosaves";
        self.box.dataset.keyStates = String(self.keyStates.length);
        self.render();
        self.drawDiff();
        if (self.moreKeys) self.loadCode();
      })
      .catch(function () { self.loading = false; });
  };

  // The code's states the player steps through: every keystroke when the stream reached the server, else the autosaves.
  Player.prototype.states = function () { return this.keyStates.length ? this.keyStates : this.snapshots; };

  Player.prototype.snapshotAt = function (t) {
    var found = null, states = this.states();
    for (var i = 0; i < states.length; i++) {
      if (states[i].offset <= t + 1e-6) found = states[i];
      else break;
    }
    return found;
  };

  Player.prototype.jump = function (t) {
    var span = Math.max(1, data.span);
    this.t = Math.max(0, Math.min(span, t));
    this.following = this.t >= span - 0.05; // the seek bar's last step is the end
    this.render();
  };

  Player.prototype.toggle = function () { if (this.playing) this.pause(); else this.start(); };

  Player.prototype.start = function () {
    var self = this, span = Math.max(1, data.span);
    if (this.t >= span - 0.05) this.t = 0; // from the beginning again (the seek bar's last step is the end)
    this.playing = true;
    this.following = false;
    this.skipped = 0;
    this.last = performance.now();
    this.timer = setInterval(function () { self.tick(); }, TICK_MS);
    this.render();
  };

  Player.prototype.pause = function () {
    if (!this.playing) return;
    this.playing = false;
    clearInterval(this.timer);
    this.render();
  };

  Player.prototype.tick = function () {
    var now = performance.now();
    var dt = (now - this.last) / 1000 * this.speed;
    this.last = now;
    var span = Math.max(1, data.span);
    var next = advance(this.points(), this.t, dt, this.speed, data.idle_gap_seconds, span);
    this.t = next.t;
    this.skipped += next.skipped;
    if (this.t >= span) { this.following = true; this.pause(); return; }
    this.render();
  };

  Player.prototype.render = function () {
    if (!data) return;
    var span = Math.max(1, data.span);
    var box = this.box;
    box.dataset.playing = this.playing ? "true" : "false";
    box.dataset.position = String(Math.floor(this.t));
    var atEnd = this.t >= span - 0.05;
    box.dataset.atEnd = atEnd ? "true" : "false";
    this.play.textContent = this.playing ? "Pause" : (atEnd ? "Play from the start" : "Play");
    this.play.setAttribute("aria-pressed", this.playing ? "true" : "false");
    this.seek.value = this.t.toFixed(1);
    this.head.style.left = Math.min(100, 100 * this.t / span) + "%";
    this.time.textContent = clock(this.t) + " / " + clock(span);
    this.status.textContent = this.skipped >= 1 ? "skipped " + clock(this.skipped) + " idle" :
      (isLive && this.following && data.state === "live" ? "following the candidate" : "");
    box.dataset.skipped = String(Math.floor(this.skipped));

    var t = this.t, current = null;
    this.events().forEach(function (e) { if (e.kind !== "snapshot" && e.offset <= t + 1e-6) current = e; });
    this.moment.replaceChildren();
    if (current) {
      this.moment.dataset.key = current.key;
      this.moment.appendChild(el("strong", "", current.clock));
      this.moment.appendChild(document.createTextNode(" " + current.label));
      if (current.url) {
        this.moment.appendChild(document.createTextNode(" · "));
        var link = el("a", "replay-run-link", "open its probe details");
        link.href = current.url;
        this.moment.appendChild(link);
      }
    } else {
      delete this.moment.dataset.key;
    }

    var snap = this.snapshotAt(t);
    var states = this.states();
    var latest = states[states.length - 1];
    var lastSaved = this.snapshots[this.snapshots.length - 1];
    var code = this.code;
    // The latest code is on the page already (the live view's "Latest code", the scorecard's "Final code"): not shown twice.
    var showsLatest = latestLabel && snap && latest && snap.id === latest.id && lastSaved && snap.code === lastSaved.code && !this.playing;
    code.hidden = !snap || showsLatest;
    if (!snap) this.codeNote.textContent = "No code saved yet at " + clock(t) + ".";
    else if (showsLatest) this.codeNote.textContent = "At the latest autosave: the code is the " + latestLabel + ".";
    else if (snap.keys) this.codeNote.textContent = "The code at " + clock(t) + " (as typed, keystroke at " + clock(snap.offset) + "):";
    else this.codeNote.textContent = "The code at " + clock(t) + " (autosave from " + clock(snap.offset) + "):";
    if (snap && !showsLatest && code.dataset.snapshot !== String(snap.id)) {
      code.dataset.snapshot = String(snap.id);
      code.textContent = "";
      if (window.CodeMirror && CodeMirror.runMode) CodeMirror.runMode(snap.code, "python", code); // text nodes and spans
      else code.textContent = snap.code;
    }
  };

  Player.prototype.drawDiff = function () {
    var self = this;
    this.diff.replaceChildren();
    this.box.dataset.diff = this.a !== null && this.b !== null ? "shown" : "none";
    if (this.a === null || this.b === null) {
      this.diff.hidden = true;
      this.diffSummary.textContent = this.a !== null ? "A is at " + clock(this.a) + "; now set B." :
        (this.b !== null ? "B is at " + clock(this.b) + "; now set A." : "");
      return;
    }
    var from = this.snapshotAt(Math.min(this.a, this.b)), to = this.snapshotAt(Math.max(this.a, this.b));
    var lines = lineDiff(from ? from.code : "", to ? to.code : "");
    var added = lines.filter(function (l) { return l.op === "add"; }).length;
    var removed = lines.filter(function (l) { return l.op === "del"; }).length;
    this.diffSummary.textContent = "From " + clock(Math.min(this.a, this.b)) + " to " + clock(Math.max(this.a, this.b)) + ": " +
      (added || removed ? added + " line" + (added === 1 ? "" : "s") + " added, " + removed + " removed." : "no change in the code.");
    this.diff.hidden = !(added || removed);
    // Unchanged stretches fold to a line, keeping CONTEXT_LINES each side of a change.
    var keep = lines.map(function () { return false; });
    lines.forEach(function (l, i) {
      if (l.op === "same") return;
      for (var k = Math.max(0, i - CONTEXT_LINES); k <= Math.min(lines.length - 1, i + CONTEXT_LINES); k++) keep[k] = true;
    });
    var folded = 0;
    function flush() {
      if (!folded) return;
      self.diff.appendChild(el("span", "rdiff-line rdiff-fold", "  … " + folded + " unchanged line" + (folded === 1 ? "" : "s")));
      folded = 0;
    }
    lines.forEach(function (l, i) {
      if (!keep[i]) { folded++; return; }
      flush();
      var mark = l.op === "add" ? "+ " : (l.op === "del" ? "- " : "  ");
      self.diff.appendChild(el("span", "rdiff-line rdiff-" + l.op, mark + l.text));
    });
    flush();
  };

  function refresh() {
    return fetch(replayUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then(function (answer) {
        data = answer;
        root.dataset.state = data.state;
        noteFormFollows(data.state);
        players.forEach(function (p) { p.update(); });
        return data;
      });
  }

  var hashFollowed = false;
  function poll() {
    refresh().catch(function () { /* the live view's own poll reports lost contact */ }).then(function () {
      if (!hashFollowed && data) { hashFollowed = true; followHash(); }
      if (isLive && (!data || data.state !== "ended")) setTimeout(poll, REFRESH_MS);
    });
  }

  root.querySelectorAll(".replay[data-slug]").forEach(function (box) { players.push(new Player(box)); });

  // Notes at a moment (the live view): a marker at the server's time of the note, while the interview runs.
  var noteForm = document.getElementById("moment-note-form");
  function noteFormFollows(state) {
    if (!noteForm) return;
    var open = state === "live";
    document.getElementById("moment-note").disabled = !open;
    document.getElementById("add-moment-note").disabled = !open;
    noteForm.dataset.state = state;
    var hint = document.getElementById("moment-note-closed");
    if (hint) hint.hidden = open;
  }
  if (noteForm) {
    noteForm.addEventListener("submit", function (event) {
      event.preventDefault();
      var input = document.getElementById("moment-note");
      var status = document.getElementById("moment-note-status");
      var text = input.value.trim();
      if (!text) { status.textContent = "Write the note first."; return; }
      status.textContent = "Saving…";
      status.dataset.saved = "false";
      fetch(root.dataset.noteUrl, {
        method: "POST", credentials: "same-origin", body: JSON.stringify({ text: text }),
        headers: { "X-CSRFToken": PageKit.csrfToken(), Accept: "application/json", "Content-Type": "application/json" },
      }).then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
        .then(function (answer) {
          if (!answer.ok) { status.textContent = answer.body.error || "Not saved."; return; }
          input.value = "";
          status.dataset.saved = "true";
          status.dataset.key = answer.body.key;
          var start = data && data.started_at ? new Date(data.started_at).getTime() : null;
          var at = start === null ? "" : " at " + clock((new Date(answer.body.at).getTime() - start) / 1000);
          status.textContent = "Noted" + at + "; it is a marker on the timeline.";
          refresh();
        })
        .catch(function () { status.textContent = "Could not reach the server; not saved."; });
    });
  }

  // A link to a moment (the scorecard's evidence: "#t=<seconds since the start>") puts every player there.
  function followHash() {
    var match = /^#t=(\d+(?:\.\d+)?)$/.exec(window.location.hash);
    if (!match || !data) return;
    var t = Number(match[1]);
    players.forEach(function (p) { p.pause(); p.jump(t); });
    root.dataset.hashOffset = String(t);
    if (root.scrollIntoView) root.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", followHash);

  poll();
})();
