// storage: read or change the document's localStorage or sessionStorage.
// Keys and values arrive as JSON arguments, never spliced into code. An area
// the document may not use (an opaque origin) answers {unavailable: reason}.
(area, op, key, value) => {
  let s;
  try {
    s = area === 'session' ? window.sessionStorage : window.localStorage;
    s.length;
  } catch (e) {
    return { unavailable: String(e && e.name || e), origin: location.origin };
  }
  const all = () => {
    const items = {};
    for (let i = 0; i < s.length; i++) { const k = s.key(i); items[k] = s.getItem(k); }
    return items;
  };
  const res = { origin: location.origin };
  switch (op) {
    case 'list': res.items = all(); break;
    case 'get': res.found = s.getItem(key) !== null; res.value = s.getItem(key); break;
    case 'set':
      try { s.setItem(key, value); } catch (e) { return { failed: String(e && e.name || e), origin: location.origin }; }
      res.value = s.getItem(key);
      break;
    case 'remove': res.found = s.getItem(key) !== null; s.removeItem(key); break;
    case 'clear': res.count = s.length; s.clear(); break;
  }
  return res;
}
