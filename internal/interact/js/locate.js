// locate.js: the locators. One walk of the document (open shadow roots
// included) finds every match; the frames in scope are reported so that Go
// searches each frame's document through its own context.

function usageError(msg) {
  const e = new Error(msg);
  e.dtbUsage = true;
  return e;
}

function checkSelector(css) {
  try { TOP_DOC.createDocumentFragment().querySelector(css); } catch (e) {
    throw usageError('invalid CSS selector ' + JSON.stringify(css) + ': ' + e.message);
  }
}

// The text of elements, bottom-up, for --text and --within: visible text only,
// block children padded with spaces. Returns the deepest elements whose text
// matches (an element whose descendant matches is left out).
function textMatches(root, needle, exact) {
  const texts = new Map();
  const dead = new Set();
  const below = new Set();
  const out = [];
  walk(root, function (el) {
    const p = cparent(el);
    if ((p && dead.has(p)) || !laidOut(el)) dead.add(el);
  }, function (el, o) {
    if (dead.has(el)) { texts.set(el, ''); return; }
    let hid = null;
    let t = '';
    let m = false;
    const add = function (list) {
      for (const c of list) {
        if (c.nodeType === 3) {
          if (hid === null) hid = !rendered(el);
          if (!hid) t += c.data;
          continue;
        }
        if (c.nodeType !== 1) continue;
        const ct = texts.get(c);
        if (ct === undefined) continue;
        if (below.has(c)) m = true;
        t += INLINE.has(c.localName) ? ct : ' ' + ct + ' ';
      }
    };
    if (el.shadowRoot) add(el.shadowRoot.childNodes);
    add(el.childNodes);
    if (el.localName === 'input' && rendered(el)) {
      const ty = inputType(el);
      if (ty === 'button' || ty === 'submit' || ty === 'reset') t += ' ' + (el.value || '') + ' ';
    }
    texts.set(el, t);
    if (m) { below.add(el); return; }
    if (textMatch(t, needle, exact) && norm(t)) {
      out.push({ el: el, ord: o });
      below.add(el);
    }
  }, null);
  return out;
}

// Interactive ancestors a text match is promoted to, so that --text 'Save'
// reports (and acts on) the button, not the span inside it.
function interactiveAncestor(el, stop) {
  for (let n = el; n && n !== stop; n = cparent(n)) {
    if (n.nodeType !== 1) continue;
    const r = roleOf(n);
    if (INTERACTIVE_ROLES.has(r) || n.localName === 'label' || n.localName === 'summary') return n;
  }
  return el;
}

function labelTexts(el) {
  const out = [];
  const al = el.getAttribute('aria-label');
  if (al) out.push(al);
  const ids = (el.getAttribute('aria-labelledby') || '').trim();
  if (ids) {
    const parts = [];
    for (const id of ids.split(/\s+/)) {
      const r = byId(el, id);
      if (r) parts.push(norm(r.textContent));
    }
    if (parts.length) out.push(parts.join(' '));
  }
  for (const l of labelsOf(el)) out.push(contentName(l, { visited: new Set([el]), root: false, labelledBy: false, descendant: true }));
  return out;
}

// matchesIn: every element under root the locator matches, in document order,
// plus the cross-origin frames in the subtree.
function matchesIn(loc, root) {
  const out = [];
  const frames = [];
  const onFrame = function (el, o) { frames.push({ el: el, ord: o }); };
  if (loc.text != null && loc.text !== '') {
    const seen = new Set();
    for (const m of textMatches(root, loc.text, loc.exact)) {
      const el = interactiveAncestor(m.el, null);
      if (seen.has(el)) continue;
      seen.add(el);
      out.push({ el: el, ord: m.ord });
    }
    walk(root, null, null, onFrame);
    return { matches: out, frames: frames };
  }
  let test;
  if (loc.css) {
    checkSelector(loc.css);
    test = function (el) { return el.matches(loc.css); };
  } else if (loc.role) {
    const want = canonRole(loc.role);
    test = function (el) {
      const r = roleOf(el);
      if (!r || canonRole(r) !== want) return false;
      if (axHidden(el)) return false;
      if (loc.name != null && loc.name !== '') return textMatch(accName(el), loc.name, loc.exact);
      return true;
    };
  } else if (loc.label != null && loc.label !== '') {
    test = function (el) {
      const t = el.localName;
      if (!(el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || ((t === 'input' && inputType(el) !== 'hidden') || t === 'select' || t === 'textarea' || t === 'button' || t === 'meter' || t === 'output' || t === 'progress'))) return false;
      for (const s of labelTexts(el)) if (textMatch(s, loc.label, loc.exact)) return true;
      return false;
    };
  } else if (loc.placeholder != null && loc.placeholder !== '') {
    test = function (el) {
      const p = el.getAttribute('placeholder') || el.getAttribute('aria-placeholder');
      return p != null && textMatch(p, loc.placeholder, loc.exact);
    };
  } else {
    throw usageError('no locator: give --css, --text, --role, --label, --placeholder, --ref or --x/--y');
  }
  walk(root, function (el, o) {
    if (test(el)) out.push({ el: el, ord: o });
  }, null, onFrame);
  return { matches: out, frames: frames };
}

// applyWithin keeps the matches inside the smallest element that contains both
// the text and a match. A match that itself contains the text wins; an exact
// text match wins over a longer look-alike.
function applyWithin(found, text, root, forInspect) {
  let ts = textMatches(root, text, false);
  const exact = ts.filter(t => norm(textOfEl(t.el)).toLowerCase() === norm(text).toLowerCase());
  if (exact.length) ts = exact;
  const anc = new Map(); // ancestor → matches below it
  for (const m of found.matches) {
    for (let n = m.el; n; n = cparent(n)) {
      let l = anc.get(n);
      if (!l) { l = []; anc.set(n, l); }
      l.push(m);
    }
  }
  const keep = new Set();
  const keepFrames = new Set();
  for (const t of ts) {
    if (!forInspect) {
      // A match that contains the text.
      let inner = null;
      for (let n = t.el; n; n = cparent(n)) {
        const l = anc.get(n);
        if (l && l.some(m => m.el === n)) { inner = n; break; }
      }
      if (inner) { for (const m of found.matches) if (m.el === inner) keep.add(m); continue; }
    }
    let c = null;
    for (let n = t.el; n; n = cparent(n)) {
      const l = anc.get(n);
      if (l && l.some(m => !ccontains(m.el, t.el) && !ccontains(t.el, m.el))) { c = n; break; }
    }
    if (!c && forInspect) {
      for (let n = t.el; n; n = cparent(n)) { if (anc.get(n)) { c = n; break; } }
    }
    if (!c) continue;
    for (const m of anc.get(c)) keep.add(m);
    for (const f of found.frames) if (ccontains(c, f.el)) keepFrames.add(f);
  }
  return {
    matches: found.matches.filter(m => keep.has(m)),
    frames: found.frames.filter(f => keepFrames.has(f)),
  };
}

function textOfEl(el) {
  return el.innerText != null ? el.innerText : el.textContent;
}

// locateAll: the locator's matches in the call's document (or under scope),
// filtered by --within and by what the action needs, with the frames in scope.
function locateAll(loc, need, scope) {
  const root = scope || TOP_DOC;
  if (loc.x != null && loc.y != null) {
    const p = viewportPoint(loc);
    const hit = deepHit(TOP_DOC, p.x, p.y);
    return { matches: hit ? [{ el: hit, ord: 0, point: p }] : [], frames: [], hidden: 0 };
  }
  let found = matchesIn(loc, root);
  if (loc.within != null && loc.within !== '') found = applyWithin(found, loc.within, root, false);
  let hidden = 0;
  if (need === 'visible') {
    const vis = found.matches.filter(m => visible(m.el));
    hidden = found.matches.length - vis.length;
    found.matches = vis;
  }
  found.frames = found.frames.filter(f => visible(f.el));
  found.hidden = hidden;
  return found;
}

// viewportPoint turns --x/--y into a point of the viewport; document
// coordinates first scroll the page so that the point is in view.
function viewportPoint(loc) {
  const w = winOf(TOP_DOC);
  let x = +loc.x;
  let y = +loc.y;
  if (loc.document) {
    if (x < w.scrollX || x >= w.scrollX + w.innerWidth || y < w.scrollY || y >= w.scrollY + w.innerHeight) {
      w.scrollTo({ left: Math.max(0, x - w.innerWidth / 2), top: Math.max(0, y - w.innerHeight / 2), behavior: 'instant' });
    }
    x -= w.scrollX;
    y -= w.scrollY;
  }
  return { x: x, y: y };
}

// deepHit: the element at a viewport point, piercing open shadow roots. For a
// point over a frame it is the frame element.
function deepHit(doc, x, y) {
  let e = doc.elementFromPoint(x, y);
  for (let guard = 0; e && e.shadowRoot && guard < 64; guard++) {
    const inner = e.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === e || !ccontains(e, inner)) break;
    e = inner;
  }
  return e;
}

// frameSlots: for each frame in scope, how many matches come before it in
// document order, so that Go merges the frame's matches in the right place.
function frameSlots(found) {
  return found.frames.map(f => found.matches.filter(m => m.ord < f.ord).length);
}
