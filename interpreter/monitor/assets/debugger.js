// The monitor's debugger (docs/tools.md, "The debugger"): a panel in each behavior's
// section to pause, step and continue it, its breakpoints, and, while it
// is paused, its event, queue, timers and Lua variables, which can be
// set. A click on a state of the graph stops the behavior when it enters
// that state (a shift-click runs it there); the ● by a rule fired in the
// log stops it when that rule fires again. Every request goes to
// /monitor/debug/NAME[/OP], which answers what the debugger shows.
"use strict";

// debugPanel makes the panel of section s the first time the status says
// its behavior has a debugger.
function debugPanel(s) {
  if (s.dbg) return s.dbg;
  const button = (label, title, op, body) => {
    const b = el("button", {type: "button", title, "data-op": op}, label);
    b.addEventListener("click", () => debugCall(s, op, body && body()));
    return b;
  };
  const d = {
    paused: false, key: "",
    state: el("span", {class: "dstate"}, "running"),
    error: el("span", {class: "derror"}),
    bps: el("ul", {class: "bps"}),
    inspect: el("div", {class: "inspect"}),
  };
  d.pause = button("pause", "stop at the next thing it does", "pause");
  d.cont = button("continue", "go on to the next breakpoint", "continue");
  d.step = button("step", "go on to the next event or timer", "step", () => ({micro: false}));
  d.micro = button("step into", "go on to the next thing it does: a state entered or left, a rule fired, a message sent", "step", () => ({micro: true}));
  const look = el("button", {type: "button", title: "show its queue, timers and variables now"}, "variables");
  look.addEventListener("click", () => debugCall(s));
  const adaptor = el("select", {"aria-label": "adaptor"}, ...[...Object.keys(s.kinds), "gui"].map(n => el("option", {value: n}, n)));
  const text = el("input", {type: "text", placeholder: "text of the event (a gui widget's id)", "aria-label": "event text"});
  const asJSON = el("input", {type: "checkbox", title: "a structured message (a ROS message, an OpenRTM value) as JSON or YAML: rtc_in_data in scripts"});
  const send = el("form", {class: "send"}, "send an event: ", adaptor, text, el("label", {}, asJSON, " message as JSON"), el("button", {type: "submit"}, "send"));
  send.addEventListener("submit", (e) => {
    e.preventDefault();
    const body = asJSON.checked ? {adaptor: adaptor.value, message: text.value} : {adaptor: adaptor.value, text: text.value};
    debugCall(s, "send", body).then(ok => { if (ok) text.value = ""; });
  });
  d.panel = el("div", {class: "debug"},
    el("div", {class: "toolbar"}, d.pause, d.cont, d.step, d.micro, look, d.state, d.error),
    el("div", {class: "bpline"}, "breakpoints: ", d.bps, el("span", {class: "hint"}, "click a state to stop on entering it, shift-click to run to it; ● by a rule fired in the log stops at that rule")),
    d.inspect, send);
  s.section.querySelector(".status").after(d.panel);
  s.section.classList.add("debuggable");
  s.dbg = d;
  return d;
}

// debugCall asks the debugger of s: what it shows (no op), or an
// operation; it shows the answer and returns whether it was done.
async function debugCall(s, op, body) {
  const d = debugPanel(s);
  const url = "debug/" + encodeURIComponent(s.name) + (op ? "/" + op : "");
  d.error.textContent = "";
  let r, answer;
  try {
    r = await fetch(url, op ? {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body || {})} : {});
    answer = await r.json();
  } catch (e) {
    d.error.textContent = String(e);
    return false;
  }
  if (!r.ok) {
    d.error.textContent = answer.message || r.statusText;
    return false;
  }
  showDebug(s, answer, true);
  return true;
}

// showDebug shows what the debugger said: a summary from the status
// (paused, why, at, breakpoints) or, full, what it shows (DebugState).
// A pause seen in the status asks for the rest.
function showDebug(s, st, full) {
  const d = debugPanel(s);
  if (st.refused) {
    d.panel.classList.add("refused");
    d.state.textContent = "cannot be debugged: " + st.refused;
    return;
  }
  const key = st.paused ? st.why + "\n" + st.at : "";
  d.paused = st.paused;
  s.section.classList.toggle("paused", st.paused);
  d.state.replaceChildren(st.paused ? el("b", {}, "paused") : "running", st.paused ? " — " + st.why + (st.at ? " · at " + st.at : "") : "");
  for (const b of [d.cont, d.step, d.micro]) b.disabled = !st.paused;
  d.pause.disabled = st.paused;
  showBreakpoints(s, st.breakpoints || []);
  if (full) {
    d.key = key;
    showInspect(s, st);
    if (st.paused) { // where it is, as it stopped mid-step, not as the status last saw it
      s.state = st.state;
      s.active = st.active || [];
      highlight(s);
    }
  } else if (st.paused && !d.asking) {
    // While paused, the queue grows and variables may be set from
    // elsewhere: what it shows is asked again with each status.
    d.asking = true;
    d.key = key;
    debugCall(s).finally(() => { d.asking = false; });
  } else if (!st.paused && key !== d.key) {
    d.key = key;
    d.inspect.replaceChildren(); // what it showed is gone by
  }
}

function showBreakpoints(s, bps) {
  const d = s.dbg;
  d.list = bps;
  d.bps.replaceChildren(...bps.map(b => {
    const x = el("button", {type: "button", class: "clear", title: "clear breakpoint " + b.id}, "×");
    x.addEventListener("click", () => debugCall(s, "clear", {id: b.id}));
    return el("li", {"data-id": b.id}, breakpointLabel(b) + (b.hits ? " (" + b.hits + "×)" : ""), x);
  }));
  if (!bps.length) d.bps.append(el("li", {class: "none"}, "none"));
  markBreakpoints(s);
}

function breakpointLabel(b) {
  switch (b.kind) {
    case "state": return (b.once ? "run to " : "entering ") + b.name;
    case "leave": return "leaving " + b.name;
    case "rule": return "rule at " + (b.file ? b.file.slice(b.file.lastIndexOf("/") + 1) + ":" : "line ") + b.line;
    case "message": return "message to " + b.name + (b.pattern ? " ~ " + b.pattern : "");
    case "event": return "event" + (b.name ? " of " + b.name : "") + " ~ " + b.pattern;
    case "when": return "when " + b.cond;
  }
  return b.kind;
}

// markBreakpoints outlines the states and rules a breakpoint stops at.
function markBreakpoints(s) {
  const bps = (s.dbg && s.dbg.list) || [];
  const states = new Set(bps.filter(b => b.kind === "state" && !b.once).map(b => b.name));
  for (const n of s.els.graph.querySelectorAll("g.node")) {
    const title = n.querySelector("title");
    n.classList.toggle("bp", !!title && states.has(title.textContent));
  }
  for (const btn of s.els.log.querySelectorAll("button.bp")) {
    btn.classList.toggle("on", !!ruleBreakpoint(s, btn.dataset.at));
  }
}

// ruleBreakpoint is the breakpoint on the rule at file:line, if any.
function ruleBreakpoint(s, at) {
  const i = at.lastIndexOf(":"), file = at.slice(0, i), line = Number(at.slice(i + 1));
  return ((s.dbg && s.dbg.list) || []).find(b => b.kind === "rule" && b.line === line && (!b.file || b.file === file));
}

// stateClicks makes the states of a drawn graph set and clear
// breakpoints.
function stateClicks(s) {
  for (const n of s.els.graph.querySelectorAll("g.node")) {
    const title = n.querySelector("title");
    if (!title) continue;
    const name = title.textContent;
    n.dataset.state = name;
    n.style.cursor = "pointer";
    n.addEventListener("click", (e) => {
      e.preventDefault();
      if (!s.dbg) return;
      if (e.shiftKey) return debugCall(s, "until", {state: name});
      const b = (s.dbg.list || []).find(b => b.kind === "state" && !b.once && b.name === name);
      if (b) debugCall(s, "clear", {id: b.id});
      else debugCall(s, "break", {breakpoint: {kind: "state", name}});
    });
  }
  markBreakpoints(s);
}

// ruleButton is the ● before a rule fired in the log: it sets or clears
// a breakpoint on that rule.
function ruleButton(s, at) {
  const b = el("button", {type: "button", class: "bp", "data-at": at, title: "stop when this rule fires"}, "●");
  b.classList.toggle("on", !!ruleBreakpoint(s, at));
  b.addEventListener("click", () => {
    const bp = ruleBreakpoint(s, at);
    const i = at.lastIndexOf(":");
    if (bp) debugCall(s, "clear", {id: bp.id});
    else debugCall(s, "break", {breakpoint: {kind: "rule", file: at.slice(0, i), line: Number(at.slice(i + 1))}});
  });
  return b;
}

// showInspect shows the event, queue, timers and variables; a variable's
// value is edited in place, as JSON ("山田" is quoted).
function showInspect(s, st) {
  const d = s.dbg, rows = [];
  const row = (label, ...v) => rows.push(el("tr", {}, el("th", {}, label), el("td", {}, ...v)));
  if (st.event) row("event", st.event);
  if (st.active && st.active.length > 1) row("active", st.active.join(", "));
  if (st.stack && st.stack.length) row("stack", st.stack.join(" → "));
  row("queue", st.queue && st.queue.length ? st.queue.join("\n") : "empty");
  row("timers", st.timers && st.timers.length ? st.timers.map(t => t.what + " in " + (t.in / 1e9).toFixed(1) + " s").join("\n") : "none armed");
  const vars = [];
  for (const name of Object.keys(st.globals || {}).sort()) flatten(name, st.globals[name], vars);
  const where = el("table", {class: "where"}, el("tbody", {}, ...rows));
  const editing = d.inspect.querySelector("td.value form:not([data-sent])");
  if (editing) { // a value being typed is not swept away by a refresh
    d.inspect.querySelector("table.where").replaceWith(where);
    return;
  }
  const body = el("tbody", {}, ...vars.map(([path, v]) => variableRow(s, path, v)));
  d.inspect.replaceChildren(
    where,
    el("h3", {}, "Lua variables"),
    vars.length ? el("table", {class: "vars"}, el("thead", {}, el("tr", {}, el("th", {}, "variable"), el("th", {}, "value"))), body) : el("p", {class: "hint"}, "none set"));
}

// flatten lists a global's fields as name.field rows (a table as an
// object), an array or a plain value as one row.
function flatten(path, v, out) {
  if (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length) {
    for (const k of Object.keys(v).sort()) {
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) flatten(path + "." + k, v[k], out);
      else out.push([path + "[" + JSON.stringify(k) + "]", v[k], true]);
    }
    return;
  }
  out.push([path, v]);
}

// opaque reports whether a value is a function or userdata, which the
// debugger shows as its type ("<function>"): shown, not set.
function opaque(v) { return typeof v === "string" && /^<[a-z]+>$/.test(v); }

// valueText is a variable's value as the panel shows it: JSON, or the
// type of what is not data.
function valueText(v) { return opaque(v) ? v : JSON.stringify(v); }

function variableRow(s, path, v) {
  const data = !opaque(v);
  const value = el("td", data ? {class: "value", title: "click to change"} : {class: "opaque"}, el("code", {}, valueText(v)));
  const settable = data && /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(path);
  if (settable) value.addEventListener("click", () => {
    if (value.querySelector("input")) return;
    const input = el("input", {type: "text", "aria-label": "value of " + path});
    input.value = JSON.stringify(v);
    const form = el("form", {}, input, el("button", {type: "submit"}, "set"));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      form.dataset.sent = "1"; // the answer shows the value set
      debugCall(s, "set", {variable: path, value: input.value}).then(ok => { if (!ok) delete form.dataset.sent; });
    });
    input.addEventListener("keydown", (e) => { if (e.key === "Escape") value.replaceChildren(el("code", {}, valueText(v))); });
    value.replaceChildren(form);
    input.focus();
    input.select();
  });
  return el("tr", {"data-variable": path}, el("td", {}, el("code", {}, path)), value);
}
