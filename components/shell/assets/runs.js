// A run's "Reopen this run" link (components/shell/runs.py): a plain click reopens the run in this page
// (its query written into the one hidden box that runs.wire connects to links.apply), so the runs kept
// here stay; a click with a modifier (or a page without that box) opens the link as any link, in a new tab.
element.addEventListener('click', (ev) => {
  const a = ev.target.closest && ev.target.closest('a.tlab-run-open');
  if (!a || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey) return;
  const box = document.querySelector('#' + __OPEN__ + ' textarea, #' + __OPEN__ + ' input');
  if (!box) return;
  ev.preventDefault();
  // A nonce keeps each click a change (the same run reopened twice); links.apply ignores unknown keys.
  box.value = a.getAttribute('href').replace(/^\?/, '') + '&reopened=' + Date.now();
  box.dispatchEvent(new Event('input', {bubbles: true}));
  const panel = element.closest('[role=tabpanel]');
  if (panel) setTimeout(() => panel.scrollIntoView({block: 'start'}), 300);  // its inputs are at the top
});
