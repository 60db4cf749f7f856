// wait.js: DOM quietness. quiet(ms, cap, frames) resolves once the document has
// had no mutation for ms milliseconds, or (frames > 0) across that many
// consecutive animation frames (or across one, when the page asked for no
// frame) and its main thread then went idle, whichever comes first, or when
// cap milliseconds have passed. A hidden page runs no animation frames: only
// ms applies there.

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
      const res = glance(doc);
      Object.assign(res, { quiet: ok, quietMs: Math.round(last - start), waitedMs: Math.round(w.performance.now() - start), mutations: count });
      if (idle) res.idle = true;
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
      let idleAsked = false;
      // The DOM stayed unchanged over enough frames: two, or one when the page
      // asked for no frame since our last request (a document's frame request
      // ids count up, whichever world asks: a gap is a request of the page's).
      // It is idle once, with the DOM still unchanged, its main thread has
      // no task queued (requestIdleCallback: a render that yields between
      // tasks holds it) and it has asked for no frame since our last request
      // (that frame's callback runs after ours: it is seen at the next one).
      const tick = function (t, quiet) {
        if (done) return;
        if (count === seen) clean++;
        else { clean = 0; seen = count; }
        asked = askFrame(w, tick);
        const enough = clean >= frames || (clean === 1 && quiet);
        if (!enough || idleAsked) return;
        if (typeof w.requestIdleCallback !== 'function') {
          if (clean >= frames) finish(true, true);
          return;
        }
        idleAsked = true;
        const at = count;
        w.requestIdleCallback(function () {
          idleAsked = false;
          if (done || count !== at) return;
          if (probeMark(w) === asked + 1) finish(true, true);
        });
      };
      asked = askFrame(w, tick);
    }
  });
}

// glance: the document's URL and the states of its focused element (through
// open shadow roots), as an action left them.
function glance(doc) {
  const res = { url: doc.location ? doc.location.href : '', token: docToken(doc) };
  const el = deepActive(doc);
  if (el && el !== doc.body && el !== doc.documentElement) res.active = statesOf(el, roleOf(el));
  const clicks = browserClicks(winOf(doc));
  if (clicks) res.clicks = clicks;
  return res;
}

function waitCheck(req) {
  return { url: TOP_DOC.location ? TOP_DOC.location.href : '', readyState: TOP_DOC.readyState, token: docToken(TOP_DOC) };
}
