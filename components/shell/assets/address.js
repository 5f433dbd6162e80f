window.__tlabAddress = (q) => {
  try { history.replaceState(history.state, '', q); } catch (e) {}
  if (window.__tlabFixUrls) window.__tlabFixUrls();  // figures drawn before now point at the old address
  try { if (window.parent !== window) window.parent.postMessage({queryString: q.slice(1)}, 'https://huggingface.co'); } catch (e) {}
};
