// A first-hour step's "done" box, kept in this browser (localStorage), never sent to the server.
const KEY = 'tlab-first-hour-done';
const box = element.querySelector('input[type=checkbox]');
const read = () => { try { return JSON.parse(localStorage.getItem(KEY) || '[]'); } catch (e) { return []; } };
if (box) {
  box.checked = read().includes(box.dataset.step);
  box.addEventListener('change', () => {
    const done = new Set(read());
    if (box.checked) done.add(box.dataset.step); else done.delete(box.dataset.step);
    try { localStorage.setItem(KEY, JSON.stringify([...done])); } catch (e) { /* storage off: the tick lasts the visit */ }
  });
}
