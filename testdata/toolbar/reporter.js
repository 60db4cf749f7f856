// reporter.js: the page-side report transport (spec §3), plain JS.
//
// Every pollMs the page POSTs a check-in to `url`; the relay answers with commands
// queued for it (`pending`), which run one at a time, each answered by an immediate
// follow-up check-in carrying its outcome and a fresh snapshot.
// Exposes window.DtbFixture.startReporter(options) -> controller.
(function () {
  "use strict";

  var PREFIX = "[dev-toolbar/ext/agent]";

  function randomId() {
    if (globalThis.crypto && typeof crypto.randomUUID === "function") return crypto.randomUUID();
    return "r-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 10).padEnd(8, "0");
  }

  function isPlainObject(v) {
    return !!v && typeof v === "object" && !Array.isArray(v);
  }

  // options: handle, url, pollMs (500), intervalMs (1000), timeoutMs (5000),
  //   reporterId (string; null omits the key; undefined = random),
  //   protocolVersion (number; null omits the key), paused, holding,
  //   onChange() (called after every check-in, for the page's own display)
  function startReporter(options) {
    var handle = options.handle;
    var url = options.url;
    var pollMs = options.pollMs > 0 ? options.pollMs : 500;
    var intervalMs = options.intervalMs >= 0 ? options.intervalMs : 1000;
    var timeoutMs = options.timeoutMs > 0 ? options.timeoutMs : 5000;
    var reporterId = options.reporterId === undefined ? randomId() : options.reporterId;
    var protocolVersion = options.protocolVersion === undefined ? 2 : options.protocolVersion;
    var onChange = options.onChange || function () {};
    var doFetch = globalThis.fetch ? globalThis.fetch.bind(globalThis) : null;

    var stopped = false;
    var paused = !!options.paused;
    var holding = !!options.holding; // pick commands up, never answer them
    var zombie = false; // keep checking in after teardown (answers torn-down)
    var inFlight = false;
    var timer = null;

    var outbox = []; // results not yet delivered
    var queue = []; // pending commands picked up, not yet run
    var held = []; // picked up while holding
    var unsent = null; // {json, snapshot} published by the store, not yet delivered
    var lastDeliveredAt = -Infinity;
    var failing = false;
    var warnedSerialise = false;

    var stats = {
      instanceId: handle.instanceId, reporterId: reporterId, url: url,
      // commandsRun counts the commands callers asked for; the refresh probes a
      // relay sends to get a fresh snapshot (ids starting "__dtb_relay__.", which
      // no toolbar has) are run the same way and counted apart, in probesRun.
      checkIns: 0, ok: 0, failed: 0, snapshotsSent: 0, commandsRun: 0, probesRun: 0,
      lastStatus: null, lastError: null, lastCheckInAt: null, lastBody: null,
    };
    var recent = []; // the last 20 bodies, parsed
    // ran: the callers' commands this reporter ran, in order (the last 1000): id
    // and the first 80 characters of the input's JSON, so a test can tell which
    // caller's command ran.
    var ran = [];

    // createThrottledStore: string equality; leading edge, then a trailing publish.
    var store = { json: null, snapshot: null, lastPublishAt: -Infinity, trailing: null };
    function publish() {
      if (store.trailing) { clearTimeout(store.trailing); store.trailing = null; }
      store.lastPublishAt = Date.now();
      unsent = { json: store.json, snapshot: store.snapshot };
    }
    function storeWrite(json, snapshot) {
      if (json === store.json) return;
      store.json = json;
      store.snapshot = snapshot;
      var wait = store.lastPublishAt + intervalMs - Date.now();
      if (wait <= 0) publish();
      else if (!store.trailing) store.trailing = setTimeout(function () { store.trailing = null; if (!stopped) publish(); }, wait);
    }
    function storeFlush() {
      if (store.trailing) publish();
    }

    // read() -> {json, snapshot}, or null when it will not serialise; throws when torn down.
    function take() {
      var snapshot = handle.read();
      var json;
      try {
        json = JSON.stringify(snapshot);
      } catch (e) {
        if (!warnedSerialise) {
          warnedSerialise = true;
          console.warn(PREFIX + " could not serialise a snapshot (" + String(e) + "). This snapshot was skipped. Further failures are silent.");
        }
        return null;
      }
      return { json: json, snapshot: snapshot };
    }

    function post(snap, results) {
      var body = {};
      if (protocolVersion !== null) body.protocolVersion = protocolVersion;
      body.instanceId = handle.instanceId;
      if (reporterId !== null) body.reporterId = reporterId;
      body.allowRun = handle.allowRun;
      if (snap) body.snapshot = snap.snapshot;
      body.results = results;
      var text = JSON.stringify(body);
      stats.checkIns++;
      stats.lastCheckInAt = new Date().toISOString();
      stats.lastBody = text;
      recent.push(body);
      if (recent.length > 20) recent.shift();
      var controller = new AbortController();
      var t = setTimeout(function () { controller.abort(new DOMException("signal timed out", "TimeoutError")); }, timeoutMs);
      return doFetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: text,
        credentials: "omit",
        cache: "no-store",
        signal: controller.signal,
      }).then(function (res) {
        stats.lastStatus = res.status;
        if (!res.ok) throw { silent: true, message: "HTTP " + res.status };
        return res.json().catch(function (e) { throw { silent: true, message: String(e) }; });
      }).then(function (data) {
        if (!isPlainObject(data)) throw { silent: true, message: "the response is not a JSON object" };
        clearTimeout(t);
        failing = false;
        stats.ok++;
        stats.lastError = null;
        if (snap) { stats.snapshotsSent++; lastDeliveredAt = Date.now(); }
        return data;
      }).catch(function (e) {
        clearTimeout(t);
        stats.failed++;
        stats.lastError = e && e.message !== undefined ? String(e.message) : String(e);
        if (!(e && e.silent)) {
          stats.lastStatus = null;
          if (!failing) {
            console.warn(PREFIX + " could not reach the reporter endpoint " + JSON.stringify(url) + " (" + stats.lastError +
              "). Is the dev-server middleware installed? Further failures are silent.");
          }
          failing = true;
        }
        // Re-queue: the snapshot (unless a newer one is waiting) and every result.
        if (snap && !unsent) unsent = snap;
        outbox = results.concat(outbox);
        return null;
      }).finally(function () { onChange(); });
    }

    function pickUp(data) {
      if (!Array.isArray(data.pending)) return;
      data.pending.forEach(function (p) {
        if (!isPlainObject(p) || typeof p.token !== "string" || typeof p.id !== "string") return;
        var cmd = { token: p.token, id: p.id };
        if ("input" in p) cmd.input = p.input;
        (holding ? held : queue).push(cmd);
      });
    }

    async function runQueue() {
      while (queue.length && !stopped) {
        if (holding) { held = held.concat(queue.splice(0)); break; }
        var cmd = queue.shift();
        var outcome;
        if (typeof handle.runCommand !== "function") outcome = { ok: false, reason: "run-not-allowed" };
        else outcome = await handle.runCommand(cmd.id, cmd.input);
        try {
          JSON.stringify(outcome);
        } catch (e) {
          outcome = { ok: false, reason: "threw", error: "the result could not be serialised — " + String(e) };
        }
        if (cmd.id.indexOf("__dtb_relay__.") === 0) stats.probesRun++;
        else {
          stats.commandsRun++;
          var head = "input" in cmd ? JSON.stringify(cmd.input) : undefined;
          ran.push({ id: cmd.id, input: head === undefined ? null : head.slice(0, 80) });
          if (ran.length > 1000) ran.shift();
        }
        var fresh = null;
        try {
          fresh = take();
          if (fresh) {
            storeWrite(fresh.json, fresh.snapshot);
            if (unsent && unsent.json === fresh.json) unsent = null;
          }
        } catch (e) { /* unmounted meanwhile: no snapshot */ }
        var results = outbox.splice(0);
        results.push({ token: cmd.token, outcome: outcome });
        var data = await post(fresh, results);
        if (data) pickUp(data);
      }
    }

    async function pump() {
      if (stopped || paused || inFlight) return;
      inFlight = true;
      try {
        var snap = null;
        try {
          snap = take();
        } catch (e) {
          if (!zombie) { stop(); return; }
        }
        if (snap) storeWrite(snap.json, snap.snapshot);
        if (!unsent && Date.now() - lastDeliveredAt >= intervalMs) storeFlush();
        var toSend = unsent;
        unsent = null;
        var data = await post(toSend, outbox.splice(0));
        if (data) {
          pickUp(data);
          await runQueue();
        }
      } finally {
        inFlight = false;
      }
    }

    function stop() {
      if (stopped) return;
      stopped = true;
      if (timer) clearInterval(timer);
      if (store.trailing) clearTimeout(store.trailing);
      onChange();
    }

    if (!doFetch) {
      stopped = true; // no fetch: the reporter does nothing
    } else {
      setTimeout(pump, 0);
      timer = setInterval(pump, pollMs);
    }

    return {
      stop: stop,
      pause: function () { paused = true; onChange(); },
      resume: function () { paused = false; onChange(); setTimeout(pump, 0); },
      hold: function () { holding = true; onChange(); },
      // Stop holding; with run=true the held commands run now (late answers).
      release: function (run) {
        holding = false;
        if (run) queue = queue.concat(held);
        held = [];
        onChange();
      },
      keepAliveAfterTeardown: function () { zombie = true; },
      stats: function () {
        var s = Object.assign({}, stats);
        s.paused = paused;
        s.holding = holding;
        s.held = held.map(function (c) { return c.token; });
        s.heldIds = held.map(function (c) { return c.id; });
        s.queued = queue.length;
        s.outbox = outbox.length;
        s.stopped = stopped;
        s.zombie = zombie;
        s.inFlight = inFlight;
        return s;
      },
      bodies: function () { return recent.slice(); },
      ran: function () { return ran.slice(); },
    };
  }

  globalThis.DtbFixture = globalThis.DtbFixture || {};
  globalThis.DtbFixture.startReporter = startReporter;
})();
