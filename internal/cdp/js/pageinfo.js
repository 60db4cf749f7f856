// pageinfo: the facts `dtb open` reports about the document now in the tab.
() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return {
    url: location.href,
    title: document.title,
    status: nav && nav.responseStatus ? nav.responseStatus : null,
    readyState: document.readyState,
  };
}
