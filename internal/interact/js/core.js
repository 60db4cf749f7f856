// core.js: shared helpers of dtb's page-side library. The Go side joins the
// files of js/ into one function body `function (req) { … }` called with
// Runtime.callFunctionOn on a document (or, for a ref, on an element), with req
// passed as a JSON argument. Nothing here is built from page or user text.

const SELF = this;
// The document the call works in: the object it was called on, the owner
// document of an element (refs), or the global document of the context.
const TOP_DOC = SELF && SELF.nodeType === 9 ? SELF : (SELF && SELF.nodeType === 1 ? SELF.ownerDocument : document);

// ---- text ---------------------------------------------------------------

function norm(s) {
  return String(s == null ? '' : s).replace(/[\u200b\u200c\u200d\ufeff]/g, '').replace(/\s+/g, ' ').trim();
}

// textMatch: substring, case-insensitive, whitespace-normalised; exact: the whole
// normalised string, case-sensitive.
function textMatch(hay, needle, exact) {
  const h = norm(hay);
  const n = norm(needle);
  if (exact) return h === n;
  return h.toLowerCase().includes(n.toLowerCase());
}

function clip(s, n) {
  s = norm(s);
  n = n || 80;
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

// ---- tree ---------------------------------------------------------------

// The call's time: Go passes what is left of the command's deadline
// (req.budget, ms), and the long walks stop at it, so a command that gave up
// does not leave the page busy for seconds after it.
const STOP_AT = req && req.budget > 0 ? performance.now() + req.budget : Infinity;
let budgetTicks = 0;
function overBudget() {
  if ((++budgetTicks & 255) !== 0 || performance.now() <= STOP_AT) return;
  const e = new Error('the page-side work ran out of the command\'s time');
  e.dtbTimeout = true;
  throw e;
}

const SKIP_TAGS = new Set(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title', 'base']);

function winOf(node) {
  const d = node.nodeType === 9 ? node : node.ownerDocument;
  return (d && d.defaultView) || window;
}

// ---- animation frames ---------------------------------------------------

// A document hands out requestAnimationFrame ids in order, whichever script
// (or world) asks, so an id one past dtb's last proves that the page asked
// for no frame in between. frameMark(w) is what dtb knows of window w: id,
// the last id dtb got there; clean, that no frame callback of the page's was
// pending then and the window had not scrolled since the mark before (a
// smooth scroll moves the page in every frame without asking for one); x and
// y, its scroll position then; scrolls, the scroll events of the window and
// of every scroll container in it seen by then (a capture listener sees
// them all, from the mark's first call on). It lives on the library the
// document keeps (LIB), so one command leaves it to the next; without one
// nothing is known.
function frameMark(w) {
  if (typeof LIB !== 'function') return { id: -1, clean: false, asked: false, x: 0, y: 0, scrolls: 0, seen: { n: 0 } };
  const marks = LIB.frameMarks || (LIB.frameMarks = new WeakMap());
  let m = marks.get(w);
  if (!m) {
    const seen = { n: 0 };
    w.addEventListener('scroll', function () { seen.n++; }, true);
    m = { id: -1, clean: false, asked: false, x: w.scrollX, y: w.scrollY, scrolls: 0, seen: seen };
    marks.set(w, m);
  }
  return m;
}

// stillSince says whether nothing in w scrolled since the mark (its scroll
// position and its scroll events), and marks the current state.
function stillSince(m, w) {
  const still = w.scrollX === m.x && w.scrollY === m.y && m.seen.n === m.scrolls;
  m.x = w.scrollX;
  m.y = w.scrollY;
  m.scrolls = m.seen.n;
  return still;
}

function noFrame() {}

// frameProbe asks w for a frame and cancels it at once: the id the request
// got, which costs the page nothing.
function frameProbe(w) {
  const id = w.requestAnimationFrame(noFrame);
  w.cancelAnimationFrame(id);
  return id;
}

// probeMark is frameProbe that keeps w's mark: still clean when the page
// asked for no frame since dtb's last id.
function probeMark(w) {
  const m = frameMark(w);
  const id = frameProbe(w);
  m.clean = stillSince(m, w) && m.clean && id === m.id + 1;
  m.id = id;
  return id;
}

// pageFramesIdle reports whether w has no frame callback of the page's
// pending: the mark was clean and the page asked for no frame since. Then
// nothing the page runs per frame can move or change anything before its
// next task. A hidden document runs no frames: nothing is known there.
function pageFramesIdle(w) {
  if (typeof w.requestAnimationFrame !== 'function' || w.document.visibilityState === 'hidden') return false;
  probeMark(w);
  return frameMark(w).clean;
}

// askFrame is requestAnimationFrame for dtb's own callback cb(time, quiet),
// where quiet says that the page asked for no frame since this request. Then
// none of its callbacks is pending: those asked for earlier ran in this
// frame, before dtb's, and the mark is clean again. Returns the request's id.
function askFrame(w, cb) {
  const m = frameMark(w);
  const id = w.requestAnimationFrame(function (t) {
    m.asked = false;
    const probe = frameProbe(w);
    const quiet = probe === id + 1;
    // A dtb id since this request (another call's) keeps its own mark.
    m.clean = stillSince(m, w) && probe === m.id + 1 && (m.id === id || m.clean);
    m.id = probe;
    cb(t, quiet);
  });
  m.clean = stillSince(m, w) && m.clean && id === m.id + 1;
  m.id = id;
  m.asked = true;
  return id;
}

// markFrames leaves a frame request that marks w when nothing is known of
// it, so that the next command finds its frames known (see pageFramesIdle).
function markFrames(w) {
  if (typeof w.requestAnimationFrame !== 'function') return;
  const m = frameMark(w);
  if (!m.clean && !m.asked && typeof LIB === 'function') askFrame(w, noFrame);
}

// browserClicks(w) counts the clicks that reach a file input of window w
// (files: a label's, a script's input.click()) or a link with a download
// attribute (downloads: also one a script clicks), from the first call that
// asks on (the listener is kept with the library, as frameMark). The browser
// reports the chooser or the download such a click starts in its own time,
// after dtb's next call to the page can have answered. Null without a kept
// library.
function browserClicks(w) {
  if (typeof LIB !== 'function') return null;
  const all = LIB.browserClicks || (LIB.browserClicks = new WeakMap());
  let s = all.get(w);
  if (!s) {
    s = { files: 0, downloads: 0 };
    w.addEventListener('click', function (e) {
      const path = e.composedPath();
      const t = path[0];
      if (t && t.localName === 'input' && t.type === 'file') s.files++;
      if (path.some(function (n) { return n.localName === 'a' && n.hasAttribute('download'); })) s.downloads++;
    }, true);
    all.set(w, s);
  }
  return { files: s.files, downloads: s.downloads };
}

// afterTasks runs fn two task hops later: past the current task (an event
// and its default action) and the zero-delay timers set in it.
function afterTasks(w, fn) {
  try {
    w.setTimeout(function () { try { w.setTimeout(fn, 0); } catch (x) { fn(); } }, 0);
  } catch (x) {
    fn();
  }
}

// The composed parent: the parent element or the shadow host.
function cparent(node) {
  if (node.parentNode) {
    const p = node.parentNode;
    if (p.nodeType === 11 && p.host) return p.host;
    return p.nodeType === 1 ? p : null;
  }
  return null;
}

// ccontains: a contains b across shadow roots.
function ccontains(a, b) {
  for (let n = b; n; n = cparent(n)) if (n === a) return true;
  return false;
}

// walk visits every element under root in document order, entering open shadow
// roots right after their host. Frames are not entered: frame(el, ord, idx)
// sees each frame element, and Go searches its document in its own context
// (same-origin or not), so every frame has a real CDP frame id. Ordinals and
// frame indexes depend only on the DOM, so two walks agree.
function walk(root, enter, leave, frame) {
  let ord = 0;
  let frameIdx = 0;
  function visit(el) {
    overBudget();
    const tag = el.localName;
    if (SKIP_TAGS.has(tag)) return;
    const o = ord++;
    if (enter) enter(el, o);
    if (el.shadowRoot) rec(el.shadowRoot);
    if (tag === 'iframe' || tag === 'frame') {
      if (frame) frame(el, o, frameIdx++);
    } else {
      rec(el);
    }
    if (leave) leave(el, o);
  }
  function rec(parent) {
    for (let el = parent.firstElementChild; el; el = el.nextElementSibling) visit(el);
  }
  if (root.nodeType === 1) visit(root);
  else rec(root);
}

// contentBox: the box of a frame's viewport in its parent's viewport.
function contentBox(iframe) {
  const r = iframe.getBoundingClientRect();
  const cs = winOf(iframe).getComputedStyle(iframe);
  const pl = parseFloat(cs.paddingLeft) || 0;
  const pt = parseFloat(cs.paddingTop) || 0;
  const pr = parseFloat(cs.paddingRight) || 0;
  const pb = parseFloat(cs.paddingBottom) || 0;
  return [r.left + iframe.clientLeft + pl, r.top + iframe.clientTop + pt, iframe.clientWidth - pl - pr, iframe.clientHeight - pt - pb];
}

// ---- visibility ---------------------------------------------------------

// isContents: display: contents. Such an element has no box of its own: its
// children's boxes stand for it (checkVisibility and getClientRects say
// nothing about it).
function isContents(el) {
  return el.nodeType === 1 && winOf(el).getComputedStyle(el).display === 'contents';
}

// clientRects: the element's boxes; for display: contents, its children's
// (text runs included).
function clientRects(el) {
  const own = Array.from(el.getClientRects());
  if (own.length || !isContents(el)) return own;
  const out = [];
  for (const c of flatChildren(el)) {
    if (c.nodeType === 1) {
      if (!SKIP_TAGS.has(c.localName)) out.push(...clientRects(c));
    } else if (c.nodeType === 3 && norm(c.data)) {
      const r = el.ownerDocument.createRange();
      r.selectNodeContents(c);
      out.push(...Array.from(r.getClientRects()));
    }
  }
  return out;
}

// rectOf: the bounding box (the union of the children's for display: contents).
function rectOf(el) {
  const r = el.getBoundingClientRect();
  if (r.width || r.height || !isContents(el)) return r;
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const c of clientRects(el)) {
    if (!c.width && !c.height) continue;
    x0 = Math.min(x0, c.left); y0 = Math.min(y0, c.top); x1 = Math.max(x1, c.right); y1 = Math.max(y1, c.bottom);
  }
  if (x0 === Infinity) return r;
  return { left: x0, top: y0, right: x1, bottom: y1, width: x1 - x0, height: y1 - y0, x: x0, y: y0 };
}

// rendered: the element has a layout box and is not visibility:hidden.
function rendered(el) {
  if (el.checkVisibility) {
    if (el.checkVisibility({ visibilityProperty: true })) return true;
    return isContents(el) && winOf(el).getComputedStyle(el).visibility !== 'hidden' && clientRects(el).length > 0;
  }
  const cs = winOf(el).getComputedStyle(el);
  return cs.display !== 'none' && cs.visibility !== 'hidden' && clientRects(el).length > 0;
}

// laidOut: the element generates boxes (display:none anywhere above it is false).
function laidOut(el) {
  if (el.checkVisibility && el.checkVisibility()) return true;
  return clientRects(el).length > 0;
}

// visible: rendered with a non-empty box.
function visible(el) {
  if (!rendered(el)) return false;
  const r = rectOf(el);
  return r.width > 0 && r.height > 0;
}

// axHidden: excluded from the accessibility tree (aria-hidden, inert, not rendered).
function axHidden(el) {
  for (let n = el; n; n = cparent(n)) {
    if (n.nodeType !== 1) continue;
    if (n.getAttribute('aria-hidden') === 'true') return true;
    if (n.hasAttribute('inert')) return true;
  }
  return !rendered(el);
}

// ---- boxes --------------------------------------------------------------

function boxOf(el) {
  const r = rectOf(el);
  return [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)];
}

// ---- roles --------------------------------------------------------------

const ARIA_ROLES = new Set(('alert alertdialog application article banner blockquote button caption cell checkbox code columnheader combobox ' +
  'complementary contentinfo definition deletion dialog directory document emphasis feed figure form generic grid gridcell group heading ' +
  'image img insertion link list listbox listitem log main mark marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation ' +
  'none note option paragraph presentation progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator ' +
  'slider spinbutton status strong subscript superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree ' +
  'treegrid treeitem comment suggestion').split(' '));

const ROLE_ALIASES = { img: 'image', presentation: 'none', menulistoption: 'option', listboxoption: 'option', disclosuretriangle: 'button' };

function canonRole(r) {
  r = String(r || '').toLowerCase();
  return ROLE_ALIASES[r] || r;
}

function focusable(el) {
  return el.tabIndex >= 0 || el.hasAttribute('tabindex');
}

function hasGlobalAria(el) {
  for (const a of el.attributes) {
    if (a.name === 'aria-label' || a.name === 'aria-labelledby' || a.name === 'aria-describedby') return true;
  }
  return false;
}

function inputType(el) {
  return (el.getAttribute('type') || 'text').trim().toLowerCase();
}

function implicitRole(el) {
  const t = el.localName;
  switch (t) {
    case 'a': return el.hasAttribute('href') ? 'link' : 'generic';
    case 'area': return el.hasAttribute('href') ? 'link' : null;
    case 'article': return 'article';
    case 'aside': return 'complementary';
    case 'blockquote': return 'blockquote';
    case 'button': return 'button';
    case 'caption': return 'caption';
    case 'code': return 'code';
    case 'datalist': return 'listbox';
    case 'del': case 's': return 'deletion';
    case 'details': return 'group';
    case 'dialog': return 'dialog';
    case 'em': return 'emphasis';
    case 'fieldset': return 'group';
    case 'figure': return 'figure';
    case 'footer': return inLandmarkScope(el) ? 'generic' : 'contentinfo';
    case 'header': return inLandmarkScope(el) ? 'generic' : 'banner';
    case 'form': return 'form';
    case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
    case 'hr': return 'separator';
    case 'img': {
      const alt = el.getAttribute('alt');
      if (alt === '' && !hasGlobalAria(el) && !el.hasAttribute('title')) return 'none';
      return 'image';
    }
    case 'input': {
      switch (inputType(el)) {
        case 'button': case 'submit': case 'reset': case 'image': return 'button';
        case 'checkbox': return el.getAttribute('switch') !== null ? 'switch' : 'checkbox';
        case 'radio': return 'radio';
        case 'range': return 'slider';
        case 'number': return 'spinbutton';
        case 'search': return el.hasAttribute('list') ? 'combobox' : 'searchbox';
        case 'hidden': return null;
        case 'file': return 'button';
        case 'color': return 'button';
        case 'email': case 'tel': case 'text': case 'url': case 'password': return el.hasAttribute('list') ? 'combobox' : 'textbox';
        default: return 'textbox';
      }
    }
    case 'ins': return 'insertion';
    case 'li': return 'listitem';
    case 'main': return 'main';
    case 'mark': return 'mark';
    case 'math': return 'math';
    case 'menu': case 'ol': case 'ul': return 'list';
    case 'meter': return 'meter';
    case 'nav': return 'navigation';
    case 'optgroup': return 'group';
    case 'option': return 'option';
    case 'output': return 'status';
    case 'p': return 'paragraph';
    case 'progress': return 'progressbar';
    case 'search': return 'search';
    case 'section': return (hasGlobalAria(el) || el.hasAttribute('title')) ? 'region' : 'generic';
    case 'select': return (el.multiple || el.size > 1) ? 'listbox' : 'combobox';
    case 'strong': return 'strong';
    case 'sub': return 'subscript';
    case 'sup': return 'superscript';
    case 'summary': return 'button';
    case 'table': return 'table';
    case 'tbody': case 'thead': case 'tfoot': return 'rowgroup';
    case 'td': return 'cell';
    case 'textarea': return 'textbox';
    case 'th': return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
    case 'time': return 'time';
    case 'tr': return 'row';
    case 'dd': return 'definition';
    case 'dfn': case 'dt': return 'term';
    case 'svg': return 'image';
    case 'b': case 'bdi': case 'bdo': case 'body': case 'data': case 'div': case 'i': case 'pre': case 'q': case 'samp': case 'small': case 'span': case 'u':
      return 'generic';
  }
  if (el.isContentEditable && (!el.parentElement || !el.parentElement.isContentEditable)) return 'textbox';
  return null;
}

function inLandmarkScope(el) {
  for (let n = cparent(el); n; n = cparent(n)) {
    const t = n.localName;
    if (t === 'article' || t === 'aside' || t === 'main' || t === 'nav' || t === 'section') return true;
  }
  return false;
}

// roleOf: the explicit role (first known token) or the implicit one; a
// presentational role on a focusable element is ignored, as browsers do.
function roleOf(el) {
  const attr = el.getAttribute('role');
  if (attr) {
    for (const tok of attr.trim().toLowerCase().split(/\s+/)) {
      if (!ARIA_ROLES.has(tok)) continue;
      const r = canonRole(tok);
      if (r === 'none' && (focusable(el) || hasGlobalAria(el))) break;
      return r;
    }
  }
  if (el.isContentEditable && (!el.parentElement || !el.parentElement.isContentEditable) && !['input', 'textarea'].includes(el.localName)) return 'textbox';
  return implicitRole(el);
}

const NAME_FROM_CONTENT = new Set(['button', 'cell', 'checkbox', 'columnheader', 'gridcell', 'heading', 'link', 'menuitem', 'menuitemcheckbox',
  'menuitemradio', 'option', 'radio', 'row', 'rowheader', 'switch', 'tab', 'tooltip', 'treeitem', 'caption', 'code', 'deletion', 'emphasis',
  'insertion', 'mark', 'strong', 'subscript', 'superscript', 'term', 'time', 'legend']);

const INTERACTIVE_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'switch', 'textbox', 'searchbox', 'combobox', 'listbox', 'option',
  'slider', 'spinbutton', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'gridcell', 'scrollbar']);

// ---- accessible name (accname 1.2, as Chromium computes it) ---------------

function byId(el, id) {
  const root = el.getRootNode();
  return (root.getElementById && root.getElementById(id)) || el.ownerDocument.getElementById(id);
}

// labelsOf: the element's labels, in tree order, as el.labels gives them.
// el.labels is built the first time it is read, by a pass over its tree, so
// reading it for every control of a page just loaded is quadratic (seconds
// on 20k elements). One pass per tree per call instead: every label of the
// tree by the control it labels.
const LABELS = new Map(); // tree root → Map(control → [label])
function labelsOf(el) {
  if (!('labels' in el)) return [];
  const root = el.getRootNode();
  if (!root.querySelectorAll) {
    try { return el.labels ? Array.from(el.labels) : []; } catch (e) { return []; }
  }
  let byControl = LABELS.get(root);
  if (!byControl) {
    byControl = new Map();
    for (const l of root.querySelectorAll('label')) {
      const c = l.control;
      if (!c) continue;
      let list = byControl.get(c);
      if (!list) { list = []; byControl.set(c, list); }
      list.push(l);
    }
    LABELS.set(root, byControl);
  }
  return byControl.get(el) || [];
}

function isEmbeddedControl(el) {
  const r = roleOf(el);
  return r === 'textbox' || r === 'searchbox' || r === 'combobox' || r === 'listbox' || r === 'slider' || r === 'spinbutton';
}

function controlValue(el) {
  const r = roleOf(el);
  const t = el.localName;
  if (t === 'select') {
    const o = Array.from(el.selectedOptions || []);
    return o.map(x => norm(x.label || x.text)).join(' ');
  }
  if (r === 'slider' || r === 'spinbutton') {
    return el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow') || (el.value != null ? String(el.value) : '');
  }
  if (t === 'input' || t === 'textarea') return el.value || '';
  if (r === 'combobox' || r === 'listbox') {
    const sel = el.querySelector('[aria-selected="true"]');
    return sel ? accName(sel) : (el.value || norm(el.textContent));
  }
  return norm(el.textContent);
}

function pseudoText(el, which) {
  let c;
  try { c = winOf(el).getComputedStyle(el, which).content; } catch (e) { return ''; }
  if (!c || c === 'none' || c === 'normal') return '';
  const m = c.match(/^"((?:[^"\\]|\\.)*)"$/);
  if (!m) return '';
  return m[1].replace(/\\(.)/g, '$1');
}

const INLINE = new Set(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'dfn', 'em', 'i', 'kbd', 'mark', 'q', 's', 'samp', 'small', 'span',
  'strong', 'sub', 'sup', 'time', 'u', 'var', 'label', 'font', 'img', 'slot', 'wbr']);

function flatChildren(node) {
  if (node.nodeType === 1 && node.shadowRoot) return Array.from(node.shadowRoot.childNodes);
  if (node.nodeType === 1 && node.localName === 'slot') {
    const a = node.assignedNodes({ flatten: true });
    return a.length ? a : Array.from(node.childNodes);
  }
  return Array.from(node.childNodes);
}

function accName(el) {
  return norm(nameRec(el, { visited: new Set(), root: true, labelledBy: false, descendant: false }));
}

function nameRec(node, st) {
  if (node.nodeType === 3) return node.data;
  if (node.nodeType !== 1) return '';
  const el = node;
  if (st.visited.has(el)) return '';
  st.visited.add(el);
  // Hidden nodes do not count unless referenced directly (aria-labelledby).
  if (!st.root && !st.referenced && axHidden(el)) return '';
  // 2B aria-labelledby
  if (!st.labelledBy) {
    const ids = (el.getAttribute('aria-labelledby') || '').trim();
    if (ids) {
      const parts = [];
      for (const id of ids.split(/\s+/)) {
        const r = byId(el, id);
        if (r) parts.push(nameRec(r, { visited: st.visited, root: false, labelledBy: true, descendant: false, referenced: true }));
      }
      const s = norm(parts.join(' '));
      if (s) return s;
    }
  }
  const role = roleOf(el);
  // 2C embedded control inside a label or a name from content
  if ((st.descendant || st.labelledBy) && !st.root && isEmbeddedControl(el)) {
    return controlValue(el);
  }
  // 2D aria-label
  const al = norm(el.getAttribute('aria-label'));
  if (al) return al;
  // 2E native text alternatives
  if (role !== 'none') {
    const n = nativeName(el, st, role);
    if (n) return n;
  }
  // 2F name from content
  if (NAME_FROM_CONTENT.has(role) || !st.root) {
    const s = contentName(el, st);
    if (norm(s)) return s;
  }
  // 2I tooltip
  if (el.localName === 'input' || el.localName === 'textarea') {
    const ph = el.getAttribute('placeholder') || el.getAttribute('aria-placeholder');
    const t = el.getAttribute('title');
    if (norm(t)) return t;
    if (norm(ph)) return ph;
    return '';
  }
  const t = el.getAttribute('title');
  return t || '';
}

function contentName(el, st) {
  const sub = { visited: st.visited, root: false, labelledBy: st.labelledBy, descendant: true, referenced: false };
  let out = pseudoText(el, '::before');
  for (const c of flatChildren(el)) {
    if (c.nodeType === 3) { out += c.data; continue; }
    if (c.nodeType !== 1) continue;
    if (SKIP_TAGS.has(c.localName)) continue;
    const s = nameRec(c, sub);
    const block = !INLINE.has(c.localName);
    out += block ? ' ' + s + ' ' : s;
  }
  out += pseudoText(el, '::after');
  return out;
}

function nativeName(el, st, role) {
  const t = el.localName;
  if (t === 'input') {
    const ty = inputType(el);
    if (ty === 'button' || ty === 'submit' || ty === 'reset') {
      if (el.hasAttribute('value')) return el.getAttribute('value');
      return ty === 'submit' ? 'Submit' : ty === 'reset' ? 'Reset' : labelName(el, st);
    }
    if (ty === 'file') {
      // Chromium names it after its button (English UI strings).
      return labelName(el, st) || (el.multiple ? 'Choose Files' : 'Choose File');
    }
    if (ty === 'image') {
      return el.getAttribute('alt') || el.getAttribute('value') || el.getAttribute('title') || 'Submit';
    }
    return labelName(el, st);
  }
  if (t === 'textarea' || t === 'select' || t === 'meter' || t === 'output' || t === 'progress' || t === 'button') {
    const n = labelName(el, st);
    if (n) return n;
    return '';
  }
  if (t === 'img' || t === 'area') {
    const a = el.getAttribute('alt');
    if (a) return a;
    return '';
  }
  if (t === 'fieldset') {
    const lg = Array.from(el.children).find(c => c.localName === 'legend');
    return lg ? contentName(lg, st) : '';
  }
  if (t === 'figure') {
    const fc = Array.from(el.children).find(c => c.localName === 'figcaption');
    return fc ? contentName(fc, st) : '';
  }
  if (t === 'table') {
    const cap = el.caption;
    if (cap) return contentName(cap, st);
    const s = el.getAttribute('summary');
    return s || '';
  }
  if (t === 'svg') {
    const tt = Array.from(el.children).find(c => c.localName === 'title');
    return tt ? tt.textContent : '';
  }
  if (t === 'optgroup') return el.getAttribute('label') || '';
  if (t === 'option' && el.hasAttribute('label')) return el.getAttribute('label');
  return '';
}

function labelName(el, st) {
  const ls = labelsOf(el);
  if (!ls.length) return '';
  const parts = ls.map(l => norm(contentName(l, { visited: st.visited, root: false, labelledBy: st.labelledBy, descendant: true })));
  return parts.filter(Boolean).join(' ');
}

// ---- element descriptions -----------------------------------------------

function tagOf(el) {
  return el.localName;
}

// states: value / checked / disabled / … for inspect and action reports; empty and
// default values are left out. Passwords never show their value.
function statesOf(el, role) {
  const s = {};
  const t = el.localName;
  if (t === 'input') {
    const ty = inputType(el);
    if (ty !== 'text') s.type = ty;
    if (ty === 'checkbox' || ty === 'radio') s.checked = !!el.checked;
    else if (ty === 'file') { if (el.files && el.files.length) s.value = Array.from(el.files).map(f => f.name).join(', '); }
    else if (ty !== 'password' && ty !== 'hidden' && el.value) s.value = clip(el.value, 60);
  } else if (t === 'textarea') {
    if (el.value) s.value = clip(el.value, 60);
  } else if (t === 'select') {
    const v = Array.from(el.selectedOptions || []).map(o => norm(o.label || o.text));
    if (v.length) s.value = clip(v.join(', '), 60);
    if (el.multiple) s.multiple = true;
  } else if (el.isContentEditable && role === 'textbox') {
    const v = norm(el.innerText);
    if (v) s.value = clip(v, 60);
  }
  const ac = el.getAttribute('aria-checked');
  if (s.checked === undefined && ac !== null && (role === 'checkbox' || role === 'switch' || role === 'radio' || role === 'menuitemcheckbox' || role === 'menuitemradio' || role === 'option' || role === 'treeitem')) {
    s.checked = ac === 'mixed' ? 'mixed' : ac === 'true';
  }
  if (el.indeterminate) s.checked = 'mixed';
  const ap = el.getAttribute('aria-pressed');
  if (ap === 'true' || ap === 'mixed') s.pressed = ap === 'true' ? true : 'mixed';
  const ae = el.getAttribute('aria-expanded');
  if (ae === 'true' || ae === 'false') s.expanded = ae === 'true';
  const as = el.getAttribute('aria-selected');
  if (as === 'true') s.selected = true;
  if (t === 'option' && el.selected) s.selected = true;
  if (isDisabled(el)) s.disabled = true;
  if (el.readOnly) s.readonly = true;
  if (el.required || el.getAttribute('aria-required') === 'true') s.required = true;
  return s;
}

function isDisabled(el) {
  if (el.getAttribute('aria-disabled') === 'true') return true;
  try { if (el.matches(':disabled')) return true; } catch (e) { /* not a form element */ }
  return false;
}

// describe: what an action or an ambiguity report says about an element.
function describe(el, extra) {
  const role = roleOf(el) || 'generic';
  const d = { role: role, name: clip(accName(el), 80), tag: tagOf(el) };
  if (!d.name) delete d.name;
  d.box = boxOf(el);
  const id = el.id;
  if (id) d.id = id;
  if (extra) Object.assign(d, statesOf(el, role));
  return d;
}

// docToken identifies a document instance: a reload or navigation changes it,
// same-document history changes do not.
function docToken(doc) {
  const w = doc.defaultView;
  return w && w.performance ? String(w.performance.timeOrigin) : '';
}
