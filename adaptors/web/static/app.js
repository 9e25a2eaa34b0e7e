// The seat operator page: shows the widgets of the active states (a
// nested behavior's current state, the states around it and those of
// its other regions, each under its name), sends widget events, and
// follows state changes over one WebSocket, reconnecting by itself. No
// framework, no build step.
(function () {
  'use strict';

  var $ = function (id) { return document.getElementById(id); };
  var stateEl = $('state');
  var connEl = $('conn');
  var panel = $('panel');
  var logEl = $('log');
  var titleEl = $('behavior');
  var maxLog = 100;
  var ws = null;
  var retry = 500;
  var fields = {}; // widget ref -> input or textarea
  var known = {};  // widget ref -> the value the server last had

  function setConn(text, up) {
    connEl.textContent = text;
    connEl.className = 'conn ' + (up ? 'up' : 'down');
  }

  function log(text, kind) {
    var li = document.createElement('li');
    if (kind) { li.className = kind; }
    var time = document.createElement('time');
    time.textContent = new Date().toLocaleTimeString();
    li.appendChild(time);
    li.appendChild(document.createTextNode(' ' + text));
    logEl.appendChild(li);
    while (logEl.children.length > maxLog) { logEl.removeChild(logEl.firstChild); }
    logEl.scrollTop = logEl.scrollHeight;
  }

  function send(frame) {
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify(frame));
      return true;
    }
    log('not connected: ' + (frame.id || frame.text), 'error');
    return false;
  }

  function number(v, def) {
    var n = parseInt(v, 10);
    return n > 0 ? n : def;
  }

  // syncFields tells the server the contents of fields the user changed,
  // so that actions such as <message input="state:id"> see them.
  function syncFields() {
    Object.keys(fields).forEach(function (ref) {
      var v = fields[ref].value;
      if (v !== known[ref]) {
        known[ref] = v;
        send({ type: 'gui', id: ref, op: 'set', value: v });
      }
    });
  }

  // widgetEvent sends a widget's event; ref says which state's widget it
  // is, as several active states may have one with the same id.
  function widgetEvent(w, text) {
    syncFields();
    send({ type: 'event', source: 'gui', id: w.id, ref: w.ref, text: text });
  }

  // Colours: a widget given a background and no text colour gets the
  // text colour, dark or white, that reads best on it (WCAG contrast).
  var colorCtx = document.createElement('canvas').getContext('2d');
  var dark = '#1d2327';

  function rgb(css) {
    colorCtx.fillStyle = '#000';
    colorCtx.fillStyle = css; // a colour the canvas does not know leaves black
    var v = colorCtx.fillStyle;
    if (v.charAt(0) === '#') {
      return [1, 3, 5].map(function (i) { return parseInt(v.substr(i, 2), 16); });
    }
    return (v.match(/[\d.]+/g) || [0, 0, 0]).slice(0, 3).map(Number);
  }

  function luminance(c) {
    var l = c.map(function (v) {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  }

  function contrast(a, b) {
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  }

  function readableOn(bg) {
    var l = luminance(rgb(bg));
    return contrast(l, luminance(rgb(dark))) >= contrast(l, 1) ? dark : '#ffffff';
  }

  // render shows the widgets of each active state in a group of its own,
  // outermost first, named when there is more than one.
  function render(p) {
    panel.replaceChildren();
    fields = {};
    known = {};
    if (p.behavior) {
      titleEl.textContent = p.behavior;
      document.title = p.behavior + ' \u2013 seat';
    }
    var groups = [];
    (p.widgets || []).forEach(function (w) {
      var state = w.state || p.state;
      var g = groups[groups.length - 1];
      if (!g || g.state !== state) {
        g = { state: state, widgets: [] };
        groups.push(g);
      }
      g.widgets.push(w);
    });
    var sections = [];
    groups.forEach(function (g) {
      var grid = document.createElement('div');
      grid.className = 'grid';
      layout(grid, g.widgets);
      if (!grid.children.length) { return; }
      var section = document.createElement('section');
      section.className = 'group' + (g.state === p.state ? ' current' : '');
      section.setAttribute('data-state', g.state);
      section.appendChild(grid);
      sections.push(section);
    });
    sections.forEach(function (section) {
      if (sections.length > 1) {
        var name = section.getAttribute('data-state');
        var h = document.createElement('h3');
        h.className = 'group-title';
        h.id = 'g-' + name;
        h.textContent = name;
        section.insertBefore(h, section.firstChild);
        section.setAttribute('aria-labelledby', h.id);
      }
      panel.appendChild(section);
    });
    if (!sections.length) {
      var empty = document.createElement('p');
      empty.className = 'empty';
      empty.textContent = groups.length > 1 ? 'The active states have no controls.' : 'This state has no controls.';
      panel.appendChild(empty);
    }
  }

  // layout lays widgets out on a grid in document order, left to right;
  // brk starts a row, space skips cells (eSEAT's Tk grid).
  function layout(grid, widgets) {
    var row = 1;
    var col = 1;
    widgets.forEach(function (w) {
      var a = w.attrs || {};
      var el;
      switch (w.kind) {
        case 'brk':
          row += 1;
          col = 1;
          return;
        case 'space':
          col += number(a.length, 1);
          return;
        case 'label':
          el = document.createElement('div');
          el.className = 'label';
          el.textContent = a.text || '';
          break;
        case 'button':
          el = document.createElement('button');
          el.type = 'button';
          el.textContent = w.id;
          if (a.width) { el.style.minWidth = number(a.width, 1) + 'ch'; }
          el.addEventListener('click', function () { widgetEvent(w, w.id); });
          break;
        case 'input':
          el = document.createElement('input');
          el.type = 'text';
          el.id = 'w-' + w.ref;
          el.setAttribute('aria-label', w.id);
          el.size = number(a.width, 20);
          el.addEventListener('keydown', function (e) {
            if (e.key === 'Enter') {
              e.preventDefault();
              widgetEvent(w, el.value);
            }
          });
          fields[w.ref] = el;
          break;
        case 'text':
          el = document.createElement('textarea');
          el.id = 'w-' + w.ref;
          el.setAttribute('aria-label', w.id + ' (Ctrl+Enter sends)');
          el.cols = number(a.width, 20);
          el.rows = number(a.height, 3);
          el.addEventListener('keydown', function (e) {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              widgetEvent(w, el.value);
            }
          });
          fields[w.ref] = el;
          break;
        default:
          return;
      }
      el.classList.add('widget', 'widget-' + w.kind);
      if (a.bg_color) {
        el.style.backgroundColor = a.bg_color;
        if (!a.color) { el.style.color = readableOn(a.bg_color); }
      }
      if (a.color) { el.style.color = a.color; }
      var span = number(a.colspan, 1);
      el.style.gridRow = row + ' / span ' + number(a.rowspan, 1);
      el.style.gridColumn = col + ' / span ' + span;
      col += span;
      grid.appendChild(el);
    });
  }

  function onFrame(f) {
    switch (f.type) {
      case 'state':
        stateEl.textContent = f.name;
        log('state ' + f.name, 'state');
        break;
      case 'panel':
        render(f);
        break;
      case 'gui': {
        var el = fields[f.id];
        if (!el) { return; }
        if (f.op === 'set') { el.value = f.value; }
        if (f.op === 'append') { el.value += f.value; el.scrollTop = el.scrollHeight; }
        if (f.op === 'clear') { el.value = ''; }
        known[f.id] = el.value;
        break;
      }
      case 'message':
        // sent: what the behavior said to another adaptor (show=).
        log((f.sent ? f.adaptor + ' ← ' : f.adaptor + ': ') + f.text, f.sent ? 'said' : 'message');
        break;
    }
  }

  function connect() {
    var url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws';
    ws = new WebSocket(url);
    ws.onopen = function () {
      retry = 500;
      setConn('connected', true);
    };
    ws.onmessage = function (e) {
      try { onFrame(JSON.parse(e.data)); } catch (err) { log('bad frame: ' + err, 'error'); }
    };
    ws.onclose = function () {
      setConn('disconnected, reconnecting in ' + (retry / 1000) + ' s', false);
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 5000);
    };
  }

  connect();
}());
