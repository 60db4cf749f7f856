// actions.js: the page-side half of each action, run on the one element a
// locator picked. Mouse and keyboard input itself is sent by Go through the
// protocol; these functions prepare it (scroll, hit-test, focus) or are the
// DOM actions (select, check, scroll, the dom input mode).

function scrollIntoViewIfNeeded(el) {
  const w = winOf(el);
  const r = el.getBoundingClientRect();
  const inView = r.top >= 0 && r.left >= 0 && r.bottom <= w.innerHeight && r.right <= w.innerWidth;
  if (inView && r.width > 0 && r.height > 0) return false;
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  return true;
}

// visibleCenter: the centre of the part of the element's first box that lies in
// its viewport (coordinates of the element's own viewport).
function visibleCenter(el) {
  const w = winOf(el);
  const vw = w.innerWidth;
  const vh = w.innerHeight;
  for (const r of el.getClientRects()) {
    const x0 = Math.max(r.left, 0);
    const y0 = Math.max(r.top, 0);
    const x1 = Math.min(r.right, vw);
    const y1 = Math.min(r.bottom, vh);
    if (x1 - x0 >= 1 && y1 - y0 >= 1) return { x: (x0 + x1) / 2, y: (y0 + y1) / 2 };
  }
  return null;
}

// hitsTarget: clicking hit lands on el (itself, a descendant, or a label of el).
function hitsTarget(el, hit) {
  if (ccontains(el, hit)) return true;
  for (let n = hit; n; n = cparent(n)) {
    if (n.localName === 'label' && n.control === el) return true;
  }
  return false;
}

// The element that covers a point, named by its most telling container: a
// dialog, or a fixed or sticky layer such as a consent banner.
function coveringOf(hit) {
  let layer = null;
  for (let n = hit; n; n = cparent(n)) {
    if (n.nodeType !== 1) continue;
    const r = roleOf(n);
    if (r === 'dialog' || r === 'alertdialog' || n.getAttribute('aria-modal') === 'true' || n.localName === 'dialog') { layer = n; break; }
    const pos = winOf(n).getComputedStyle(n).position;
    if (pos === 'fixed' || pos === 'sticky') { layer = n; break; }
  }
  const out = describe(hit, false);
  if (layer && layer !== hit) out.layer = describe(layer, false);
  return out;
}

// pointFor: scroll el into view and find the point a real mouse event should
// hit; fails with covered when another element would receive it.
function pointFor(el, force) {
  scrollIntoViewIfNeeded(el);
  const c = visibleCenter(el);
  if (!c) return { error: 'not-visible' };
  if (!force) {
    const hit = deepHit(el.ownerDocument, c.x, c.y);
    if (hit && !hitsTarget(el, hit)) return { error: 'covered', covering: coveringOf(hit), x: c.x, y: c.y };
  }
  return { x: c.x, y: c.y };
}

// frameHit: called on a frame element: whether a point of its document's
// viewport reaches the frame (and not something covering it).
function frameHit(frameEl, x, y, force) {
  if (force) return {};
  const hit = deepHit(frameEl.ownerDocument, x, y);
  if (!hit || hit === frameEl) return {};
  return { error: 'covered', covering: coveringOf(hit), x: x, y: y };
}

// focusTarget: focus el (or, for a label, its control); clear selects its
// whole content so that the next insert replaces it.
function focusTarget(el, clear) {
  let t = el;
  if (t.localName === 'label' && t.control) t = t.control;
  scrollIntoViewIfNeeded(t);
  t.focus({ preventScroll: true });
  const doc = t.ownerDocument;
  let active = doc.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  const focused = active === t || ccontains(t, active);
  let hadText = false;
  if (clear) {
    if (t.localName === 'input' || t.localName === 'textarea') {
      hadText = !!t.value;
      try { t.select(); } catch (e) { /* type without selection */ }
      if (t.selectionStart === undefined || t.selectionStart === null) {
        setNativeValue(t, '');
        fire(t, 'input');
        hadText = false;
      }
    } else if (t.isContentEditable) {
      hadText = !!norm(t.textContent);
      const sel = winOf(t).getSelection();
      const range = doc.createRange();
      range.selectNodeContents(t);
      sel.removeAllRanges();
      sel.addRange(range);
    }
  }
  return { focused: focused, hadText: hadText, editable: isEditable(t) };
}

function isEditable(el) {
  if (el.isContentEditable) return true;
  if (el.localName === 'textarea') return !el.readOnly && !el.disabled;
  if (el.localName === 'input') {
    const ty = inputType(el);
    return !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'range', 'color', 'hidden'].includes(ty) && !el.readOnly && !el.disabled;
  }
  return false;
}

function setNativeValue(el, v) {
  const proto = el.localName === 'textarea' ? winOf(el).HTMLTextAreaElement.prototype : winOf(el).HTMLInputElement.prototype;
  const d = Object.getOwnPropertyDescriptor(proto, 'value');
  if (d && d.set) d.set.call(el, v); else el.value = v;
}

function fire(el, type, init) {
  const w = winOf(el);
  let ev;
  if (type === 'input' || type === 'beforeinput') ev = new w.InputEvent(type, Object.assign({ bubbles: true, composed: true }, init || {}));
  else ev = new w.Event(type, { bubbles: true, composed: type !== 'change' });
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
// frameworks see it) with beforeinput/input/change events.
function domType(el, text, clear) {
  let t = el;
  if (t.localName === 'label' && t.control) t = t.control;
  t.focus({ preventScroll: true });
  if (t.localName === 'input' || t.localName === 'textarea') {
    const v = clear ? text : (t.value || '') + text;
    fire(t, 'beforeinput', { inputType: 'insertText', data: text });
    setNativeValue(t, v);
    fire(t, 'input', { inputType: 'insertText', data: text });
    fire(t, 'change');
    return { value: t.localName === 'input' && inputType(t) === 'password' ? undefined : clip(t.value, 200) };
  }
  if (t.isContentEditable) {
    if (clear) t.textContent = '';
    const doc = t.ownerDocument;
    const sel = winOf(t).getSelection();
    const range = doc.createRange();
    range.selectNodeContents(t);
    range.collapse(false);
    sel.removeAllRanges();
    sel.addRange(range);
    doc.execCommand('insertText', false, text);
    return { value: clip(t.innerText, 200) };
  }
  return { error: 'not-editable' };
}

// selectOptions sets the selection of a <select> by value or by label.
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
    let o = opts.find(o => byLabel ? norm(o.label || o.text) === norm(v) : o.value === v);
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

// checkState: the checked state of a checkbox, radio, switch or ARIA widget.
function checkTarget(el) {
  if (el.localName === 'label' && el.control) return el.control;
  return el;
}

function checkedState(t) {
  if (t.localName === 'input' && (inputType(t) === 'checkbox' || inputType(t) === 'radio')) return { kind: inputType(t), checked: t.checked };
  const ac = t.getAttribute('aria-checked') != null ? t.getAttribute('aria-checked') : t.getAttribute('aria-pressed');
  const r = roleOf(t);
  if (ac != null || r === 'checkbox' || r === 'switch' || r === 'radio' || r === 'menuitemcheckbox' || r === 'menuitemradio') {
    return { kind: r || 'aria', checked: ac === 'mixed' ? 'mixed' : ac === 'true' };
  }
  return null;
}

function setChecked(el, want) {
  const t = checkTarget(el);
  const s = checkedState(t);
  if (!s) return { error: 'not-checkable', tag: t.localName, role: roleOf(t) };
  if (s.checked === want) return { checked: s.checked, changed: false, kind: s.kind };
  if (!want && (s.kind === 'radio')) return { error: 'radio-uncheck' };
  if (isDisabled(t)) return { error: 'disabled' };
  if (t.localName === 'input') {
    t.click();
  } else {
    scrollIntoViewIfNeeded(t);
    t.click();
  }
  const after = checkedState(t);
  return { checked: after ? after.checked : null, changed: true, kind: s.kind, ok: after && after.checked === want };
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
    el.scrollIntoView({ block: opts.block || 'center', inline: 'nearest', behavior: 'instant' });
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

// runAction performs the page-side part of act on el. Points and boxes are in
// the viewport of el's document; Go translates frames.
function runAction(el, act) {
  if (!el) return act.kind === 'scroll' ? doScroll(null, act) : { error: 'no-element' };
  const needsEnabled = act.kind === 'point' && act.click || act.kind === 'focus' || act.kind === 'domclick' || act.kind === 'domtype';
  if (needsEnabled && isDisabled(el)) return { error: 'disabled' };
  switch (act.kind) {
    case 'none': return {};
    case 'point': return pointFor(el, act.force);
    case 'focus': return focusTarget(el, act.clear);
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
