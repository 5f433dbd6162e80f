const write = (tries = 0) => {
  const row = element.querySelector('.tlab-link-row');
  const a = element.querySelector('a.tlab-link-a');
  if (!a) {
    // A failed run blanks the bar: its link named the last result, which is gone. The address then
    // names the tab alone (only when this bar had written it, so an empty bar never overwrites a link).
    if (element.dataset.wrote && element.offsetParent !== null && window.__tlabAddress) {
      delete element.dataset.wrote;
      window.__tlabAddress('?tab=' + encodeURIComponent(__KEY__));
    }
    return;
  }
  // Only the tab on screen names the address: a run finishing in a tab the learner has left keeps
  // its link in its bar (its tab writes it when it is shown again). A hand-off selects the tab and
  // fills the bar in one update: give the tab a moment to show.
  if (element.offsetParent === null) {
    if (tries < 10) setTimeout(() => write(tries + 1), 100);
    return;
  }
  const q = a.getAttribute('href');
  if (window.__tlabAddress) window.__tlabAddress(q);
  element.dataset.wrote = '1';
  const runId = __RUN_ID__;
  if (row && row.getAttribute('data-autorun') === '1' && runId) {
    row.removeAttribute('data-autorun');
    let tries = 0;
    const press = () => {
      const b = document.getElementById(runId);
      if (b) { b.click(); } else if (tries++ < 50) { setTimeout(press, 100); }
    };
    setTimeout(press, 50);
  }
};
watch('value', () => write());
write();
element.addEventListener('click', (ev) => {
  const b = ev.target.closest('button.tlab-copy');
  if (!b) return;
  const a = element.querySelector('a.tlab-link-a');
  const url = a ? a.href : location.href;
  const done = () => { b.textContent = 'Copied'; setTimeout(() => { b.textContent = 'Copy link'; }, 1500); };
  const fallback = () => {
    const t = document.createElement('textarea'); t.value = url; document.body.appendChild(t); t.select();
    try { document.execCommand('copy'); done(); } catch (e) { window.prompt('Copy this link:', url); }
    t.remove();
  };
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).then(done, fallback);
  else fallback();
});
