// bridge.js: a plain-JS stand-in for @nejcm/dev-toolbar/ext/agent (spec §1, §2).
//
// It installs the window.__DEV_TOOLBAR__ registry, builds one handle per toolbar
// instance and redacts everything on the way out. It knows nothing about the page:
// the "core" it is given (see app.js) supplies visibility, commands and diagnostics.
// Exposes window.DtbFixture.{redact, installBridge}.
(function () {
  "use strict";

  var PREFIX = "[dev-toolbar/ext/agent]";
  var PROTOCOL_VERSION = 2; // AGENT_PROTOCOL_VERSION: registry shape and check-in protocolVersion
  var CONTRACT_VERSION = 2; // handle, snapshot and extension contractVersion

  // ---------------------------------------------------------------- redact (§2)

  var DEFAULT_SENSITIVE_KEYS = [
    "authorization", "authorisation", "authentication", "auth", "bearer", "cookie",
    "setcookie", "token", "apikey", "secret", "password", "passwd", "pwd", "credential",
    "session", "sessionid", "jsessionid", "phpsessid", "sess", "sessid", "sid", "csrf",
    "csrfmiddlewaretoken", "xsrf", "xauth", "signature", "privatekey", "accesskey",
    "clientsecret", "refreshtoken", "idtoken", "accesstoken", "authtoken", "apitoken",
    "apisecret", "secretkey", "otp", "totp", "hotp", "pin", "ssn", "creditcard",
    "cardnumber", "cvv", "cvc", "jwt", "passphrase", "passcode",
  ];
  var MASK = "[redacted]";
  var MAX_DEPTH = 8;
  var MAX_ARRAY = 200;
  var MAX_NODES = 50000;

  // §2.2: split a key into lowercase word segments.
  function segments(key) {
    return String(key)
      .normalize("NFC")
      .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, "$1 $2") // APIKey -> API Key
      .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2") // apiKey -> api Key
      .replace(/(\p{L})(\p{N})/gu, "$1 $2")
      .replace(/(\p{N})(\p{L})/gu, "$1 $2")
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);
  }

  function keyMatcher(extraKeys) {
    var set = new Set();
    DEFAULT_SENSITIVE_KEYS.concat(extraKeys || []).forEach(function (k) {
      var c = segments(k).join("");
      if (c) set.add(c);
    });
    return function isSensitive(key) {
      var segs = segments(key);
      for (var i = 0; i < segs.length; i++) {
        var run = "";
        for (var j = i; j < segs.length; j++) {
          run += segs[j];
          if (set.has(run)) return true;
          if (run.length > 1 && run.charAt(run.length - 1) === "s" && set.has(run.slice(0, -1))) return true;
        }
      }
      return false;
    };
  }

  var PLACEHOLDER = "__dtb_fixture_mask__";

  // §2.3: mask credential-shaped strings; anything else is returned unchanged.
  function redactString(s, isSensitive) {
    var m = /^(bearer|basic|token)\s+\S+$/i.exec(s) || /^(digest)\s+[a-z-]+=/i.exec(s);
    if (m) return s.split(/\s/)[0] + " " + MASK;
    if (/^[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/.test(s)) return MASK;
    if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\/\S+$/.test(s)) {
      var url;
      try { url = new URL(s); } catch (e) { return s; }
      var changed = false;
      if (url.username) { url.username = PLACEHOLDER; changed = true; }
      if (url.password) { url.password = PLACEHOLDER; changed = true; }
      var q = new URLSearchParams(url.search), qc = false;
      q.forEach(function (_v, k) { if (isSensitive(k)) qc = true; });
      if (qc) {
        var nq = new URLSearchParams();
        q.forEach(function (v, k) { nq.append(k, isSensitive(k) ? PLACEHOLDER : v); });
        url.search = nq.toString();
        changed = true;
      }
      if (url.hash.indexOf("=") >= 0) {
        var h = new URLSearchParams(url.hash.slice(1)), hc = false;
        h.forEach(function (_v, k) { if (isSensitive(k)) hc = true; });
        if (hc) {
          var out = new URLSearchParams();
          h.forEach(function (v, k) { out.append(k, isSensitive(k) ? PLACEHOLDER : v); });
          url.hash = out.toString();
          changed = true;
        }
      }
      return changed ? url.href.split(PLACEHOLDER).join(MASK) : s;
    }
    return s;
  }

  // A masked deep copy; never throws. Roughly src/runtime/redact.ts.
  function redact(value, options) {
    var isSensitive = keyMatcher(options && options.extraKeys);
    var nodes = 0;
    var path = [];
    function walk(v, depth) {
      if (v === null || v === undefined) return v;
      var t = typeof v;
      if (t === "string") return redactString(v, isSensitive);
      if (t === "number" || t === "boolean" || t === "bigint") return v;
      if (t === "function") return "[function]";
      if (t === "symbol") return "[symbol]";
      if (depth >= MAX_DEPTH) return "[truncated]";
      if (path.indexOf(v) >= 0) return "[circular]";
      if (++nodes > MAX_NODES) return "[truncated]";
      try {
        if (v instanceof Date) return isNaN(v.getTime()) ? "[invalid date]" : v.toISOString();
        if (v instanceof Error) return { name: walk(String(v.name), depth + 1), message: walk(String(v.message), depth + 1) };
        if (v instanceof URL) return redactString(v.href, isSensitive);
        if (v instanceof Map) return "[Map]";
        if (v instanceof Set) return "[Set]";
        path.push(v);
        try {
          if (Array.isArray(v)) {
            var arr = [], n = Math.min(v.length, MAX_ARRAY);
            for (var i = 0; i < n; i++) arr.push(walk(v[i], depth + 1));
            if (v.length > MAX_ARRAY) arr.push("[+" + (v.length - MAX_ARRAY) + " more]");
            return arr;
          }
          var proto = Object.getPrototypeOf(v);
          if (proto !== Object.prototype && proto !== null) {
            var name = v.constructor && v.constructor.name;
            return name ? "[" + name + "]" : "[object]";
          }
          var out = {};
          Object.keys(v).forEach(function (k) {
            var r;
            if (isSensitive(k)) r = MASK;
            else {
              try { r = walk(v[k], depth + 1); } catch (e) { r = "[getter threw]"; }
            }
            Object.defineProperty(out, k, { value: r, writable: true, enumerable: true, configurable: true });
          });
          return out;
        } finally {
          path.pop();
        }
      } catch (e) {
        return "[unwalkable]";
      }
    }
    return walk(value, 0);
  }

  // ------------------------------------------------------------- registry (§1.2)

  function isRegistry(v) {
    return !!v && typeof v === "object" && v.protocolVersion === PROTOCOL_VERSION &&
      typeof v.instances === "object" && v.instances !== null;
  }

  function createRegistry() {
    var registry = { protocolVersion: PROTOCOL_VERSION, instances: {} };
    Object.defineProperty(registry, "default", {
      enumerable: false,
      configurable: true,
      get: function () {
        var ids = Object.keys(registry.instances);
        if (ids.length === 1) return registry.instances[ids[0]];
        if (ids.length === 0) {
          throw new Error(PREFIX + " no toolbar is mounted with the agent bridge — is it in the extensions array, and has it rendered yet?");
        }
        throw new Error(PREFIX + " " + ids.length + " toolbars are mounted (" + ids.join(", ") +
          "); there is no default. Pick one: instances[" + JSON.stringify(ids[0]) + "].");
      },
    });
    return registry;
  }

  // ---------------------------------------------------------------- shell (§1.4)

  function heightVariableName(id) {
    return "--dev-toolbar-height-" + String(id).replace(/[^A-Za-z0-9_-]+/g, "_");
  }

  function readShell(instanceId) {
    var hv = { name: heightVariableName(instanceId), value: null };
    var shell = {
      mounted: false, position: null, density: null, colorScheme: null, heightVariable: hv,
      bar: [], overflow: { present: false, open: false, items: [] },
      settings: { present: false, open: false }, activePanel: null,
    };
    if (typeof document === "undefined") return shell;
    var root = document.querySelector('[data-dtb-part="root"][data-dtb-instance="' + CSS.escape(instanceId) + '"]');
    if (!root) return shell;
    shell.mounted = true;
    shell.position = root.getAttribute("data-dtb-position");
    shell.density = root.getAttribute("data-dtb-density");
    shell.colorScheme = root.getAttribute("data-dtb-color-scheme");
    hv.value = document.documentElement.style.getPropertyValue(hv.name).trim() || null;
    root.querySelectorAll('[data-dtb-part="bar"] > [data-dtb-item]').forEach(function (el) {
      shell.bar.push({
        id: el.getAttribute("data-dtb-item"),
        align: el.getAttribute("data-dtb-align"),
        panelOpen: el.getAttribute("aria-expanded") === "true",
      });
    });
    var ov = root.querySelector('[data-dtb-part="overflow"]');
    if (ov) {
      var open = ov.getAttribute("aria-expanded") === "true";
      shell.overflow = { present: true, open: open, items: [] };
      if (open) {
        root.querySelectorAll('[data-dtb-part="overflow-menu"] [data-dtb-item]').forEach(function (el) {
          shell.overflow.items.push(el.getAttribute("data-dtb-item"));
        });
      }
    }
    var st = root.querySelector('[data-dtb-part="settings"]');
    if (st) shell.settings = { present: true, open: st.getAttribute("aria-expanded") === "true" };
    var panel = root.querySelector('[data-dtb-part="panel"]:not([hidden])');
    shell.activePanel = panel ? panel.getAttribute("data-dtb-panel") : null;
    return shell;
  }

  // --------------------------------------------------------------- handle (§1.3)

  // core: { isVisible(), getCommands() -> [{id,label,description?,group?,keywords?,
  //         shortcut?,input?,run(input)}], getDiagnostics() -> ExtensionDiagnostics[] }
  // Returns { handle, teardown() } or null when refused (a console.warn says why).
  function installBridge(options) {
    var globalName = options.globalName || "__DEV_TOOLBAR__";
    var instanceId = options.instanceId == null ? "default" : String(options.instanceId);
    var allowRun = options.allowRun === true;
    var extraKeys = options.extraKeys || [];
    var core = options.core;

    var registry = globalThis[globalName];
    if (registry !== undefined && !isRegistry(registry)) {
      console.warn(PREFIX + " window." + globalName + " is already taken by something that is not an agent registry (protocol " +
        PROTOCOL_VERSION + "); the bridge for \"" + instanceId + "\" was not installed.");
      return null;
    }
    if (registry === undefined) {
      registry = createRegistry();
      Object.defineProperty(globalThis, globalName, { value: registry, writable: true, enumerable: true, configurable: true });
    }
    if (Object.prototype.hasOwnProperty.call(registry.instances, instanceId)) {
      console.warn(PREFIX + " instance \"" + instanceId + "\" is already registered on window." + globalName +
        "; this bridge was not installed. Give each <DevToolbar> its own instanceId.");
      return null;
    }

    var dead = false;
    function deadError(verb) {
      return new Error(PREFIX + " " + verb + " was called on instance " + JSON.stringify(instanceId) +
        " after its toolbar unmounted. Re-read the handle from the registry; this one is dead.");
    }

    function commandViews() {
      return core.getCommands().map(function (c) {
        var v = { id: c.id, label: c.label };
        if (typeof c.description === "string") v.description = c.description;
        if (typeof c.group === "string") v.group = c.group;
        if (Array.isArray(c.keywords)) v.keywords = c.keywords.slice();
        if (typeof c.shortcut === "string") v.shortcut = c.shortcut;
        if (c.input) v.input = c.input;
        return v;
      });
    }

    function threw(e) {
      var out = { ok: false, reason: "threw", error: redact(e instanceof Error ? String(e.message) : String(e), { extraKeys: extraKeys }) };
      if (e instanceof Error) out.errorName = redact(String(e.name), { extraKeys: extraKeys });
      return out;
    }

    var handle = {
      instanceId: instanceId,
      contractVersion: CONTRACT_VERSION,
      allowRun: allowRun,
      listCommands: function () {
        if (dead) throw deadError("listCommands()");
        return commandViews();
      },
      read: function () {
        if (dead) throw deadError("read()");
        return {
          instanceId: instanceId,
          contractVersion: CONTRACT_VERSION,
          visible: !!core.isVisible(),
          allowRun: allowRun,
          commands: commandViews(),
          shell: readShell(instanceId),
          // The older runtime: one redact() over the whole roster (data sits at depth 2).
          diagnostics: redact(core.getDiagnostics(), { extraKeys: extraKeys }),
        };
      },
    };
    if (allowRun) {
      handle.runCommand = function (id, input) {
        return new Promise(function (resolve) {
          if (dead) return resolve({ ok: false, reason: "torn-down" });
          var cmd = null;
          try {
            if (typeof id === "string") {
              cmd = core.getCommands().find(function (c) { return c.id === id; }) || null;
            }
          } catch (e) {
            return resolve(threw(e));
          }
          if (!cmd) return resolve({ ok: false, reason: "unknown-command" });
          Promise.resolve()
            .then(function () { return cmd.run(input); })
            .then(function (value) {
              resolve(value === undefined ? { ok: true } : { ok: true, result: redact(value, { extraKeys: extraKeys }) });
            }, function (e) {
              resolve(threw(e));
            });
        });
      };
    }

    Object.defineProperty(registry.instances, instanceId, { value: handle, writable: true, enumerable: true, configurable: true });

    function teardown() {
      if (dead) return;
      dead = true;
      var reg = globalThis[globalName];
      if (isRegistry(reg) && reg.instances[instanceId] === handle) {
        delete reg.instances[instanceId];
        if (Object.keys(reg.instances).length === 0) delete globalThis[globalName];
      }
    }

    return { handle: handle, teardown: teardown, isDead: function () { return dead; } };
  }

  globalThis.DtbFixture = globalThis.DtbFixture || {};
  globalThis.DtbFixture.redact = redact;
  globalThis.DtbFixture.installBridge = installBridge;
  globalThis.DtbFixture.PROTOCOL_VERSION = PROTOCOL_VERSION;
})();
