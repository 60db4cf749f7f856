// wait.js: DOM quietness. quiet(ms, cap) resolves once the document has had no
// mutation for ms milliseconds, or when cap milliseconds have passed.

function quiet(ms, cap) {
  const doc = TOP_DOC;
  const w = winOf(doc);
  const start = w.performance.now();
  return new Promise(function (resolve) {
    let last = start;
    let count = 0;
    let timer = null;
    const obs = new w.MutationObserver(function (list) {
      count += list.length;
      last = w.performance.now();
      arm();
    });
    const finish = function (ok) {
      obs.disconnect();
      clearTimeout(timer);
      clearTimeout(capTimer);
      let el = doc.activeElement;
      while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
      const res = { quiet: ok, quietMs: Math.round(last - start), waitedMs: Math.round(w.performance.now() - start), mutations: count, url: doc.location ? doc.location.href : '', token: docToken(doc) };
      if (el && el !== doc.body && el !== doc.documentElement) res.active = statesOf(el, roleOf(el));
      resolve(res);
    };
    const arm = function () {
      clearTimeout(timer);
      timer = setTimeout(function () { finish(true); }, ms);
    };
    obs.observe(doc, { subtree: true, childList: true, attributes: true, characterData: true });
    const capTimer = setTimeout(function () { finish(false); }, Math.max(cap, ms));
    arm();
  });
}

function waitCheck(req) {
  return { url: TOP_DOC.location ? TOP_DOC.location.href : '', readyState: TOP_DOC.readyState, token: docToken(TOP_DOC) };
}
