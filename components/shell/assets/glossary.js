// Every glossary term on screen, one hover (desktop) or tap (phone) from its definition.
// The terms come from components/shell/glossary.py (__TERMS__: [[term, definition, pattern], ...]).
// The page's DOM is never rewritten: terms are underlined with the CSS Custom Highlight API (Svelte
// keeps owning its text nodes, links and inputs stay as they are), and the definition is found from
// the text under the pointer. Controls (buttons, links, tabs, inputs, choices) and code are left
// alone: a tap there must do what it always did. Plot titles and axis titles (SVG) get a line of
// their terms under the plot, which is HTML and so hoverable like the rest.
if (!window.__tlabGlossary) {
  const TERMS = __TERMS__;
  const DEFS = Object.fromEntries(TERMS.map(([t, d]) => [t, d]));
  const ANY = new RegExp(TERMS.map(([, , p]) => '(' + p + ')').join('|'), 'g');
  const SKIP = 'a, button:not(th button), input, textarea, select, option, code, pre, script, style, svg, '
    + '[role=tab], [role=option], [role=listbox], [contenteditable=true], .tlab-gloss-pop, '
    + 'label:has(input[type=checkbox]), label:has(input[type=radio]), .cm-editor, .tlab-fig-keep';
  const termsIn = (text) => {
    const out = [];
    ANY.lastIndex = 0;
    let m;
    while ((m = ANY.exec(text))) {
      let g = 1;
      while (g < m.length && m[g] === undefined) g++;
      out.push([TERMS[g - 1][0], m.index, m.index + m[0].length]);
      if (!m[0].length) ANY.lastIndex++;
    }
    return out;
  };
  const shown = (el) => (el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null);
  const highlight = window.CSS && CSS.highlights && window.Highlight ? new Highlight() : null;
  if (highlight) CSS.highlights.set('tlab-term', highlight);
  let marked = [];  // [{term, range}] of the visible terms: what the underline and the test see
  const visibleText = function* (root) {
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => {
        if (n.nodeType === 3) return n.data.trim() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP;
        return n.matches(SKIP) || !shown(n) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
      }});
    let n;
    while ((n = walk.nextNode())) yield n;
  };
  // Plots: the terms of a figure's title, axis titles and legend, as a line under the figure.
  const plotTerms = () => {
    for (const line of document.querySelectorAll('.tlab-gloss-fig')) {
      if (!line.parentElement || !line.parentElement.querySelector(':scope > .js-plotly-plot')) line.remove();
    }
    for (const div of document.querySelectorAll('.js-plotly-plot')) {
      const holder = div.parentElement;
      if (!holder || !shown(div)) continue;
      const text = [...div.querySelectorAll('.gtitle, .xtitle, .ytitle, .y2title, .legendtext, .annotation-text')]
        .map(t => t.textContent).join(' · ');
      const seen = [...new Set(termsIn(text).map(([t]) => t))];
      let line = holder.querySelector(':scope > .tlab-gloss-fig');
      const want = seen.length ? 'Terms in this figure: ' + seen.join(', ') : '';
      if (!want) { if (line) line.remove(); continue; }
      if (!line) {
        line = document.createElement('p');
        line.className = 'tlab-gloss-fig';
        holder.append(line);
      }
      if (line.textContent !== want) line.textContent = want;
    }
  };
  const scan = () => {
    plotTerms();
    const root = document.querySelector('gradio-app') || document.body;
    const next = [];
    for (const node of visibleText(root)) {
      for (const [term, a, b] of termsIn(node.data)) {
        const range = document.createRange();
        range.setStart(node, a);
        range.setEnd(node, b);
        next.push({term, range});
      }
    }
    marked = next;
    if (highlight) {
      highlight.clear();
      for (const {range} of marked) highlight.add(range);
    }
  };
  // ---- the definition box
  const pop = document.createElement('div');
  pop.className = 'tlab-gloss-pop';
  pop.setAttribute('role', 'tooltip');
  pop.hidden = true;
  const popTerm = document.createElement('strong');
  popTerm.className = 'tlab-gloss-term';
  const popDef = document.createElement('span');
  popDef.className = 'tlab-gloss-def';
  pop.append(popTerm, document.createTextNode(': '), popDef);
  document.body.append(pop);
  let showing = null;
  const show = (term, rect) => {
    popTerm.textContent = term;
    popDef.textContent = DEFS[term];
    pop.dataset.term = term;
    pop.hidden = false;
    const w = Math.min(360, window.innerWidth - 16);
    pop.style.maxWidth = w + 'px';
    const left = Math.max(8, Math.min(rect.left, window.innerWidth - w - 8));
    pop.style.left = left + 'px';
    const below = rect.bottom + 6;
    pop.style.top = below + 'px';
    const h = pop.getBoundingClientRect().height;
    if (below + h > window.innerHeight - 4 && rect.top - h - 6 > 0) pop.style.top = (rect.top - h - 6) + 'px';
    showing = rect;
  };
  const hide = () => { pop.hidden = true; showing = null; delete pop.dataset.term; };
  const inside = (r, x, y) => x >= r.left - 1 && x <= r.right + 1 && y >= r.top - 1 && y <= r.bottom + 1;
  // The term under a point: from the text there (every occurrence counts, underlined or not yet).
  const termAt = (x, y) => {
    const hit = document.elementFromPoint(x, y);
    if (!hit || hit.closest('.tlab-gloss-pop')) return null;
    if (hit.closest(SKIP)) return null;
    const caret = document.caretRangeFromPoint ? document.caretRangeFromPoint(x, y) : null;
    const node = caret && caret.startContainer;
    if (!node || node.nodeType !== 3 || !node.parentElement || node.parentElement.closest(SKIP)) return null;
    for (const [term, a, b] of termsIn(node.data)) {
      if (caret.startOffset < a - 1 || caret.startOffset > b + 1) continue;
      const range = document.createRange();
      range.setStart(node, a);
      range.setEnd(node, b);
      for (const r of range.getClientRects()) if (inside(r, x, y)) return {term, rect: r};
    }
    return null;
  };
  let touch = false, queued = null;
  document.addEventListener('pointerdown', (ev) => { touch = ev.pointerType !== 'mouse'; }, true);
  document.addEventListener('mousemove', (ev) => {
    if (touch) return;
    const at = [ev.clientX, ev.clientY];
    if (queued) { queued = at; return; }
    queued = at;
    requestAnimationFrame(() => {
      const [x, y] = queued;
      queued = null;
      const found = termAt(x, y);
      if (found) show(found.term, found.rect);
      else if (showing && !inside(showing, x, y) && !inside(pop.getBoundingClientRect(), x, y)) hide();
    });
  }, {passive: true});
  // A tap on a term shows its definition (and does nothing else: a header does not sort under it);
  // a tap anywhere else closes it.
  document.addEventListener('click', (ev) => {
    if (!touch) return;
    const found = termAt(ev.clientX, ev.clientY);
    if (found) {
      ev.preventDefault();
      ev.stopPropagation();
      show(found.term, found.rect);
    } else if (!ev.target.closest('.tlab-gloss-pop')) hide();
  }, true);
  document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') hide(); });
  window.addEventListener('scroll', hide, {passive: true, capture: true});
  // Gradio draws and redraws as results come: scan again a moment after a change (at most every
  // 400 ms while the page keeps changing, e.g. a streamed generation).
  let timer = null;
  const later = () => {
    if (timer) return;
    timer = setTimeout(() => { timer = null; scan(); }, 400);
  };
  const ours = (n) => n === pop || (n.classList && n.classList.contains('tlab-gloss-fig'));
  new MutationObserver((records) => {
    if (records.every(r => pop.contains(r.target) || ours(r.target)
                      || (r.type === 'childList' && [...r.addedNodes, ...r.removedNodes].every(ours)))) return;
    later();
  }).observe(document.body, {childList: true, subtree: true, characterData: true, attributes: true,
                             attributeFilter: ['hidden', 'style', 'class']});
  window.addEventListener('resize', later);
  window.__tlabGlossary = {
    definitions: DEFS,
    termsIn,
    scan,
    // the marked terms on screen now: [{term, x, y}] (the centre of each occurrence's first box)
    visible: () => marked.map(({term, range}) => {
      const r = range.getClientRects()[0];
      return r && r.width ? {term, x: r.left + r.width / 2, y: r.top + r.height / 2} : null;
    }).filter(Boolean),
    shown: () => (pop.hidden ? null : {term: pop.dataset.term, definition: popDef.textContent}),
    hide,
  };
  scan();
}
