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
// - Kept nonetheless, as readers keep them: aria-hidden fallback images (class
//   *fallback-image*, or an image with alt text beside a MathML formula), and
//   clipped boxes holding MathML (the formula of KaTeX and MathJax, whose
//   visual rendering is aria-hidden). A <noscript> whose markup holds an image
//   is kept as raw text (the Go side unwraps it as readers do).
// - When <html> or <body> itself is hidden (an anti-flicker style never
//   removed: visibility:hidden, opacity:0, display:none on body), the page is
//   read as if shown and the result says so in `hidden`.
// - Tags are kept as they are, so the reader sees the markup the saved page
//   would give it; a <div> or <span> whose display says otherwise carries
//   data-dtb-display="inline|block" for the Go side's text layout. Custom
//   elements become <div> or <span> by their display (always <span> inside
//   preformatted text, where a block span also ends its line).
// - Images carry the URL the browser shows (currentSrc), else their non-empty
//   src resolved; an empty src is dropped, srcset and data-* attributes are
//   kept for the Go side, and <picture> keeps its <source> elements.
// - Form controls carry their current state (value, checked, selected); a
//   password field's value is never copied.
// - Attributes are copied except event handlers, style (unless
//   opts.keepStyle), and values longer than opts.maxAttr characters.
//
// opts (JSON): {prefix, top, keepStyle, keepAriaHidden, frames, maxAttr}. Page text
// is only ever data here.
(opts) => {
  const o = Object.assign({ prefix: 'f', top: false, keepStyle: false, keepAriaHidden: false, frames: true, maxAttr: 4096 }, opts || {});
  const HTML_NS = 'http://www.w3.org/1999/xhtml';
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const MATH_NS = 'http://www.w3.org/1998/Math/MathML';
  const SKIP = new Set(['script', 'style', 'template', 'link', 'meta', 'base', 'title', 'head', 'source', 'track', 'param']);
  const PRE = new Set(['pre', 'listing', 'xmp', 'plaintext', 'textarea']);
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
  // Visibility states passed down the walk: text under 0 is hidden; FORCED is
  // visible only because a hidden <html>/<body> is read as if shown.
  const FORCED = 2;

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
        if (tag === 'img' && name === 'src') continue;
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

    const children = (parent, vis, pre) => {
      for (let c = parent.firstChild; c; c = c.nextSibling) node(c, vis, pre);
    };

    const node = (n, vis, pre) => {
      if (n.nodeType === 3) {
        if (vis) out.push(escText(n.data));
        return;
      }
      if (n.nodeType === 1) element(n, vis, pre);
    };

    // A fallback that readers keep although it is hidden from assistive tech:
    // Readability's fallback-image class, or an image whose alt text stands for
    // a MathML formula next to it (the formula itself being hidden).
    const readerFallback = (el, tag) => {
      if (/fallback-image/.test(el.getAttribute('class') || '')) return true;
      return tag === 'img' && !!el.getAttribute('alt') && !!el.parentElement &&
        el.parentElement.getElementsByTagNameNS(MATH_NS, 'math').length > 0;
    };
    const holdsMath = (el) => el.namespaceURI === MATH_NS || el.getElementsByTagNameNS(MATH_NS, 'math').length > 0;

    // noscript: its content is raw text while scripts run; kept (as that raw
    // text) only when it holds an image, the fallback readers use.
    const noscript = (el) => {
      const t = el.textContent || '';
      if (!/<img[\s>]/i.test(t) || /<\/noscript/i.test(t) || t.length > o.maxAttr) return;
      out.push('<noscript>', t, '</noscript>');
    };

    const picture = (el, vis) => {
      for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
        if (c.localName === 'source') {
          out.push('<source');
          attrs(c, 'source', false);
          out.push('>');
        } else if (c.localName === 'img') {
          element(c, vis, false);
        }
      }
    };

    // imgSrc is the image's URL as the browser shows it: the current source, else
    // a non-empty src resolved (img.src of src="" is the page itself).
    const imgSrc = (el) => {
      if (el.currentSrc) return el.currentSrc;
      const a = el.getAttribute('src');
      return a && a.trim() ? el.src : '';
    };

    const element = (el, parentVis, pre) => {
      const ns = el.namespaceURI;
      if (ns === SVG_NS) { svg(el); return; }
      if (ns !== HTML_NS && ns !== MATH_NS) return;
      const tag = el.localName;
      if (SKIP.has(tag)) return;
      if (el.hasAttribute('hidden')) return;
      if (tag === 'noscript') { noscript(el); return; }
      if (!o.keepAriaHidden && el.getAttribute('aria-hidden') === 'true' && !readerFallback(el, tag)) return;
      const cs = view.getComputedStyle(el);
      const disp = cs.display;
      if (disp === 'none') return;
      if (disp !== 'contents' && disp !== 'inline' && hiddenByClip(el, cs) && !holdsMath(el)) return;
      let vis = cs.visibility === 'visible' ? 1 : 0;
      if (!vis && parentVis === FORCED) vis = FORCED;
      nodes++;
      if (tag === 'slot') {
        const assigned = el.assignedNodes();
        if (assigned.length) for (const a of assigned) node(a, vis, pre);
        else children(el, vis, pre);
        return;
      }
      if (tag === 'iframe' || tag === 'frame') {
        frame(el, tag);
        return;
      }
      let name = tag, display = '';
      const inline = disp.startsWith('inline') || disp === 'ruby';
      if (ns === HTML_NS && tag.indexOf('-') > 0) {
        name = inline || pre ? 'span' : 'div';
      } else if ((tag === 'span' && !inline && disp !== 'contents') || (tag === 'div' && inline)) {
        display = inline ? 'inline' : 'block';
      }
      out.push('<', name);
      const isForm = tag === 'input' || tag === 'option';
      attrs(el, tag, isForm);
      if (isForm) formState(el, tag);
      if (display) out.push(' data-dtb-display="', display, '"');
      if (tag === 'img') {
        const src = imgSrc(el);
        if (src && src.length <= o.maxAttr) out.push(' src="', escAttr(src), '"');
      }
      out.push('>');
      if (VOID.has(tag)) return;
      const inPre = pre || PRE.has(tag);
      if (tag === 'textarea') {
        if (vis) out.push(escText(el.value));
      } else if (tag === 'picture') {
        picture(el, vis);
      } else if (EMPTY.has(tag)) {
        // embedded content: its own document or pixels
      } else if (tag === 'details' && !el.open) {
        for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
          if (c.localName === 'summary') { element(c, vis, inPre); break; }
        }
      } else if (cs.contentVisibility === 'hidden') {
        // rendered as an empty box
      } else if (el.shadowRoot) {
        children(el.shadowRoot, vis, inPre);
      } else {
        children(el, vis, inPre);
      }
      if (pre && !inline && vis && endsLine(el)) out.push('\n');
      out.push('</', name, '>');
    };

    // endsLine: a block inside preformatted text ends its line, which its own
    // text does not (highlighters wrap each line in a display:block span).
    const endsLine = (el) => {
      const t = el.textContent;
      if (!t || t.endsWith('\n')) return false;
      const next = el.nextSibling;
      return !(next && next.nodeType === 3 && next.data.startsWith('\n'));
    };

    // <head>: what the Go side reads metadata from (title, base, meta, JSON-LD).
    const root = doc.documentElement;
    out.push('<!DOCTYPE html><html');
    if (root && root.getAttribute('lang')) out.push(' lang="', escAttr(root.getAttribute('lang')), '"');
    if (root && root.getAttribute('dir')) out.push(' dir="', escAttr(root.getAttribute('dir')), '"');
    out.push('><head><meta charset="utf-8"><title>', escText(doc.title || ''), '</title>');
    out.push('<base href="', escAttr(doc.baseURI || ''), '">');
    // Metadata wherever the parser put it: a script in <head> that writes
    // content closes the head early, and every later <meta> lands in <body>.
    for (const m of doc.querySelectorAll('meta[content]')) {
      if (m.namespaceURI !== HTML_NS) continue;
      const keys = ['name', 'property', 'itemprop'].filter((k) => m.getAttribute(k));
      if (!keys.length) continue;
      out.push('<meta');
      for (const k of keys) out.push(' ', k, '="', escAttr(m.getAttribute(k).slice(0, o.maxAttr)), '"');
      out.push(' content="', escAttr(m.getAttribute('content').slice(0, o.maxAttr)), '">');
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
        // A hidden page as a whole is an anti-flicker style left in place: read
        // it as if shown, and say so.
        const why = o.top && doc === document ? hiddenPage(root, body, cs) : '';
        if (why) hidden = why;
        const vis = cs.visibility === 'visible' ? 1 : why ? FORCED : 0;
        out.push('<body>');
        if (cs.display !== 'none' || why) {
          if (body.shadowRoot) children(body.shadowRoot, vis, false);
          else children(body, vis, false);
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

  // hidden: why the top document as a whole is invisible ('' when it is not).
  let hidden = '';
  function hiddenPage(root, body, bcs) {
    const view = body.ownerDocument.defaultView;
    const rcs = root ? view.getComputedStyle(root) : null;
    const why = [];
    if (bcs.display === 'none') why.push('display:none on <body>');
    if (rcs && rcs.visibility !== 'visible') why.push('visibility:' + rcs.visibility + ' on <html>');
    else if (bcs.visibility !== 'visible') why.push('visibility:' + bcs.visibility + ' on <body>');
    if (rcs && rcs.opacity === '0') why.push('opacity:0 on <html>');
    if (bcs.opacity === '0') why.push('opacity:0 on <body>');
    return why.join(', ');
  }

  const started = performance.now();
  const html = readDoc(document, o.prefix);
  return {
    hidden: hidden,
    url: location.href,
    title: document.title,
    origin: location.origin,
    html: html,
    frames: frames,
    nodes: nodes,
    ms: Math.round(performance.now() - started),
  };
}
