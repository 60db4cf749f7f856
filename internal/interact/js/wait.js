// wait.js: DOM quietness. quiet(ms, cap, frames) resolves once the document has
// had no mutation for ms milliseconds, or (frames > 0) across that many
// consecutive animation frames (or across one, when the page asked for no
// frame and its main thread then went idle), whichever comes first, or when
// cap milliseconds have passed. A hidden page runs no animation frames: only ms applies there.

function quiet(ms, cap, frames) {
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
    let done = false;
    const finish = function (ok, idle) {
      if (done) return;
      done = true;
      obs.disconnect();
      clearTimeout(timer);
      clearTimeout(capTimer);
      let el = doc.activeElement;
      while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
      const res = { quiet: ok, quietMs: Math.round(last - start), waitedMs: Math.round(w.performance.now() - start), mutations: count, url: doc.location ? doc.location.href : '', token: docToken(doc) };
      if (idle) res.idle = true;
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
    if (frames > 0 && typeof w.requestAnimationFrame === 'function') {
      // Mutations reach the observer as microtasks, so by a frame's callback
      // every change made before it is counted.
      let seen = count;
      let clean = 0;
      let asked = null; // the id of our last frame request
      const tick = function () {
        if (done) return;
        if (count === seen) clean++;
        else { clean = 0; seen = count; }
        if (clean >= frames) { finish(true, true); return; }
        const prev = asked;
        asked = w.requestAnimationFrame(tick);
        // One clean frame is enough when the page asked for no frame of its
        // own since our last request (frame request ids count up per
        // document, whichever world asks): nothing waits for the next frame.
        // The main thread must then go idle (no task queued, as when a
        // render yields between tasks) with the DOM still unchanged.
        if (clean === 1 && typeof prev === 'number' && asked === prev + 1 && typeof w.requestIdleCallback === 'function') {
          const at = count;
          w.requestIdleCallback(function () {
            if (done || count !== at) return;
            // Nor a frame asked for since that request.
            const probe = w.requestAnimationFrame(function () {});
            w.cancelAnimationFrame(probe);
            if (probe === asked + 1) finish(true, true);
          });
        }
      };
      asked = w.requestAnimationFrame(tick);
    }
  });
}

function waitCheck(req) {
  return { url: TOP_DOC.location ? TOP_DOC.location.href : '', readyState: TOP_DOC.readyState, token: docToken(TOP_DOC) };
}
