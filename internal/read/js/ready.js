// ready: one readiness observation of the page, for the Go side's wait loop.
// install is the tracker function (tracker.js); opts is JSON:
//   {css, text, url}  the explicit wait conditions ("" when not asked)
// Each observation also looks for open shadow roots the tracker does not watch
// yet. Every same-origin frame's document counts: the tracker is installed into
// each window that lacks one (reported as fresh), and the page is as loaded as
// its least loaded document and as quiet as its most recently changed one.
// Times are epoch milliseconds.
(install, opts) => {
  const KEY = Symbol.for('dtb.quiet');
  const rank = { loading: 0, interactive: 1, complete: 2 };
  const out = {
    now: 0, url: location.href, readyState: 'complete', since: 0, last: 0,
    fresh: false, early: false, loadEnd: 0, lastResource: 0, docs: 0,
  };
  const wins = [];
  const collect = (w) => {
    wins.push(w);
    for (let i = 0; i < w.frames.length; i++) {
      let f = null;
      try { f = w.frames[i]; void f.document.readyState; } catch (e) { f = null; }
      if (f) collect(f);
    }
  };
  collect(window);
  let loadMissing = false;
  for (const w of wins) {
    let t;
    try { t = install(false, w); } catch (e) { continue; }
    const doc = w.document;
    out.docs++;
    if (rank[doc.readyState] < rank[out.readyState]) out.readyState = doc.readyState;
    if (w === window) out.early = t.early;
    if (t.fresh) out.fresh = true;
    if (!t.fresh && w[KEY] && w[KEY].scan) w[KEY].scan();
    out.since = Math.max(out.since, t.since);
    out.last = Math.max(out.last, t.last);
    const perf = w.performance;
    const nav = perf.getEntriesByType('navigation')[0];
    if (nav && nav.loadEventEnd > 0) out.loadEnd = Math.max(out.loadEnd, perf.timeOrigin + nav.loadEventEnd);
    else if (doc.readyState === 'complete') out.loadEnd = Math.max(out.loadEnd, perf.timeOrigin + (nav ? nav.domComplete : 0));
    else loadMissing = true;
    const res = perf.getEntriesByType('resource');
    for (let i = res.length - 1; i >= 0 && i >= res.length - 50; i--) {
      const end = res[i].responseEnd || res[i].startTime;
      out.lastResource = Math.max(out.lastResource, perf.timeOrigin + end);
    }
  }
  if (loadMissing) out.loadEnd = 0;
  const cond = {};
  if (opts.css) {
    let el = null;
    try {
      el = document.querySelector(opts.css);
    } catch (e) {
      return { badSelector: String(e && e.message || e) };
    }
    cond.css = !!el && (el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0);
  }
  if (opts.text) {
    // Rendered text (innerText) of the documents, then of open shadow roots,
    // which innerText leaves out, as extract reads them too.
    const norm = (s) => s.replace(/\s+/g, ' ').trim();
    const want = norm(opts.text);
    const has = (el) => !!el && norm(el.innerText || '').includes(want);
    let found = false;
    for (const w of wins) {
      try { found = has(w.document.body); } catch (e) { found = false; }
      if (found) break;
    }
    const shadows = (root) => {
      const all = root.querySelectorAll('*');
      for (let i = 0; i < all.length && !found; i++) {
        const sr = all[i].shadowRoot;
        if (!sr) continue;
        const parts = [];
        for (let c = sr.firstChild; c; c = c.nextSibling) {
          if (c.nodeType === 1) parts.push(c.innerText || '');
          else if (c.nodeType === 3) parts.push(c.data);
        }
        if (norm(parts.join(' ')).includes(want)) found = true;
        else shadows(sr);
      }
    };
    for (const w of wins) {
      if (found) break;
      try { shadows(w.document); } catch (e) { /* a document going away */ }
    }
    cond.text = found;
  }
  if (opts.url) cond.url = location.href.includes(opts.url);
  out.cond = cond;
  out.now = performance.timeOrigin + performance.now();
  return out;
}
