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
  // A title or an axis title longer than the figure is wide was cut at its edge (on a phone:
  // "...vocabulary 49"): wrap it onto lines that fit this width, and give the top margin the
  // extra lines. Redone when the width or the figure changes (the last text written is kept).
  const lines = (text, chars) => {
    const out = [];
    let line = '';
    const words = String(text).replace(/<br\s*\/?>/g, ' ').split(/\s+/).filter(Boolean)
      .flatMap(w => (w.length > chars ? w.split(/(?<=[\/_-])/) : [w]));  // "org/model-name": cut after / - _
    for (const w of words) {
      const glue = /[\/_-]$/.test(line) ? '' : ' ';  // the pieces of one cut word join without a space
      if (line && (line + glue + w).length > chars) { out.push(line); line = w; } else line = line ? line + glue + w : w;
    }
    if (line) out.push(line);
    return out;
  };
  const fitTitles = (div) => {
    const L = div.layout, full = div._fullLayout;
    if (!L || !full || !full._size || !window.Plotly || !div.clientWidth) return;
    const textOf = (t) => (t && typeof t === 'object' ? t.text : t) || '';
    const st = div.__tlabTitles || (div.__tlabTitles = {});
    const update = {};
    const fit = (path, now, px, chars) => {
      if (!now) return 0;
      if (now !== st[path + ':wrote']) st[path] = now;  // a new figure: its own text is the original
      // a space stays before each break, so the title's text still reads as words ("1: 49,152", not "1:49,152")
      const wrapped = lines(st[path], Math.max(12, chars))
        .reduce((all, line, i) => (i ? all + (/[\/_-]$/.test(all) ? '<br>' : ' <br>') : '') + line, '');
      const hasBreak = /<br/.test(st[path]);
      const want = hasBreak && st[path].length <= chars ? st[path] : wrapped;
      if (want !== now) update[path] = want;
      st[path + ':wrote'] = want;
      return want.split('<br>').length - 1;
    };
    const size = (full.title && full.title.font && full.title.font.size) || 17;
    const title = textOf(L.title);
    if (st.marginT === undefined || (title && title !== st['title.text:wrote'])
        || (st.wroteHeight !== undefined && L.height !== st.wroteHeight)) {
      st.marginT = full.margin.t;  // a new figure: its own margin and height
      st.height = L.height || full.height;
      st.extra = 0;
      st.grow = 0;
      st.wroteHeight = undefined;
    }
    const toolbar = window.innerWidth <= __PHONE__ ? 0 : 240;  // the hover toolbar's corner (hidden on a phone)
    const extra = fit('title.text', title, size, Math.floor((div.clientWidth - 24 - toolbar) / (size * 0.56)));
    for (const ax of ['xaxis', 'yaxis']) {
      const a = full[ax];
      if (!a || !L[ax]) continue;
      const px = (a.title && a.title.font && a.title.font.size) || 14;
      const span = ax === 'xaxis' ? full._size.w : full._size.h;
      fit(ax + '.title.text', textOf(L[ax].title), px, Math.floor((span - 8) / (px * 0.56)));
    }
    // A legend in rows under the plot (a phone: one entry a row) squeezed the plot itself to a strip: the
    // figure grows until the plot has PLOT_MIN_PX (or half the figure's own height, if that is less).
    const short = Math.min(__PLOT_MIN__, 0.5 * st.height) - full._size.h;
    const grow = (st.grow || 0) + (short > 1 ? short : 0);
    if ((st.extra !== extra && title) || grow !== (st.grow || 0)) {
      const total = st.height + extra * size * 1.3 + grow;
      // the lines sit in the top band, centred there (Plotly's 'top' anchor lifts extra lines out of the figure)
      if (extra) Object.assign(update, {'title.yref': 'container', 'title.yanchor': 'middle', 'title.pad.t': 0,
                                        'title.y': 1 - (6 + (extra + 1) * size * 0.65) / total});
      update['margin.t'] = st.marginT + extra * size * 1.3;
      update.height = total;  // the figure grows: the plot keeps its room
      st.extra = extra;
      st.grow = grow;
      st.wroteHeight = total;
    }
    if (Object.keys(update).length) window.Plotly.relayout(div, update);
    // A bar's value stays upright (in a thin bar Plotly turned it sideways) and is not cut off at
    // the plot's edge ("flip" over the tallest bar was clipped).
    const bars = (div.data || []).map((t, i) => [t, i])
      .filter(([t]) => t.type === 'bar' && t.text && t.textangle === undefined).map(([, i]) => i);
    if (bars.length) window.Plotly.restyle(div, {textangle: 0, cliponaxis: false}, bars);
  };
  const tidy = () => {
    // A plot blanked (an error, a new run starting) leaves its bar behind: its "What to notice" line
    // described the figure that is gone, so the bar goes with it.
    for (const bar of document.querySelectorAll('.tlab-fig-bar')) {
      const plot = bar.parentElement && bar.parentElement.querySelector(':scope > .js-plotly-plot');
      if (!plot) bar.remove();
    }
    for (const div of document.querySelectorAll('.js-plotly-plot')) {
      const holder = div.parentElement;
      if (!holder) continue;
      try { fitTitles(div); } catch (e) { /* a figure mid-draw: the next pass fits it */ }
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
  // A result table keeps every word whole, on a phone and on a desktop ("loa ded", "0.911 5" were
  // broken in narrow columns): its width grows to what its widest word needs in its column (the
  // columns keep their shares), and it scrolls inside its own box.
  // (Gradio rewrites the table's style attribute, so the widths live in a stylesheet of our own.)
  const canvas = document.createElement('canvas').getContext('2d');
  const sheet = document.head.appendChild(document.createElement('style'));
  const widths = {};
  let tables = 0;
  const fitTables = () => {
    const phone = true;  // every width: a desktop's narrow columns broke words too
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
    // A table wider than its box says so above itself (figures.css: "Scroll sideways for more columns"):
    // on a phone two columns showed and nothing told the rest were there.
    for (const box of document.querySelectorAll('.table-container')) {
      if (box.offsetParent === null) continue;
      const wide = box.scrollWidth > box.clientWidth + 2;
      if (box.classList.contains('tlab-scrolls') !== wide) box.classList.toggle('tlab-scrolls', wide);
    }
  };
  let pending = false;
  const later = () => {
    if (pending) return;
    pending = true;
    setTimeout(() => { pending = false; tidy(); fitTables(); }, 150);
  };
  new MutationObserver(later).observe(document.body, {childList: true, subtree: true, characterData: true});
  window.addEventListener('resize', later);
  // A table already drawn when this script ran, or in a tab that only a click shows (a style change, which the
  // observer does not watch), was never fitted: on a phone its numbers broke mid-digit ("0.54 / 5", "91 / .6 / %").
  document.addEventListener('click', later, true);
  later();
  tidy();
}
