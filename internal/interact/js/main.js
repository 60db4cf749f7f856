// main.js: the entry point. req.op names what to do; the result is a plain
// object returned by value, or (ops "element" and "frames") elements.

function pickOf(found, pick) {
  if (pick != null && pick >= 0) return pick < found.matches.length ? pick : -1;
  return found.matches.length === 1 ? 0 : -1;
}

function candidates(found, max) {
  return found.matches.slice(0, max).map(m => describe(m.el, false));
}

function scopeOf(req) {
  if (!req.scope) return null;
  const f = locateAll(req.scope, 'any', null);
  if (f.matches.length !== 1) return { error: f.matches.length ? 'ambiguous-scope' : 'no-scope', n: f.matches.length };
  return f.matches[0].el;
}

// withAct puts the action's result (awaited when it is a promise) and the
// target's description, taken after the action, into res; out shapes the answer.
function withAct(res, el, a, out) {
  const fin = function (v) {
    res.act = v;
    res.target = describe(el, true);
    return out(res);
  };
  return a && typeof a.then === 'function' ? a.then(fin) : fin(a);
}

// onRef runs req (op "ref") on el.
function onRef(req, el) {
  if (!el || el.nodeType !== 1 || !el.isConnected) return { stale: 'detached' };
  if (req.token && docToken(el.ownerDocument) !== req.token) return { stale: 'document' };
  const res = { n: 1, url: TOP_DOC.location ? TOP_DOC.location.href : '', token: docToken(TOP_DOC) };
  if (req.need === 'visible' && !visible(el)) { res.n = 0; res.hidden = 1; return res; }
  if (req.act) return withAct(res, el, runAction(el, req.act), r => r);
  res.target = describe(el, true);
  return res;
}

function dispatch(req) {
  switch (req.op) {
    case 'locate': {
      // Find; act only when the pick is certain: one match (or --nth) and no
      // frame in scope whose matches Go has not counted yet (req.final).
      const found = locateAll(req.loc, req.need, null);
      const res = { n: found.matches.length, url: TOP_DOC.location ? TOP_DOC.location.href : '', token: docToken(TOP_DOC) };
      if (found.hidden) res.hidden = found.hidden;
      if (found.frames.length) {
        res.frames = found.frames.map(f => contentBox(f.el).map(Math.round));
        res.slots = frameSlots(found);
      }
      if (res.n > 1 || req.cands) res.cands = candidates(found, req.cands || 5);
      const i = pickOf(found, req.pick);
      // deep: [JSON, frame elements…] for deep serialization, which gives Go
      // the frames' ids.
      const out = function (r) { return req.deep ? [JSON.stringify(r)].concat(found.frames.map(f => f.el)) : r; };
      if (req.act && i >= 0 && (!found.frames.length || req.final)) {
        const m = found.matches[i];
        const a = m.point && req.act.kind === 'point' ? { x: m.point.x, y: m.point.y } : runAction(m.el, req.act);
        return withAct(res, m.el, a, out);
      }
      return out(res);
    }
    case 'element': {
      const found = locateAll(req.loc, req.need, null);
      const i = pickOf(found, req.pick);
      if (i < 0) return { error: 'no-element', n: found.matches.length };
      let el = found.matches[i].el;
      if (req.control) el = fileInputOf(el) || el;
      return el;
    }
    case 'frames': {
      // The frame elements in scope, in the order of the frames of "locate".
      const found = req.loc ? locateAll(req.loc, req.need, null) : inspectFrames(req);
      return found.frames.map(f => f.el);
    }
    case 'ref': {
      // Called on the element a ref names (req.guard: on the document, on
      // the element of that kept key guard; req.after: once that element
      // has had so many input events, see guard.after).
      const g = req.guard ? keptGuard(req.guard) : null;
      if (g && req.after) {
        const early = () => {
          const r = onRef(req, g.field);
          return r && r.act && r.act.ok ? r : null;
        };
        return g.after(req.after, early).then(r => r || onRef(req, g.field));
      }
      return onRef(req, req.guard ? g && g.field : SELF);
    }
    case 'readbackFor':
      // A read-back sent before its focus call (req.rb: their token); drop:
      // that focus call will leave nothing.
      if (req.drop) {
        handReadBack(req.rb, { none: true });
        return '';
      }
      return readBackFor(req.rb);
    case 'keptRef':
      // The element a ref of a kept inspect names, or why it is gone.
      return keptRef(TOP_DOC, req.key, req.set, req.i);
    case 'refElement': {
      const el = SELF;
      if (!el || el.nodeType !== 1 || !el.isConnected) return { stale: 'detached' };
      if (req.token && docToken(el.ownerDocument) !== req.token) return { stale: 'document' };
      return req.control ? (fileInputOf(el) || el) : el;
    }
    case 'active': {
      // The focused element (through open shadow roots).
      let el = TOP_DOC.activeElement;
      while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
      const res = { n: 0, url: TOP_DOC.location ? TOP_DOC.location.href : '', token: docToken(TOP_DOC) };
      if (!el || el === TOP_DOC.body || el === TOP_DOC.documentElement) return res;
      res.n = 1;
      if (req.act) return withAct(res, el, runAction(el, req.act), r => r);
      res.target = describe(el, true);
      return res;
    }
    case 'page':
      return { n: 0, url: TOP_DOC.location ? TOP_DOC.location.href : '', token: docToken(TOP_DOC), act: runAction(null, req.act) };
    case 'frameBox': {
      // Called on a frame element: its viewport's box in its parent's
      // viewport, and its content box in its own box (see frameLocal).
      if (req.scroll) scrollIntoViewIfNeeded(SELF);
      return { box: contentBox(SELF), local: frameLocal(SELF) };
    }
    case 'hitCheck':
      // Called on the target; node is the element a hit test found.
      return hitCheck(SELF, node);
    case 'describe':
      return describe(SELF.nodeType === 1 ? SELF : cparent(SELF), false);
    case 'guard': {
      // A kept key guard (keepGuard): installed on the element called on
      // ("on"), checked, released (its waiting read-backs run) or ended.
      if (req.do === 'on') return keepGuard(SELF);
      const g = keptGuard(req.id);
      if (!g) return 'lost';
      if (req.do === 'end') {
        g.end();
        LIB.guards.delete(req.id);
        return '';
      }
      if (req.do === 'release') {
        g.release();
        return '';
      }
      return g.check();
    }
    case 'activeElement': {
      let el = TOP_DOC.activeElement;
      while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
      return el;
    }
    case 'inspect':
      return inspect(req);
    case 'annotate':
      return annotate(req);
    case 'annotateRemove':
      return { removed: annotateRemove() };
    case 'check':
      return waitCheck(req);
    case 'quiet':
      return quiet(req.ms, req.cap, req.frames || 0);
    case 'glance':
      return glance(TOP_DOC);
    case 'info': {
      const w = winOf(TOP_DOC);
      return { url: TOP_DOC.location ? TOP_DOC.location.href : '', token: docToken(TOP_DOC), readyState: TOP_DOC.readyState, title: TOP_DOC.title, scroll: [w.scrollX, w.scrollY] };
    }
  }
  throw usageError('unknown op ' + req.op);
}

return (function main() {
  try {
    // Whatever the op, the next command on this document should find its
    // frames known (see pageFramesIdle).
    if (TOP_DOC.defaultView) markFrames(TOP_DOC.defaultView);
    return dispatch(req || {});
  } catch (e) {
    if (e && e.dtbUsage) return { error: 'usage', message: e.message };
    if (e && e.dtbTimeout) return { error: 'timeout', message: e.message };
    throw e;
  }
})();
