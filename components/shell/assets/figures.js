if (!window.__tlabFigures) {
  window.__tlabFigures = true;
  const nameOf = (div) => {
    const host = div.parentElement ? div.parentElement.closest('[id]') : null;
    const id = host ? host.id.replace(/^component-/, 'figure-') : 'figure';
    return id.replace(/[^A-Za-z0-9_-]+/g, '-') || 'figure';
  };
  const save = (div, format) => {
    if (!window.Plotly || !div._fullLayout) return;
    window.Plotly.downloadImage(div, {format: format, filename: nameOf(div),
      width: div._fullLayout.width, height: div._fullLayout.height, scale: format === 'png' ? 2 : 1});
  };
  // Plotly writes clip paths and gradients as url('<page address>#id') (Gradio's page has a <base>).
  // A link written into the address bar after a figure is drawn (history.replaceState) leaves those
  // pointing at the old address, and the browser then draws the plot area empty: axes, no marks.
  // Point them at the address the page has now (links.py calls this after each replaceState).
  const fixUrls = () => {
    const here = location.href.split('#')[0];
    for (const el of document.querySelectorAll('.js-plotly-plot [clip-path], .js-plotly-plot [fill^="url("], '
                                               + '.js-plotly-plot [style*="url("]')) {
      for (const attr of ['clip-path', 'fill', 'style']) {
        const v = el.getAttribute(attr);
        if (!v || v.indexOf('url(') < 0) continue;
        const w = v.replace(/url\((['"]?)([^'")#]*)#([^'")]+)\1\)/g,
                            (all, q, addr, id) => (addr && addr !== here ? `url(${q}${here}#${id}${q})` : all));
        if (w !== v) el.setAttribute(attr, w);
      }
    }
  };
  window.__tlabFixUrls = fixUrls;
  const tidy = () => {
    for (const div of document.querySelectorAll('.js-plotly-plot')) {
      const holder = div.parentElement;
      if (!holder) continue;
      let bar = holder.querySelector(':scope > .tlab-fig-bar');
      if (!bar) {
        bar = document.createElement('div');
        bar.className = 'tlab-fig-bar';
        const note = document.createElement('p');
        note.className = 'tlab-notice';
        note.dataset.text = '';
        const keep = document.createElement('span');
        keep.className = 'tlab-fig-keep';
        keep.append('Download: ');
        for (const format of ['png', 'svg']) {
          const b = document.createElement('button');
          b.type = 'button';
          b.className = 'tlab-fig-save';
          b.dataset.format = format;
          b.textContent = format.toUpperCase();
          b.title = 'Download this figure as ' + format.toUpperCase();
          keep.append(b);
        }
        bar.append(note, keep);
        holder.append(bar);
        bar.addEventListener('click', (ev) => {
          const b = ev.target.closest('button.tlab-fig-save');
          const plot = holder.querySelector(':scope > .js-plotly-plot');
          if (b && plot) save(plot, b.dataset.format);
        });
      }
      const meta = div.layout && div.layout.meta;
      const text = meta && typeof meta.notice === 'string' ? meta.notice : '';
      const note = bar.querySelector('.tlab-notice');
      if (note.dataset.text !== text) {
        note.dataset.text = text;
        const head = document.createElement('strong');
        head.textContent = '__PREFIX__';
        note.replaceChildren(head, document.createTextNode(text));
      }
      note.hidden = !text;
      const keep = bar.querySelector('.tlab-fig-keep');
      const empty = !(div.data && div.data.length);  // a placeholder ("Run beam search to see ...")
      if (keep.hidden !== empty) keep.hidden = empty;
      const name = nameOf(div);
      if (bar.dataset.figure !== name) bar.dataset.figure = name;
    }
    fixUrls();
  };
  // On a phone a result table keeps every word whole: its width grows to what its widest word
  // needs in its column (the columns keep their shares), and it scrolls inside its own box.
  // (Gradio rewrites the table's style attribute, so the widths live in a stylesheet of our own.)
  const canvas = document.createElement('canvas').getContext('2d');
  const sheet = document.head.appendChild(document.createElement('style'));
  const widths = {};
  let tables = 0;
  const fitTables = () => {
    const phone = window.innerWidth <= __PHONE__;
    for (const wrap of document.querySelectorAll('.table-wrap')) {
      if (!wrap.dataset.tlabFit) wrap.dataset.tlabFit = String(++tables);
      if (!phone || wrap.offsetParent === null) continue;
      const heads = [...wrap.querySelectorAll('thead th')];
      const total = wrap.getBoundingClientRect().width;
      if (!heads.length || !total) continue;
      let needed = 0;
      const rows = [heads, ...[...wrap.querySelectorAll('[role=row], .virtual-row')].map(r => [...r.children])];
      for (const cells of rows) {
        cells.forEach((cell, i) => {
          const head = heads[i];
          const text = cell.innerText ? cell.innerText.trim() : '';
          if (!head || !text) return;
          const style = getComputedStyle(cell.querySelector('span, div') || cell);
          canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
          const word = Math.max(...text.split(/\s+/).map(w => canvas.measureText(w).width));
          const cs = getComputedStyle(cell);
          const pad = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight) + (cell === head ? 28 : 6);
          const share = head.getBoundingClientRect().width / total;
          if (share > 0) needed = Math.max(needed, (word + pad) / share);
        });
      }
      const want = Math.min(Math.ceil(needed), 3000);
      const id = wrap.dataset.tlabFit;
      if (want > total + 1 && Math.abs(want - (widths[id] || 0)) > 2) widths[id] = want;
    }
    const css = phone ? Object.entries(widths).map(([id, w]) =>
      `.table-wrap[data-tlab-fit="${id}"] { min-width: ${w}px !important; }`).join('\n') : '';
    if (sheet.textContent !== css) sheet.textContent = css;
  };
  let pending = false;
  const later = () => {
    if (pending) return;
    pending = true;
    setTimeout(() => { pending = false; tidy(); fitTables(); }, 150);
  };
  new MutationObserver(later).observe(document.body, {childList: true, subtree: true, characterData: true});
  window.addEventListener('resize', later);
  tidy();
}
