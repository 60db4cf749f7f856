// resources: the page's navigation and resource timing entries (what the
// browser kept of the requests the document made), with the buffer's state.
() => {
  const origin = performance.timeOrigin;
  const round = (x) => Math.round(x * 10) / 10;
  const out = [];
  for (const e of performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))) {
    out.push({
      url: e.name,
      initiator: e.initiatorType,
      status: e.responseStatus || 0,
      transferSize: e.transferSize || 0,
      bodySize: e.encodedBodySize || 0,
      durationMs: round(e.duration),
      start: origin + e.startTime,
      protocol: e.nextHopProtocol || '',
      cached: e.deliveryType === 'cache' || (e.transferSize === 0 && e.decodedBodySize > 0),
    });
  }
  return { url: location.href, entries: out, resourceCount: performance.getEntriesByType('resource').length };
}
