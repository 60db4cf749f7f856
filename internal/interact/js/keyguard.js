// keyguard.js: the key guard, installed on the element dtb types into before
// the first input event and kept by the library (keepGuard), which Go
// reaches by id; installKeyGuard returns the guard object, or why input
// cannot start.
//
// guard.check() runs before each event: "" while the element still holds
// the focus of its document (and its document the focus, when it had it at
// the start), else why input must stop. Between a check and the event the
// page's timers can move the focus: a key or text whose target is another
// element of this document is then cancelled before it inserts anything
// and hidden from the page's later listeners, and input stops. The capture
// listeners act only within a second of a check, so a guard whose dtb went
// away without end() stops acting by itself.
//
// guard.after(n, early) is a promise of a read-back of the element once it
// has had n trusted input events since the install, made by a read-back
// sent just before Input.insertText (the two travel apart in the browser,
// and the read must not run before the text is in). It resolves with what
// early() returns as the n-th event ends, when that is not null (the field
// shows the text: no need to wait out the frame the input brings, which
// holds up the page's next task for milliseconds); else with null, for a
// read then, after the tasks the events queued with no delay (a framework's
// own update of the value), or at release() or end().
//
// Constant code: no page or user text is part of it.
function installKeyGuard(field) {
  const doc = field.ownerDocument;
  const win = doc.defaultView;
  const hadFocus = doc.hasFocus();
  const types = ['keydown', 'keypress', 'keyup', 'beforeinput'];
  let why = '';
  let until = 0;
  const stray = (e) => {
    if (!e.isTrusted || performance.now() > until) return;
    if (e.composedPath()[0] === field) return;
    if (!why) why = 'focus-moved';
    e.preventDefault();
    e.stopImmediatePropagation();
  };
  // The element's input events since the install, and the read-backs
  // waiting for them (after).
  let inputs = 0;
  let waits = [];
  const settle = (w, v) => {
    waits = waits.filter(x => x !== w);
    w.resolve(v);
  };
  const wake = (all) => {
    for (const w of waits.slice()) if (all || inputs >= w.n) settle(w, null);
  };
  const ours = (e) => e.isTrusted && e.composedPath().indexOf(field) >= 0;
  // Capture: count the event; wake the waits two task hops later.
  const typed = (e) => {
    if (!ours(e)) return;
    inputs++;
    afterTasks(win, () => wake(false));
  };
  // Bubble, past the page's own listeners: the early read.
  const dispatched = (e) => {
    if (!ours(e)) return;
    for (const w of waits.slice()) {
      if (inputs < w.n || !w.early) continue;
      let v = null;
      try { v = w.early(); } catch (x) { v = null; }
      if (v) settle(w, v);
    }
  };
  const guard = {
    field: field, // dtb's read-back reaches the element through the guard
    check() {
      if (!why) {
        if (!field.isConnected) why = 'detached';
        else if (field.getRootNode().activeElement !== field) why = 'focus-moved';
        else if (hadFocus && !doc.hasFocus()) why = 'focus-moved';
      }
      until = why ? 0 : performance.now() + 1000;
      return why;
    },
    after(n, early) {
      if (inputs >= n) return Promise.resolve(null);
      return new Promise(resolve => waits.push({ n: n, early: early, resolve: resolve }));
    },
    release() { wake(true); },
    end() {
      until = 0;
      for (const t of types) win.removeEventListener(t, stray, true);
      win.removeEventListener('input', typed, true);
      win.removeEventListener('input', dispatched, false);
      wake(true);
    },
  };
  // The first check is the install's: a reason (a string) when input
  // cannot even start.
  const first = guard.check();
  if (first) return first;
  for (const t of types) win.addEventListener(t, stray, true);
  win.addEventListener('input', typed, true);
  win.addEventListener('input', dispatched, false);
  return guard;
}

// keepGuard installs the key guard on el (the focused element) and keeps it
// in the library, by id, for the calls that check it, read the field back
// through it and end it: {id}, {why} when input cannot start, {threw} when
// the page broke the install, null with nothing to guard. A guard dtb never
// ended (its process went away) is ended when 32 newer ones are kept.
function keepGuard(el) {
  if (!el) return null;
  let g;
  try { g = installKeyGuard(el); } catch (e) { return { threw: true }; }
  if (typeof g === 'string') return { why: g };
  const kept = LIB.guards || (LIB.guards = new Map());
  if (kept.size >= 32) {
    const [oldest, old] = kept.entries().next().value;
    old.end();
    kept.delete(oldest);
  }
  LIB.guardSeq = (LIB.guardSeq || 0) + 1;
  kept.set(LIB.guardSeq, g);
  return { id: LIB.guardSeq };
}

// keptGuard: the guard keepGuard kept as id, or null ("lost": another
// document or library).
function keptGuard(id) {
  return (LIB.guards && LIB.guards.get(id)) || null;
}

// Read-backs sent ahead of the focus call they check (op "readbackFor"), by
// the token both carry: what the focus call left (its guard and the text the
// field must then hold), or the read-back waiting for it. The read-back goes
// out first, so that it waits at the page before the text comes, and reads
// the field as the text's input event ends (guard.after).
function readBacks() {
  return LIB.readbacks || (LIB.readbacks = new Map());
}

// leaveReadBack: the focus call r of act (a typing focus with act.readback,
// its token) leaves its guard and wanted value for the read-back, or why there
// is nothing to read back (no kept guard, not a field, a value set by value).
function leaveReadBack(act, r) {
  const ok = r.guard && r.guard.id && r.field && !r.byValue && !r.error;
  const left = ok ? { guard: r.guard.id, want: r.want, ce: !!r.ce, loose: !!r.loose } : { none: true };
  handReadBack(act.readback, left);
}

// handReadBack gives what a focus call left (or a drop) to the read-back of
// token, now or when it comes.
function handReadBack(token, left) {
  const m = readBacks();
  const w = m.get(token);
  if (w && w.waiting) {
    m.delete(token);
    w.waiting(left);
  } else {
    // Left for a read-back that never came (its call reached another
    // document): the oldest such goes once 32 are kept.
    if (m.size >= 32) {
      for (const [k, v] of m) {
        if (!v.waiting) {
          m.delete(k);
          break;
        }
      }
    }
    m.set(token, left);
  }
}

// readBackFor: the read-back of token (see readBacks); { skip: true } when
// its focus call left nothing to read.
function readBackFor(token) {
  const m = readBacks();
  const run = function (left) {
    const g = left && !left.none ? keptGuard(left.guard) : null;
    if (!g) return { skip: true };
    const req = { op: 'ref', need: 'any', act: { kind: 'readback', want: left.want, ce: left.ce, loose: left.loose } };
    const early = () => {
      const r = onRef(req, g.field);
      return r && r.act && r.act.ok ? r : null;
    };
    return g.after(1, early).then(r => r || onRef(req, g.field));
  };
  const left = m.get(token);
  if (left && !left.waiting) {
    m.delete(token);
    return run(left);
  }
  return new Promise(resolve => m.set(token, { waiting: resolve })).then(run);
}
