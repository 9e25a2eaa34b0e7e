// The seat monitor page: one section per behavior, its graph drawn by
// Graphviz (Viz.js) with the current state highlighted, its log of events,
// messages, rules fired, states and timers, its timers and its adaptors'
// counters, all kept up to date over /monitor/ws.
"use strict";

const logLen = 200;          // lines kept per behavior on the page
let viz = null;              // the Graphviz instance, once loaded
let serverOffset = 0;        // server clock minus page clock, ms
const behaviors = new Map(); // name -> {section, els, state, timeout, tick}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function fmtSeconds(t) { return t.toFixed(3) + " s"; }

// sourceLink links a rule's file:line to the source view.
function sourceLink(at) {
  const i = at.lastIndexOf(":");
  const file = at.slice(0, i), line = at.slice(i + 1);
  const base = file.slice(file.lastIndexOf("/") + 1);
  return el("a", {href: "source?file=" + encodeURIComponent(file) + "#L" + line, target: "_blank", title: at}, base + ":" + line);
}

function section(b) {
  let s = behaviors.get(b.name);
  if (!s) {
    const els = {
      title: el("h2", {}, b.name, el("span", {class: "file"}, b.file)),
      state: el("span", {class: "state"}),
      timers: el("span", {class: "timers"}),
      graph: el("div", {class: "graph"}),
      adaptors: el("tbody"),
      log: el("tbody"),
    };
    // A behavior with a voice or a recognizer shows what was said and
    // heard, with confidences.
    const speech = Object.values(b.kinds || {}).some(k => k === "asr" || k === "tts");
    if (speech) els.speech = el("tbody");
    const sec = el("section", {class: "behavior", "data-behavior": b.name},
      els.title,
      el("div", {class: "status"}, els.state, els.timers),
      el("div", {class: "grid"},
        el("div", {}, els.graph),
        el("div", {},
          el("h3", {}, "Adaptors"),
          // The table scrolls sideways in its own box when the page is
          // too narrow for it, never the page or the column.
          el("div", {class: "table-box"},
            el("table", {class: "adaptors"}, el("thead", {}, el("tr", {}, ...["adaptor", "address", "in", "out", "open", "accepted", "refused", "dropped", "too long", "slow"].map((h, i) => el("th", i > 1 ? {class: "n"} : {}, h)))), els.adaptors)),
          ...(speech ? [el("h3", {}, "Said and heard"),
            el("div", {class: "table-box"}, el("table", {class: "speech"},
              el("thead", {}, el("tr", {}, ...["t", "", "adaptor", "text", "confidence or status"].map(h => el("th", {}, h)))), els.speech))] : []),
          el("h3", {}, "Events, messages, rules fired"),
          logFilter(b.name),
          el("div", {class: "log"}, el("table", {}, els.log)))));
    for (const k of hiddenKinds(b.name)) sec.classList.add("hide-" + k);
    document.getElementById("behaviors").append(sec);
    s = {name: b.name, section: sec, els, state: "", timeout: null, tick: null, kinds: b.kinds || {}};
    behaviors.set(b.name, s);
  }
  return s;
}

async function drawGraph(s, dot) {
  if (!viz) viz = await Viz.instance();
  const svg = viz.renderSVGElement(dot);
  s.els.graph.replaceChildren(svg);
  try { fitLabels(svg); } catch (e) { console.warn("labels not fitted:", e); } // the graph is shown anyway
  highlight(s);
  stateClicks(s);
}

// Graphviz in WebAssembly has no fonts: it makes room for a label by a
// table of Latin widths, counting each byte of a non-ASCII character as a
// space, so that Japanese is drawn wider than the room made for it and
// runs out of its box. fitLabels asks Graphviz how much room it made for
// each such label (a layout of the labels alone), or takes the room inside
// a state's box where that is wider, and draws a label wider than its room
// at the size that fills it.
function fitLabels(svg) {
  const texts = Array.from(svg.querySelectorAll("text")).filter(t => /[^\x00-\x7f]/.test(t.textContent));
  if (!texts.length) return;
  const quote = v => '"' + String(v).replace(/[\\"]/g, "\\$&") + '"';
  const size = t => parseFloat(t.getAttribute("font-size")) || 14;
  const probe = texts.map((t, i) => `n${i} [label=${quote(t.textContent)}, fontname=${quote(t.getAttribute("font-family") || "Times-Roman")}, fontsize=${size(t)}]`);
  const plain = viz.renderString("digraph { node [shape=plaintext, margin=0, width=0, height=0]; " + probe.join("; ") + " }", {format: "plain"});
  const room = new Map(); // node -> width in points
  for (const line of plain.split("\n")) {
    const f = line.split(" ");
    if (f[0] === "node") room.set(f[1], parseFloat(f[4]) * 72);
  }
  texts.forEach((t, i) => {
    let r = room.get("n" + i);
    const node = t.closest("g.node"), box = node && node.querySelector("path, polygon");
    if (box) r = Math.max(r || 0, box.getBBox().width - 2 * 8); // Graphviz's margin: 0.11 inch a side
    const drawn = t.getComputedTextLength();
    if (r > 0 && drawn > r) t.setAttribute("font-size", (size(t) * r / drawn).toFixed(2));
  });
}

// highlight marks the active states: the current state's node, and in a
// nested behavior or an SCXML document every active state of the
// configuration, nodes and the clusters of states that hold states. The
// graph package names them so that a node's <title> is its state's name
// exactly and a cluster's is cluster_ and the name, whatever characters
// the name holds (a tooltip would not do: Graphviz reads escapes in it).
function highlight(s) {
  const active = new Set(s.active && s.active.length ? s.active : [s.state]);
  for (const n of s.els.graph.querySelectorAll("g.node")) {
    const title = n.querySelector("title");
    n.classList.toggle("current", !!title && active.has(title.textContent));
  }
  for (const c of s.els.graph.querySelectorAll("g.cluster")) {
    const title = c.querySelector("title"), name = title && title.textContent;
    c.classList.toggle("active", !!name && name.startsWith("cluster_") && active.has(name.slice("cluster_".length)));
  }
  s.els.state.replaceChildren("state ", el("b", {}, s.state || "—"));
  s.section.dataset.state = s.state;
}

// The kinds of log line a filter shows or hides, and what each is called.
const filterKinds = [["in", "events"], ["out", "messages"], ["fire", "rules"], ["state", "states"], ["timer", "timers"]];

// hiddenKinds are the kinds of line hidden in a behavior's log, as the
// page's user left them (kept in the browser).
function hiddenKinds(name) {
  try { return JSON.parse(localStorage.getItem("seat-monitor-hide:" + name)) || []; } catch (e) { return []; }
}

// logFilter is a behavior's row of checkboxes that show or hide each kind
// of log line (a 10 Hz onexec's timer lines, say).
function logFilter(name) {
  const hidden = new Set(hiddenKinds(name));
  return el("div", {class: "filter"}, "show: ", ...filterKinds.map(([kind, label]) => {
    const box = el("input", {type: "checkbox", "data-kind": kind});
    box.checked = !hidden.has(kind);
    box.addEventListener("change", () => {
      const sec = box.closest("section.behavior");
      sec.classList.toggle("hide-" + kind, !box.checked);
      if (box.checked) hidden.delete(kind); else hidden.add(kind);
      try { localStorage.setItem("seat-monitor-hide:" + name, JSON.stringify([...hidden])); } catch (e) { /* private mode: not kept */ }
    });
    return el("label", {}, box, " " + label);
  }));
}

function addLine(s, l) {
  // A timer that runs again in the same state, with nothing between, is
  // counted on its line (×N) rather than given another: a 10 Hz onexec
  // does not push the rest out of the log.
  const top = s.els.log.rows[0];
  if (l.kind === "timer" && top && top.dataset.timer === l.timer + " in " + l.state) {
    const n = Number(top.dataset.repeat || 1) + 1;
    top.dataset.repeat = n;
    top.cells[0].textContent = fmtSeconds(l.t);
    top.cells[2].textContent = l.timer + " in " + l.state + " ×" + n;
    return;
  }
  const details = el("td", {});
  switch (l.kind) {
    case "in": details.append((l.source || "") + (l.peer ? " " + l.peer : "") + (l.key ? " [" + l.key + "]" : "") + ": " + (l.text ?? "")); break;
    case "out": details.append((l.source || "") + (l.peer ? " → " + l.peer : "") + ": " + (l.text ?? "")); break;
    case "raise": details.append("event " + (l.key || "") + (l.text ? ": " + l.text : "")); break;
    case "answer": details.append((l.source || "") + (l.key === "error" ? " failed: " : ": ") + (l.text ?? "")); break;
    case "fire": details.append(ruleButton(s, l.at), "rule at ", sourceLink(l.at)); break;
    case "state": details.append(l.state); break;
    case "timer": details.append(l.timer + " in " + l.state); break;
    case "skipped": details.append(l.text); break;
    case "set": details.append("debugger set " + l.key + " = " + (l.text ?? "")); break;
    case "paused": details.append("debugger: went on after " + Number(l.text).toFixed(1) + " s paused (" + (l.key || "") + ")"); break;
    case "error": // what failed, and the failing line of code with a caret under the culprit
      details.append((l.key || "error") + ": " + (l.text ?? ""));
      if (l.detail) details.append(el("pre", {class: "detail"}, l.detail));
      break;
    default: details.append((l.source || "") + " " + (l.peer || ""));
  }
  speechLine(s, l);
  const row = el("tr", {class: "line " + l.kind}, el("td", {class: "t"}, fmtSeconds(l.t)), el("td", {}, el("span", {class: "kind " + l.kind}, l.kind)), details);
  if (l.kind === "timer") row.dataset.timer = l.timer + " in " + l.state;
  s.els.log.prepend(row);
  while (s.els.log.rows.length > logLen) s.els.log.deleteRow(-1);
  if (l.kind === "state") {
    s.state = l.state;
    if (s.active && s.active.length) s.active = [...s.active, l.state]; // what it left goes with the next status
    highlight(s);
  }
}

const speechLen = 50; // rows of what was said and heard kept per behavior

// speechLine shows what a recognizer heard ("tickets,0.95", or
// "rejected,0.31,HEARD") and what a voice was given to say, with what
// became of it (its "speaking", "done" and "interrupted" events).
function speechLine(s, l) {
  const kind = s.kinds[l.source], text = l.text ?? "";
  if (!s.els.speech || (kind !== "asr" && kind !== "tts")) return;
  if (kind === "asr" && l.kind === "in") {
    const [word, conf, ...heard] = text.split(",");
    if (word === "rejected") addSpeech(s, l, "rejected", heard.join(","), conf);
    else addSpeech(s, l, "heard", word, conf);
  } else if (kind === "tts" && l.kind === "out") {
    addSpeech(s, l, "said", text, "queued");
  } else if (kind === "tts" && l.kind === "in") {
    const i = text.indexOf(","), status = text.slice(0, i), said = text.slice(i + 1);
    // The oldest utterance of that text not yet over.
    const rows = Array.from(s.els.speech.rows).reverse();
    const row = rows.find(r => r.dataset.source === l.source && r.dataset.text === said && !["done", "interrupted"].includes(r.dataset.status));
    if (row) {
      row.dataset.status = status;
      row.cells[4].textContent = status;
    }
  }
}

function addSpeech(s, l, what, text, detail) {
  const row = el("tr", {class: "speech " + what}, el("td", {class: "t"}, fmtSeconds(l.t)), el("td", {}, el("span", {class: "kind " + what}, what)),
    el("td", {}, l.source), el("td", {}, text), el("td", {class: what === "said" ? "" : "n"}, detail ?? ""));
  row.dataset.source = l.source;
  row.dataset.text = text;
  if (what === "said") row.dataset.status = detail;
  s.els.speech.prepend(row);
  while (s.els.speech.rows.length > speechLen) s.els.speech.deleteRow(-1);
}

function showStatus(now, infos, counts) {
  serverOffset = Date.parse(now) - Date.now();
  for (const i of infos || []) {
    const s = behaviors.get(i.name);
    if (!s) continue;
    const active = (i.active || []).join("\n");
    const held = s.dbg && s.dbg.paused; // the debugger says where it stopped
    if (!held && i.seatml_state && (i.seatml_state !== s.state || active !== (s.active || []).join("\n"))) {
      s.state = i.seatml_state;
      s.active = i.active || [];
      highlight(s);
    }
    if (!i.seatml_state) s.els.state.replaceChildren("behavior " + i.state);
    if (i.debug) showDebug(s, i.debug, false);
    s.timeout = i.timeout ? Date.parse(i.timeout) : null;
    s.tick = i.tick ? Date.parse(i.tick) : null;
    s.els.adaptors.replaceChildren(...(i.adaptors || []).map(a =>
      el("tr", {title: a.type}, ...[a.name, a.addr || a.type, count(counts, i.name, a.name, "in"), count(counts, i.name, a.name, "out"),
        a.open ?? 0, a.accepted ?? 0, refused(a), a.dropped ?? 0, a.line_too_long ?? 0, a.slow_peer ?? 0].map((v, i) => el("td", i > 1 ? {class: "n"} : {}, String(v))))));
  }
  showTimers();
}

// refused counts the connections an adaptor refused: at its limit, or
// from a peer of another type (a ROS message type, an OpenRTM data type).
function refused(a) {
  return (a.refused ?? 0) + (a.wrong_type ?? 0);
}

// count reads the events in and messages out of an adaptor since seat started.
function count(counts, behavior, adaptor, dir) {
  const c = ((counts || {})[behavior] || {})[adaptor];
  return c ? c[dir] : 0;
}

function showTimers() {
  const now = Date.now() + serverOffset;
  for (const s of behaviors.values()) {
    const parts = [];
    if (s.dbg && s.dbg.paused) {
      s.els.timers.textContent = "timers held while paused";
      continue;
    }
    if (s.timeout) parts.push("timeout in " + Math.max(0, (s.timeout - now) / 1000).toFixed(1) + " s");
    if (s.tick) parts.push("next onexec in " + Math.max(0, (s.tick - now) / 1000).toFixed(2) + " s");
    s.els.timers.textContent = parts.length ? parts.join(" · ") : "no timer armed";
  }
}

function connect() {
  const conn = document.getElementById("conn");
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/monitor/ws");
  ws.onopen = () => { conn.textContent = "live"; conn.className = "conn on"; };
  ws.onclose = () => {
    conn.textContent = "disconnected; retrying"; conn.className = "conn off";
    setTimeout(connect, 1000);
  };
  ws.onmessage = async (msg) => {
    const f = JSON.parse(msg.data);
    switch (f.type) {
      case "hello":
        document.getElementById("behaviors").replaceChildren();
        behaviors.clear();
        for (const b of f.behaviors || []) {
          const s = section(b);
          for (const l of b.recent || []) addLine(s, l);
          await drawGraph(s, b.dot);
        }
        break;
      case "behavior": {
        const s = section(f.behavior);
        s.els.log.replaceChildren();
        await drawGraph(s, f.behavior.dot);
        break;
      }
      case "lines": // what the behaviors did since the last frame
        // A behavior busier than the page's log is summarized: its last
        // lines, after a line saying how many came before them.
        for (const [name, n] of Object.entries(f.skipped || {})) {
          const s = behaviors.get(name);
          const first = (f.lines || []).find(l => l.behavior === name);
          if (s) addLine(s, {kind: "skipped", t: first ? first.t : 0, text: n + " lines not shown"});
        }
        for (const l of f.lines || []) {
          const s = behaviors.get(l.behavior);
          if (s) addLine(s, l);
        }
        break;
      case "status":
        showStatus(f.now, f.status, f.counts);
        break;
    }
  };
}

setInterval(showTimers, 100);
connect();
