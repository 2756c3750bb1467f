// The eqgraph e-graph explorer. Reads the JSON that eqgraph/explore/model.py wrote into
// the page and draws a neighbourhood of it with cytoscape.js + dagre. Never the whole
// e-graph at once: a layered layout grows faster than the graph, and thousands of boxes
// show nothing readable, so the first view is the outputs' neighbourhood, grown by
// double-clicks.
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('eqgraph-data').textContent);
  const C = D.classes, N = D.nodes, R = D.rules;
  const MAX_CLASSES = 150;   // e-classes drawn at once: a few screens of boxes, laid out without a wait
  const MAX_MEMBERS = 6;     // members drawn per e-class until "every member" (or its "+k more")
  const MAX_PARENTS = 8;     // parents drawn per e-class when growing the view
  const MAX_COMPARE = 400;   // e-nodes per side of the before/after view
  const READABLE_ZOOM = 1.25;  // the most a fitted view zooms in
  const extracted = new Set(D.after);
  const outputOf = new Map(D.outputs.map(o => [o.cls, o.name]));
  const state = { shown: new Set(), selected: null, wide: new Set(), marked: new Set(), drawn: false };
  const api = window.eqgraphExplorer = { ready: false, firstViewMs: null, layouts: 0, data: D };

  cytoscape.use(cytoscapeDagre);

  // -- small helpers ---------------------------------------------------------------------
  const $ = id => document.getElementById(id);
  const esc = s => String(s).replace(/[&<>"']/g, ch => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]);
  const fmt = x => x == null ? '∞ (cannot be built)' : (Math.abs(x) >= 1e5 ? x.toExponential(3) : (+x).toFixed(1));
  const where = r => `${r.file.split('/').slice(-2).join('/')}:${r.line}`;
  const className = c => C[c].id + (C[c].name ? ' · ' + C[c].name : '') + (outputOf.has(c) && outputOf.get(c) !== C[c].name ? ' → ' + outputOf.get(c) : '');
  const clsLink = c => `<a class="cls" data-cls="${c}">${esc(className(c))}</a>`;
  const ruleLink = r => `<a class="rule" data-rule="${r}">${esc(R[r].name)}</a> <span class="muted">${esc(where(R[r]))}</span>`;
  const shapeText = s => s == null ? 'unknown' : '(' + s.map(d => d == null ? '?' : d).join(', ') + (s.length === 1 ? ',' : '') + ')';
  const members = c => {  // chosen first, then by cost
    const k = C[c];
    return k.nodes.slice().sort((a, b) => (b === k.chosen) - (a === k.chosen) || (N[a].total ?? Infinity) - (N[b].total ?? Infinity));
  };
  const childrenOf = c => {
    const out = [];
    for (const n of C[c].nodes) for (const ch of N[n].ch) out.push(ch);
    return out;
  };
  // a shared input or constant has thousands of parents: a few are enough to see how it is used
  const parentsOf = (c, most) => [...new Set(C[c].parents.map(p => N[p].cls))].slice(0, most);
  const neighbours = c => childrenOf(c).concat(parentsOf(c, MAX_PARENTS));
  // the e-classes `depth` levels below `starts` and `up` levels above them, at most `limit`
  function neighbourhood(starts, depth, limit, up = 1) {
    const seen = new Set(starts.slice(0, limit));
    const walk = (step, levels) => {
      let frontier = starts.slice(0, limit);
      for (let d = 0; d < levels && seen.size < limit; d++) {
        const next = [];
        for (const c of frontier) for (const x of step(c)) {
          if (!seen.has(x) && seen.size < limit) { seen.add(x); next.push(x); }
        }
        frontier = next;
      }
    };
    walk(childrenOf, depth);
    walk(c => parentsOf(c, MAX_PARENTS), up);
    return seen;
  }
  const width = label => Math.max(34, 7.2 * label.length + 14);

  // -- the e-graph view ------------------------------------------------------------------
  const style = [
    { selector: 'node.eclass', style: { 'shape': 'round-rectangle', 'background-color': '#f8fafc', 'border-color': '#94a3b8', 'border-width': 1,
      'label': 'data(label)', 'text-valign': 'top', 'text-halign': 'center', 'font-size': 10, 'color': '#334155', 'padding': 6 } },
    { selector: 'node.eclass.partial', style: { 'border-style': 'dashed' } },
    { selector: 'node.eclass.output', style: { 'border-color': '#15803d', 'border-width': 2 } },
    { selector: 'node.enode, node.term', style: { 'shape': 'round-rectangle', 'width': 'data(w)', 'height': 22, 'label': 'data(label)',
      'text-valign': 'center', 'font-family': 'monospace', 'font-size': 11, 'background-color': '#fff', 'border-color': '#64748b', 'border-width': 1 } },
    { selector: 'node.chosen', style: { 'background-color': '#dbeafe' } },
    { selector: 'node.extracted', style: { 'background-color': '#2563eb', 'color': '#fff', 'border-color': '#1e3a8a' } },
    { selector: 'node.unstable', style: { 'border-color': '#dc2626', 'border-width': 2 } },
    { selector: 'node.more', style: { 'shape': 'round-rectangle', 'width': 'data(w)', 'height': 18, 'label': 'data(label)', 'font-size': 10,
      'text-valign': 'center', 'background-color': '#f1f5f9', 'border-style': 'dotted', 'border-color': '#94a3b8', 'border-width': 1, 'color': '#475569' } },
    { selector: 'edge', style: { 'curve-style': 'bezier', 'target-arrow-shape': 'triangle', 'width': 1, 'line-color': '#94a3b8',
      'target-arrow-color': '#94a3b8', 'arrow-scale': 0.8 } },
    { selector: 'edge.extracted', style: { 'line-color': '#2563eb', 'target-arrow-color': '#2563eb', 'width': 2 } },
    { selector: '.marked', style: { 'border-color': '#f59e0b', 'border-width': 3 } },
    { selector: 'node.eclass.selected', style: { 'border-color': '#ea580c', 'border-width': 3, 'background-color': '#fff7ed' } },
  ];
  const cy = cytoscape({ container: $('cy'), style, minZoom: 0.05, maxZoom: 3,
    boxSelectionEnabled: false, autoungrabify: true });
  api.cy = cy;  // for tests and the console

  function elementsOf(shown) {
    const els = [], firstDrawn = new Map(), drawnOf = new Map();
    for (const c of shown) {
      const all = members(c);
      const drawn = (state.wide.has(c) || $('all-members').checked) ? all : all.slice(0, MAX_MEMBERS);
      drawnOf.set(c, drawn);
      firstDrawn.set(c, drawn[0]);
      const partial = childrenOf(c).some(x => !shown.has(x)) || C[c].parents.some(p => !shown.has(N[p].cls));
      els.push({ group: 'nodes', data: { id: 'c' + c, label: className(c), cls: c },
        classes: 'eclass' + (partial ? ' partial' : '') + (outputOf.has(c) ? ' output' : '') + (state.marked.has(c) ? ' marked' : '') });
      for (const n of drawn) {
        const label = N[n].label;
        els.push({ group: 'nodes', data: { id: 'n' + n, parent: 'c' + c, label, w: width(label), cls: c, node: n },
          classes: 'enode' + (n === C[c].chosen ? ' chosen' : '') + (extracted.has(n) ? ' extracted' : '') + (N[n].unstable != null ? ' unstable' : '') });
      }
      if (drawn.length < all.length) {
        const label = `+${all.length - drawn.length} more`;
        els.push({ group: 'nodes', data: { id: 'm' + c, parent: 'c' + c, label, w: width(label), cls: c, more: 1 }, classes: 'more' });
      }
    }
    for (const c of shown) for (const n of drawnOf.get(c)) {
      for (const ch of new Set(N[n].ch)) {
        if (!shown.has(ch) || firstDrawn.get(ch) === undefined) continue;
        els.push({ group: 'edges', data: { id: `e${n}_${ch}`, source: 'n' + n, target: 'n' + firstDrawn.get(ch) },
          classes: extracted.has(n) ? 'extracted' : '' });
      }
    }
    return els;
  }

  function draw(shown, then) {
    state.shown = shown;
    const t0 = performance.now();
    cy.startBatch();
    cy.elements().remove();
    cy.add(elementsOf(shown));
    cy.endBatch();
    const layout = cy.layout({ name: 'dagre', rankDir: 'TB', nodeSep: 14, rankSep: 36, edgeSep: 6, animate: false, fit: true, padding: 20 });
    layout.one('layoutstop', () => {
      api.layouts += 1;
      if (cy.zoom() > READABLE_ZOOM) { cy.zoom(READABLE_ZOOM); cy.center(); }  // a small graph, not blown up
      api.lastLayoutMs = performance.now() - t0;
      if (!state.drawn) {
        state.drawn = true;
        api.firstViewMs = performance.now();  // since navigation started: parsing, data and the first layout
        api.ready = true;
        document.body.dataset.ready = '1';
      }
      if (state.selected != null) cy.$id('c' + state.selected).addClass('selected');
      status();
      if (then) then();
    });
    layout.run();
  }

  function status() {
    $('status').textContent = `${state.shown.size} of ${C.length} e-classes drawn (${N.length} e-nodes in all); ` +
      'click one for details, double-click to draw its neighbours';
  }

  function drawAround(starts, depth) {
    draw(neighbourhood(starts, depth, MAX_CLASSES));
  }

  function grow(c) {  // a double-click: draw this e-class's neighbours too
    const shown = new Set(state.shown);
    for (const x of neighbours(c)) if (shown.size < state.shown.size + MAX_CLASSES) shown.add(x);
    draw(shown, () => cy.center(cy.$id('c' + c)));
  }

  function focusClass(c) {
    activate('graph');
    if (!state.shown.has(c)) {
      draw(neighbourhood([c], 1, MAX_CLASSES), () => select(c));
    } else {
      select(c);
    }
  }

  function select(c) {
    cy.$('.selected').removeClass('selected');
    state.selected = c;
    const box = cy.$id('c' + c);
    if (box.length) {
      box.addClass('selected');
      const seen = cy.extent(), b = box.boundingBox();
      const visible = b.x1 >= seen.x1 && b.x2 <= seen.x2 && b.y1 >= seen.y1 && b.y2 <= seen.y2;
      if (!visible) cy.animate({ center: { eles: box } }, { duration: 150 });
    }
    showClass(c);
  }

  cy.on('tap', 'node', ev => {
    const d = ev.target.data();
    if (d.more) { state.wide.add(d.cls); draw(state.shown, () => select(d.cls)); return; }
    select(d.cls);
  });
  cy.on('dbltap', 'node', ev => grow(ev.target.data('cls')));
  cy.on('mouseover', 'node', ev => tip(ev, ev.target.data('cls'), ev.target.data('node')));
  cy.on('mouseout', 'node', () => { $('tip').hidden = true; });

  function tip(ev, c, n) {
    const k = C[c], box = $('tip');
    const head = n != null ? `<b>${esc(N[n].label)}</b> in ${esc(className(c))}` : `<b>${esc(className(c))}</b>`;
    const cost = n != null ? `cost ${fmt(N[n].total)}` : `cost ${fmt(k.cost)}`;
    box.innerHTML = `${head}<br>type ${esc(k.type || '?')}<br>dtype ${esc(k.dtype || '?')}, shape ${esc(shapeText(k.shape))}<br>${cost}`;
    const e = ev.originalEvent || {};
    box.style.left = ((e.clientX || 0) + 14) + 'px';
    box.style.top = ((e.clientY || 0) + 14) + 'px';
    box.hidden = false;
  }

  // -- the details of an e-class -----------------------------------------------------------
  function termHtml(n) {
    const parts = N[n].ch.map(clsLink);
    return `<span class="term">${esc(N[n].label)}${parts.length ? ' ' + parts.join(' ') : ''}</span>`;
  }

  function addedBy(n) {
    const node = N[n], out = [];
    if (node.orig) out.push('<b>your graph</b>');
    for (const r of node.rules) out.push(ruleLink(r));
    if (!out.length) out.push('<span class="muted">no rewrite pattern explains it (an analysis or a (rule …) action)</span>');
    return out.join('<br>');
  }

  function unstableText(p) {
    const u = D.unstable[p];
    return `unstable pattern <code>${esc(u.text)}</code> (${esc(where(u))}${u.why ? ': ' + esc(u.why) : ''})`;
  }

  function whyChosen(c) {
    const k = C[c];
    if (k.chosen == null) return 'No member could be built, so extraction chose none here.';
    const chosen = N[k.chosen], others = k.nodes.filter(n => n !== k.chosen);
    if (!others.length) return `The only member (cost ${fmt(chosen.total)}).`;
    const reasons = [];
    const unstableOthers = others.filter(n => N[n].unstable != null);
    if (chosen.unstable != null) {
      reasons.push(`No stable form exists here: the chosen member matches the ${unstableText(chosen.unstable)}.`);
    } else if (unstableOthers.length) {
      reasons.push(`Stability first: ${unstableOthers.map(n => `<code>${esc(N[n].label)}</code>`).join(', ')} ` +
        `${unstableOthers.length > 1 ? 'match unstable patterns' : 'matches an unstable pattern'} (shown under each member), ` +
        'and extraction ranks any stable term before any unstable one, whatever the cost.');
    }
    const rivals = others.filter(n => N[n].total != null && (N[n].unstable != null) === (chosen.unstable != null))
      .sort((a, b) => N[a].total - N[b].total);
    if (k.shared) {
      reasons.push('Chosen for sharing: its inputs are computed anyway elsewhere in the extracted graph, ' +
        'so it adds less to the whole graph than a member that is cheaper on its own.');
    } else if (rivals.length && chosen.total != null && N[rivals[0]].total < chosen.total) {
      reasons.push(`Cheaper as part of the whole graph: <code>${esc(N[rivals[0]].label)}</code> costs ${fmt(N[rivals[0]].total)} ` +
        `as a tree, but the graph computes the chosen member's inputs anyway.`);
    } else if (rivals.length) {
      reasons.push(`Cheapest: cost ${fmt(chosen.total)}, against ${fmt(N[rivals[0]].total)} for <code>${esc(N[rivals[0]].label)}</code>.`);
    } else if (!reasons.length) {
      reasons.push(`The only member that can be built (cost ${fmt(chosen.total)}).`);
    }
    return reasons.join(' ');
  }

  function breakdown(n) {
    const node = N[n];
    if (node.own == null) return '<span class="muted">cannot be built</span>';
    const kids = [...new Set(node.ch)].map(ch => `${esc(C[ch].id)} ${fmt(C[ch].cost)}`);
    return `own ${fmt(node.own)}` + (kids.length ? ' + ' + kids.join(' + ') : '');
  }

  function showClass(c) {
    const k = C[c];
    const rows = members(c).map(n => `<tr class="${n === k.chosen ? 'chosen' : ''}" data-node="${n}">` +
      `<td>${n === k.chosen ? '★' : ''}</td><td>${termHtml(n)}${N[n].unstable != null ? `<div class="bad">${unstableText(N[n].unstable)}</div>` : ''}</td>` +
      `<td class="num">${fmt(N[n].total)}</td><td class="term">${breakdown(n)}</td><td>${addedBy(n)}</td></tr>`).join('');
    const parents = k.parents.map(p => `<li><span class="term">${esc(N[p].label)}</span> in ${clsLink(N[p].cls)}</li>`).join('');
    const kids = [...new Set(k.nodes.flatMap(n => N[n].ch))].map(ch => `<li>${clsLink(ch)}</li>`).join('');
    $('details').innerHTML = `<h2 id="class-title">${esc(className(c))}</h2>` +
      `<p>${esc(k.type || 'type unknown')}: dtype ${esc(k.dtype || '?')}, shape ${esc(shapeText(k.shape))}; ` +
      `cost ${fmt(k.cost)}${outputOf.has(c) ? '; an output' : ''}</p>` +
      `<h3>Why the chosen member won</h3><p class="why">${whyChosen(c)}</p>` +
      `<h3>Members (${k.nodes.length})</h3><table class="members"><tr><th></th><th>member</th><th class="num">cost</th>` +
      `<th>breakdown</th><th>added by</th></tr>${rows}</table>` +
      `<h3>Parents (${k.parents.length})</h3>${parents ? `<ul class="list">${parents}</ul>` : '<p class="muted">none: an output or unused</p>'}` +
      `<h3>Children</h3>${kids ? `<ul class="list">${kids}</ul>` : '<p class="muted">none: an input or a constant</p>'}` +
      `<p><button type="button" id="draw-here">Draw its neighbourhood</button></p>`;
    $('draw-here').onclick = () => { activate('graph'); draw(neighbourhood([c], +$('depth').value, MAX_CLASSES), () => select(c)); };
  }

  // -- rules and search --------------------------------------------------------------------
  function showRule(r) {
    const rule = R[r];
    const touched = rule.classes.slice(0, 200).map(c => `<li>${clsLink(c)}</li>`).join('');
    $('details').innerHTML = `<h2 id="rule-title">${esc(rule.name)}</h2>` +
      `<p>${esc(rule.kind)} in ruleset <b>${esc(rule.ruleset)}</b>, ${esc(rule.file)}:${rule.line}</p>` +
      (rule.lhs ? `<p><code>${esc(rule.lhs)}</code><br>${rule.kind === 'birewrite' ? '⇔' : '⇒'} <code>${esc(rule.rhs)}</code>` +
        (rule.when ? `<br>when <code>${esc(rule.when)}</code>` : '') + '</p>' : '') +
      `<p>${rule.matches} matches, ${rule.ms} ms (${esc(D.report.timed)} time)</p>` +
      `<h3>E-classes it explains a member of (${rule.classes.length})</h3>` +
      (touched ? `<p><button type="button" id="draw-rule">Draw them</button></p><ul class="list">${touched}</ul>` :
        `<p class="muted">${rule.matches ? 'none: it matched, but added no member its right side explains (a merge, or an analysis fact)' :
          'none: it never matched. Its left side does not occur in the e-graph (check the ops and guards against a member above).'}</p>`);
    if (touched) $('draw-rule').onclick = () => markAndDraw(rule.classes);
  }

  function markAndDraw(classes) {
    activate('graph');
    state.marked = new Set(classes);
    const starts = classes.slice(0, MAX_CLASSES / 3);
    draw(neighbourhood(starts, 1, MAX_CLASSES), () => { if (starts.length) select(starts[0]); });
  }

  function search(q) {
    q = q.trim().toLowerCase();
    if (!q) return;
    const rules = R.map((r, i) => i).filter(i => R[i].name.toLowerCase().includes(q));
    const hits = new Map();  // e-class -> matching e-node labels
    N.forEach((n, i) => {
      if (n.op.toLowerCase().includes(q) || n.label.toLowerCase().includes(q)) {
        if (!hits.has(n.cls)) hits.set(n.cls, []);
        hits.get(n.cls).push(i);
      }
    });
    const classes = [...hits.keys()];
    $('details').innerHTML = `<h2>Search: ${esc(q)}</h2>` +
      `<h3>Rules (${rules.length})</h3>` + (rules.length ? '<ul class="list" id="rule-hits">' +
        rules.slice(0, 100).map(i => `<li>${ruleLink(i)}: ${R[i].matches} matches, ${R[i].classes.length} e-classes</li>`).join('') + '</ul>'
        : '<p class="muted">no rule name contains it</p>') +
      `<h3>E-classes with a matching member (${classes.length})</h3>` + (classes.length ?
        `<p><button type="button" id="draw-hits">Draw them</button></p><ul class="list" id="class-hits">` +
        classes.slice(0, 100).map(c => `<li>${clsLink(c)}: <span class="term">${hits.get(c).map(n => esc(N[n].label)).join(', ')}</span></li>`).join('') + '</ul>'
        : '<p class="muted">no op or name contains it</p>');
    if (classes.length) $('draw-hits').onclick = () => markAndDraw(classes);
  }

  $('search').addEventListener('submit', ev => { ev.preventDefault(); search($('query').value); });
  $('details').addEventListener('click', ev => {
    const a = ev.target.closest('a');
    if (!a) return;
    if (a.dataset.cls != null) focusClass(+a.dataset.cls);
    if (a.dataset.rule != null) showRule(+a.dataset.rule);
  });

  // -- before / after ----------------------------------------------------------------------
  let compared = false;
  function termGraph(container, list) {
    const keep = list.slice(0, MAX_COMPARE), pick = new Map(keep.map(n => [N[n].cls, n]));
    const els = keep.map(n => {
      const c = N[n].cls, name = C[c].name && N[n].op !== 'Var' ? ` · ${C[c].name}` : '';
      const label = N[n].label + name;
      return { group: 'nodes', data: { id: 't' + n, label, w: width(label), cls: c, node: n },
        classes: 'term' + (N[n].unstable != null ? ' unstable' : '') };
    });
    for (const n of keep) for (const ch of new Set(N[n].ch)) {
      if (pick.has(ch)) els.push({ group: 'edges', data: { id: `t${n}_${ch}`, source: 't' + n, target: 't' + pick.get(ch) } });
    }
    const view = cytoscape({ container, style, elements: els, autoungrabify: true, minZoom: 0.05, maxZoom: 3 });
    const layout = view.layout({ name: 'dagre', rankDir: 'TB', nodeSep: 12, rankSep: 30, animate: false, fit: true, padding: 16 });
    layout.one('layoutstop', () => { if (view.zoom() > READABLE_ZOOM) { view.zoom(READABLE_ZOOM); view.center(); } });
    layout.run();
    view.on('tap', 'node', ev => focusClass(ev.target.data('cls')));
    view.on('mouseover', 'node', ev => tip(ev, ev.target.data('cls'), ev.target.data('node')));
    view.on('mouseout', 'node', () => { $('tip').hidden = true; });
    return { view, note: keep.length < list.length ? `${keep.length} of ${list.length} e-nodes drawn` : '' };
  }
  function compare() {
    if (compared) return;
    compared = true;
    const [before, after] = [termGraph($('cy-before'), D.before), termGraph($('cy-after'), D.after)];
    api.before = before.view;
    api.after = after.view;
    const notes = [before.note, after.note];
    notes.forEach((note, i) => { if (note) document.querySelectorAll('.pair h2')[i].textContent += ` (${note})`; });
  }

  // -- the saturation report -----------------------------------------------------------------
  function report() {
    const rep = D.report;
    const fired = R.map((r, i) => i).filter(i => R[i].matches > 0).sort((a, b) => R[b].matches - R[a].matches);
    const idle = R.map((r, i) => i).filter(i => R[i].matches === 0);
    const row = i => `<tr><td>${ruleLink(i)}</td><td class="num">${R[i].matches}</td><td class="num">${R[i].ms.toFixed(3)}</td>` +
      `<td class="num">${R[i].classes.length ? `<a class="rule" data-rule="${i}">${R[i].classes.length}</a>` : '0'}</td></tr>`;
    $('report').innerHTML = `<h2>Saturation</h2><p>Stopped: <b>${esc(rep.stop)}</b> after ${rep.iterations} iterations, ` +
      `${rep.seconds} s; e-nodes per iteration: ${rep.sizes.join(', ')}. Extracted graph cost ${fmt(rep.dag_cost)}` +
      `${rep.stopped ? ' (extraction stopped early: ' + esc(rep.stopped) + ')' : ''}.</p>` +
      `<h3>Rules that matched (${fired.length})</h3><table id="fired"><tr><th>rule</th><th class="num">matches</th>` +
      `<th class="num">${esc(rep.timed)} ms</th><th class="num">e-classes</th></tr>${fired.map(row).join('')}</table>` +
      (fired.length && fired.every(i => R[i].ms === 0) ? '<p class="muted">egglog reported no time per rule: ' +
        'compile with <code>profile=True</code> to time each rule on its own.</p>' : '') +
      `<h3>Rulesets (wall seconds)</h3><ul class="list">${Object.entries(rep.rulesets).map(([k, v]) => `<li>${esc(k)}: ${v}</li>`).join('')}</ul>` +
      `<details><summary>Rules that never matched (${idle.length})</summary><ul class="list">${idle.map(i => `<li>${ruleLink(i)}</li>`).join('')}</ul></details>`;
    $('report').addEventListener('click', ev => {
      const a = ev.target.closest('a');
      if (a && a.dataset.rule != null) showRule(+a.dataset.rule);
    });
  }

  // -- tabs and start ----------------------------------------------------------------------------
  function activate(tab) {
    document.querySelectorAll('nav button').forEach(b => b.classList.toggle('active', b.dataset.tab === tab));
    document.querySelectorAll('.tab').forEach(s => { s.hidden = s.id !== 'tab-' + tab; });
    if (tab === 'graph') cy.resize();
    if (tab === 'compare') compare();
  }
  document.querySelectorAll('nav button').forEach(b => b.addEventListener('click', () => activate(b.dataset.tab)));

  const focus = $('focus');
  focus.innerHTML = '<option value="outputs">the outputs</option>' +
    D.outputs.map(o => `<option value="${o.cls}">${esc(o.name)} (${esc(C[o.cls].id)})</option>`).join('');
  $('redraw').onclick = () => {
    state.marked = new Set();
    const starts = focus.value === 'outputs' ? D.outputs.map(o => o.cls) : [+focus.value];
    drawAround(starts, +$('depth').value);
  };
  $('all-members').onchange = () => draw(state.shown);

  report();
  drawAround(D.outputs.map(o => o.cls), +$('depth').value);
}());
