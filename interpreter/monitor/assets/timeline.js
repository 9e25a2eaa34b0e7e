// Time travel over a recording (docs/tools.md, "Time travel"): the page
// sends a recording (seat run --record) to /monitor/timeline, which
// replays it on a virtual clock against the recorded behavior and answers
// what the behavior was like after each step. A slider scrubs through the
// steps: the graph highlights the states of that step, and the panel
// shows the step, what the behavior said, its queue, timers and Lua
// variables.
"use strict";

let timeline = null; // {s, tl, els}

async function openRecording(file) {
  const status = document.getElementById("recording-status");
  status.textContent = "replaying " + file.name + "…";
  let r, answer;
  try {
    r = await fetch("timeline?file=" + encodeURIComponent(file.name), {method: "POST", headers: {"Content-Type": "application/x-ndjson"}, body: await file.text()});
    answer = await r.json().catch(() => ({message: r.statusText}));
  } catch (e) {
    status.textContent = String(e);
    return;
  }
  if (!r.ok) {
    status.textContent = file.name + ": " + (answer.message || r.statusText);
    return;
  }
  status.textContent = "";
  await showTimeline(answer);
}

async function showTimeline(tl) {
  const els = {
    graph: el("div", {class: "graph"}),
    state: el("span", {class: "state"}),
    slider: el("input", {type: "range", min: 0, max: Math.max(tl.frames.length - 1, 0), value: 0, "aria-label": "step"}),
    where: el("span", {class: "where"}),
    step: el("div", {class: "inspect"}),
  };
  const prev = el("button", {type: "button", "data-go": "-1"}, "previous");
  const next = el("button", {type: "button", "data-go": "1"}, "next");
  const close = el("button", {type: "button", class: "close", title: "close the recording"}, "×");
  const notes = [];
  if (tl.truncated) notes.push(el("p", {class: "hint"}, "only the first " + tl.frames.length + " steps are shown"));
  if (tl.warning) notes.push(el("p", {class: "hint"}, tl.warning));
  if (tl.diverged) notes.push(el("pre", {class: "diverged"}, tl.diverged));
  const sec = el("section", {class: "behavior timeline", "data-recording": tl.recording},
    el("h2", {}, "recording ", tl.recording, el("span", {class: "file"}, tl.name + " · " + tl.behavior), close),
    el("div", {class: "status"}, els.state),
    el("div", {class: "scrub"}, prev, els.slider, next, els.where),
    ...notes,
    el("div", {class: "grid"}, el("div", {}, els.graph), el("div", {}, els.step)));
  const old = document.querySelector("section.timeline");
  if (old) old.remove();
  document.getElementById("behaviors").before(sec);
  const s = {name: tl.name, section: sec, els, state: "", active: []};
  timeline = {s, tl, els};
  els.slider.addEventListener("input", () => showFrame(Number(els.slider.value)));
  for (const b of [prev, next]) b.addEventListener("click", () => {
    const i = Math.min(Math.max(Number(els.slider.value) + Number(b.dataset.go), 0), tl.frames.length - 1);
    els.slider.value = i;
    showFrame(i);
  });
  close.addEventListener("click", () => { sec.remove(); timeline = null; });
  await drawGraph(s, tl.dot);
  showFrame(0);
}

// showFrame shows the behavior after step i of the timeline.
function showFrame(i) {
  const {s, tl, els} = timeline;
  const f = tl.frames[i];
  if (!f) return;
  const show = f.show || {};
  s.state = show.state || "";
  s.active = show.active || [];
  highlight(s);
  const t = f.recorded ? f.recorded.t : f.t;
  els.where.textContent = "step " + f.step + " of " + f.steps + " · " + (t / 1e9).toFixed(3) + " s" + (f.recorded ? " · recording line " + f.recorded.line : "");
  s.section.dataset.step = f.step;
  const rows = [];
  const row = (label, ...v) => rows.push(el("tr", {}, el("th", {}, label), el("td", {}, ...v)));
  row("step", el("code", {}, f.line || ""));
  if (f.failed) row("diverged", f.failed);
  row("said", f.said && f.said.length ? f.said.join("\n") : "nothing");
  if (show.active && show.active.length > 1) row("active", show.active.join(", "));
  if (show.stack && show.stack.length) row("stack", show.stack.join(" → "));
  if (show.queue && show.queue.length) row("queue", show.queue.join("\n"));
  row("timers", show.timers && show.timers.length ? show.timers.map(t => t.what + " in " + (t.in / 1e9).toFixed(1) + " s").join("\n") : "none armed");
  const vars = [];
  for (const name of Object.keys(show.globals || {}).sort()) flatten(name, show.globals[name], vars);
  els.step.replaceChildren(
    el("table", {class: "where"}, el("tbody", {}, ...rows)),
    el("h3", {}, "Lua variables"),
    vars.length ? el("table", {class: "vars"}, el("tbody", {}, ...vars.map(([path, v]) =>
      el("tr", {"data-variable": path}, el("td", {}, el("code", {}, path)), el("td", {class: "value"}, el("code", {}, valueText(v))))))) : el("p", {class: "hint"}, "none set"));
}

function recordingPicker() {
  const input = el("input", {type: "file", accept: ".jsonl,.json,application/x-ndjson", id: "recording-file"});
  input.addEventListener("change", () => { if (input.files.length) openRecording(input.files[0]); input.value = ""; });
  return el("label", {class: "recording", title: "a recording made by seat run --record: replayed against its behavior, step by step"}, "open a recording ", input, el("span", {id: "recording-status"}));
}

// After monitor.js, whose el it uses, has run.
document.addEventListener("DOMContentLoaded", () => document.querySelector("header").append(recordingPicker()));
