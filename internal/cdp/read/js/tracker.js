// tracker: remembers when a document's DOM last changed, so that a later dtb
// command can tell how long the page has been quiet instead of starting to
// watch it from scratch. It is installed two ways: as a new-document script
// (early = true: it sees the document from its first node on) and by an
// immediate evaluation into a document that is already there (early = false:
// what happened before that moment is unknown). Installing twice is harmless:
// the second call only reports the state.
//
// A mutation is any childList, characterData or attribute change in the
// document or in a shadow root (attachShadow is wrapped so new roots are
// watched; existing open roots are found on the first install), except changes
// of the style attribute alone: script-driven animations rewrite it every frame
// and do not change what there is to read.
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
    t = { since: now(), last: 0, count: 0, early: !!early, roots: null, scan: null };
    const watched = new WeakSet();
    const mo = new win.MutationObserver((records) => {
      for (let i = 0; i < records.length; i++) {
        const r = records[i];
        if (r.type === 'attributes' && r.attributeName === 'style') continue;
        t.last = now();
        t.count++;
        return;
      }
    });
    const opts = { subtree: true, childList: true, characterData: true, attributes: true };
    const observe = (root) => {
      if (root && !watched.has(root)) {
        watched.add(root);
        mo.observe(root, opts);
      }
    };
    // scan finds open shadow roots made before the tracker (or by the parser,
    // which does not call attachShadow).
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
    const proto = win.Element && win.Element.prototype;
    const orig = proto && proto.attachShadow;
    if (orig) {
      proto.attachShadow = function attachShadow(init) {
        const root = orig.call(this, init);
        try { observe(root); } catch (e) { /* never break the page */ }
        return root;
      };
    }
    Object.defineProperty(win, KEY, { value: t, configurable: true, enumerable: false, writable: false });
    if (!early) t.scan();
  }
  return { since: t.since, last: t.last, count: t.count, early: t.early, fresh: fresh };
}
