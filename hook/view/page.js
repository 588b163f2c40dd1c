// rollgraph view: the page's script. Plain DOM and SVG, no library, no
// network. Every piece of stored text reaches the page through textContent
// or setAttribute, never as markup.
(function () {
  'use strict';
  var SVGNS = 'http://www.w3.org/2000/svg';
  var COLORS = ['#e07a5f', '#3d85c6', '#6aa84f', '#a64d79'];
  var DATA = JSON.parse(document.getElementById('rollgraph-data').textContent);
  var nodes = DATA.nodes, edges = DATA.edges, frames = DATA.frames, renders = DATA.renders, groups = DATA.groups;
  var N = nodes.length;
  var BIG = DATA.meta.node_count > DATA.meta.domain_collapse_at;
  var MAX_LABELS = 400;

  var $ = function (id) { return document.getElementById(id); };
  var svg = $('graph'), viewport = $('viewport');
  var gEdges = $('edges'), gBubbles = $('bubbles'), gNodes = $('nodes'), gLabels = $('labels');

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = vis(text);
    return e;
  }
  function sv(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    return e;
  }
  function fmtW(w) { return w < 0 ? '—' : w.toFixed(2); }
  // Bidi overrides, embeddings and isolates in stored text are shown as
  // visible marks: a label can never reorder what surrounds it.
  var BIDI = /[\u202A-\u202E\u2066-\u2069]/g, BIDI_ANY = /[\u202A-\u202E\u2066-\u2069]/;
  function vis(s) {
    s = String(s);
    return BIDI_ANY.test(s) ? s.replace(BIDI, function (c) { return '\u27EAU+' + c.charCodeAt(0).toString(16).toUpperCase() + '\u27EB'; }) : s;
  }

  // ---- state ------------------------------------------------------------
  var state = {
    frame: frames.length - 1,
    weights: null,          // Float32Array, -1 = absent at this frame
    shown: null,            // Set of node indices the frame's injection names
    focus: null,            // Set
    superseded: null,       // Set of node indices superseded at this frame
    expandAll: false,
    expandedGroups: new Set(),
    expandedDomains: new Set(),
    selected: -1,
    matches: null,          // Set when searching
    highlight: null         // Set from an injection line hover
  };

  // ---- adjacency (for the panel and highlighting) ----------------------
  var adj = new Array(N);
  for (var i = 0; i < N; i++) adj[i] = [];
  edges.forEach(function (e, ix) { adj[e.s].push(ix); adj[e.t].push(ix); });
  function edgeLive(e, f) { return e.from <= f && (e.to === undefined || f < e.to); }

  // ---- weights per frame -------------------------------------------------
  var wCache = { frame: -1, w: null };
  function weightsAt(f) {
    var w, start;
    if (wCache.frame >= 0 && wCache.frame <= f) { w = new Float32Array(wCache.w); start = wCache.frame + 1; }
    else { w = new Float32Array(N).fill(-1); start = 0; }
    for (var i = start; i <= f; i++) {
      var ch = frames[i].w;
      for (var j = 0; j < ch.length; j++) w[ch[j][0]] = ch[j][1] < 0 ? -1 : ch[j][1] / 1000;
    }
    wCache = { frame: f, w: new Float32Array(w) };
    return w;
  }
  function history(ix) {
    var out = [], cur = -1;
    for (var i = 0; i < frames.length; i++) {
      var ch = frames[i].w;
      for (var j = 0; j < ch.length; j++) if (ch[j][0] === ix) cur = ch[j][1] < 0 ? -1 : ch[j][1] / 1000;
      out.push(cur);
    }
    return out;
  }

  // ---- layout: domains in a 2x2 grid, far clusters around each domain's
  // shown nodes, members on a sunflower spiral (heaviest in the middle) ----
  var pos = new Float32Array(N * 2);
  var groupPos = new Array(groups.length);
  var groupRadius = new Array(groups.length);
  var domainPos = [], domainRadius = [];
  (function layout() {
    var S = 13, GOLD = Math.PI * (3 - Math.sqrt(5)), ROW = 26, COL = 210;
    var finalW = weightsAt(frames.length - 1);
    var members = groups.map(function () { return []; });
    for (var i = 0; i < N; i++) members[nodes[i].g].push(i);
    var byDomain = [[], [], [], []];
    groups.forEach(function (g, gi) { if (members[gi].length) byDomain[g.d].push(gi); });
    var isFocus = function (gi) { return /\/focus$/.test(groups[gi].h); };
    var radii = [0, 0, 0, 0];
    var local = new Array(groups.length), gridCols = new Array(groups.length);
    for (var d = 0; d < 4; d++) {
      var gs = byDomain[d].slice().sort(function (a, b) {
        return ((isFocus(b) ? 1 : 0) - (isFocus(a) ? 1 : 0)) || (members[b].length - members[a].length) || (a - b);
      });
      var area = 0, R = 0;
      gs.forEach(function (gi, k) {
        var n = members[gi].length, gr;
        if (isFocus(gi)) {
          // The nodes the injection names: a readable grid, labels to the right.
          var cols = Math.max(1, Math.min(3, Math.ceil(Math.sqrt(n / 4))));
          gridCols[gi] = cols;
          var rows = Math.ceil(n / cols);
          gr = Math.sqrt(Math.pow(cols * COL / 2, 2) + Math.pow(rows * ROW / 2, 2));
        } else {
          gr = S * Math.sqrt(n) + S;
        }
        groupRadius[gi] = gr;
        var dist = k === 0 ? 0 : Math.sqrt(area) + gr + S;
        var ang = k * GOLD;
        local[gi] = [dist * Math.cos(ang), dist * Math.sin(ang)];
        area += (gr + S) * (gr + S) * (k === 0 ? 1 : 0.55);
        R = Math.max(R, dist + gr);
      });
      radii[d] = Math.max(R, 40);
      byDomain[d] = gs;
    }
    // A 2x2 grid whose rows and columns fit their domains.
    var gap = 60;
    var left = Math.max(radii[0], radii[2]), right = Math.max(radii[1], radii[3]);
    var top = Math.max(radii[0], radii[1]), bottom = Math.max(radii[2], radii[3]);
    var centres = [[-(left + gap / 2), -(top + gap / 2)], [right + gap / 2, -(top + gap / 2)],
                   [-(left + gap / 2), bottom + gap / 2], [right + gap / 2, bottom + gap / 2]];
    for (var d2 = 0; d2 < 4; d2++) {
      domainPos[d2] = centres[d2];
      domainRadius[d2] = radii[d2];
      byDomain[d2].forEach(function (gi) {
        var c = [centres[d2][0] + local[gi][0], centres[d2][1] + local[gi][1]];
        groupPos[gi] = c;
        var ms = members[gi].slice().sort(function (a, b) { return (finalW[b] - finalW[a]) || (a - b); });
        if (isFocus(gi)) {
          var cols = gridCols[gi], rows = Math.ceil(ms.length / cols);
          ms.forEach(function (ix, j) {
            var col = j % cols, row = Math.floor(j / cols);
            pos[ix * 2] = c[0] - cols * COL / 2 + col * COL + 10;
            pos[ix * 2 + 1] = c[1] - rows * ROW / 2 + row * ROW + ROW / 2;
          });
          return;
        }
        ms.forEach(function (ix, j) {
          var r = S * Math.sqrt(j + 0.5), a = j * GOLD;
          pos[ix * 2] = c[0] + r * Math.cos(a);
          pos[ix * 2 + 1] = c[1] + r * Math.sin(a);
        });
      });
    }
  })();

  // ---- per-frame derived sets --------------------------------------------
  function computeFrame() {
    var f = state.frame, fr = frames[f];
    state.weights = weightsAt(f);
    state.focus = new Set(fr.f);
    state.shown = new Set();
    if (fr.r !== undefined) renders[fr.r].lines.forEach(function (l) {
      if (!l.h && l.n) l.n.forEach(function (ix) { state.shown.add(ix); });
    });
    state.superseded = new Set();
    edges.forEach(function (e) { if (e.k === 'supersedes' && edgeLive(e, f)) state.superseded.add(e.t); });
  }

  function radius(w) { return 3 + 9 * Math.max(0, w); }

  // Where a node is drawn: 'n' itself, or the key of the bubble holding it.
  function placeOf(ix) {
    if (state.weights[ix] < 0) return null;
    var nd = nodes[ix];
    if (state.expandAll || state.shown.has(ix) || state.focus.has(ix) || ix === state.selected ||
        (state.matches && state.matches.has(ix))) return 'n';
    if (BIG && !state.expandedDomains.has(nd.d)) return 'd' + nd.d;
    if (state.expandedGroups.has(nd.g)) return 'n';
    return 'g' + nd.g;
  }

  // ---- drawing -----------------------------------------------------------
  function clear(g) { while (g.firstChild) g.removeChild(g.firstChild); }

  function draw() {
    var f = state.frame, w = state.weights;
    clear(gEdges); clear(gBubbles); clear(gNodes); clear(gLabels);
    var place = new Array(N);
    var bubbles = new Map();
    var drawn = 0;
    for (var i = 0; i < N; i++) {
      var p = placeOf(i);
      place[i] = p;
      if (p === null) continue;
      if (p === 'n') { drawn++; continue; }
      var b = bubbles.get(p);
      if (!b) { b = { key: p, members: [], sum: 0 }; bubbles.set(p, b); }
      b.members.push(i); b.sum += w[i];
    }
    function bubbleXY(key) {
      if (key[0] === 'd') return domainPos[+key.slice(1)];
      return groupPos[+key.slice(1)];
    }
    // edges
    var fragE = document.createDocumentFragment();
    var agg = new Map(), supCount = 0, edgeCount = 0;
    var selEdges = state.selected >= 0 ? new Set(adj[state.selected]) : null;
    for (var ei = 0; ei < edges.length; ei++) {
      var e = edges[ei];
      if (!edgeLive(e, f)) continue;
      var ps = place[e.s], pt = place[e.t];
      if (!ps || !pt) continue;
      if (ps === 'n' && pt === 'n') {
        var cls = 'edge ' + e.k + (selEdges && selEdges.has(ei) ? ' hl' : '');
        var line = sv('line', { x1: pos[e.s * 2], y1: pos[e.s * 2 + 1], x2: pos[e.t * 2], y2: pos[e.t * 2 + 1], 'class': cls, 'stroke-width': (0.6 + e.w / 60).toFixed(2), 'data-kind': e.k });
        if (e.k === 'supersedes') { line.setAttribute('marker-end', 'url(#arrow-sup)'); supCount++; }
        fragE.appendChild(line);
        edgeCount++;
      } else {
        var a = ps === 'n' ? 'n' + e.s : ps, c = pt === 'n' ? 'n' + e.t : pt;
        if (a === c) continue;
        var k = a < c ? a + '|' + c : c + '|' + a;
        agg.set(k, (agg.get(k) || 0) + 1);
      }
    }
    if (agg.size <= 20000) agg.forEach(function (count, k) {
      var parts = k.split('|');
      var xy = parts.map(function (q) { return q[0] === 'n' ? [pos[+q.slice(1) * 2], pos[+q.slice(1) * 2 + 1]] : bubbleXY(q); });
      fragE.appendChild(sv('line', { x1: xy[0][0], y1: xy[0][1], x2: xy[1][0], y2: xy[1][1], 'class': 'edge agg', 'stroke-width': Math.min(4, 0.5 + Math.log(1 + count)).toFixed(2) }));
    });
    gEdges.appendChild(fragE);
    // bubbles
    var fragB = document.createDocumentFragment(), fragL = document.createDocumentFragment();
    var labels = 0;
    bubbles.forEach(function (b) {
      var xy = bubbleXY(b.key), isDomain = b.key[0] === 'd';
      var d = isDomain ? +b.key.slice(1) : groups[+b.key.slice(1)].d;
      // A collapsed domain covers the ground its nodes would take.
      var r = isDomain ? Math.max(40, domainRadius[d] * 0.95) : 6 + 2.2 * Math.sqrt(b.members.length);
      var c = sv('circle', { cx: xy[0], cy: xy[1], r: r.toFixed(1), fill: COLORS[d], stroke: COLORS[d], 'class': 'bubble' + (isDomain ? ' domain' : ''), 'data-key': b.key, 'data-count': b.members.length });
      var top = b.members.slice().sort(function (x, y) { return w[y] - w[x]; }).slice(0, 3).map(function (ix) { return nodes[ix].label; });
      var name = isDomain ? DATA.domains[d] + ': ' + b.members.length + ' nodes (click to open)' : '[' + groups[+b.key.slice(1)].h + '] ' + b.members.length + ' collapsed';
      var t = sv('title', {}); t.textContent = vis(name + ' — ' + top.join(', '));
      c.appendChild(t);
      fragB.appendChild(c);
      if (labels < MAX_LABELS) {
        var lab = sv('text', { x: xy[0], y: xy[1] - r - 3, 'text-anchor': 'middle', 'class': 'label bubble-label' + (isDomain ? ' domain-label' : '') });
        if (isDomain) lab.setAttribute('style', 'font-size:' + Math.max(16, r / 7).toFixed(0) + 'px');
        lab.textContent = vis(isDomain ? DATA.domains[d] + ' (' + b.members.length + ')' : '[' + groups[+b.key.slice(1)].h + '] +' + b.members.length);
        fragL.appendChild(lab); labels++;
      }
    });
    gBubbles.appendChild(fragB);
    // nodes
    var fragN = document.createDocumentFragment();
    var order = [];
    for (var n = 0; n < N; n++) if (place[n] === 'n') order.push(n);
    order.sort(function (x, y) { return w[x] - w[y]; });
    var focusIds = [];
    order.forEach(function (ix) {
      var nd = nodes[ix], x = pos[ix * 2], y = pos[ix * 2 + 1], r = radius(w[ix]);
      var cls = 'node';
      if (state.superseded.has(ix)) cls += ' superseded';
      if (ix === state.selected) cls += ' selected';
      if (state.matches && state.matches.has(ix)) cls += ' match';
      if (state.highlight && state.highlight.has(ix)) cls += ' hl';
      if (state.focus.has(ix)) { cls += ' focus'; focusIds.push(nd.id); }
      if (nd.a) cls += ' anchor';
      var c = sv('circle', { cx: x.toFixed(1), cy: y.toFixed(1), r: r.toFixed(1), fill: COLORS[nd.d], 'class': cls, 'data-ix': ix, 'data-id': nd.id });
      var t = sv('title', {}); t.textContent = vis(nd.label + ' (' + DATA.domains[nd.d] + ', ' + nd.k + '; w ' + fmtW(w[ix]) + ')');
      c.appendChild(t);
      fragN.appendChild(c);
      if (state.focus.has(ix)) fragN.appendChild(sv('circle', { cx: x.toFixed(1), cy: y.toFixed(1), r: (r + 3.5).toFixed(1), 'class': 'focus-ring' }));
      if (nd.a) fragN.appendChild(sv('circle', { cx: x.toFixed(1), cy: y.toFixed(1), r: (r + 6.5).toFixed(1), 'class': 'anchor-ring' }));
      var labelled = state.shown.has(ix) || state.focus.has(ix) || ix === state.selected || (state.matches && state.matches.has(ix)) || order.length <= 120;
      if (labelled && labels < MAX_LABELS) {
        var lab = sv('text', { x: (x + r + 3).toFixed(1), y: (y + 3).toFixed(1), 'class': 'label' + (state.superseded.has(ix) ? ' superseded' : '') });
        var text = vis(nd.label);
        if (text.length > 42) text = text.slice(0, 41) + '…';
        lab.textContent = (nd.a ? '⚓ ' : '') + text;
        fragL.appendChild(lab); labels++;
      }
    });
    gNodes.appendChild(fragN);
    gLabels.appendChild(fragL);
    svg.dataset.frame = String(f);
    svg.dataset.nodes = String(drawn);
    svg.dataset.bubbles = String(bubbles.size);
    svg.dataset.edges = String(edgeCount);
    svg.dataset.supersedes = String(supCount);
    svg.dataset.focus = focusIds.sort().join(' ');
    svg.classList.toggle('searching', !!state.matches);
    var alive = 0;
    for (var q = 0; q < N; q++) if (w[q] >= 0) alive++;
    $('counts').textContent = alive + ' nodes at this position · ' + drawn + ' drawn, ' + (alive - drawn) + ' in ' + bubbles.size + ' collapsed bubbles';
  }

  // ---- timeline panel ------------------------------------------------------
  function drawTimeline() {
    var fr = frames[state.frame];
    $('frame-title').textContent = fr.title + ' (' + (state.frame + 1) + '/' + frames.length + ')';
    $('frame-time').textContent = fr.time || '';
    var g = $('gate'); clear(g);
    if (fr.gate) {
      var head = el('div');
      head.appendChild(el('span', fr.gate.fire ? 'fire' : 'quiet', fr.gate.fire ? 'PROBE' : 'quiet'));
      head.appendChild(document.createTextNode(' '));
      (fr.gate.triggers || []).forEach(function (t) { head.appendChild(el('span', 'chip', t)); });
      g.appendChild(head);
      g.appendChild(el('div', 'reason', fr.gate.reason));
      if (fr.gate.names && fr.gate.names.length) {
        var nm = el('div', null, 'new names: ');
        fr.gate.names.forEach(function (n) { nm.appendChild(el('span', 'chip', n)); });
        g.appendChild(nm);
      }
    } else if (state.frame === frames.length - 1) {
      g.appendChild(el('div', null, 'The stored state now; the injection is what `rollgraph render` prints.'));
    }
    if (fr.probe) {
      var p = 'probe cycle: ' + fr.probe.ops + ' operations applied';
      if (fr.probe.rejected) p = 'probe rejected: ' + fr.probe.rejected;
      g.appendChild(el('div', null, p));
      (fr.probe.merged || []).forEach(function (m) { g.appendChild(el('div', null, 'merged new ' + m[0] + ' into ' + m[1])); });
    }
    (fr.events || []).forEach(function (ev) { g.appendChild(el('div', null, ev)); });
    if (fr.f.length) {
      var fl = el('div', null, 'focus: ');
      fr.f.forEach(function (ix) { var a = el('a', 'chip', nodes[ix].label); a.dir = 'auto'; a.addEventListener('click', function () { select(ix, true); }); fl.appendChild(a); });
      g.appendChild(fl);
    }
  }

  // ---- injection panel ----------------------------------------------------
  function drawInjection() {
    var fr = frames[state.frame], box = $('inj-lines'); clear(box);
    var last = state.frame === frames.length - 1;
    if (fr.r === undefined) {
      $('inj-meta').textContent = '';
      box.appendChild(el('div', 'hint', 'Nothing to inject: the graph is empty at this position.'));
      return;
    }
    var r = renders[fr.r];
    $('inj-meta').textContent = (last ? 'now, as `rollgraph render` prints it' : 'what the next prompt gets') + ' · ' + r.tokens + ' tokens';
    r.lines.forEach(function (l) {
      var cls = 'line' + (l.n && l.n.length ? ' linked' : '') + (l.t.indexOf('## ') === 0 ? ' section' : '') + (l.h ? ' far' : '');
      var d = el('div', cls, l.t);
      if (l.n && l.n.length) {
        d.dataset.nodes = l.n.map(function (ix) { return nodes[ix].id; }).join(' ');
        if (l.h) d.dataset.handle = l.h;
        d.addEventListener('mouseenter', function () { state.highlight = new Set(l.n); drawNodesOnly(); });
        d.addEventListener('mouseleave', function () { state.highlight = null; drawNodesOnly(); });
        d.addEventListener('click', function () {
          if (l.h) l.n.forEach(function (ix) { state.expandedGroups.add(nodes[ix].g); state.expandedDomains.add(nodes[ix].d); });
          select(l.n[0], true);
        });
      }
      box.appendChild(d);
    });
  }

  function drawNodesOnly() {
    var hl = state.highlight;
    var cs = gNodes.querySelectorAll('circle.node');
    for (var i = 0; i < cs.length; i++) {
      var ix = +cs[i].getAttribute('data-ix');
      cs[i].classList.toggle('hl', !!(hl && hl.has(ix)));
    }
    var lines = $('inj-lines').children;
    for (var j = 0; j < lines.length; j++) lines[j].classList.remove('hl');
  }

  // ---- node panel -----------------------------------------------------------
  function sparkline(hist) {
    var W = 420, H = 40, s = sv('svg', { width: W, height: H, 'class': 'spark', viewBox: '0 0 ' + W + ' ' + H });
    s.appendChild(sv('line', { x1: 0, y1: H - 1, x2: W, y2: H - 1, stroke: '#ddd' }));
    var pts = [], n = hist.length;
    hist.forEach(function (v, i) {
      if (v < 0) return;
      pts.push(((n === 1 ? W / 2 : i * (W - 4) / (n - 1)) + 2).toFixed(1) + ',' + (H - 2 - v * (H - 4)).toFixed(1));
    });
    if (pts.length) s.appendChild(sv('polyline', { points: pts.join(' '), fill: 'none', stroke: '#3d85c6', 'stroke-width': 1.5 }));
    var x = (n === 1 ? W / 2 : state.frame * (W - 4) / (n - 1)) + 2;
    s.appendChild(sv('line', { x1: x, y1: 0, x2: x, y2: H, stroke: '#c0392b', 'stroke-dasharray': '2 2' }));
    return s;
  }

  function drawPanel() {
    var box = $('node-panel'); clear(box);
    var ix = state.selected;
    if (ix < 0) { box.appendChild(el('p', 'hint', 'Click a node, a bubble or an injection line.')); return; }
    var nd = nodes[ix], w = state.weights[ix];
    var h = el('h2', null, nd.label); h.dir = 'auto'; box.appendChild(h);
    var meta = el('div', 'meta');
    var chip = el('span', 'chip', DATA.domains[nd.d]); chip.style.borderColor = COLORS[nd.d]; chip.style.color = COLORS[nd.d];
    meta.appendChild(chip);
    meta.appendChild(el('span', 'chip', nd.k));
    if (nd.a) meta.appendChild(el('span', 'chip', 'anchor (never below its floor)'));
    if (state.focus.has(ix)) meta.appendChild(el('span', 'chip', 'in focus'));
    if (state.superseded.has(ix)) meta.appendChild(el('span', 'chip', 'superseded'));
    meta.appendChild(document.createTextNode(' weight ' + fmtW(w) + ' · last activated ' + nd.last + ' · id ' + nd.id));
    box.appendChild(meta);
    if (w < 0) box.appendChild(el('div', 'hint', 'Not in the graph at this position of the timeline.'));
    box.appendChild(el('h3', null, 'Weight over the timeline'));
    box.appendChild(sparkline(history(ix)));
    if (nd.det) { var det = el('div', 'detail', nd.det); det.dir = 'auto'; box.appendChild(det); }
    if (nd.al && nd.al.length) {
      var al = el('div', null, 'also: '); nd.al.forEach(function (a) { al.appendChild(el('span', 'chip', a)); }); box.appendChild(al);
    }
    if (nd.ev && nd.ev.length) {
      box.appendChild(el('h3', null, 'Evidence'));
      var ul0 = el('ul');
      nd.ev.forEach(function (e) { var li = el('li', null, (e.turn !== undefined ? 'turn ' + e.turn + (e.speaker ? ' (' + e.speaker + ')' : '') + ': ' : '') + (e.text || e)); li.dir = 'auto'; ul0.appendChild(li); });
      box.appendChild(ul0);
    }
    if (nd.prov && nd.prov.length) {
      box.appendChild(el('h3', null, 'Provenance'));
      var ul = el('ul');
      nd.prov.forEach(function (p) { ul.appendChild(el('li', null, 'session ' + p[0] + ': turns ' + p[1] + '–' + p[2] + ', touched by ' + p[3] + ' probe cycle' + (p[3] === 1 ? '' : 's'))); });
      box.appendChild(ul);
    }
    var live = adj[ix].filter(function (ei) { return edgeLive(edges[ei], state.frame); });
    box.appendChild(el('h3', null, 'Edges (' + live.length + ')'));
    var ul2 = el('ul');
    live.slice(0, 200).forEach(function (ei) {
      var e = edges[ei], out = e.s === ix, other = out ? e.t : e.s;
      var li = el('li', null, (out ? '→ ' : '← ') + e.k + ' ');
      var a = el('a', null, nodes[other].label); a.dir = 'auto';
      a.addEventListener('click', function () { select(other, true); });
      li.appendChild(a);
      li.appendChild(document.createTextNode(' (' + (e.w / 100).toFixed(2) + ')'));
      ul2.appendChild(li);
    });
    if (live.length > 200) ul2.appendChild(el('li', 'hint', (live.length - 200) + ' more'));
    box.appendChild(ul2);
  }

  // ---- actions --------------------------------------------------------------
  function refresh() { draw(); drawTimeline(); drawInjection(); drawPanel(); }

  function setFrame(f) {
    state.frame = Math.max(0, Math.min(frames.length - 1, f));
    $('slider').value = String(state.frame);
    computeFrame();
    refresh();
  }

  function select(ix, centre) {
    state.selected = ix;
    if (ix >= 0) { state.expandedDomains.add(nodes[ix].d); }
    refresh();
    if (centre && ix >= 0) centreOn(pos[ix * 2], pos[ix * 2 + 1]);
  }

  // ---- pan and zoom ---------------------------------------------------------
  var view = { x: 0, y: 0, k: 1 };
  function applyView() { viewport.setAttribute('transform', 'translate(' + view.x.toFixed(1) + ',' + view.y.toFixed(1) + ') scale(' + view.k.toFixed(4) + ')'); }
  function fit() {
    // Fit what is drawn (collapsed domains of a huge graph, or everything).
    var bb = null;
    try { bb = viewport.getBBox(); } catch (e) { bb = null; }
    var minX, minY, maxX, maxY;
    if (bb && bb.width > 0 && bb.height > 0) {
      minX = bb.x; minY = bb.y; maxX = bb.x + bb.width; maxY = bb.y + bb.height;
    } else {
      minX = Infinity; minY = Infinity; maxX = -Infinity; maxY = -Infinity;
      for (var d = 0; d < 4; d++) {
        minX = Math.min(minX, domainPos[d][0] - domainRadius[d]); maxX = Math.max(maxX, domainPos[d][0] + domainRadius[d]);
        minY = Math.min(minY, domainPos[d][1] - domainRadius[d]); maxY = Math.max(maxY, domainPos[d][1] + domainRadius[d]);
      }
    }
    var r = svg.getBoundingClientRect(), W = r.width || 800, H = r.height || 600;
    var k = Math.min(2, W / (maxX - minX + 40), H / (maxY - minY + 40));
    view.k = k; view.x = W / 2 - k * (minX + maxX) / 2; view.y = H / 2 - k * (minY + maxY) / 2;
    applyView();
  }
  function centreOn(x, y) {
    var r = svg.getBoundingClientRect();
    view.k = Math.max(view.k, 1); view.x = r.width / 2 - view.k * x; view.y = r.height / 2 - view.k * y;
    applyView();
  }
  svg.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
    var k2 = Math.max(0.02, Math.min(20, view.k * Math.exp(-ev.deltaY * 0.0015)));
    view.x = mx - (mx - view.x) * k2 / view.k; view.y = my - (my - view.y) * k2 / view.k; view.k = k2;
    applyView();
  }, { passive: false });
  var drag = null;
  svg.addEventListener('mousedown', function (ev) { if (ev.target === svg) { drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y }; svg.classList.add('dragging'); } });
  window.addEventListener('mousemove', function (ev) { if (drag) { view.x = drag.vx + ev.clientX - drag.x; view.y = drag.vy + ev.clientY - drag.y; applyView(); } });
  window.addEventListener('mouseup', function () { drag = null; svg.classList.remove('dragging'); });
  svg.addEventListener('click', function (ev) {
    var t = ev.target;
    if (t.classList && t.classList.contains('node')) { select(+t.getAttribute('data-ix'), false); return; }
    if (t.classList && t.classList.contains('bubble')) {
      var key = t.getAttribute('data-key');
      if (key[0] === 'd') state.expandedDomains.add(+key.slice(1)); else state.expandedGroups.add(+key.slice(1));
      refresh();
    }
  });

  // ---- search ---------------------------------------------------------------
  var hay = null;
  function searchText(nd) {
    var s = nd.label + '\n' + (nd.al || []).join('\n') + '\n' + (nd.det || '') + '\n' +
      (nd.ev || []).map(function (e) { return e.text; }).join('\n');
    if (nd.ev) nd.ev.forEach(function (e) { s += '\n' + (e.text || e); });
    return s.toLowerCase();
  }
  function search(q) {
    var box = $('results'); clear(box);
    q = q.trim().toLowerCase();
    if (!q) { state.matches = null; box.hidden = true; draw(); return; }
    if (!hay) hay = nodes.map(searchText);
    var hits = [];
    for (var i = 0; i < N; i++) if (hay[i].indexOf(q) >= 0) hits.push(i);
    hits.sort(function (a, b) {
      var la = nodes[a].label.toLowerCase().indexOf(q) >= 0 ? 0 : 1, lb = nodes[b].label.toLowerCase().indexOf(q) >= 0 ? 0 : 1;
      return (la - lb) || (state.weights[b] - state.weights[a]) || (a - b);
    });
    state.matches = new Set(hits.slice(0, 500));
    hits.slice(0, 50).forEach(function (ix) {
      var li = el('li');
      var l = el('div', null, nodes[ix].label); l.dir = 'auto'; li.appendChild(l);
      li.appendChild(el('div', 'sub', DATA.domains[nodes[ix].d] + ' · ' + nodes[ix].k + ' · w ' + fmtW(state.weights[ix])));
      li.addEventListener('mousedown', function (ev) { ev.preventDefault(); select(ix, true); box.hidden = true; });
      box.appendChild(li);
    });
    if (!hits.length) box.appendChild(el('li', 'sub', 'no match'));
    else if (hits.length > 50) box.appendChild(el('li', 'sub', hits.length + ' matches; the first 50 shown'));
    box.hidden = false;
    draw();
  }
  $('search').addEventListener('input', function (ev) { search(ev.target.value); });
  $('search').addEventListener('keydown', function (ev) {
    if (ev.key === 'Enter') { var first = $('results').querySelector('li'); if (first) first.dispatchEvent(new MouseEvent('mousedown')); }
    if (ev.key === 'Escape') { ev.target.value = ''; search(''); }
  });
  $('search').addEventListener('blur', function () { $('results').hidden = true; });

  // ---- controls ---------------------------------------------------------------
  $('slider').max = String(frames.length - 1);
  $('slider').addEventListener('input', function (ev) { setFrame(+ev.target.value); });
  $('expand-all').addEventListener('click', function () { state.expandAll = true; refresh(); });
  $('collapse-all').addEventListener('click', function () { state.expandAll = false; state.expandedGroups.clear(); state.expandedDomains.clear(); refresh(); });
  $('fit').addEventListener('click', fit);
  document.addEventListener('keydown', function (ev) {
    if (ev.target && ev.target.tagName === 'INPUT' && ev.target.type !== 'range') return;
    if (ev.key === 'ArrowLeft' && ev.target.type !== 'range') setFrame(state.frame - 1);
    if (ev.key === 'ArrowRight' && ev.target.type !== 'range') setFrame(state.frame + 1);
  });

  // Deep links (also what the headless check drives): #frame=N|turn:T|now,
  // expand=all, select=<node id>, q=<search>.
  function applyHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ''));
    var fr = params.get('frame');
    if (fr !== null) {
      var target = frames.length - 1;
      if (fr.indexOf('turn:') === 0) {
        var t = +fr.slice(5);
        for (var i = 0; i < frames.length; i++) if (frames[i].turn <= t && frames[i].title !== 'now') target = i;
      } else if (fr !== 'now') target = +fr;
      var s = $('slider'); s.value = String(target); s.dispatchEvent(new Event('input'));
    }
    if (params.get('expand') === 'all') $('expand-all').click();
    var sel = params.get('select');
    if (sel) for (var j = 0; j < N; j++) if (nodes[j].id === sel) { select(j, true); break; }
    var q = params.get('q');
    if (q) { $('search').value = q; search(q); }
  }
  window.addEventListener('hashchange', applyHash);

  // ---- start ----------------------------------------------------------------
  $('title').textContent = vis('rollgraph · ' + DATA.meta.kind + ' ' + DATA.meta.name);
  $('timeline-note').textContent = vis('Timeline: ' + DATA.meta.timeline + '. Page made ' + DATA.meta.generated + '.');
  var lg = $('legend');
  DATA.domains.forEach(function (d, i) { var s = el('span', 'sw'); s.style.background = COLORS[i]; lg.appendChild(s); lg.appendChild(document.createTextNode(d)); });
  lg.appendChild(document.createTextNode(' · size = weight · ringed = focus · dashed red = supersedes (old side faded) · ⚓ anchor · dashed bubble = collapsed cluster'));
  if (DATA.meta.problems && DATA.meta.problems.length) {
    var pb = $('problems'); pb.hidden = false;
    pb.textContent = vis('Read with problems (nothing was changed): ' + DATA.meta.problems.join('; '));
  }
  document.body.dataset.nodesTotal = String(DATA.meta.node_count);
  document.body.dataset.edgesTotal = String(DATA.meta.edge_count);
  document.body.dataset.frames = String(frames.length);
  computeFrame();
  $('slider').value = String(state.frame);
  refresh();
  fit();
  window.addEventListener('resize', fit);
  applyHash();
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = '1';
})();
