// Runs in the page: reads or drives window[globalName] (the dev toolbar's agent
// bridge registry, protocol version 2) and answers with a JSON string, so key order
// survives and an unserialisable result becomes an error instead of a CDP failure.
async (op, o) => {
  const answer = (v) => {
    // A failure names the tab it happened in (dtb knows only the target id).
    if (v.failed) Object.assign(v, { url: location.href, title: document.title });
    try {
      return JSON.stringify(v);
    } catch (e) {
      return JSON.stringify({ failed: "threw", error: "the result could not be serialised — " + String(e), errorName: e && e.name });
    }
  };
  const g = globalThis[o.globalName];
  if (g === undefined || g === null) {
    return answer({ failed: "no-toolbar", detail: "absent" });
  }
  if (typeof g !== "object" || g.protocolVersion !== 2 || typeof g.instances !== "object" || g.instances === null) {
    return answer({ failed: "no-toolbar", detail: "not-a-registry", protocolVersion: g && typeof g === "object" ? g.protocolVersion ?? null : null });
  }
  const ids = Object.keys(g.instances);
  if (ids.length === 0) return answer({ failed: "no-toolbar", detail: "no-instances" });
  let id = o.instance;
  if (id) {
    if (!Object.prototype.hasOwnProperty.call(g.instances, id)) return answer({ failed: "no-such-instance", instances: ids });
  } else if (ids.length > 1) {
    return answer({ failed: "ambiguous-instance", instances: ids });
  } else {
    id = ids[0];
  }
  const h = g.instances[id];
  const now = new Date().toISOString();
  const connection = {
    via: "cdp",
    instanceId: typeof h.instanceId === "string" ? h.instanceId : id,
    allowRun: h.allowRun === true,
    connected: true,
    checkedInAt: now,
    reportedAt: now,
    ageMs: 0,
    stale: false,
    staleMs: null,
    reporterId: null,
    reporters: 1,
    ambiguous: false,
    instances: ids,
    tab: { ...o.tab, url: location.href, title: document.title },
  };
  const tornDown = (e) => e && typeof e.message === "string" && e.message.includes("after its toolbar unmounted");
  try {
    if (op === "state") {
      // read() is synchronous by the spec; a bridge that returns a promise is
      // awaited, so one that never settles is the command's timeout, not an empty
      // snapshot.
      const snapshot = await h.read();
      const extensions = {};
      if (Array.isArray(snapshot.diagnostics)) {
        for (const d of snapshot.diagnostics) {
          if (d && typeof d.id === "string") extensions[d.id] = d.status === "ok" ? d.data ?? null : null;
        }
      }
      // Same shape as the relay's GET /state: the snapshot's keys, then these two.
      return answer({ doc: { ...snapshot, connection, extensions } });
    }
    if (op === "commands") {
      return answer({ doc: { instanceId: connection.instanceId, allowRun: connection.allowRun, connection, commands: await h.listCommands() } });
    }
    if (op === "run") {
      if (typeof h.runCommand !== "function") return answer({ failed: "run-not-allowed", instanceId: connection.instanceId });
      const started = performance.now();
      let outcome = o.hasInput ? await h.runCommand(o.id, o.input) : await h.runCommand(o.id);
      const waitedMs = Math.round(performance.now() - started);
      if (outcome === null || typeof outcome !== "object") {
        return answer({ failed: "no-outcome", command: o.id, waitedMs });
      }
      // As the reporter does (spec §3.6): an outcome that will not serialise (a
      // BigInt result) is the command's failure, reported like any other outcome.
      try {
        JSON.stringify(outcome);
      } catch (e) {
        outcome = { ok: false, reason: "threw", error: "the result could not be serialised — " + String(e) };
      }
      return answer({ doc: { ...outcome, command: o.id, instanceId: connection.instanceId, via: "cdp", waitedMs } });
    }
    return answer({ failed: "usage", error: "unknown op " + op });
  } catch (e) {
    if (tornDown(e)) return answer({ failed: "torn-down", error: e.message, instanceId: id });
    return answer({ failed: "threw", error: e && e.message !== undefined ? String(e.message) : String(e), errorName: e instanceof Error ? e.name : undefined });
  }
};
