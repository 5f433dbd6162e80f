// The challenge sections (components/shell/challenges.py), once per page. Each section's own script queues
// its element; this mounts every queued one: Check calls /check_challenge, the verdict is written with
// textContent (never as HTML), progress is kept in this browser (localStorage), "Try it in the tab" carries
// the answer into the helping tab's inputs, and the page's own ?challenge=&answer= opens that challenge.
if (!window.__tlabChallengeMount) {
  const KEY = 'tlab-challenges-done';
  const style = document.createElement('style');
  style.textContent = __CSS__;
  document.head.appendChild(style);
  const read = () => { try { return JSON.parse(localStorage.getItem(KEY) || '[]'); } catch (e) { return []; } };
  const solved = new Set(read());
  const save = () => { try { localStorage.setItem(KEY, JSON.stringify([...solved])); } catch (e) { /* storage off */ } };
  const query = new URLSearchParams(location.search);
  // the challenge a link opened (its tab opens first; its section may mount later, when the tab is drawn)
  let want = query.get('challenge') ? {id: query.get('challenge'), tab: query.get('tab') || '', answer: query.get('answer')}
    : null;
  const base = () => {
    const root = (window.gradio_config && window.gradio_config.root) || (location.origin + location.pathname);
    return root.replace(/\/?$/, '/');
  };
  const paint = () => {
    document.querySelectorAll('.tlab-ch-item').forEach((item) => {
      const info = JSON.parse(item.dataset.ch);
      item.classList.toggle('tlab-ch-solved', solved.has(info.id));
    });
    document.querySelectorAll('.tlab-ch').forEach((sec) => {
      const n = [...sec.querySelectorAll('.tlab-ch-item')].filter((i) => i.classList.contains('tlab-ch-solved')).length;
      const c = sec.querySelector('.tlab-ch-count');
      if (c) c.textContent = String(n);
    });
  };
  const filled = (info, text) => {
    // the helping tab's link query with the answer's values in place of "{name}" (a list: one per line)
    let values = {};
    try { const v = JSON.parse(text); if (v && typeof v === 'object' && !Array.isArray(v)) values = v; } catch (e) { /* as typed */ }
    const q = new URLSearchParams();
    for (const [k, template] of Object.entries(info.try)) {
      let s = template;
      for (const [name, value] of Object.entries(values)) {
        s = s.split('{' + name + '}').join(Array.isArray(value) ? value.join('\n') : String(value));
      }
      if (!/\{[a-z_]+\}/.test(s)) q.set(k, s);
    }
    if (!q.get('tab')) q.set('tab', info.tab);
    return q;
  };
  const links = (item) => {
    const info = JSON.parse(item.dataset.ch);
    const text = item.querySelector('.tlab-ch-answer').value;
    item.querySelector('.tlab-ch-try').setAttribute('href', '?' + filled(info, text).toString());
    const own = new URLSearchParams({tab: info.tab, challenge: info.id, answer: text});
    item.querySelector('.tlab-ch-link').setAttribute('href', '?' + own.toString());
  };
  const say = (box, verdict) => {
    box.textContent = '';
    const head = document.createElement('p');
    head.className = verdict.passed ? 'tlab-ch-pass' : 'tlab-ch-fail';
    head.textContent = (verdict.passed ? 'Passed. ' : 'Not yet. ') + verdict.reason;
    box.appendChild(head);
    if (!verdict.passed && verdict.hint) {
      const hint = document.createElement('p');
      hint.className = 'tlab-ch-hint';
      hint.textContent = 'Hint: ' + verdict.hint;
      box.appendChild(hint);
    }
    const more = document.createElement('details');
    const sum = document.createElement('summary');
    sum.textContent = 'Evidence: what the model gave (' + verdict.seconds + ' s)';
    const pre = document.createElement('pre');
    pre.textContent = JSON.stringify(verdict.evidence, null, 1);
    more.append(sum, pre);
    box.appendChild(more);
  };
  const refuse = (box, message) => {
    box.textContent = '';
    const p = document.createElement('p');
    p.className = 'tlab-ch-error';
    p.textContent = message;
    box.appendChild(p);
  };
  const call = async (id, answer) => {
    const url = base() + 'gradio_api/call/check_challenge';
    const posted = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'},
                                     body: JSON.stringify({data: [id, answer]})});
    if (!posted.ok) throw new Error('The server refused the request (' + posted.status + '): try again.');
    const {event_id} = await posted.json();
    const text = await (await fetch(url + '/' + event_id)).text();
    let event = null, data = null;
    for (const line of text.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data = line.slice(5).trim();
    }
    let value = null;
    try { value = data ? JSON.parse(data) : null; } catch (e) { value = data; }
    if (event === 'complete' && Array.isArray(value)) return value[0];
    const msg = value && typeof value === 'object' ? (value.error || value.message) : value;
    throw new Error(msg || 'The check did not finish: try again.');
  };
  const check = async (item) => {
    const info = JSON.parse(item.dataset.ch);
    const box = item.querySelector('.tlab-ch-verdict');
    const button = item.querySelector('.tlab-ch-check');
    button.disabled = true;
    box.textContent = 'Checking: running the model on your answer...';
    item.classList.add('tlab-ch-busy');
    try {
      const verdict = await call(info.id, item.querySelector('.tlab-ch-answer').value);
      say(box, verdict);
      if (verdict.passed) { solved.add(info.id); save(); paint(); }
    } catch (e) {
      refuse(box, String(e.message || e));
    } finally {
      button.disabled = false;
      item.classList.remove('tlab-ch-busy');
    }
  };
  const open = (item, answer) => {
    item.open = true;
    const section = item.closest('details.tlab-ch');
    if (section) section.open = true;
    if (typeof answer === 'string') item.querySelector('.tlab-ch-answer').value = answer;
    links(item);
    setTimeout(() => item.scrollIntoView({block: 'center'}), 200);
  };
  const mountOne = (el) => {
    if (el.dataset.tlabMounted) return;
    el.dataset.tlabMounted = '1';
    el.querySelectorAll('.tlab-ch-item').forEach((item) => {
      const area = item.querySelector('.tlab-ch-answer');
      area.addEventListener('input', () => links(item));
      item.querySelector('.tlab-ch-check').addEventListener('click', () => check(item));
      // a challenge's own link opened from this page: its tab, then that challenge there with this answer
      item.querySelector('.tlab-ch-link').addEventListener('click', (ev) => {
        if (ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey || !window.__tlabOpenQuery) return;
        const info = JSON.parse(item.dataset.ch);
        if (!window.__tlabOpenQuery('tab=' + encodeURIComponent(info.tab) + '&opened=' + Date.now())) return;
        ev.preventDefault();
        want = {id: info.id, tab: info.tab, answer: area.value};
        seek();
      });
      links(item);
    });
    paint();
  };
  // The wanted challenge opens in its tab's section once that section is drawn and shown (a link's tab is
  // selected after the page loads; a tab's content may be drawn only when it is first shown).
  let seeking = null;
  const seek = () => {
    if (seeking) return;
    const started = Date.now();
    seeking = setInterval(() => {
      if (!want) { clearInterval(seeking); seeking = null; return; }
      const main = (want.tab || '').split('-')[0];
      let item = document.getElementById('ch-' + main + '-' + want.id);
      if (!item && window.__tlabReady && Date.now() - started > 3000) {  // no section in that tab: any shown one
        item = [...document.querySelectorAll('.tlab-ch-item')].find(
          (i) => i.offsetParent !== null && JSON.parse(i.dataset.ch).id === want.id) || null;
      }
      if (item && item.offsetParent !== null) {
        open(item, want.answer);
        want = null;
      } else if (Date.now() - started > 120000) {
        want = null;
      }
    }, 250);
  };
  window.__tlabChallengeMount = () => {
    const queue = window.__tlabChallengeQueue || [];
    while (queue.length) mountOne(queue.shift());
  };
  window.__tlabChallengeMount();
  if (want) seek();
}
