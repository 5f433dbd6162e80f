// Links opened in this page (components/shell/runs.py): a plain click on a link marked `tlab-open-here`
// (a kept run's "Reopen this run", a part of the Start tab's transformer picture) sends its query to
// page_query's opener (window.__tlabOpenQuery, open_query.js), so the tab opens with the link's inputs and
// this page's kept runs stay. A click with a modifier follows the link as any link (a new tab).
if (!window.__tlabOpenHere) {
  window.__tlabOpenHere = true;
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest && ev.target.closest('a.tlab-open-here');
    if (!a || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey || !window.__tlabOpenQuery) return;
    // A nonce makes each click a change (the same run reopened twice); links.apply ignores unknown keys.
    const nonce = a.classList.contains('tlab-run-open') ? '&reopened=' : '&opened=';
    if (!window.__tlabOpenQuery(a.getAttribute('href').replace(/^\?/, '') + nonce + Date.now())) return;
    ev.preventDefault();
    // the inputs are at the top of the tab that opens
    setTimeout(() => { (document.getElementById('main-tabs') || document.body).scrollIntoView({block: 'start'}); }, 300);
  });
}
