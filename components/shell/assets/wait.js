// The learner's wait, measured where the learner is: from the click of a run button to the moment
// its result shows the server's figure ("model time 0.46 s", "Done in 90.4 s", ...). When the two
// differ, a line under that figure says so: the difference is the queue, the network and the page.
// The server's figures this page knows (__FIGURES__: regular-expression sources, the seconds in group 1)
// come from components/shell/guide.py.
// The line's words: the wait and the rest at a precision that tells them apart from each other (a 1.04 s wait
// beside a 0.06 s model time read "You waited 1.0 s ... the other 1.0 s"), the server's own seconds said too.
window.__tlabWaitText = (waited, seconds, said) => {
  const other = waited - seconds;
  let d = 1;
  while (d < 3 && waited.toFixed(d) === other.toFixed(d)) d++;
  return `You waited ${waited.toFixed(d)} s from your click to this result; the server's figure ("${said}") is `
    + `its own work only: the other ${other.toFixed(d)} s were the queue and the trip to and from your browser.`;
};
if (!window.__tlabWait) {
  const FIGURES = __FIGURES__.map(s => new RegExp(s));
  const NOT_RUNS = '[role=tab], .label-wrap, .tlab-fig-save, .tlab-copy, .tlab-gloss-pop, [aria-label*="Copy" i], '
    + '[aria-label*="download" i], .icon-button, .tlab-start-done';
  const STOP = /^\s*(stop|cancel)\b/i;
  const pending = new Map();  // panel -> {t0, seen: Map(host -> text)}
  // panel -> {host, t0, said, until}: the run just concluded there. Gradio may hide a run's trackers one frame
  // before it writes the values (seen on a loaded box): the line then spoke of the old figure, which the new one
  // replaced a moment later. A figure that changes in that host within AFTER_MS is this run's: said again.
  const concluded = new Map();
  const AFTER_MS = 5000;
  const figureIn = (text) => {
    for (const re of FIGURES) {
      const m = re.exec(text);
      if (m) return {seconds: parseFloat(m[1]), said: m[0]};
    }
    return null;
  };
  const hostOf = (el) => (el.closest('.block') || el);
  // Every host under `root` that now shows a server figure: Map(host -> its figure's words)
  const figures = (root) => {
    const out = new Map();
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let n;
    while ((n = walk.nextNode())) {
      const parent = n.parentElement;
      if (!parent || parent.closest('.tlab-wait, .tlab-runs')) continue;
      const f = figureIn(n.data);  // a figure is written in one piece of text (no markup inside)
      const host = f && hostOf(parent);
      if (f && !out.has(host)) out.set(host, f.said);
    }
    return out;
  };
  const panelOf = (el) => el.closest('[role=tabpanel]') || document.body;
  // Gradio marks each output of a running event with a status tracker (a `hide` class when idle): the
  // run's result is in when every tracker it showed has gone idle again and a figure stands in one of
  // the blocks it marked. A run that shows no tracker counts when a figure's words change.
  const TRACKER = '[data-testid=status-tracker]';
  document.addEventListener('click', (ev) => {
    const b = ev.target.closest && ev.target.closest('button');
    if (!b || b.disabled || b.closest(NOT_RUNS) || STOP.test(b.textContent || '')) return;
    const panel = panelOf(b);
    panel.querySelectorAll('.tlab-wait').forEach((l) => l.remove());  // it spoke of the run before this one
    concluded.delete(panel);
    pending.set(panel, {t0: performance.now(), seen: figures(panel), busy: new Set()});
  }, true);
  const say = (host, waited, f) => {
    let line = host.querySelector(':scope > .tlab-wait');
    const differ = waited - f.seconds > Math.max(0.5, 0.2 * f.seconds);
    if (!differ) { if (line) line.remove(); return; }
    if (!line) {
      line = document.createElement('p');
      line.className = 'tlab-wait';
      host.append(line);
    }
    line.dataset.waited = waited.toFixed(3);
    line.dataset.model = String(f.seconds);
    line.dataset.figure = f.said;
    line.textContent = window.__tlabWaitText(waited, f.seconds, f.said);
  };
  const figureBeside = (host) => figureIn([...host.childNodes]
    .filter(c => !(c.classList && c.classList.contains('tlab-wait'))).map(c => c.textContent).join(' '));
  const check = (now) => {
    for (const [panel, r] of concluded) {
      const f = r.host.isConnected && now < r.until ? figureBeside(r.host) : null;
      if (!f) { concluded.delete(panel); continue; }
      if (f.said !== r.said) {  // the run's own figure, written just after its trackers went idle
        r.said = f.said;
        say(r.host, (now - r.t0) / 1000, f);
      }
    }
    // a line whose figure is gone or changed belonged to an earlier result
    for (const line of document.querySelectorAll('.tlab-wait')) {
      const f = line.parentElement && figureBeside(line.parentElement);
      if (!f || f.said !== line.dataset.figure) line.remove();
    }
    for (const [panel, p] of pending) {
      if (!panel.isConnected) { pending.delete(panel); continue; }
      const running = [...panel.querySelectorAll(TRACKER)].filter(t => !t.classList.contains('hide'));
      for (const t of running) p.busy.add(hostOf(t));
      if (running.length) continue;
      const shown = figures(panel);
      let host = null;
      for (const [h, said] of shown) {
        if (p.busy.has(h) || p.seen.get(h) !== said) { host = h; break; }
      }
      if (!host) { p.busy.clear(); continue; }  // an earlier step of the run (a blank) ended: wait on
      pending.delete(panel);
      const f = figureIn(shown.get(host));
      concluded.set(panel, {host, t0: p.t0, said: f.said, until: now + AFTER_MS});
      say(host, (now - p.t0) / 1000, f);
    }
  };
  new MutationObserver((records) => {
    if (!pending.size && !concluded.size && !document.querySelector('.tlab-wait')) return;
    if (records.every(r => r.target.classList && r.target.classList.contains('tlab-wait'))) return;
    check(performance.now());
  }).observe(document.body, {childList: true, subtree: true, characterData: true, attributes: true,
                             attributeFilter: ['class']});
  window.__tlabWait = {figureIn, pending: () => pending.size};
}
