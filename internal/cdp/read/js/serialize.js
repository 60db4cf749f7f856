// serialize: the rendered, visible DOM of this document as HTML for
// internal/extract, in one pass over the flat tree.
//
// - Open shadow roots are inlined where they render: a host's shadow tree
//   replaces its light children, and each <slot> is replaced by the nodes
//   assigned to it (or its fallback content). Closed roots are out of reach.
// - Same-origin frames are read through contentDocument into entries of their
//   own (ids f1, f2 … in flat-tree order; a frame inside f2 is f2.1). A
//   cross-origin frame gets an entry with pending = true and is read by the Go
//   side in its own context; the frame element's id is kept in a WeakMap under
//   Symbol.for('dtb.frames') so the Go side can match the frame's owner.
// - Left out: display:none subtrees, text under visibility:hidden, the hidden
//   attribute, aria-hidden="true" (unless opts.keepAriaHidden), boxes clipped to
//   (nearly) nothing (overflow hidden at ≤ 1px, clip, clip-path inset(50%)),
//   closed <details> bodies, content-visibility:hidden contents, invisible
//   zero-size frames, scripts, styles, templates, noscript, comments.
// - Custom elements become <div> or <span> by their display, so the text
//   layout of the Go side sees blocks where the page shows blocks.
// - Form controls carry their current state (value, checked, selected); a
//   password field's value is never copied.
// - Attributes are copied except event handlers, style (unless
//   opts.keepStyle), and values longer than opts.maxAttr characters.
//
// opts (JSON): {prefix, keepStyle, keepAriaHidden, frames, maxAttr}. Page text
// is only ever data here.
(opts) => {
  const o = Object.assign({ prefix: 'f', keepStyle: false, keepAriaHidden: false, frames: true, maxAttr: 4096 }, opts || {});
  const HTML_NS = 'http://www.w3.org/1999/xhtml';
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const MATH_NS = 'http://www.w3.org/1998/Math/MathML';
  const SKIP = new Set(['script', 'style', 'template', 'noscript', 'link', 'meta', 'base', 'title', 'head', 'source', 'track', 'param']);
  const VOID = new Set(['area', 'br', 'col', 'embed', 'hr', 'img', 'input', 'wbr']);
  const EMPTY = new Set(['video', 'audio', 'canvas', 'object', 'embed', 'iframe', 'frame', 'picture']);
  const FRAMES = Symbol.for('dtb.frames');
  const frameIDs = new WeakMap();
  Object.defineProperty(window, FRAMES, { value: frameIDs, configurable: true, enumerable: false, writable: true });

  const reAmpLt = /[&<>]/;
  const escText = (s) => reAmpLt.test(s) ? s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : s;
  const reAttr = /[&"]/;
  const escAttr = (s) => reAttr.test(s) ? s.replace(/&/g, '&amp;').replace(/"/g, '&quot;') : s;
  const originOf = (u) => { try { return new URL(u).origin; } catch (e) { return ''; } };

  let nodes = 0;
  const frames = [];

  // readDoc serialises one document; ids of its frames start with prefix.
  function readDoc(doc, prefix) {
    const view = doc.defaultView;
    const out = [];
    let frameCount = 0;

    const hiddenByClip = (el, cs) => {
      const ox = cs.overflowX, oy = cs.overflowY;
      const overflowClips = ox !== 'visible' && oy !== 'visible';
      const clip = cs.clip && cs.clip !== 'auto' && (cs.position === 'absolute' || cs.position === 'fixed');
      const clipPath = cs.clipPath && cs.clipPath !== 'none';
      if (!overflowClips && !clip && !clipPath) return false;
      if (clipPath && /^inset\(\s*(50|100)%/.test(cs.clipPath)) return true;
      const r = el.getBoundingClientRect();
      if ((overflowClips || clip) && (r.width <= 1 || r.height <= 1)) return true;
      if (clip) {
        const n = cs.clip.match(/-?[\d.]+/g);
        if (n && n.length === 4 && (+n[1] - +n[3] <= 1 || +n[2] - +n[0] <= 1)) return true;
      }
      return false;
    };

    const attrs = (el, tag, skipValue) => {
      const a = el.attributes;
      for (let i = 0; i < a.length; i++) {
        const name = a[i].name;
        if (name.length > 2 && name.charCodeAt(0) === 111 && name.charCodeAt(1) === 110) continue; // on*
        if (name === 'style' && !o.keepStyle) continue;
        if (skipValue && (name === 'value' || name === 'checked' || name === 'selected')) continue;
        if (tag === 'img' && (name === 'src' || name === 'srcset')) continue;
        let v = a[i].value;
        if (v.length > o.maxAttr) continue;
        if (!/^[a-zA-Z_:][-a-zA-Z0-9_:.]*$/.test(name)) continue;
        out.push(' ', name, '="', escAttr(v), '"');
      }
    };

    const formState = (el, tag) => {
      if (tag === 'input') {
        const type = (el.type || '').toLowerCase();
        if (type === 'checkbox' || type === 'radio') {
          if (el.checked) out.push(' checked');
        } else if (type !== 'password' && type !== 'file' && el.value !== '') {
          out.push(' value="', escAttr(String(el.value).slice(0, o.maxAttr)), '"');
        }
      } else if (tag === 'option' && el.selected) {
        out.push(' selected');
      }
    };

    const svg = (el) => {
      const cs = view.getComputedStyle(el);
      if (cs.display === 'none') return;
      nodes++;
      out.push('<svg');
      for (const name of ['role', 'aria-label']) {
        const v = el.getAttribute(name);
        if (v) out.push(' ', name, '="', escAttr(v), '"');
      }
      out.push('>');
      const t = el.querySelector(':scope > title');
      if (t && t.textContent) out.push('<title>', escText(t.textContent), '</title>');
      out.push('</svg>');
    };

    const frame = (el, tag) => {
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) return;
      const id = prefix + (++frameCount);
      frameIDs.set(el, id);
      out.push('<', tag, ' data-dtb-frame="', id, '"></', tag, '>');
      const src = el.src || (el.hasAttribute('srcdoc') ? 'about:srcdoc' : 'about:blank');
      if (!o.frames) {
        frames.push({ id: id, url: src, origin: originOf(src), name: el.name || '', read: false, error: 'frames not read' });
        return;
      }
      let cd = null;
      try { cd = el.contentDocument; } catch (e) { cd = null; }
      if (cd && cd.documentElement) {
        const w = cd.defaultView;
        const entry = { id: id, url: cd.URL, origin: w ? w.origin : originOf(cd.URL), title: cd.title, read: true, html: '' };
        frames.push(entry);
        entry.html = readDoc(cd, id + '.');
      } else {
        frames.push({ id: id, url: src, origin: originOf(src), name: el.name || '', read: false, pending: true });
      }
    };

    const children = (parent, vis) => {
      for (let c = parent.firstChild; c; c = c.nextSibling) node(c, vis);
    };

    const node = (n, vis) => {
      if (n.nodeType === 3) {
        if (vis) out.push(escText(n.data));
        return;
      }
      if (n.nodeType === 1) element(n, vis);
    };

    const element = (el, parentVis) => {
      const ns = el.namespaceURI;
      if (ns === SVG_NS) { svg(el); return; }
      if (ns !== HTML_NS && ns !== MATH_NS) return;
      const tag = el.localName;
      if (SKIP.has(tag)) return;
      if (el.hasAttribute('hidden')) return;
      if (!o.keepAriaHidden && el.getAttribute('aria-hidden') === 'true') return;
      const cs = view.getComputedStyle(el);
      const disp = cs.display;
      if (disp === 'none') return;
      if (disp !== 'contents' && disp !== 'inline' && hiddenByClip(el, cs)) return;
      const vis = cs.visibility === 'visible';
      nodes++;
      if (tag === 'slot') {
        const assigned = el.assignedNodes();
        if (assigned.length) for (const a of assigned) node(a, vis);
        else children(el, vis);
        return;
      }
      if (tag === 'iframe' || tag === 'frame') {
        frame(el, tag);
        return;
      }
      let name = tag;
      if (ns === HTML_NS && (tag.indexOf('-') > 0 || tag === 'div' || tag === 'span')) {
        name = disp.startsWith('inline') || disp === 'ruby' ? 'span' : 'div';
      } else if (ns === MATH_NS) {
        name = tag;
      }
      out.push('<', name);
      const isForm = tag === 'input' || tag === 'option';
      attrs(el, tag, isForm);
      if (isForm) formState(el, tag);
      if (tag === 'img') {
        const src = el.currentSrc || el.src;
        if (src && src.length <= o.maxAttr) out.push(' src="', escAttr(src), '"');
      }
      out.push('>');
      if (VOID.has(tag)) return;
      if (tag === 'textarea') {
        if (vis) out.push(escText(el.value));
      } else if (EMPTY.has(tag)) {
        if (tag === 'picture') {
          const img = el.querySelector('img');
          if (img) element(img, vis);
        }
      } else if (tag === 'details' && !el.open) {
        for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
          if (c.localName === 'summary') { element(c, vis); break; }
        }
      } else if (cs.contentVisibility === 'hidden') {
        // rendered as an empty box
      } else if (el.shadowRoot) {
        children(el.shadowRoot, vis);
      } else {
        children(el, vis);
      }
      out.push('</', name, '>');
    };

    // <head>: what the Go side reads metadata from (title, base, meta, JSON-LD).
    const root = doc.documentElement;
    out.push('<!DOCTYPE html><html');
    if (root && root.getAttribute('lang')) out.push(' lang="', escAttr(root.getAttribute('lang')), '"');
    if (root && root.getAttribute('dir')) out.push(' dir="', escAttr(root.getAttribute('dir')), '"');
    out.push('><head><meta charset="utf-8"><title>', escText(doc.title || ''), '</title>');
    out.push('<base href="', escAttr(doc.baseURI || ''), '">');
    if (doc.head) {
      for (const m of doc.head.querySelectorAll('meta[content]')) {
        const key = m.getAttribute('name') ? 'name' : m.getAttribute('property') ? 'property' : m.getAttribute('itemprop') ? 'itemprop' : '';
        if (!key) continue;
        out.push('<meta ', key, '="', escAttr(m.getAttribute(key)), '" content="', escAttr(m.getAttribute('content').slice(0, o.maxAttr)), '">');
      }
    }
    for (const s of doc.querySelectorAll('script[type="application/ld+json"]')) {
      const t = s.textContent || '';
      if (t.length <= 100000) out.push('<script type="application/ld+json">', t.replace(/<\/(script)/gi, '<\\/$1'), '</script>');
    }
    out.push('</head>');
    const body = doc.body;
    if (body) {
      if (body.localName === 'body') {
        const cs = view.getComputedStyle(body);
        out.push('<body>');
        if (cs.display !== 'none') {
          if (body.shadowRoot) children(body.shadowRoot, cs.visibility === 'visible');
          else children(body, cs.visibility === 'visible');
        }
        out.push('</body>');
      } else {
        // a frameset document
        out.push('<body>');
        for (const f of body.querySelectorAll('frame')) frame(f, 'iframe');
        out.push('</body>');
      }
    }
    out.push('</html>');
    return out.join('');
  }

  const started = performance.now();
  const html = readDoc(document, o.prefix);
  return {
    url: location.href,
    title: document.title,
    origin: location.origin,
    html: html,
    frames: frames,
    nodes: nodes,
    ms: Math.round(performance.now() - started),
  };
}
