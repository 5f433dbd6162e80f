() => { setTimeout(() => {
  // Not before the page has applied its own address: Gradio selects the first tab as the tabs first
  // render, and writing "?tab=start" then made the restore read that instead of the link it was opened
  // with (a link to Tokenizers opened on Start on a slow machine). The restore's own tab is in the
  // address already.
  if (!window.__tlabReady) return;
  const box = document.getElementById(__BOX__);
  const a = box ? [...box.querySelectorAll('.tlab-link a.tlab-link-a')].find((x) => x.offsetParent !== null) : null;
  if (window.__tlabAddress) window.__tlabAddress(a ? a.getAttribute('href') : __QUERY__);
}, 60); }
