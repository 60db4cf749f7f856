// inspect.js: the interactive elements of a document in order, each with a
// context (the nearest heading, or the label or first text of the card, row or
// list item it sits in) so that many identical buttons can be told apart.

const NATIVE_INTERACTIVE = new Set(['a', 'button', 'input', 'select', 'textarea', 'summary']);

function isInteractive(el) {
  const t = el.localName;
  if (t === 'input') return inputType(el) !== 'hidden';
  if (t === 'a') return el.hasAttribute('href') || el.hasAttribute('role');
  if (t === 'option' && el.closest('select')) return false;
  const r = roleOf(el);
  if (INTERACTIVE_ROLES.has(r)) return true;
  if (NATIVE_INTERACTIVE.has(t)) return true;
  if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return true;
  if (el.hasAttribute('tabindex') && el.tabIndex >= 0 && t !== 'iframe' && el !== el.ownerDocument.body) return true;
  return false;
}

// listed: what inspect shows. Hidden elements are left out, except file inputs
// (uploads target hidden ones) and visually hidden checkboxes and radios.
function listed(el) {
  if (axHidden(el)) {
    if (el.localName === 'input' && inputType(el) === 'file') return 'hidden';
    if (el.localName === 'input' && (inputType(el) === 'checkbox' || inputType(el) === 'radio') && labelsOf(el).some(visible)) return 'hidden';
    return null;
  }
  const r = rectOf(el);
  if (r.width <= 0 || r.height <= 0) {
    if (el.localName === 'input') return 'hidden';
    return null;
  }
  return 'visible';
}

const HEADING_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const CONTAINER_LABEL_ROLES = new Set(['group', 'region', 'dialog', 'alertdialog', 'navigation', 'form', 'listitem', 'row', 'article', 'tabpanel',
  'menu', 'menubar', 'toolbar', 'list', 'listbox', 'table', 'grid', 'tree', 'radiogroup', 'tablist', 'search', 'complementary', 'banner', 'contentinfo', 'main']);

// contextOf: the nearest telling label around el that is not its own name.
function makeContext(root) {
  const headingsBelow = new Map(); // ancestor → headings inside it, in document order
  const ords = new Map();
  const heads = []; // every heading, in document order
  // lastBefore: the last heading of list (in document order) before ordinal
  // o, by binary search: the context of every element costs a logarithm,
  // not a pass over the document's headings (a flat page of thousands).
  // Headings inside el come after it, so none of them is found.
  const lastBefore = function (list, o) {
    let lo = 0, hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ords.get(list[mid]) < o) lo = mid + 1; else hi = mid;
    }
    return lo > 0 ? list[lo - 1] : null;
  };
  const firstText = new Map(); // element → first visible non-interactive text inside it
  return {
    enter: function (el, o) {
      if (HEADING_TAGS.has(el.localName) || el.getAttribute('role') === 'heading') {
        ords.set(el, o);
        heads.push(el);
        for (let n = cparent(el); n; n = cparent(n)) {
          let l = headingsBelow.get(n);
          if (!l) { l = []; headingsBelow.set(n, l); }
          l.push(el);
        }
      }
    },
    leave: function (el) {
      if (isInteractive(el)) { firstText.set(el, ''); return; }
      let t = '';
      const scan = function (list) {
        for (const c of list) {
          if (t) return;
          if (c.nodeType === 3) {
            if (norm(c.data) && rendered(el)) t = norm(c.data);
          } else if (c.nodeType === 1) {
            // A label of a control names that control, not the container:
            // in a form, the first field's label is no context of the next.
            if (c.localName === 'label' && c.control) continue;
            const ct = firstText.get(c);
            if (ct) t = ct;
          }
        }
      };
      if (el.shadowRoot) scan(el.shadowRoot.childNodes);
      scan(el.childNodes);
      firstText.set(el, t);
    },
    of: function (el, o, name) {
      const own = norm(name).toLowerCase();
      const ok = function (s) { s = norm(s); return s && s.toLowerCase() !== own ? s : ''; };
      let depth = 0;
      for (let a = cparent(el); a && depth < 10; a = cparent(a), depth++) {
        if (a.localName === 'body' || a.localName === 'html') break;
        const r = roleOf(a);
        if (CONTAINER_LABEL_ROLES.has(r) || a.localName === 'fieldset' || a.localName === 'label') {
          const al = ok(a.getAttribute('aria-label'));
          if (al) return al;
          const lb = a.getAttribute('aria-labelledby');
          if (lb) {
            const s = ok(lb.trim().split(/\s+/).map(id => { const x = byId(a, id); return x ? x.textContent : ''; }).join(' '));
            if (s) return s;
          }
          if (a.localName === 'fieldset') {
            const lg = Array.from(a.children).find(c => c.localName === 'legend');
            const s = lg ? ok(lg.textContent) : '';
            if (s) return s;
          }
        }
        const hs = headingsBelow.get(a);
        if (hs && hs.length) {
          let best = lastBefore(hs, o);
          if (!best && hs.length === 1 && !ccontains(el, hs[0])) best = hs[0];
          if (best) {
            // A heading equal to the element's own name still names the card
            // (the element is its title link).
            const s = norm(best.textContent);
            if (s) return s;
          }
        }
        const ft = ok(firstText.get(a));
        if (ft) return ft;
      }
      // Last resort: the nearest heading before el in the document.
      const best = lastBefore(heads, o);
      return best ? ok(best.textContent) : '';
    },
  };
}

function inspectScope(req) {
  if (!req.in) return TOP_DOC;
  const f = locateAll(req.in, 'any', null);
  if (f.matches.length !== 1) {
    const e = usageError(f.matches.length ? '--in matches ' + f.matches.length + ' elements' : '--in matches nothing');
    e.dtbScope = f.matches.length;
    throw e;
  }
  return f.matches[0].el;
}

// inspectFound: the listed elements and frames in scope, as "locate" finds
// matches (so that --within works the same way).
function inspectFound(req) {
  const root = inspectScope(req);
  const matches = [];
  const frames = [];
  const cx = makeContext(root);
  const all = [];
  // The context needs the whole document (headings before the scope count).
  walk(TOP_DOC, function (el, o) {
    cx.enter(el, o);
    all.push({ el: el, ord: o });
  }, function (el) { cx.leave(el); }, function (el, o) { frames.push({ el: el, ord: o }); });
  for (const m of all) {
    overBudget();
    if (root !== TOP_DOC && !ccontains(root, m.el)) continue;
    if (!isInteractive(m.el)) continue;
    const vis = listed(m.el);
    if (!vis) continue;
    m.vis = vis;
    matches.push(m);
  }
  let found = { matches: matches, frames: frames.filter(f => (root === TOP_DOC || ccontains(root, f.el)) && visible(f.el)) };
  if (req.within) found = applyWithin(found, req.within, root, true);
  found.cx = cx;
  return found;
}

function inspectFrames(req) {
  return inspectFound(req);
}

function inspect(req) {
  const found = inspectFound(req);
  const items = [];
  for (const m of found.matches) {
    overBudget();
    const el = m.el;
    const role = roleOf(el) || 'generic';
    const name = clip(accName(el), 80);
    const it = { role: role, tag: el.localName };
    if (name) it.name = name;
    Object.assign(it, statesOf(el, role));
    if (m.vis === 'hidden') it.hidden = true;
    it.box = boxOf(el);
    const c = found.cx.of(el, m.ord, name);
    if (c) it.ctx = clip(c, 60);
    items.push(it);
  }
  const res = { items: items, url: TOP_DOC.location ? TOP_DOC.location.href : '', title: TOP_DOC.title, token: docToken(TOP_DOC) };
  if (found.frames.length) {
    res.frames = found.frames.map(f => contentBox(f.el).map(Math.round));
    res.slots = frameSlots(found);
  }
  if (req.keep) {
    // The listed elements stay with the document, for refs to name by index:
    // deep-serializing thousands of nodes to learn their ids costs more than
    // the whole walk. Only the frames travel as nodes.
    res.set = keepRefs(TOP_DOC, req.keep, found.matches.map(m => m.el));
    if (res.set) return [JSON.stringify(res)].concat(found.frames.map(f => f.el));
  }
  if (req.nodes) return [JSON.stringify(res)].concat(found.matches.map(m => m.el), found.frames.map(f => f.el));
  return res;
}

// keepRefs leaves els on doc under key (a non-enumerable property) as weak
// references, so refs never keep removed elements alive, and returns the
// set's id ('' when the document refuses the property). The last few sets
// stay, so that sessions inspecting one tab do not end each other's refs.
function keepRefs(doc, key, els) {
  let kept = Object.prototype.hasOwnProperty.call(doc, key) ? doc[key] : null;
  if (!kept || !(kept.sets instanceof Map)) {
    kept = { sets: new Map() };
    try {
      Object.defineProperty(doc, key, { value: kept });
    } catch (e) {
      return '';
    }
    if (doc[key] !== kept) return '';
  }
  const id = Date.now().toString(36) + '.' + Math.random().toString(36).slice(2);
  kept.sets.set(id, els.map(el => new WeakRef(el)));
  while (kept.sets.size > KEPT_SETS) kept.sets.delete(kept.sets.keys().next().value);
  return id;
}

const KEPT_SETS = 8;

// keptRef is element i of the kept set named set, or why there is none.
function keptRef(doc, key, set, i) {
  const kept = Object.prototype.hasOwnProperty.call(doc, key) ? doc[key] : null;
  const refs = kept && kept.sets instanceof Map ? kept.sets.get(set) : null;
  if (!refs) return 'lost';
  const r = refs[i];
  const el = r ? r.deref() : null;
  if (!el || el.nodeType !== 1 || !el.isConnected) return 'detached';
  return el;
}
