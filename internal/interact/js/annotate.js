// annotate.js: the overlay `screenshot --annotate` draws over the top
// document: a box and a ref tag per element. It is one element (ANNOTATE_TAG)
// with a closed shadow root, the first child of <html>, before <head>: no
// rendered element changes its place among its siblings (body stays
// html's last child), so selectors such as :last-child still match as
// before. It is out of flow (fixed for the viewport, absolute for the whole
// page), never hit by the pointer, on top of the page's stacking contexts,
// and its styles are inline and important: the page's layout does not
// change and the page's rules do not move it.

const ANNOTATE_TAG = 'dtb-annotations';
const ANNOTATE_COLORS = ['#d6246e', '#1565c0', '#2e7d32', '#e65100', '#6a1b9a', '#00838f'];

// annotateRemove takes away every overlay of the document (a left-over of a
// killed run included); it returns how many it removed.
function annotateRemove() {
  const root = TOP_DOC.documentElement;
  if (!root) return 0;
  const old = Array.from(root.children).filter(c => c.localName === ANNOTATE_TAG);
  for (const c of old) c.remove();
  return old.length;
}

// annotate draws req.boxes ([x, y, w, h] in the viewport, CSS px) labelled
// req.labels; with req.full the page's whole extent counts, else the
// viewport. It returns which boxes it drew (the others lie outside) and
// where, in the image's coordinates: the viewport's, or the document's
// with req.full.
function annotate(req) {
  annotateRemove();
  const doc = TOP_DOC;
  const root = doc.documentElement;
  const win = winOf(doc);
  if (!root) return { drawn: [], boxes: [] };
  const sx = win.scrollX, sy = win.scrollY;
  // The whole page is the document's scroll size: no larger, or the host
  // would widen it.
  const w = req.full ? root.scrollWidth : win.innerWidth;
  const h = req.full ? root.scrollHeight : win.innerHeight;
  // Styles through the CSSOM, important: a page's CSP allows them (it may
  // refuse style attributes and <style>), and its rules cannot override them.
  const css = function (el, props) {
    for (const k in props) el.style.setProperty(k, String(props[k]), 'important');
    return el;
  };
  const host = css(doc.createElement(ANNOTATE_TAG), {
    all: 'initial', display: 'block', position: req.full ? 'absolute' : 'fixed', left: '0', top: '0', width: w + 'px', height: h + 'px',
    margin: '0', padding: '0', border: '0', overflow: 'hidden', 'pointer-events': 'none', 'z-index': '2147483647', contain: 'strict',
  });
  const shadow = host.attachShadow({ mode: 'closed' });
  root.insertBefore(host, root.firstChild);
  // Where the host landed (a transformed or positioned <html> moves it): the
  // boxes are placed relative to it.
  const hr = host.getBoundingClientRect();
  const ox = hr.left + (req.full ? sx : 0), oy = hr.top + (req.full ? sy : 0);
  const drawn = [];
  const boxes = [];
  for (let i = 0; i < req.boxes.length; i++) {
    const b = req.boxes[i];
    // In the image's coordinates, cut to it.
    let x = b[0] + (req.full ? sx : 0), y = b[1] + (req.full ? sy : 0);
    let x1 = x + b[2], y1 = y + b[3];
    if (b[2] <= 0 || b[3] <= 0 || x1 <= 0 || y1 <= 0 || x >= w || y >= h) continue;
    x = Math.max(x, 0); y = Math.max(y, 0); x1 = Math.min(x1, w); y1 = Math.min(y1, h);
    drawn.push(i);
    boxes.push([Math.round(x), Math.round(y), Math.round(x1 - x), Math.round(y1 - y)]);
    const color = ANNOTATE_COLORS[i % ANNOTATE_COLORS.length];
    const label = String(req.labels[i]);
    shadow.appendChild(css(doc.createElement('div'), {
      position: 'absolute', 'box-sizing': 'border-box', left: (x - ox) + 'px', top: (y - oy) + 'px', width: (x1 - x) + 'px', height: (y1 - y) + 'px',
      border: '2px solid ' + color, 'border-radius': '2px',
    }));
    // The tag sits above the box when there is room, else inside it.
    const tag = css(doc.createElement('div'), {
      position: 'absolute', left: Math.max(Math.min(x, w - (label.length * 7 + 8)), 0) - ox + 'px', top: (y >= 15 ? y - 15 : y) - oy + 'px',
      height: '15px', padding: '0 3px', background: color, color: '#fff', font: 'bold 11px/15px monospace', 'white-space': 'nowrap',
      'border-radius': '2px',
    });
    tag.textContent = label;
    shadow.appendChild(tag);
  }
  return { drawn: drawn, boxes: boxes };
}
