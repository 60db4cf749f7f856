// app.js: the fixture "app" and its toolbar core. One toolbar per instance id, each
// with its own flags, theme, DOM root, bridge handle and reporter. The knobs are
// documented at the top of index.html and in README.md.
(function () {
  "use strict";

  var F = globalThis.DtbFixture;
  var params = new URLSearchParams(location.search);

  // ------------------------------------------------------------------ knobs

  function list(name) {
    var out = [];
    params.getAll(name).forEach(function (v) {
      v.split(",").forEach(function (s) { s = s.trim(); if (s) out.push(s); });
    });
    return out;
  }
  // A knob that may be given once for every instance, or as a list (one per instance).
  function perInstance(name, i) {
    var vals = list(name);
    if (!vals.length) return undefined;
    return vals[Math.min(i, vals.length - 1)];
  }
  function num(name, fallback) {
    var v = params.get(name);
    var n = v === null ? NaN : Number(v);
    return isFinite(n) ? n : fallback;
  }
  function flag(name, fallback) {
    var v = params.get(name);
    if (v === null) return fallback;
    return !(v === "0" || v === "false" || v === "no" || v === "off");
  }

  var ids = list("instance");
  if (!ids.length) ids = ["playground"];
  var relayBase = (params.get("relay") || "/__dev-toolbar").replace(/\/+$/, "");
  var knobs = {
    report: flag("report", true),
    pause: flag("pause", false),
    nopickup: flag("nopickup", false),
    pollMs: num("poll", 500),
    intervalMs: num("interval", 1000),
    timeoutMs: num("timeout", 5000),
    stateUrl: relayBase + "/state",
    live: flag("live", false),
    panel: flag("panel", true),
    bigint: flag("bigint", false),
  };
  var pvKnob = params.get("protocolVersion");
  knobs.protocolVersion = pvKnob === null ? 2 : pvKnob === "none" ? null : (isFinite(Number(pvKnob)) ? Number(pvKnob) : pvKnob);

  if (flag("foreign", false)) window.__DEV_TOOLBAR__ = { foreign: true };

  // ------------------------------------------------------------------ flags

  var FLAG_CATALOGUE = [
    { key: "search.rank", label: "Search rank", type: "number", base: 2, default: 1, source: "server-rule", reloadBehavior: "full-reload" },
    { key: "new-header", label: "New header", type: "boolean", base: true, default: false, source: "server-rule", reloadBehavior: "live", expired: true },
    { key: "checkout.apiToken", label: "Checkout API token", type: "string", base: "sk_live_fixture_4242", default: null, source: "server-rule", reloadBehavior: "live", masked: true },
    { key: "greeting", label: "Greeting", type: "string", base: "hello", default: "hello", source: "default", reloadBehavior: "route-refresh" },
  ];
  // variant=1: a variant flag whose variants include null, which flags.set takes
  // although its declared input schema cannot say so (issue 11).
  if (flag("variant", false)) {
    FLAG_CATALOGUE.push({ key: "checkout.variant", label: "Checkout variant", type: "variant", variants: ["control", "treatment", null], base: "control", default: null, source: "cohort", reloadBehavior: "live" });
  }

  function display(v, masked) {
    if (masked) return v === null ? "null" : "[redacted]";
    return v === null ? "null" : String(v);
  }

  function createFlags() {
    var overrides = new Map(); // key -> value, in set order
    var recent = []; // keys, most recently set first
    var changedAt = new Date().toISOString();
    function find(key) { return FLAG_CATALOGUE.find(function (f) { return f.key === key; }); }
    function touch(key) {
      recent = [key].concat(recent.filter(function (k) { return k !== key; }));
      changedAt = new Date().toISOString();
    }
    function row(f) {
      var overridden = overrides.has(f.key);
      var effective = overridden ? overrides.get(f.key) : f.base;
      var tags = [];
      if (overridden) tags.push("override");
      if (f.masked) tags.push("masked");
      if (f.expired) tags.push("expired");
      if (overridden && f.reloadBehavior !== "live") tags.push("reload");
      return {
        key: f.key, type: f.type, source: overridden ? "local-override" : f.source, overridden: overridden,
        masked: !!f.masked, reloadBehavior: f.reloadBehavior,
        effective: f.masked ? display(effective, true) : effective,
        base: f.masked ? display(f.base, true) : f.base,
        default: f.masked ? display(f.default, true) : f.default,
        tags: tags,
      };
    }
    function rows() {
      return FLAG_CATALOGUE.slice().sort(function (a, b) {
        var ra = recent.indexOf(a.key), rb = recent.indexOf(b.key);
        if (ra !== rb) return (ra < 0 ? Infinity : ra) - (rb < 0 ? Infinity : rb);
        var oa = overrides.has(a.key), ob = overrides.has(b.key);
        if (oa !== ob) return oa ? -1 : 1;
        return a.key.localeCompare(b.key);
      }).map(row);
    }
    function diagnostics() {
      var r = rows();
      var ov = [];
      overrides.forEach(function (value, key) {
        var f = find(key);
        ov.push({ key: key, value: display(value, f.masked), was: display(f.base, f.masked), masked: !!f.masked, reloadBehavior: f.reloadBehavior });
      });
      return {
        generatedAt: changedAt, writable: true, supplied: true,
        overriddenCount: overrides.size,
        maskedCount: FLAG_CATALOGUE.filter(function (f) { return f.masked; }).length,
        reloadPending: r.filter(function (x) { return x.tags.indexOf("reload") >= 0; }).map(function (x) { return x.key; }),
        readError: null, bulkError: null, flags: r, overrides: ov,
      };
    }
    function unknown(key) {
      return new Error("No flag named " + JSON.stringify(key) + ". The catalogue lists: " +
        FLAG_CATALOGUE.map(function (f) { return f.key; }).join(", ") + ".");
    }
    // flags.set: refuses rather than coerces; omitting `value` clears the override.
    function set(input) {
      if (!input || typeof input !== "object" || Array.isArray(input)) throw new TypeError("`flags.set` takes `{ key, value? }`.");
      if (typeof input.key !== "string" || input.key === "") throw new TypeError("`flags.set` needs a non-empty string `key`.");
      var f = find(input.key);
      if (!f) throw unknown(input.key);
      if (!("value" in input) || input.value === undefined) {
        overrides.delete(f.key);
        touch(f.key);
        return;
      }
      var v = input.value;
      var fits = f.type === "variant" ? f.variants.indexOf(v) >= 0 : typeof v === f.type && (f.type !== "number" || isFinite(v));
      if (!fits) {
        var shown;
        try { shown = typeof v === "number" ? String(v) : JSON.stringify(v); } catch (e) { shown = String(v); }
        if (shown === undefined) shown = String(v);
        throw new TypeError(JSON.stringify(f.key) + " is a " + f.type + " flag; " + shown + " is not a valid " + f.type + " value." +
          (f.variants ? " Variants: " + f.variants.map(function (x) { return JSON.stringify(x); }).join(", ") + "." : ""));
      }
      overrides.delete(f.key);
      overrides.set(f.key, v);
      touch(f.key);
    }
    function reset(input) {
      var key = input && typeof input === "object" ? input.key : undefined;
      if (key === undefined || key === null || key === "") {
        overrides.clear();
        changedAt = new Date().toISOString();
        return;
      }
      if (typeof key !== "string") throw new TypeError("`flags.reset` takes `{ key? }`.");
      if (!find(key)) throw unknown(key);
      overrides.delete(key);
      touch(key);
    }
    function effective(key) {
      return overrides.has(key) ? overrides.get(key) : find(key).base;
    }
    return { rows: rows, diagnostics: diagnostics, set: set, reset: reset, effective: effective };
  }

  // ------------------------------------------------------------------ toolbar

  var THEME_MODES = ["light", "dark", "system"];

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function createToolbar(instanceId, index) {
    var allowRunKnob = perInstance("allowRun", index);
    var allowRun = allowRunKnob === undefined ? true : !(allowRunKnob === "0" || allowRunKnob === "false");
    var ridKnob = perInstance("reporterId", index);
    var reporterId = ridKnob === undefined ? undefined : ridKnob === "none" ? null : ridKnob;

    var flags = createFlags();
    var tb = {
      id: instanceId, allowRun: allowRun, flags: flags, theme: "system", visible: true,
      panelOpen: knobs.panel, overflowOpen: false, root: null, bridge: null, reporter: null,
      ticks: 0, dead: false,
    };

    // --- DOM
    var dock = document.getElementById("dock");
    var heightVar = "--dev-toolbar-height-" + instanceId.replace(/[^A-Za-z0-9_-]+/g, "_");
    function mount() {
      var root = el("div", {
        "data-dev-toolbar": "", "data-dtb-part": "root", "data-dtb-instance": instanceId,
        "data-dtb-position": params.get("position") || "bottom", "data-dtb-density": params.get("density") || "compact",
        "data-dtb-color-scheme": tb.theme, "class": "dtb",
      });
      var bar = el("div", { "data-dtb-part": "bar", "role": "toolbar", "aria-label": "Dev toolbar " + instanceId });
      bar.appendChild(el("span", { "class": "dtb-name" }, instanceId));
      var env = el("button", { "data-dtb-item": "environment", "data-dtb-align": "start", "aria-expanded": "false", "type": "button" }, "development");
      var flagsBtn = el("button", { "data-dtb-item": "flags", "data-dtb-align": "start", "type": "button" });
      flagsBtn.addEventListener("click", function () { tb.panelOpen = !tb.panelOpen; render(); });
      var theme = el("button", { "data-dtb-item": "theme", "data-dtb-align": "end", "aria-expanded": "false", "type": "button" });
      theme.addEventListener("click", function () {
        tb.theme = THEME_MODES[(THEME_MODES.indexOf(tb.theme) + 1) % THEME_MODES.length];
        render();
      });
      var agent = el("span", { "data-dtb-item": "agent", "data-dtb-align": "end" });
      agent.appendChild(el("span", {
        "data-dtb-agent-mode": allowRun ? "run-enabled" : "read-only",
        "title": allowRun ? "window.__DEV_TOOLBAR__ can run commands" : "window.__DEV_TOOLBAR__ is read-only",
      }, "Agent"));
      var ovWrap = el("span", { "class": "dtb-ov" });
      var ov = el("button", { "data-dtb-part": "overflow", "aria-expanded": "false", "aria-label": "More", "type": "button" }, "⋮");
      ov.addEventListener("click", function () { tb.overflowOpen = !tb.overflowOpen; render(); });
      var menu = el("div", { "data-dtb-part": "overflow-menu", "hidden": "" });
      menu.appendChild(el("button", { "data-dtb-item": "metrics", "type": "button" }, "Metrics"));
      ovWrap.appendChild(ov);
      ovWrap.appendChild(menu);
      var settings = el("button", { "data-dtb-part": "settings", "aria-expanded": "false", "aria-label": "Settings", "type": "button" }, "⚙");
      [env, flagsBtn, theme, agent].forEach(function (x) { bar.appendChild(x); });
      bar.appendChild(ovWrap);
      bar.appendChild(settings);
      var panel = el("div", { "data-dtb-part": "panel", "data-dtb-panel": "flags", "role": "region", "aria-label": "Flags" });
      root.appendChild(panel);
      root.appendChild(bar);
      dock.appendChild(root);
      document.documentElement.style.setProperty(heightVar, "36px");
      tb.root = root;
    }
    function unmount() {
      if (tb.root) tb.root.remove();
      tb.root = null;
      document.documentElement.style.removeProperty(heightVar);
    }

    function render() {
      var root = tb.root;
      if (!root) return;
      root.setAttribute("data-dtb-color-scheme", tb.theme);
      var d = flags.diagnostics();
      var flagsBtn = root.querySelector('[data-dtb-item="flags"]');
      flagsBtn.textContent = "Flags" + (d.overriddenCount ? " (" + d.overriddenCount + " overridden)" : "");
      flagsBtn.setAttribute("aria-expanded", String(tb.panelOpen));
      root.querySelector('[data-dtb-item="theme"]').textContent = "theme: " + tb.theme;
      root.querySelector('[data-dtb-part="overflow"]').setAttribute("aria-expanded", String(tb.overflowOpen));
      root.querySelector('[data-dtb-part="overflow-menu"]').hidden = !tb.overflowOpen;
      var panel = root.querySelector('[data-dtb-part="panel"]');
      panel.hidden = !tb.panelOpen;
      var table = el("table", { "class": "dtb-flags" });
      var head = el("tr");
      ["key", "type", "effective", "base", "default", "source", "tags"].forEach(function (h) { head.appendChild(el("th", {}, h)); });
      table.appendChild(head);
      d.flags.forEach(function (r) {
        var tr = el("tr", { "data-flag": r.key, "class": r.overridden ? "overridden" : "" });
        [r.key, r.type, JSON.stringify(r.effective), JSON.stringify(r.base), JSON.stringify(r.default), r.source, r.tags.join(" ")].forEach(function (c, i) {
          tr.appendChild(el("td", i === 2 ? { "data-effective": "" } : {}, c));
        });
        table.appendChild(tr);
      });
      panel.replaceChildren(table);
      renderApp();
    }

    // --- core: what the bridge reads
    var metricsStart = performance.now();
    var core = {
      isVisible: function () { return tb.visible; },
      getCommands: function () { return commandsFor(tb); },
      getDiagnostics: function () {
        tb.ticks++;
        var roster = [
          { id: "agent", label: "Agent", status: "absent" },
          { id: "environment", label: "Environment", status: "ok", data: {
            generatedAt: "2026-01-01T00:00:00.000Z", environment: "development", severity: "ok", supplied: true,
            impersonating: false, maskedCount: 2,
            fields: [
              { id: "environment", label: "Environment", group: "build", source: "supplied", masked: false, markers: [], value: "development" },
              { id: "apiEndpoint", label: "API endpoint", group: "build", source: "supplied", masked: true, markers: ["masked"], value: "https://api.example.com/v2?access_token=fixture-secret-123" },
              { id: "userId", label: "User", group: "session", source: "supplied", masked: true, markers: ["masked"], value: "n***@example.com" },
            ],
          } },
          { id: "flags", label: "Flags", status: "ok", data: flags.diagnostics() },
          { id: "metrics", label: "Metrics", status: "ok", data: metrics(tb, metricsStart) },
          { id: "theme", label: "Theme", status: "ok", data: { mode: tb.theme, preview: false, overriddenCount: 0 } },
          { id: "deep", label: "Deep", status: "ok", data: { l1: { l2: { l3: { l4: { l5: { l6: { l7: "gone" } } } } } } } },
          { id: "boom", label: "Boom", status: "failed", error: "the boom extension's diagnostics() always throws", errorName: "RangeError" },
        ];
        if (knobs.bigint) roster[3].data.counter = BigInt(tb.ticks);
        return roster;
      },
    };

    // --- wire up
    mount();
    render();
    tb.bridge = F.installBridge({ instanceId: instanceId, allowRun: allowRun, core: core });
    if (!tb.bridge) { unmount(); return null; }
    function startReporter(rid) {
      return F.startReporter({
        handle: tb.bridge.handle, url: knobs.stateUrl, pollMs: knobs.pollMs, intervalMs: knobs.intervalMs,
        timeoutMs: knobs.timeoutMs, reporterId: rid, protocolVersion: knobs.protocolVersion,
        paused: knobs.pause, holding: knobs.nopickup, onChange: renderStatus,
      });
    }
    if (knobs.report) tb.reporter = startReporter(reporterId);
    // What a hot-module reload of the toolbar does: the old reporter stops (a check-in
    // it has in flight still gets its answer, which it drops) and a new one, with a
    // new random reporterId unless rid is given, starts in the same document.
    tb.remount = function (rid) {
      if (!tb.reporter) return;
      tb.reporter.stop();
      tb.retired = (tb.retired || []).concat([tb.reporter]);
      tb.reporter = startReporter(rid);
    };

    tb.render = render;
    tb.unmount = unmount;
    tb.mount = function () { if (!tb.root) { mount(); render(); } };
    // Unmount: the handle leaves the registry (the global with the last one), the DOM
    // root goes, and the reporter stops (unless zombie: keep checking in, answer torn-down).
    tb.teardown = function (zombie) {
      if (tb.dead) return;
      tb.dead = true;
      tb.bridge.teardown();
      unmount();
      if (tb.reporter) {
        if (zombie) tb.reporter.keepAliveAfterTeardown();
        else tb.reporter.stop();
      }
      renderApp();
    };
    return tb;
  }

  function metrics(tb, start) {
    var live = knobs.live;
    var t = live ? Math.round(performance.now() - start) : 0;
    return {
      generatedAt: live ? new Date().toISOString() : "2026-01-01T00:00:00.000Z",
      userAgent: navigator.userAgent,
      url: location.href,
      metrics: [
        { id: "memory", status: "ok", severity: "ok", value: 12582912 + (live ? tb.ticks * 4096 : 0), unit: "bytes" },
        { id: "delay", status: "ok", severity: "warn", value: live ? 40 + (tb.ticks % 7) * 10 : 120, unit: "ms" },
        { id: "jank", status: "pending", severity: "unknown", value: null, unit: "%" },
        { id: "network", status: "ok", severity: "ok", value: 0, unit: "requests" },
      ],
      memory: { used: 12582912, limit: 4294705152 },
      delay: { p50: 8, p95: 120, uptimeMs: t },
      jank: { ratio: null },
      network: { inFlight: 0, total: 0 },
    };
  }

  // ---------------------------------------------------------------- commands

  var FLAGS_SET_INPUT = { fields: {
    key: { type: "string", required: true, description: "The flag's key, exactly as the catalogue spells it." },
    value: { type: ["boolean", "string", "number"], description: "The value to force. Must match the flag's own type. `null` is refused unless the flag is a variant whose `variants` include it. Omit this field to clear the override — omission, not `null`, is what clears." },
  } };
  var FLAGS_RESET_INPUT = { fields: {
    key: { type: "string", description: "The flag whose override to clear. Omit to clear every override." },
  } };
  var THEME_SET_INPUT = { fields: {
    mode: { type: "enum", values: ["light", "dark", "system"], required: true, description: "The colour scheme to switch the toolbar to." },
  } };
  var SLEEP_INPUT = { fields: {
    ms: { type: "number", default: 1000, description: "How long to wait before answering, in milliseconds." },
  } };
  var ECHO_INPUT = { fields: {
    value: { type: ["boolean", "string", "number"], description: "Anything; the whole input comes back as the result (redacted)." },
  } };
  var TEARDOWN_INPUT = { fields: {
    zombie: { type: "boolean", default: false, description: "Keep the reporter checking in after the teardown, so later commands answer torn-down." },
    delayMs: { type: "number", default: 0, description: "Wait this long before tearing down (the command itself answers first)." },
  } };

  function commandsFor(tb) {
    var cmds = [
      { id: "flags.set", label: "Set a feature flag override", group: "Flags",
        description: "Overrides one flag by key, in one call, without opening the panel. Refuses a value of the wrong type rather than coercing it, and refuses a key the catalogue does not list. Omit `value` to clear the override; `null` is a value, accepted only by a variant flag that lists it.",
        keywords: ["flag", "override", "set", "value"], input: FLAGS_SET_INPUT,
        run: function (input) { tb.flags.set(input); tb.render(); } },
      { id: "flags.reset", label: "Clear flag overrides", group: "Flags",
        description: "Clears the override of one flag, or of every flag when `key` is omitted.",
        keywords: ["flag", "override", "reset", "clear"], input: FLAGS_RESET_INPUT,
        run: function (input) { tb.flags.reset(input); tb.render(); } },
      { id: "flags.toggle.new-header", label: "Toggle flag: New header", group: "Flags",
        keywords: ["flag", "override", "new-header"], shortcut: "Mod+Shift+H",
        run: function () {
          var next = !tb.flags.effective("new-header");
          if (next === true) tb.flags.reset({ key: "new-header" }); else tb.flags.set({ key: "new-header", value: next });
          tb.render();
        } },
      { id: "env.info", label: "Describe the environment", group: "Environment",
        description: "Returns facts about the page; credentials are redacted on the way out.",
        run: function () {
          return {
            instanceId: tb.id, environment: "development", origin: location.origin, visible: tb.visible,
            theme: tb.theme, flags: { "search.rank": tb.flags.effective("search.rank"), "new-header": tb.flags.effective("new-header") },
            apiKey: "sk-fixture-0000", endpoint: "https://api.example.com/v2?access_token=fixture-secret-123&q=1",
            note: "Bearer fixture-bearer-token", startedAt: new Date(0),
          };
        } },
      { id: "theme.set", label: "Set the colour scheme", group: "Theme",
        description: "Switches the toolbar's colour scheme; the shell's colorScheme follows.",
        keywords: ["theme", "dark", "light"], input: THEME_SET_INPUT,
        run: function (input) {
          var mode = input && typeof input === "object" ? input.mode : undefined;
          if (THEME_MODES.indexOf(mode) < 0) {
            throw new TypeError(JSON.stringify(mode === undefined ? null : mode) + " is not a theme mode; expected one of \"light\", \"dark\", \"system\".");
          }
          tb.theme = mode;
          tb.render();
          return { mode: mode };
        } },
      { id: "jobs.explode", label: "Explode a job", group: "Demo",
        description: "Always throws a RangeError.",
        run: function () { throw new RangeError("the job exploded"); } },
      { id: "demo.throwString", label: "Throw a string",
        run: function () { throw "plain string thrown"; } }, // eslint-disable-line no-throw-literal
      { id: "demo.bigint", label: "Return a BigInt", group: "Demo",
        description: "Returns an object holding a BigInt: fine in-page, unserialisable through the reporter.",
        run: function () { return { big: BigInt("12345678901234567890") }; } },
      { id: "demo.sleep", label: "Sleep, then answer", group: "Demo",
        description: "Waits `ms` milliseconds (default 1000), then returns how long it slept.",
        input: SLEEP_INPUT,
        run: function (input) {
          var ms = input && typeof input === "object" && input.ms !== undefined ? input.ms : 1000;
          if (typeof ms !== "number" || !isFinite(ms) || ms < 0) throw new TypeError("`demo.sleep` takes `{ ms? }` with a non-negative number.");
          return new Promise(function (resolve) { setTimeout(function () { resolve({ sleptMs: ms }); }, ms); });
        } },
      { id: "demo.echo", label: "Echo the input", group: "Demo",
        description: "Returns its input unchanged (redacted on the way out); nothing when given nothing.",
        input: ECHO_INPUT,
        run: function (input) { return input; } },
      { id: "toolbar.teardown", label: "Unmount this toolbar", group: "Toolbar",
        description: "Unmounts the toolbar after answering: the handle leaves the registry (the global goes with the last one) and captured handles refuse.",
        input: TEARDOWN_INPUT,
        run: function (input) {
          var o = input && typeof input === "object" ? input : {};
          var delay = typeof o.delayMs === "number" && o.delayMs > 0 ? o.delayMs : 0;
          setTimeout(function () { tb.teardown(o.zombie === true); }, delay);
        } },
    ];
    return cmds;
  }

  // ------------------------------------------------------------------ page

  function renderApp() {
    var first = toolbars.find(function (t) { return !t.dead; });
    var h = document.getElementById("headline");
    var rank = document.getElementById("rank");
    if (!h || !rank) return;
    if (!first) {
      h.textContent = "Toolbar fixture (torn down)";
      rank.textContent = "No toolbar is mounted.";
      return;
    }
    h.textContent = first.flags.effective("new-header") ? "Toolbar fixture — new header" : "Toolbar fixture";
    rank.textContent = "Search results ranked by algorithm #" + first.flags.effective("search.rank") +
      " · greeting: " + first.flags.effective("greeting");
  }

  function renderStatus() {
    var out = document.getElementById("status");
    if (!out) return;
    out.textContent = toolbars.map(function (t) {
      if (!t.reporter) return t.id + ": reporter off";
      var s = t.reporter.stats();
      return t.id + ": " + s.checkIns + " check-ins, last status " + (s.lastStatus === null ? "—" : s.lastStatus) +
        (s.stopped ? ", stopped" : s.paused ? ", paused" : "") + (s.holding ? ", holding" : "");
    }).join("\n");
  }

  var toolbars = [];
  ids.forEach(function (id, i) {
    var tb = createToolbar(id, i);
    if (tb) toolbars.push(tb);
  });
  renderApp();
  renderStatus();

  // ---------------------------------------------------------- test helpers

  function pick(id) {
    if (id === undefined) return toolbars;
    return toolbars.filter(function (t) { return t.id === String(id); });
  }
  function each(id, fn) { pick(id).forEach(fn); renderStatus(); return pick(id).length; }

  Object.defineProperty(window, "__fixture", { enumerable: false, configurable: true, value: Object.freeze({
    get instances() { return toolbars.map(function (t) { return t.id; }); },
    knobs: knobs,
    // Unmount one toolbar, or every toolbar. opts.zombie keeps its reporter checking in.
    teardown: function (id, opts) { return each(id, function (t) { t.teardown(!!(opts && opts.zombie)); }); },
    remount: function (id, rid) { return each(id, function (t) { t.remount(rid); }); },
    pause: function (id) { return each(id, function (t) { if (t.reporter) t.reporter.pause(); }); },
    resume: function (id) { return each(id, function (t) { if (t.reporter) t.reporter.resume(); }); },
    hold: function (id) { return each(id, function (t) { if (t.reporter) t.reporter.hold(); }); },
    release: function (id, run) { return each(id, function (t) { if (t.reporter) t.reporter.release(!!run); }); },
    // Hide/show the bar: visible false and shell.mounted false while hidden.
    setVisible: function (visible, id) {
      return each(id, function (t) { if (t.dead) return; t.visible = !!visible; if (visible) t.mount(); else t.unmount(); });
    },
    stats: function (id) {
      var t = id === undefined ? toolbars[0] : pick(id)[0];
      if (!t) return null;
      var s = t.reporter ? t.reporter.stats() : { instanceId: t.id, reporter: false };
      s.tornDown = t.dead;
      return s;
    },
    bodies: function (id) {
      var t = id === undefined ? toolbars[0] : pick(id)[0];
      return t && t.reporter ? t.reporter.bodies() : [];
    },
    ran: function (id) {
      var t = id === undefined ? toolbars[0] : pick(id)[0];
      return t && t.reporter ? t.reporter.ran() : [];
    },
  }) });
})();
