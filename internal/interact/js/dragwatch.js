// dragwatch: called on the drop target. With op "start" it watches, in the
// capture phase of the target's window, the events that end a drag and notes
// whether each reached the target (its composed path holds the target) or
// was released over it (pointer capture sends mouseup elsewhere). With op
// "read" it stops watching and returns what it saw.
function (op) {
  const el = this;
  const w = el.ownerDocument.defaultView;
  const key = Symbol.for('dtb.dragwatch');
  if (op === 'read') {
    const st = w[key];
    if (!st) return null;
    st.off();
    delete w[key];
    return st.rec;
  }
  if (w[key]) w[key].off();
  const rec = { dragstart: 0, dragenter: 0, dragover: 0, drop: 0, dragend: 0, mouseup: 0, pointerup: 0, releasedOver: false };
  // Under the pointer, beneath whatever is dragged along with it.
  const over = (e) => {
    const root = el.getRootNode();
    const at = (root.elementsFromPoint ? root : el.ownerDocument).elementsFromPoint(e.clientX, e.clientY);
    return at.some((n) => n === el || el.contains(n));
  };
  const on = (e) => {
    if (e.type === 'dragstart' || e.type === 'dragend') { rec[e.type]++; return; }
    const reached = e.composedPath().includes(el);
    if (reached) rec[e.type]++;
    if ((e.type === 'mouseup' || e.type === 'pointerup') && (reached || over(e))) rec.releasedOver = true;
  };
  const types = Object.keys(rec).filter((t) => t !== 'releasedOver');
  for (const t of types) w.addEventListener(t, on, true);
  w[key] = { rec, off: () => { for (const t of types) w.removeEventListener(t, on, true); } };
  return true;
}
