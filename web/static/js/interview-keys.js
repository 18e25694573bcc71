// Keystroke-level live view of a mock interview, over websockets (web/interviews/consumers.py).
//
// InterviewKeys.candidate(...) on the candidate's page sends every CodeMirror
// change of each challenge's document as ops ({from, to, text}, positions
// [line, ch]) with a sequence number and the cursor/selection; the server
// applies an edit only if its seq follows the one it has, and answers "ack",
// or "resync" with its own copy, after which the page sends its whole text
// ("reset"). Unacknowledged edits are kept and sent again after a reconnect,
// so nothing typed while the socket was down is lost; the autosave keeps
// running beside this (it is the interview's record and the fallback).
//
// InterviewKeys.watch(...) on the interviewer's live view draws each
// challenge in a read-only CodeMirror with the candidate's cursor and
// selection, applies relayed edits in seq order (asking for the whole
// document after a gap), and shows whether it is live, reconnecting or
// polling; while not live, the page's snapshot poll (interview-live.js)
// shows the code. Text is only ever put into CodeMirror, never as HTML.
var InterviewKeys = (function () {
  "use strict";

  var STOP_CODES_FROM = 4400, STOP_CODES_TO = 4500; // refused, not found, locked: trying again cannot help
  var RETRY_DB_BUSY = 4503;

  function socketUrl(path) {
    return (window.location.protocol === "https:" ? "wss://" : "ws://") + window.location.host + path;
  }

  // One socket that reopens itself with a growing pause (up to 10 s) until the server says no.
  function link(path, handlers) {
    var ws = null, failures = 0, stopped = false;
    function open() {
      try { ws = new WebSocket(socketUrl(path)); } catch (e) { lost(); return; }
      ws.onmessage = function (event) {
        var message;
        try { message = JSON.parse(event.data); } catch (e) { return; }
        if (message.type === "hello") failures = 0;
        handlers.message(message);
      };
      ws.onclose = function (event) {
        ws = null;
        if (event.code >= STOP_CODES_FROM && event.code < STOP_CODES_TO && event.code !== RETRY_DB_BUSY) {
          stopped = true;
          handlers.stopped(event.code);
          return;
        }
        lost();
      };
    }
    function lost() {
      failures += 1;
      handlers.lost(failures);
      setTimeout(open, Math.min(10000, 250 * Math.pow(2, failures - 1)));
    }
    if (!("WebSocket" in window)) { handlers.stopped(0); return { send: function () { return false; } }; }
    open();
    return {
      send: function (message) {
        if (stopped || !ws || ws.readyState !== 1) return false;
        ws.send(JSON.stringify(message));
        return true;
      },
    };
  }

  function pos(p) { return [p.line, p.ch]; }
  function selections(doc) {
    return doc.listSelections().slice(0, 20).map(function (r) { return { anchor: pos(r.anchor), head: pos(r.head) }; });
  }
  function replaceAll(doc, text) {
    doc.replaceRange(text, { line: doc.firstLine(), ch: 0 }, { line: doc.lastLine(), ch: doc.getLine(doc.lastLine()).length }, "keys");
  }

  // --- The candidate's side -------------------------------------------------------------------

  // options: path, docs [{slug, doc}], onLocked(message), onState(state), onRefused(message)
  function candidate(options) {
    var docs = {};
    var socket = null;

    function send(message) { if (socket) socket.send(message); }
    function flush(s) {
      s.scheduled = false;
      if (!s.buffer.length) return;
      var ops = s.buffer;
      s.buffer = [];
      if (!s.synced) { s.dirty = true; return; } // before the first hello: the reset on hello carries it
      s.sent += 1;
      var message = { type: "edit", slug: s.slug, seq: s.sent, ops: ops, sel: selections(s.doc), sent: Date.now() };
      s.pending.push(message);
      send(message);
    }
    function sendReset(s, serverSeq) {
      s.sent = serverSeq + 1;
      s.resetSeq = s.sent;
      var message = { type: "reset", slug: s.slug, seq: s.sent, text: s.doc.getValue(), sel: selections(s.doc), sent: Date.now() };
      s.pending = [message];
      send(message);
    }
    function adopt(s, text, seq) {
      // The server has newer text than this page (a reload after edits the autosave had not caught yet).
      if (text !== s.doc.getValue()) {
        s.applying = true;
        try { replaceAll(s.doc, text); } finally { s.applying = false; }
      }
      s.sent = seq;
      s.pending = [];
    }

    function hello(server) {
      Object.keys(docs).forEach(function (slug) {
        var s = docs[slug], theirs = server[slug];
        if (!theirs) return;
        flush(s);
        if (!s.synced) {
          s.synced = true;
          if (theirs.text === null || s.dirty) sendReset(s, theirs.seq);
          else adopt(s, theirs.text, theirs.seq);
          return;
        }
        // A reconnect: drop what arrived, send again what did not.
        s.pending = s.pending.filter(function (m) { return m.seq > theirs.seq; });
        if (theirs.text !== null && s.pending.length && s.pending[0].seq === theirs.seq + 1) {
          s.pending.forEach(send);
        } else if (theirs.text === null || s.pending.length || theirs.seq < s.sent) {
          sendReset(s, theirs.seq);
        } else if (theirs.seq > s.sent) {
          adopt(s, theirs.text, theirs.seq); // another tab typed meanwhile
        }
      });
    }

    function message(m) {
      var s = docs[m.slug];
      if (m.type === "hello") { options.onState("live"); hello(m.docs || {}); return; }
      if (m.type === "locked") { options.onLocked(m.message); return; }
      if (m.type === "refused") { if (options.onRefused) options.onRefused(m.message); return; }
      if (!s) return;
      if (m.type === "ack") {
        s.pending = s.pending.filter(function (p) { return p.seq > m.seq; });
      } else if (m.type === "resync") {
        if (s.resetSeq && m.refused < s.resetSeq) return; // about a message sent before the reset now on its way
        flush(s);
        sendReset(s, m.seq);
      }
    }

    options.docs.forEach(function (d) {
      var s = { slug: d.slug, doc: d.doc, synced: false, dirty: false, sent: 0, resetSeq: 0, pending: [], buffer: [], scheduled: false, applying: false, cursorTimer: null };
      docs[d.slug] = s;
      d.doc.on("change", function (doc, change) {
        if (s.applying) return;
        s.buffer.push({ from: pos(change.from), to: pos(change.to), text: change.text.join("\n") });
        if (!s.scheduled) { s.scheduled = true; Promise.resolve().then(function () { flush(s); }); }
      });
      d.doc.on("cursorActivity", function () {
        if (s.buffer.length || !s.synced || s.cursorTimer) return; // an edit on its way carries the selection
        s.cursorTimer = setTimeout(function () {
          s.cursorTimer = null;
          send({ type: "cursor", slug: s.slug, seq: s.sent, sel: selections(s.doc), sent: Date.now() });
        }, 30);
      });
    });

    socket = link(options.path, {
      message: message,
      lost: function () { options.onState("reconnecting"); },
      stopped: function () { options.onState("off"); },
    });
  }

  // --- The interviewer's side ---------------------------------------------------------------------

  var STATE_TEXT = { connecting: "Connecting…", live: "Live keystrokes", reconnecting: "Reconnecting…", polling: "Polling autosaves" };
  var STATE_TITLE = {
    live: "The code follows the candidate's typing as it happens.",
    reconnecting: "The live connection dropped; trying again. The code shown may be a few seconds old.",
    polling: "No live connection: the code shown is the latest autosave (every few seconds).",
  };

  // options: path, sections (the .live-challenge elements), indicator (an element for the state)
  function watch(options) {
    var views = {};
    var state = "connecting";
    var socket = null;

    function setState(next) {
      state = next;
      options.indicator.dataset.state = next;
      options.indicator.textContent = STATE_TEXT[next];
      options.indicator.title = STATE_TITLE[next] || "";
      Object.keys(views).forEach(function (slug) { showView(views[slug]); });
    }
    function showView(v) {
      // The live editor while its text is current; the poll's latest autosave otherwise.
      var live = v.known && (state === "live" || state === "reconnecting");
      v.wrap.hidden = !live;
      v.pre.hidden = live;
      if (live) v.cm.refresh();
    }
    function drawSelections(v, sel) {
      v.last = sel;
      v.marks.forEach(function (mark) { mark.clear(); });
      v.marks = [];
      (sel || []).forEach(function (r) {
        var anchor = { line: r.anchor[0], ch: r.anchor[1] }, head = { line: r.head[0], ch: r.head[1] };
        var from = CodeMirror.cmpPos(anchor, head) <= 0 ? anchor : head, to = from === anchor ? head : anchor;
        if (CodeMirror.cmpPos(from, to) !== 0) v.marks.push(v.cm.markText(from, to, { className: "keys-selection" }));
        var caret = document.createElement("span");
        caret.className = "keys-cursor";
        caret.setAttribute("aria-hidden", "true");
        v.marks.push(v.cm.setBookmark(head, { widget: caret, insertLeft: true }));
      });
      // Keep the candidate's cursor in view, unless the interviewer turned following off to read elsewhere.
      if (sel && sel.length && v.follow.checked) v.cm.scrollIntoView({ line: sel[0].head[0], ch: sel[0].head[1] }, 40);
      v.wrap.dataset.cursor = sel && sel.length ? sel[0].head.join(":") : "";
    }
    function setDoc(v, doc) {
      v.known = doc.text !== null && doc.text !== undefined;
      v.seq = doc.seq;
      if (v.known && v.cm.getValue() !== doc.text) v.cm.setValue(doc.text);
      v.wrap.dataset.seq = String(v.seq);
      drawSelections(v, doc.sel);
      if (doc.at) stamp(v, doc.at);
      showView(v);
    }
    function stamp(v, iso) {
      v.note.textContent = "Candidate's editor, live · last change " + new Date(iso).toLocaleTimeString([], { hour12: false });
    }

    function message(m) {
      if (m.type === "hello") {
        setState("live");
        Object.keys(m.docs || {}).forEach(function (slug) { if (views[slug]) setDoc(views[slug], m.docs[slug]); });
        return;
      }
      var v = views[m.slug];
      if (!v) return;
      if (m.type === "doc") { setDoc(v, m); return; }
      if (m.type === "cursor") { if (m.seq === v.seq) drawSelections(v, m.sel); return; }
      if (m.type !== "edit" || m.seq <= v.seq) return;
      if (m.seq !== v.seq + 1 || !v.known) { socket.send({ type: "sync", slug: m.slug }); return; } // a gap: ask for all of it
      v.cm.operation(function () {
        m.ops.forEach(function (op) {
          v.cm.replaceRange(op.text, { line: op.from[0], ch: op.from[1] }, { line: op.to[0], ch: op.to[1] });
        });
      });
      v.seq = m.seq;
      v.wrap.dataset.seq = String(v.seq);
      drawSelections(v, m.sel);
      if (m.at) stamp(v, m.at);
    }

    options.sections.forEach(function (section) {
      var pre = section.querySelector(".latest-code");
      var wrap = document.createElement("div");
      wrap.className = "keys-view";
      wrap.hidden = true;
      var note = document.createElement("p");
      note.className = "muted small keys-note";
      note.textContent = "Candidate's editor, live";
      var bar = document.createElement("div");
      bar.className = "keys-bar";
      bar.appendChild(note);
      // Following the cursor scrolls the view to each keystroke; off, the interviewer reads at their own place.
      var label = document.createElement("label");
      label.className = "keys-follow muted small";
      var follow = document.createElement("input");
      follow.type = "checkbox";
      follow.checked = true;
      follow.addEventListener("change", function () {
        wrap.dataset.follow = follow.checked ? "on" : "off";
        var v = views[section.dataset.slug];
        if (follow.checked && v.last) drawSelections(v, v.last);
      });
      label.appendChild(follow);
      label.appendChild(document.createTextNode(" Follow the cursor"));
      bar.appendChild(label);
      wrap.dataset.follow = "on";
      wrap.appendChild(bar);
      pre.parentNode.insertBefore(wrap, pre);
      var cm = CodeMirror(wrap, {
        value: "", mode: { name: "python", version: 3 }, readOnly: "nocursor", lineNumbers: true, lineWrapping: false,
        indentUnit: 4, tabSize: 4, screenReaderLabel: "Candidate's code, live",
      });
      views[section.dataset.slug] = { cm: cm, wrap: wrap, pre: pre, note: note, follow: follow, seq: 0, known: false, marks: [], last: null };
    });

    setState("connecting");
    socket = link(options.path, {
      message: message,
      lost: function (failures) { setState(failures > 3 ? "polling" : "reconnecting"); },
      stopped: function () { setState("polling"); },
    });
    return { state: function () { return state; } };
  }

  return { candidate: candidate, watch: watch };
})();
