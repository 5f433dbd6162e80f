() => {
  // A query opened in this page (components/shell/page_query.py) goes to the hidden box of the tab it names,
  // whose open lists only that tab's outputs; any other tab's name goes to the box for any tab (key "").
  // The server reads the query again (a stranger's text): this only picks the box.
  const boxes = __BOXES__;  // {tab key: the box's elem_id}, in the order of this load's outputs
  const keys = Object.keys(boxes);
  const pick = (query) => {
    const named = new URLSearchParams(query).getAll('tab').pop() || '';  // the last repeat, as the server reads it
    return named && keys.includes(named) ? named : '';
  };
  // A link clicked later (runs.js): written into its box as the learner would type it
  window.__tlabOpenQuery = (query) => {
    const id = boxes[pick(query)];
    const box = document.querySelector('#' + id + ' textarea, #' + id + ' input');
    if (!box) return false;
    box.value = query;
    box.dispatchEvent(new Event('input', {bubbles: true}));
    return true;
  };
  // The page's own address: returned as this load's value for its box (none: ready at once)
  const q = location.search.slice(1);
  if (!q) window.__tlabReady = true;
  const key = q ? pick(q) : null;
  return keys.map((k) => (k === key ? q : ''));
}
