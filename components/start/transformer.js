// The Start tab's transformer picture: a click on a part opens its tab in this page, by the same path
// as a link (the query written into the hidden box that components/shell/runs.py's `wire` connects to
// links.apply). A click with a modifier, or a page without that box, follows the link as any link.
element.addEventListener('click', (ev) => {
  const a = ev.target.closest && ev.target.closest('a.tlab-part');
  if (!a || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey) return;
  const box = document.querySelector('#' + __OPEN__ + ' textarea, #' + __OPEN__ + ' input');
  if (!box) return;
  ev.preventDefault();
  box.value = a.getAttribute('href').replace(/^\?/, '') + '&opened=' + Date.now();
  box.dispatchEvent(new Event('input', {bubbles: true}));
  window.scrollTo({top: 0});
});
