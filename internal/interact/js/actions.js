// actions.js: the page-side half of each action, run on the one element a
// locator picked. Mouse and keyboard input itself is sent by Go through the
// protocol; these functions prepare it (scroll, hit-test, focus) or are the
// DOM actions (select, check, scroll, the dom input mode).

// scrollTarget: the element to scroll into view for el (for display:
// contents, its first child with a box).
function scrollTarget(el) {
  if (el.getClientRects().length || !isContents(el)) return el;
  for (const c of flatChildren(el)) {
    if (c.nodeType === 1 && clientRects(c).length) return scrollTarget(c);
  }
  return el;
}

// viewportSize: the size of el's viewport (the layout viewport; a page that
// overwrites window.innerWidth does not change it).
function viewportSize(el) {
  const w = winOf(el);
  const de = el.ownerDocument.documentElement;
  const num = function (v) { return typeof v === 'number' && v > 0 ? v : 0; };
  return { w: Math.max(num(w.innerWidth), de ? de.clientWidth : 0), h: Math.max(num(w.innerHeight), de ? de.clientHeight : 0) };
}

function scrollIntoViewIfNeeded(el) {
  const r = rectOf(el);
  const v = viewportSize(el);
  const inView = r.top >= 0 && r.left >= 0 && r.bottom <= v.h && r.right <= v.w;
  if (inView && r.width > 0 && r.height > 0) return false;
  scrollToElement(el, 'center', 'center');
  return true;
}

// scrollToElement: scrollIntoView on el or, for display: contents, on its
// first child with a box; when only text has a box (a <button
// style="display: contents">label</button>), the scrolling ancestors and the
// window are scrolled to that text's box, since a node without a box of its
// own cannot be scrolled into view.
function scrollToElement(el, block, inline) {
  const t = scrollTarget(el);
  if (t !== el || !isContents(el)) {
    t.scrollIntoView({ block: block, inline: inline, behavior: 'instant' });
    return;
  }
  // place: where the scroller's start must go along one axis for mode.
  const place = function (r, start, size, length, mode) {
    if (mode === 'start') return r[start];
    if (mode === 'end') return r[start] + r[size] - length;
    if (mode === 'nearest') return r[start] < 0 ? r[start] : Math.max(0, r[start] + r[size] - length);
    return r[start] + r[size] / 2 - length / 2;
  };
  for (let a = cparent(el); a; a = cparent(a)) {
    const d = a.ownerDocument;
    if (a === d.documentElement || a === d.body) break;
    const cs = winOf(a).getComputedStyle(a);
    const sy = a.scrollHeight > a.clientHeight && /(auto|scroll|overlay)/.test(cs.overflowY);
    const sx = a.scrollWidth > a.clientWidth && /(auto|scroll|overlay)/.test(cs.overflowX);
    if (!sy && !sx) continue;
    const r = rectOf(el);
    if (!r.width && !r.height) return;
    const ar = a.getBoundingClientRect();
    // r in the scroller's own coordinates (its padding box's corner at 0, 0)
    const rr = { top: r.top - ar.top - a.clientTop, left: r.left - ar.left - a.clientLeft, width: r.width, height: r.height };
    if (sy) a.scrollTop += place(rr, 'top', 'height', a.clientHeight, block);
    if (sx) a.scrollLeft += place(rr, 'left', 'width', a.clientWidth, inline);
  }
  const r = rectOf(el);
  if (!r.width && !r.height) return;
  const v = viewportSize(el);
  winOf(el).scrollBy({ left: place(r, 'left', 'width', v.w, inline), top: place(r, 'top', 'height', v.h, block), behavior: 'instant' });
}

// visibleCenter: the centre of the part of the element's first box that lies in
// its viewport (coordinates of the element's own viewport).
function visibleCenter(el) {
  const v = viewportSize(el);
  const vw = v.w;
  const vh = v.h;
  for (const r of clientRects(el)) {
    const x0 = Math.max(r.left, 0);
    const y0 = Math.max(r.top, 0);
    const x1 = Math.min(r.right, vw);
    const y1 = Math.min(r.bottom, vh);
    if (x1 - x0 >= 1 && y1 - y0 >= 1) return { x: (x0 + x1) / 2, y: (y0 + y1) / 2 };
  }
  return null;
}

// hitsTarget: a click at a point that hits `hit` reaches el: hit is el or its
// descendant, a label of el, or inside the same interactive ancestor as el (a
// link whose inner div has pointer-events: none). Anything else is a foreign
// element that covers el.
function hitsTarget(el, hit) {
  if (!hit) return false;
  if (hit.nodeType !== 1) hit = cparent(hit);
  if (!hit) return false;
  if (ccontains(el, hit)) return true;
  for (let n = hit; n; n = cparent(n)) {
    if (n.localName === 'label' && n.control === el) return true;
  }
  const owner = interactiveAncestor(el, null);
  return owner !== el && ccontains(owner, hit);
}

// The element that covers a point, named by its most telling container: a
// dialog, or a fixed or sticky layer such as a consent banner.
function coverLayer(hit) {
  for (let n = hit; n; n = cparent(n)) {
    if (n.nodeType !== 1) continue;
    const r = roleOf(n);
    if (r === 'dialog' || r === 'alertdialog' || n.getAttribute('aria-modal') === 'true' || n.localName === 'dialog') return n;
    const pos = winOf(n).getComputedStyle(n).position;
    if (pos === 'fixed' || pos === 'sticky') return n;
  }
  return null;
}

function coveringOf(hit) {
  const layer = coverLayer(hit);
  const out = describe(hit, false);
  if (layer && layer !== hit) out.layer = describe(layer, false);
  return out;
}

// nextFrame resolves after the next animation frame (or 100 ms: a tab in
// the background gets no frames; a hidden document renders nothing, so
// there is no frame to wait for). It resolves to false when the 100 ms
// passed without a frame.
function nextFrame(w) {
  if (w.document.visibilityState === 'hidden') return Promise.resolve(true);
  return new Promise(function (resolve) {
    let done = false;
    const fin = function (framed) { if (!done) { done = true; resolve(framed); } };
    askFrame(w, function () { fin(true); });
    w.setTimeout(function () { fin(false); }, 100);
  });
}

function sameRect(a, b) {
  return Math.abs(a.left - b.left) < 0.5 && Math.abs(a.top - b.top) < 0.5 && Math.abs(a.width - b.width) < 0.5 && Math.abs(a.height - b.height) < 0.5;
}

// animating reports whether an animation or transition runs on el or on an
// element containing it. Asking for the animations brings styles up to date,
// so a transition that a style change has just begun is among them.
// With pending, only an animation that has not started yet counts (its
// start time waits for the compositor; until then the box stays at the start
// for as many frames as a busy renderer takes).
function animating(el, pending) {
  const doc = el.ownerDocument;
  if (!doc.getAnimations) return !pending;
  for (const a of doc.getAnimations()) {
    const t = a.effect && a.effect.target;
    if (a.playState === 'running' && (!pending || a.pending) && t && t.nodeType === 1 && ccontains(t, el)) return true;
  }
  return false;
}

// animatingAny reports whether any animation or transition runs in doc (one
// on another element, a panel opening above el, moves el too).
function animatingAny(doc) {
  if (!doc.getAnimations) return true;
  for (const a of doc.getAnimations()) {
    if (a.playState === 'running') return true;
  }
  return false;
}

// stable waits until el has the same box over two animation frames (three
// while it animates; at most 10 frames); false when it is still moving. It
// waits for no frame when el was not just scrolled into view (scrolled), no
// animation or transition runs in the document and the page has no frame
// callback pending (pageFramesIdle): then nothing but a task of the page's
// can move el before the next frame, and a box compared across that frame
// would be today's. While an animation or transition
// runs on el or a container, the first frame is skipped: a transition that
// just began shows its start box there too. Otherwise the box now and after
// the next frame are the two compared (a script moving el on every frame
// shows there). An animation advances with its document's timeline only:
// while one runs, a wait over which the timeline did not move (no frame
// within 100 ms, or a busy renderer's animation callbacks run twice at one
// frame time) proves nothing, nor does an animation that has not started.
async function stable(el, scrolled) {
  const w = winOf(el);
  const doc = el.ownerDocument;
  const anim = animating(el);
  if (!scrolled && !anim && !animatingAny(doc) && !animatingAny(TOP_DOC) && pageFramesIdle(w)) return true;
  const now = function () { return doc.timeline && doc.visibilityState !== 'hidden' ? doc.timeline.currentTime : null; };
  if (anim) await nextFrame(w);
  let prev = rectOf(el);
  let t = now();
  let still = 0; // advanced frames in a row over which the box stayed put
  for (let i = 0; i < 10; i++) {
    const framed = await nextFrame(w);
    const r = rectOf(el);
    const t2 = now();
    const moved = framed && (t === null || t2 === null || t2 > t);
    if (!anim) {
      if (sameRect(prev, r)) return true;
    } else if (!sameRect(prev, r)) {
      still = 0;
    } else if (moved && !animating(el, true) && ++still >= 2) {
      // A busy renderer can show a transition's first box at two frame
      // times (its start time resolves a frame late): while an animation
      // runs, the box must stay put over two advanced frames.
      return true;
    }
    prev = r;
    t = t2;
  }
  return false;
}

// moving: the cover moves, or it (or a container of it) runs an animation or
// transition (a banner fading out); such a cover may clear up.
async function moving(hit) {
  const node = coverLayer(hit) || hit;
  const doc = node.ownerDocument;
  if (doc.getAnimations) {
    for (const a of doc.getAnimations()) {
      const t = a.effect && a.effect.target;
      if (a.playState === 'running' && t && t.nodeType === 1 && (ccontains(t, hit) || ccontains(node, t))) return true;
    }
  }
  const before = rectOf(node);
  await nextFrame(winOf(node));
  return !node.isConnected || !sameRect(before, rectOf(node));
}

const SCROLL_ALTERNATIVES = ['center', 'end', 'start'];

// pointFor: bring el into view, wait until it stands still, and find the
// point a real mouse event should hit. When another element would receive
// it, try the element at the centre, the end and the start of its scroll
// containers (a sticky header hides the top of the viewport) before failing
// covered, saying whether the cover is still moving.
async function pointFor(el, force) {
  // A scroll's own effects (scroll handlers, sticky and hide-on-scroll
  // headers) come with the next frame: after one, stable waits for it.
  const scrolled = scrollIntoViewIfNeeded(el);
  if (!(await stable(el, scrolled))) return { error: 'moving' };
  let c = visibleCenter(el);
  if (!c) return { error: 'not-visible' };
  if (force) return { x: c.x, y: c.y };
  const doc = el.ownerDocument;
  let hit = deepHit(doc, c.x, c.y);
  if (hitsTarget(el, hit)) return { x: c.x, y: c.y };
  // The click goes through el to its container: el takes no pointer events.
  if (hit && ccontains(hit, el) && winOf(el).getComputedStyle(el).pointerEvents === 'none') return { error: 'no-pointer-events' };
  const firstHit = hit;
  for (const block of SCROLL_ALTERNATIVES) {
    scrollToElement(el, block, block);
    await nextFrame(winOf(el));
    c = visibleCenter(el);
    if (!c) continue;
    hit = deepHit(doc, c.x, c.y);
    if (hitsTarget(el, hit)) return { x: c.x, y: c.y };
  }
  const cover = hit || firstHit;
  if (!cover) return { error: 'not-visible' };
  return { error: 'covered', covering: coveringOf(cover), moving: await moving(cover) };
}

// hitCheck: called on the element a protocol hit test found at the click
// point: whether it reaches the target (req.node), or what covers it.
function hitCheck(target, hit) {
  if (hitsTarget(target, hit)) return {};
  const el = hit && hit.nodeType !== 1 ? cparent(hit) : hit;
  return { error: 'covered', covering: el ? coveringOf(el) : null };
}

// frameLocal: a frame element's content box in its own (untransformed) box:
// the offset of its viewport from its border box's corner and its border
// box's size, to map points through its transform.
function frameLocal(frameEl) {
  const cs = winOf(frameEl).getComputedStyle(frameEl);
  return [frameEl.clientLeft + (parseFloat(cs.paddingLeft) || 0), frameEl.clientTop + (parseFloat(cs.paddingTop) || 0), frameEl.offsetWidth, frameEl.offsetHeight];
}

// Inputs that take no text: typing into them is refused before anything is
// touched (--clear would empty a button's label).
const NOT_TEXT_INPUTS = new Set(['button', 'submit', 'reset', 'image', 'checkbox', 'radio', 'file', 'hidden']);

const NUMBER_RE = /^-?(\d+|\d*\.\d+)([eE][-+]?\d+)?$/;

// Inputs set by value (keys typed into them give garbage): the format each
// takes, checked before the value is set.
const VALUE_FORMATS = {
  date: [/^\d{4,}-\d{2}-\d{2}$/, 'YYYY-MM-DD'],
  time: [/^\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/, 'HH:MM or HH:MM:SS'],
  'datetime-local': [/^\d{4,}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/, 'YYYY-MM-DDTHH:MM'],
  month: [/^\d{4,}-\d{2}$/, 'YYYY-MM'],
  week: [/^\d{4,}-W\d{2}$/, 'YYYY-Www'],
  color: [/^#[0-9a-fA-F]{6}$/, '#rrggbb'],
  range: [NUMBER_RE, 'a number'],
};

function controlOf(el) {
  return el.localName === 'label' && el.control ? el.control : el;
}

// deepActive: the focused element of el's document, through open shadow roots.
function deepActive(doc) {
  let a = doc.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a;
}

// typeRefusal: why t cannot take text (nothing touched yet), or null.
function typeRefusal(t, text, clear, keys) {
  if (t.localName === 'input') {
    const ty = inputType(t);
    if (NOT_TEXT_INPUTS.has(ty)) return { error: 'not-editable', why: 'it is an <input type=' + ty + '>, which takes no text' };
    if (t.readOnly) return { error: 'not-editable', why: 'it is read-only' };
    if (ty === 'number') {
      const v = (clear ? text : (t.value || '') + text).trim();
      if (v !== '' && !NUMBER_RE.test(v)) return { error: 'not-editable', why: 'a number input takes only a number', format: 'a number' };
    }
    const f = VALUE_FORMATS[ty];
    if (f && !keys && text.trim() !== '' && !f[0].test(text.trim())) return { error: 'not-editable', why: 'a ' + ty + ' input takes ' + f[1], format: f[1] };
    return null;
  }
  if (t.localName === 'textarea') return t.readOnly ? { error: 'not-editable', why: 'it is read-only' } : null;
  if (t.isContentEditable) return null;
  // A focusable widget may take key events (--keys), but it holds no text.
  return keys ? null : { error: 'not-editable', why: 'it is not a text field (an <input>, <textarea> or contenteditable element); --keys sends key events to it' };
}

// fieldValue: what a field holds (its value, or the text of a contenteditable).
function fieldValue(t) {
  if (t.localName === 'input' || t.localName === 'textarea') return t.value;
  if (t.isContentEditable) return t.innerText;
  return null;
}

// setByValue sets a date, time, colour or range input's value with input and
// change events, as a picker does.
function setByValue(t, text) {
  t.focus({ preventScroll: true });
  const v = byValueText(t, text);
  setNativeValue(t, v);
  fire(t, 'input');
  fire(t, 'change');
  return v;
}

// byValueText: text in the form the input keeps (a T between date and time,
// a lower-case colour).
function byValueText(t, text) {
  const ty = inputType(t);
  let v = text.trim();
  if (ty === 'datetime-local') v = v.replace(' ', 'T');
  if (ty === 'color') v = v.toLowerCase();
  return v;
}

// focusTarget: focus el (or, for a label, its control). For type
// (act.typing), the element that took the focus (el, or an input inside it
// that el delegates the focus to) must take act.text: refusals come before
// any change; a date, time, colour or range input is set by value here; else
// clear selects the whole content so that the next insert replaces it, and
// without clear the caret goes to the end so that the text is appended.
function focusTarget(el, act) {
  let t = controlOf(el);
  if (act.typing && (t.localName === 'input' || t.localName === 'textarea')) {
    // Refused before even the focus moves.
    const refusal = typeRefusal(t, act.text || '', act.clear, act.keys);
    if (refusal) return refusal;
  }
  const had = deepActive(t.ownerDocument);
  const wasFocused = had === t || ccontains(t, had);
  scrollIntoViewIfNeeded(t);
  t.focus({ preventScroll: true });
  const active = deepActive(t.ownerDocument);
  const focused = active === t || ccontains(t, active);
  if (!act.typing || !focused) return { focused: focused };
  if (active !== t && active) t = active;
  const text = act.text || '';
  const refusal = typeRefusal(t, text, act.clear, act.keys);
  if (refusal) return refusal;
  const out = { focused: true, before: fieldValue(t), after: '', field: fieldValue(t) !== null, ce: !!t.isContentEditable && t.localName !== 'input' && t.localName !== 'textarea' };
  if (t.localName === 'input' && VALUE_FORMATS[inputType(t)] && !act.keys) {
    out.want = setByValue(t, text);
    out.byValue = true;
    return out;
  }
  if (t.localName === 'input' || t.localName === 'textarea') {
    out.hadText = !!t.value;
    if (act.clear) {
      try { t.select(); } catch (e) { /* no selection */ }
      if (t.selectionStart === undefined || t.selectionStart === null) {
        // email and number inputs have no selection API.
        setNativeValue(t, '');
        fire(t, 'input', { inputType: 'deleteContent' });
        out.hadText = false;
        out.before = '';
      }
    } else if (wasFocused) {
      // Already focused: the text goes where the caret or selection is (after
      // press Control+a, it replaces everything).
      let a = null;
      try { a = t.selectionStart; } catch (e) { /* no selection API */ }
      if (a === null || a === undefined) { out.loose = true; return out; }
      out.before = t.value.slice(0, a);
      out.after = t.value.slice(t.selectionEnd);
    } else {
      try { t.setSelectionRange(t.value.length, t.value.length); } catch (e) { out.needEnd = !!t.value; }
    }
  } else if (t.isContentEditable) {
    out.hadText = !!norm(t.textContent);
    if (wasFocused && !act.clear) { out.loose = true; return out; }
    const sel = winOf(t).getSelection();
    const range = t.ownerDocument.createRange();
    range.selectNodeContents(t);
    if (!act.clear) range.collapse(false);
    sel.removeAllRanges();
    sel.addRange(range);
  }
  return out;
}

// typedMatch: whether a field's value holds want: exactly, or reformatted by
// the page (the same letters and digits: a phone mask, upper case); a
// contenteditable's text compared whitespace-normalised (it must end with
// want when appending).
function typedMatch(value, want, ce, loose) {
  if (value === want) return { ok: true };
  if (loose && norm(value).includes(norm(want))) return { ok: true };
  if (ce && norm(value) === norm(want)) return { ok: true };
  const alnum = function (s) { return String(s).toLowerCase().replace(/[^\p{L}\p{N}]/gu, ''); };
  if (alnum(want) !== '' && alnum(value) === alnum(want)) return { ok: true, formatted: true };
  return { ok: false };
}

// readBack: what the field holds after typing, compared with want (the value
// itself never for a password).
function readBack(t, want, ce, loose) {
  const v = fieldValue(t);
  if (v === null) return { ok: false, gone: true };
  const m = typedMatch(v, want, ce, loose);
  if (!(t.localName === 'input' && inputType(t) === 'password')) m.value = clip(v, 200);
  m.length = v.length;
  return m;
}

function setNativeValue(el, v) {
  const proto = el.localName === 'textarea' ? winOf(el).HTMLTextAreaElement.prototype : winOf(el).HTMLInputElement.prototype;
  const d = Object.getOwnPropertyDescriptor(proto, 'value');
  if (d && d.set) d.set.call(el, v); else el.value = v;
}

function fire(el, type, init) {
  const w = winOf(el);
  let ev;
  try {
    if (type === 'input' || type === 'beforeinput') ev = new w.InputEvent(type, Object.assign({ bubbles: true, composed: true }, init || {}));
    else ev = new w.Event(type, { bubbles: true, composed: type !== 'change' });
  } catch (e) {
    // The page replaced the event classes (window.Event = null).
    ev = el.ownerDocument.createEvent('Event');
    ev.initEvent(type, true, false);
  }
  return el.dispatchEvent(ev);
}

// domClick: --input-mode dom: synthetic pointer and mouse events, then click().
function domClick(el, opts) {
  scrollIntoViewIfNeeded(el);
  const w = winOf(el);
  const c = visibleCenter(el) || { x: 0, y: 0 };
  const base = { bubbles: true, cancelable: true, composed: true, view: w, clientX: c.x, clientY: c.y, button: opts.buttonIndex || 0,
    ctrlKey: !!(opts.modifiers & 2), shiftKey: !!(opts.modifiers & 8), altKey: !!(opts.modifiers & 1), metaKey: !!(opts.modifiers & 4) };
  const count = opts.count || 1;
  if (opts.hover) {
    el.dispatchEvent(new w.PointerEvent('pointerover', base));
    el.dispatchEvent(new w.MouseEvent('mouseover', base));
    el.dispatchEvent(new w.PointerEvent('pointermove', base));
    el.dispatchEvent(new w.MouseEvent('mousemove', base));
    return { x: c.x, y: c.y };
  }
  for (let i = 1; i <= count; i++) {
    const b = Object.assign({}, base, { detail: i });
    el.dispatchEvent(new w.PointerEvent('pointerdown', b));
    el.dispatchEvent(new w.MouseEvent('mousedown', b));
    if (el.focus) el.focus({ preventScroll: true });
    el.dispatchEvent(new w.PointerEvent('pointerup', b));
    el.dispatchEvent(new w.MouseEvent('mouseup', b));
    if ((opts.buttonIndex || 0) === 0) {
      el.dispatchEvent(new w.MouseEvent('click', b));
    } else if (opts.buttonIndex === 2) {
      el.dispatchEvent(new w.MouseEvent('contextmenu', b));
    } else {
      el.dispatchEvent(new w.MouseEvent('auxclick', b));
    }
  }
  if (count === 2) el.dispatchEvent(new w.MouseEvent('dblclick', Object.assign({}, base, { detail: 2 })));
  return { x: c.x, y: c.y };
}

// domType: --input-mode dom: set the value through the native setter (so
// frameworks see it) with beforeinput/input/change events, after the same
// refusals as type, and read it back.
function domType(el, text, clear) {
  const t = controlOf(el);
  const refusal = typeRefusal(t, text, clear, false);
  if (refusal) return refusal;
  t.focus({ preventScroll: true });
  if (t.localName === 'input' && VALUE_FORMATS[inputType(t)]) {
    return readBack(t, setByValue(t, text), false);
  }
  if (t.localName === 'input' || t.localName === 'textarea') {
    const v = clear ? text : (t.value || '') + text;
    fire(t, 'beforeinput', { inputType: 'insertText', data: text });
    setNativeValue(t, v);
    fire(t, 'input', { inputType: 'insertText', data: text });
    fire(t, 'change');
    return readBack(t, v, false);
  }
  const before = clear ? '' : t.innerText;
  if (clear) t.textContent = '';
  const doc = t.ownerDocument;
  const sel = winOf(t).getSelection();
  const range = doc.createRange();
  range.selectNodeContents(t);
  range.collapse(false);
  sel.removeAllRanges();
  sel.addRange(range);
  doc.execCommand('insertText', false, text);
  return readBack(t, before + text, true);
}

// selectOptions sets the selection of a <select> by value (then exact label)
// or, with byLabel, by label.
function selectOptions(el, values, byLabel) {
  let t = el;
  if (t.localName === 'label' && t.control) t = t.control;
  if (t.localName !== 'select') return { error: 'not-a-select', tag: t.localName };
  if (isDisabled(t)) return { error: 'disabled' };
  if (!t.multiple && values.length > 1) return { error: 'single-select' };
  const opts = Array.from(t.options);
  const picked = [];
  const missing = [];
  for (const v of values) {
    const byText = o => norm(o.label || o.text) === norm(v);
    let o = opts.find(o => byLabel ? byText(o) : o.value === v);
    // A value that no option has may be what the user reads: the exact label
    // (as Playwright's selectOption takes either), never a looser match.
    if (!o && !byLabel) o = opts.find(byText);
    if (!o && byLabel) o = opts.find(o => norm(o.label || o.text).toLowerCase() === norm(v).toLowerCase());
    if (!o) { missing.push(v); continue; }
    if (o.disabled) return { error: 'option-disabled', value: v };
    picked.push(o);
  }
  if (missing.length) {
    return { error: 'no-option', missing: missing, options: opts.slice(0, 30).map(o => ({ value: o.value, label: norm(o.label || o.text) })) };
  }
  const before = opts.map(o => o.selected).join();
  for (const o of opts) o.selected = picked.includes(o);
  if (!t.multiple && picked.length) t.value = picked[0].value;
  const changed = before !== opts.map(o => o.selected).join();
  fire(t, 'input');
  fire(t, 'change');
  return { changed: changed, selected: Array.from(t.selectedOptions).map(o => ({ value: o.value, label: norm(o.label || o.text) })) };
}

// The ARIA roles whose state check/uncheck sets: aria-checked, or
// aria-selected for options and tree items.
const CHECKED_ROLES = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);
const SELECTED_ROLES = new Set(['option', 'treeitem']);

function checkTarget(el) {
  return controlOf(el);
}

// checkedState: the checked (or selected) state of a checkbox, radio,
// switch, option, tree item or toggle button; null for anything else.
function checkedState(t) {
  if (t.localName === 'input' && (inputType(t) === 'checkbox' || inputType(t) === 'radio')) return { kind: inputType(t), checked: t.checked };
  if (t.localName === 'option') return { kind: 'option', checked: t.selected, single: !(t.parentNode && t.closest('select') && t.closest('select').multiple) };
  const r = roleOf(t);
  const ac = t.getAttribute('aria-checked');
  if (CHECKED_ROLES.has(r) || (SELECTED_ROLES.has(r) && ac != null)) return { kind: r, checked: ac === 'mixed' ? 'mixed' : ac === 'true' };
  if (SELECTED_ROLES.has(r)) return { kind: r, checked: t.getAttribute('aria-selected') === 'true' };
  const ap = t.getAttribute('aria-pressed');
  if (ap != null) return { kind: 'toggle button', checked: ap === 'mixed' ? 'mixed' : ap === 'true' };
  return null;
}

// setChecked makes el's state want: a click (the page's own handler does
// the change), then up to 500 ms for a page that renders it later.
async function setChecked(el, want) {
  const t = checkTarget(el);
  const s = checkedState(t);
  if (!s) return { error: 'not-checkable', tag: t.localName, role: roleOf(t) || 'generic' };
  if (s.checked === want) return { checked: s.checked, changed: false, kind: s.kind };
  if (!want && (s.kind === 'radio' || s.kind === 'menuitemradio' || (s.kind === 'option' && s.single))) return { error: 'radio-uncheck', kind: s.kind };
  if (isDisabled(t)) return { error: 'disabled' };
  if (t.localName === 'option') {
    const sel = t.closest('select');
    if (sel && isDisabled(sel)) return { error: 'disabled' };
    t.selected = want;
    if (sel) { fire(sel, 'input'); fire(sel, 'change'); }
  } else {
    scrollIntoViewIfNeeded(t);
    t.click();
  }
  const w = winOf(t);
  let after = checkedState(t);
  for (let i = 0; i < 30 && !(after && after.checked === want); i++) {
    await new Promise(r => w.setTimeout(r, 16));
    after = checkedState(t);
  }
  return { checked: after ? after.checked : null, changed: true, kind: s.kind, ok: !!after && after.checked === want };
}

// scrollState: where a scroll container (or the page) stands.
function scrollerOf(el) {
  if (!el) return TOP_DOC.scrollingElement || TOP_DOC.documentElement;
  return el;
}

function scrollState(sc) {
  const isPage = sc === sc.ownerDocument.scrollingElement || sc === sc.ownerDocument.documentElement || sc === sc.ownerDocument.body;
  const w = winOf(sc);
  const x = isPage ? w.scrollX : sc.scrollLeft;
  const y = isPage ? w.scrollY : sc.scrollTop;
  const maxX = Math.max(0, sc.scrollWidth - (isPage ? w.innerWidth : sc.clientWidth));
  const maxY = Math.max(0, sc.scrollHeight - (isPage ? w.innerHeight : sc.clientHeight));
  return { x: Math.round(x), y: Math.round(y), maxX: Math.round(maxX), maxY: Math.round(maxY), atTop: y <= 0, atBottom: y >= maxY - 1 };
}

function doScroll(el, opts) {
  if (el && opts.dx == null && opts.dy == null && !opts.to) {
    if (!visible(el)) return { error: 'not-visible' };
    scrollToElement(el, opts.block || 'center', 'nearest');
    const s = scrollState(TOP_DOC.scrollingElement || TOP_DOC.documentElement);
    return { page: s };
  }
  const sc = scrollerOf(el);
  const isPage = !el;
  const w = winOf(sc);
  const target = isPage ? w : sc;
  if (opts.to === 'top') target.scrollTo({ top: 0, behavior: 'instant' });
  else if (opts.to === 'bottom') target.scrollTo({ top: sc.scrollHeight, behavior: 'instant' });
  else if (opts.to === 'left') target.scrollTo({ left: 0, behavior: 'instant' });
  else if (opts.to === 'right') target.scrollTo({ left: sc.scrollWidth, behavior: 'instant' });
  if (opts.dx != null || opts.dy != null) target.scrollBy({ left: +opts.dx || 0, top: +opts.dy || 0, behavior: 'instant' });
  return { page: isPage ? scrollState(sc) : undefined, container: isPage ? undefined : scrollState(sc) };
}

// fileInputOf: the file input an upload targets: the element, or the control
// of a label.
function fileInputOf(el) {
  if (el.localName === 'input' && inputType(el) === 'file') return el;
  if (el.localName === 'label' && el.control && el.control.localName === 'input' && inputType(el.control) === 'file') return el.control;
  return null;
}

function filesOf(inp) {
  return { count: inp.files ? inp.files.length : 0, files: Array.from(inp.files || []).map(f => ({ name: f.name, size: f.size, type: f.type || undefined })) };
}

// downloadLink: el is (in) a link that downloads (<a download href>); its
// download begins when the response does, which can be after the click's
// settle.
function downloadLink(el) {
  return !!(el.closest && el.closest('a[href][download], area[href][download]'));
}

// runAction performs the page-side part of act on el. Points and boxes are in
// the viewport of el's document; Go translates frames.
function runAction(el, act) {
  if (!el) return act.kind === 'scroll' ? doScroll(null, act) : { error: 'no-element' };
  const needsEnabled = act.kind === 'point' && act.click || act.kind === 'focus' || act.kind === 'domclick' || act.kind === 'domtype';
  if (needsEnabled && isDisabled(el)) return { error: 'disabled' };
  switch (act.kind) {
    case 'none': return {};
    case 'point': {
      // The clicks the browser reports on before this click's (see browserClicks).
      const clicks = act.click ? browserClicks(winOf(el)) : null;
      const p = pointFor(el, act.force).then(r => (clicks && !r.error ? Object.assign(r, { clicks: clicks }) : r));
      return act.click && downloadLink(el) ? p.then(r => (r.error ? r : Object.assign(r, { download: true }))) : p;
    }
    case 'focus': {
      // act.guard: the key guard goes on the focused element in this same
      // call, so input follows with no round trip between (for typing, only
      // when el took the focus: else nothing is typed).
      const r = focusTarget(el, act);
      // The value the field must hold after the text: it, or the field's
      // value with it at the caret (set by value: the value set).
      if (act.typing && r.field && !r.byValue) r.want = !act.clear && r.before != null ? r.before + (act.text || '') + (r.after || '') : (act.text || '');
      if (act.guard && !r.error && (r.focused || !act.typing)) r.guard = keepGuard(deepActive(el.ownerDocument));
      if (act.readback) leaveReadBack(act, r);
      return r;
    }
    case 'readback': return readBack(el, act.want, act.ce, act.loose);
    case 'domclick': return domClick(el, act);
    case 'domtype': return domType(el, act.text, act.clear);
    case 'select': return selectOptions(el, act.values, act.byLabel);
    case 'check': return setChecked(el, act.want);
    case 'scroll': return doScroll(el, act);
    case 'fileinfo': {
      const inp = fileInputOf(el);
      if (!inp) return { fileInput: false };
      return { fileInput: true, multiple: inp.multiple, accept: inp.accept || undefined, disabled: inp.disabled || undefined, viaLabel: inp !== el || undefined };
    }
    case 'files': {
      const inp = fileInputOf(el);
      return inp ? filesOf(inp) : { count: 0, files: [] };
    }
    case 'box': {
      if (act.scroll) scrollIntoViewIfNeeded(el);
      return { box: boxOf(el) };
    }
  }
  return { error: 'unknown-action' };
}
