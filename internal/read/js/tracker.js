// tracker: remembers when a document's DOM last changed, so that a later dtb
// command can tell how long the page has been quiet instead of starting to
// watch it from scratch. It is installed two ways: as a new-document script
// (early = true: it sees the document from its first node on) and by an
// immediate evaluation into a document that is already there (early = false:
// what happened before that moment is unknown). Installing twice is harmless:
// the second call only reports the state.
//
// A mutation is any childList, characterData or attribute change in the
// document or in an open shadow root, except changes of the style attribute
// alone: script-driven animations rewrite it every frame and do not change what
// there is to read. Open shadow roots are watched as they are found: on the
// first install, on elements the document gains, and on every readiness
// observation (scan). The page's own objects are left alone: no prototype is
// patched, and the tracker lives in a non-enumerable symbol property.
//
// Times are epoch milliseconds (performance.timeOrigin + performance.now()), so
// they compare across frames. win is the window to install into (a same-origin
// frame's window; defaults to this one).
(early, win) => {
  win = win || window;
  const KEY = Symbol.for('dtb.quiet');
  const perf = win.performance;
  const now = () => perf.timeOrigin + perf.now();
  let t = win[KEY];
  let fresh = false;
  if (!t) {
    fresh = true;
    t = { since: now(), last: 0, count: 0, early: !!early, scan: null };
    const watched = new WeakSet();
    let observe = null;
    // roots: open shadow roots of an element added to the DOM and of its subtree.
    const roots = (el) => {
      if (el.shadowRoot) observe(el.shadowRoot);
      if (el.firstElementChild) {
        const all = el.querySelectorAll('*');
        for (let i = 0; i < all.length; i++) if (all[i].shadowRoot) observe(all[i].shadowRoot);
      }
    };
    const mo = new win.MutationObserver((records) => {
      let changed = false;
      for (let i = 0; i < records.length; i++) {
        const r = records[i];
        if (r.type === 'attributes' && r.attributeName === 'style') continue;
        changed = true;
        if (r.type === 'childList') {
          for (let j = 0; j < r.addedNodes.length; j++) {
            const n = r.addedNodes[j];
            if (n.nodeType === 1) roots(n);
          }
        }
      }
      if (changed) {
        t.last = now();
        t.count++;
      }
    });
    const opts = { subtree: true, childList: true, characterData: true, attributes: true };
    observe = (root) => {
      if (root && !watched.has(root)) {
        watched.add(root);
        mo.observe(root, opts);
      }
    };
    // scan finds open shadow roots not seen yet: made before the tracker, or
    // attached to an element already in the document (a late upgrade).
    t.scan = () => {
      const visit = (root) => {
        const all = root.querySelectorAll('*');
        for (let i = 0; i < all.length; i++) {
          const sr = all[i].shadowRoot;
          if (sr) {
            observe(sr);
            visit(sr);
          }
        }
      };
      try { visit(win.document); } catch (e) { /* a document being replaced */ }
    };
    observe(win.document);
    Object.defineProperty(win, KEY, { value: t, configurable: true, enumerable: false, writable: false });
    if (!early) t.scan();
  }
  return { since: t.since, last: t.last, count: t.count, early: t.early, fresh: fresh };
}
