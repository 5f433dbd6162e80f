() => { setTimeout(() => {
  const box = document.getElementById(__BOX__);
  const a = box ? [...box.querySelectorAll('.tlab-link a.tlab-link-a')].find((x) => x.offsetParent !== null) : null;
  if (window.__tlabAddress) window.__tlabAddress(a ? a.getAttribute('href') : __QUERY__);
}, 60); }
