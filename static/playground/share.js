// Sharing on the playground page: links that carry the scenario in the URL fragment
// (`/#s=` + base64url(raw deflate(JSON))), the copy buttons, and showing refused shares.
// The fragment format is the one allocator/sharing.py writes and reads:
//   {"v": 1, "scenario": "...", "node": "...", "gates": {"apiserver": {"Gate": true, ...}, ...}}
//   (+ "versions" when chosen, "eachClaimAlone": true when the claims are judged each alone)
(function () {
  "use strict";
  // The page's language: strings from Django's JavaScript catalogue (/jsi18n/), English without it.
  function _(text) { return window.gettext ? window.gettext(text) : text; }
  function fill(text, values) {
    return text.replace(/%\((\w+)\)s/g, function (m, key) { return String(values[key]); });
  }

  var FORMAT = 1;
  var MAX_EXPANDED = 1024 * 1024; // a shared scenario is at most 256 KiB; refuse fragments that inflate further

  function box() { return document.getElementById("share-box"); }
  function form() { return document.getElementById("playground"); }
  function resultArea() { return document.getElementById("share-result"); }

  function supported() {
    return typeof CompressionStream === "function" && typeof DecompressionStream === "function";
  }

  function fragmentLimit() {
    var el = box();
    return (el && parseInt(el.getAttribute("data-fragment-limit"), 10)) || 8192;
  }

  function gateDefaults() {
    var el = document.getElementById("share-gate-defaults");
    try { return el ? JSON.parse(el.textContent) : {}; } catch (e) { return {}; }
  }

  // gate-<component>-<Gate>: neither part contains a dash.
  function gateBoxes() {
    var f = form();
    if (!f) return [];
    return Array.prototype.filter.call(f.querySelectorAll('input[type="checkbox"]'), function (input) {
      return /^gate-[^-]+-[^-]+$/.test(input.name);
    }).map(function (input) {
      var parts = input.name.split("-");
      return { input: input, component: parts[1], gate: parts[2] };
    });
  }

  function bytesFromBase64url(text) {
    var b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    while (b64.length % 4) b64 += "=";
    var binary = atob(b64);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  function base64urlFromBytes(bytes) {
    var binary = "";
    for (var i = 0; i < bytes.length; i += 0x8000) {
      binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    }
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  async function inflate(bytes) {
    var reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw")).getReader();
    var chunks = [];
    var total = 0;
    for (;;) {
      var step = await reader.read();
      if (step.done) break;
      total += step.value.length;
      if (total > MAX_EXPANDED) {
        reader.cancel();
        throw new Error("it expands to more than a shared scenario may hold");
      }
      chunks.push(step.value);
    }
    var out = new Uint8Array(total);
    var offset = 0;
    chunks.forEach(function (chunk) { out.set(chunk, offset); offset += chunk.length; });
    return new TextDecoder("utf-8", { fatal: true }).decode(out);
  }

  async function deflate(text) {
    var stream = new Blob([new TextEncoder().encode(text)]).stream().pipeThrough(new CompressionStream("deflate-raw"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  async function readFragment(hash) {
    var data = JSON.parse(await inflate(bytesFromBase64url(hash.slice(3)))); // after "#s="
    if (!data || data.v !== FORMAT || typeof data.scenario !== "string") {
      throw new Error("it is not a scenario link this playground knows");
    }
    return data;
  }

  function fillForm(data) {
    var origin = document.getElementById("origin-example");
    if (origin) origin.value = typeof data.example === "string" ? data.example : "";
    var area = document.getElementById("scenario");
    area.value = data.scenario;
    // An editor mounted over the textarea (editor.js) listens for this to take the new text.
    area.dispatchEvent(new CustomEvent("playground:scenario-replaced", { bubbles: true }));
    var node = document.getElementById("node");
    if (node) {
      var value = typeof data.node === "string" ? data.node : "";
      var known = Array.prototype.some.call(node.options, function (option) { return option.value === value; });
      if (!known) {
        var option = document.createElement("option");
        option.value = value;
        option.textContent = value;
        node.appendChild(option);
      }
      node.value = value;
    }
    var defaults = gateDefaults();
    var gates = data.gates || {};
    gateBoxes().forEach(function (g) {
      var values = gates[g.component] || {};
      g.input.checked = Object.prototype.hasOwnProperty.call(values, g.gate) ? !!values[g.gate] : !!defaults[g.gate];
    });
    // Links made before versions existed carry none: every component at its default.
    var versions = data.versions || {};
    versionSelects().forEach(function (v) {
      var chosen = (versions[v.component] || {})[v.key];
      v.select.value = typeof chosen === "string" ? chosen : "";
    });
    var alone = document.getElementById("each-claim-alone-state");
    if (alone) alone.value = data.eachClaimAlone === true ? "1" : "";
  }

  // emulated-<component> and mincompat-<component>: the version control beside the gates.
  function versionSelects() {
    return Array.prototype.filter.call(form().querySelectorAll("select"), function (select) {
      return /^(emulated|mincompat)-[^-]+$/.test(select.name);
    }).map(function (select) {
      var parts = select.name.split("-");
      return { select: select, component: parts[1], key: parts[0] === "emulated" ? "emulated" : "minCompat" };
    });
  }

  function formState() {
    var gates = {};
    gateBoxes().forEach(function (g) {
      (gates[g.component] = gates[g.component] || {})[g.gate] = g.input.checked;
    });
    var versions = {};
    versionSelects().forEach(function (v) {
      if (v.select.value) (versions[v.component] = versions[v.component] || {})[v.key] = v.select.value;
    });
    var node = document.getElementById("node");
    var state = {
      v: FORMAT,
      // CodeMirror's text as it is, without copying it into the hidden textarea (which would send
      // `input` and, for a 1 MB text, cost a key's worth of time for nothing).
      scenario: window.playgroundEditor ? window.playgroundEditor.text() : document.getElementById("scenario").value,
      node: node ? node.value : "",
      gates: gates,
    };
    if (Object.keys(versions).length) state.versions = versions;
    var alone = document.getElementById("each-claim-alone-state");
    if (alone && alone.value) state.eachClaimAlone = true; // only when set, as RunSettings.link_data
    return state;
  }

  async function buildLink() {
    var packed = await deflate(JSON.stringify(formState()));
    var fragment = "s=" + base64urlFromBytes(packed);
    var base = new URL(form().getAttribute("action") || "/", window.location.href);
    base.hash = "";
    return { fragment: fragment, url: base.href.replace(/#$/, "") + "#" + fragment };
  }

  // ---- showing things in the result area, built from nodes (never from HTML strings) ----

  function show(nodes) {
    var area = resultArea();
    if (!area) return;
    area.textContent = "";
    nodes.forEach(function (n) { area.appendChild(n); });
  }

  function paragraph(text, className) {
    var p = document.createElement("p");
    p.textContent = text;
    if (className) p.className = className;
    return p;
  }

  function linkRow(label, url) {
    var row = document.createElement("div");
    row.className = "share-link";
    var name = document.createElement("label");
    name.setAttribute("for", "share-url");
    name.textContent = label;
    var input = document.createElement("input");
    input.type = "text";
    input.id = "share-url";
    input.className = "share-url";
    input.readOnly = true;
    input.value = url;
    var copy = document.createElement("button");
    copy.type = "button";
    copy.className = "share-copy";
    copy.setAttribute("data-copy", "share-url");
    copy.textContent = _("Copy");
    row.appendChild(name);
    row.appendChild(input);
    row.appendChild(copy);
    return row;
  }

  async function showStatelessLink() {
    var link;
    try {
      link = await buildLink();
    } catch (e) {
      show([paragraph(fill(_("Could not build the link: %(error)s"), { error: e.message }), "share-error")]);
      return;
    }
    if (link.fragment.length > fragmentLimit()) {
      show([paragraph(fill(_("This scenario is too large for a link that carries it (%(length)s characters; the limit is %(limit)s). Use Share for a short link."),
        { length: link.fragment.length, limit: fragmentLimit() }), "share-error")]);
      return;
    }
    show([
      linkRow(_("Link without storing"), link.url),
      paragraph(_("Nothing is stored: the scenario travels inside the link, after the #, which browsers never send to a server. It opens on any playground instance."), "muted"),
    ]);
  }

  function run() {
    if (window.htmx) {
      window.htmx.trigger(form(), "run");
    } else {
      form().submit();
    }
  }

  // ---- the draft: the current text and settings survive a reload and Back ----
  // Kept in this history entry's state (any size) and, when short enough, in the URL's #s= fragment,
  // so the address bar is always a link to what is on screen.

  // Saved shortly after each edit (not on every key: a 1 MB text is copied once per pause), and at
  // once when the page is hidden or left, so a reload right after typing keeps the edit. The pause
  // grows with what a save costs (ten times its last cost), so saving a big text takes at most a
  // tenth of the typing time instead of a frame per key.
  var DRAFT_WAIT = 150;
  var DRAFT_WAIT_MOST = 5000;
  var draftWait = DRAFT_WAIT;
  // A text that long makes a fragment far over any limit: not worth compressing to find out.
  var LINK_TEXT_MAX = 256 * 1024;
  var draftTimer = null;
  var draftPending = false;
  function draftState() {
    var state = formState();
    var origin = document.getElementById("origin-example");
    state.example = origin ? origin.value : "";
    return state;
  }
  // A jump inside the page (a pending pod's #pod-… anchor) is the reader's latest move: a save that
  // lands after it keeps that anchor in the address bar (the history entry still holds the draft).
  function onAnAnchor() {
    var id = window.location.hash.slice(1);
    if (!id || id.indexOf("s=") === 0) return false;
    try { return !!document.getElementById(decodeURIComponent(id)); } catch (e) { return false; }
  }
  function storeDraft(state, hash) {
    var url = new URL(window.location.href);
    if (hash !== undefined && !onAnAnchor()) url.hash = hash;
    try { window.history.replaceState({ draft: state }, "", url.href); } catch (e) { /* too large: nothing kept */ }
  }
  // On the way out the history entry can no longer be written reliably: this tab's session storage
  // keeps the draft for the address being left, and the reload reads it back once.
  var LEAVING_KEY = "dra-draft-leaving";
  function saveDraftNow() {
    window.clearTimeout(draftTimer);
    draftTimer = null;
    if (!draftPending || !form()) return;
    draftPending = false;
    var state = draftState();
    storeDraft(state);
    try {
      window.sessionStorage.setItem(LEAVING_KEY, JSON.stringify({ url: window.location.href, draft: state }));
    } catch (e) { /* too large for session storage: the history entry may still hold it */ }
  }
  function leftDraft() {
    var saved = null;
    try {
      saved = JSON.parse(window.sessionStorage.getItem(LEAVING_KEY) || "null");
      window.sessionStorage.removeItem(LEAVING_KEY);
    } catch (e) { return null; }
    // Only a reload reads it: a link to the same address (Reset to the example) asks for that page afresh.
    var how = navigationType();
    return saved && saved.url === window.location.href && saved.draft && (how === "reload" || !how) ? saved.draft : null;
  }
  // How this page was reached ("navigate", "reload", "back_forward"), or "" where the browser does not say.
  function navigationType() {
    var entries = window.performance && performance.getEntriesByType ? performance.getEntriesByType("navigation") : [];
    return entries.length ? entries[0].type : "";
  }
  function saveDraft(event) {
    draftPending = true;
    // A run follows the edit that started the wait: it must not push the save further out.
    if (draftTimer && event && event.type === "htmx:configRequest") return;
    window.clearTimeout(draftTimer);
    draftTimer = window.setTimeout(async function () {
      draftTimer = null;
      draftPending = false;
      var started = performance.now();
      var state = draftState();
      var cost = performance.now() - started; // the copies, not the wait for the compressed link
      // One history write per save (each costs a structured copy of the state): with the link's
      // fragment when it is short enough, else without one.
      var hash = "";
      if (supported() && state.scenario.length <= LINK_TEXT_MAX) {
        try {
          var link = await buildLink();
          if (link.fragment.length <= fragmentLimit()) hash = link.fragment;
        } catch (e) { /* the state alone still restores it */ }
        if (draftPending) return; // typed on meanwhile: the next save has the newer text
      }
      started = performance.now();
      storeDraft(state, hash);
      cost += performance.now() - started;
      draftWait = Math.min(DRAFT_WAIT_MOST, Math.max(DRAFT_WAIT, 10 * cost));
    }, draftWait);
  }
  // An edit, a node or a gate change, or a run of the form: the draft changes.
  document.addEventListener("htmx:configRequest", function (event) {
    if (event.detail.elt === form()) saveDraft(event);
  });
  document.addEventListener("playground:edited", saveDraft);
  document.addEventListener("input", function (event) {
    if (event.target.id === "scenario") saveDraft();
  });
  document.addEventListener("change", function (event) {
    if (form() && form().contains(event.target)) saveDraft();
  });
  // A reload fires beforeunload before pagehide; either may be the one a browser still lets write.
  window.addEventListener("beforeunload", saveDraftNow);
  window.addEventListener("pagehide", saveDraftNow);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") saveDraftNow();
  });

  function restoreDraft() {
    var left = leftDraft();
    // A link followed afresh (not a reload, not Back) asks for its page as the server sends it, even when
    // the browser kept the entry's state because the link named the address already shown.
    var state = left ? { draft: left } : (navigationType() === "navigate" ? null : window.history.state);
    if (!state || !state.draft || typeof state.draft.scenario !== "string" || !form()) return false;
    if (left) storeDraft(left);
    fillForm(state.draft);
    run();
    return true;
  }

  async function openFromHash() {
    var hash = window.location.hash;
    if (hash.indexOf("#s=") !== 0 || !form() || !document.getElementById("scenario")) return;
    if (!supported()) {
      show([paragraph(_("This browser cannot read links that carry a scenario (no DecompressionStream)."), "share-error")]);
      return;
    }
    var data;
    try {
      data = await readFragment(hash);
    } catch (e) {
      show([paragraph(fill(_("The scenario in this link could not be read: %(error)s"), { error: e.message }), "share-error")]);
      return;
    }
    data.example = "";
    fillForm(data);
    show([paragraph(_("Opened from a link that carries the scenario; nothing is stored on the server."), "muted")]);
    run();
  }

  // "Copied" goes back to the button's own label after two seconds, however often it is pressed.
  function flash(button, text) {
    if (!button.hasAttribute("data-label")) button.setAttribute("data-label", button.textContent);
    button.textContent = text;
    window.clearTimeout(button.flashTimer);
    button.flashTimer = window.setTimeout(function () { button.textContent = button.getAttribute("data-label"); }, 2000);
  }
  window.playgroundFlash = flash;

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!target.closest) return;
    var copy = target.closest("[data-copy]");
    if (copy) {
      var input = document.getElementById(copy.getAttribute("data-copy"));
      if (!input) return;
      input.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(function () { flash(copy, _("Copied")); },
          function () { flash(copy, _("Press Ctrl+C")); });
      } else {
        flash(copy, document.execCommand && document.execCommand("copy") ? _("Copied") : _("Press Ctrl+C"));
      }
      return;
    }
    if (target.closest("#share-stateless")) {
      event.preventDefault();
      showStatelessLink();
    }
  });

  // Refused shares (413 too large, 429 too many, 400; 503 with the database away) carry a
  // message meant for the share box.
  function refusal(xhr) {
    return xhr && ((xhr.status >= 400 && xhr.status < 500) || xhr.status === 503);
  }
  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    if (detail.target && detail.target.id === "share-result" && refusal(detail.xhr)) {
      detail.shouldSwap = true;
      detail.isError = false;
    }
  });

  function shareFailed(event) {
    var elt = event.detail && event.detail.elt;
    if (elt && elt.classList && elt.classList.contains("share-button") &&
        !refusal(event.detail.xhr)) {
      show([paragraph(_("The share did not reach the server or it failed; nothing was stored. Try again."), "share-error")]);
    }
  }
  document.addEventListener("htmx:sendError", shareFailed);
  document.addEventListener("htmx:responseError", shareFailed);

  document.addEventListener("DOMContentLoaded", function () {
    var stateless = document.getElementById("share-stateless");
    if (stateless && supported()) stateless.hidden = false;
    // After htmx has set up the form (its own DOMContentLoaded handler), so the run is heard.
    window.setTimeout(function () { if (!restoreDraft()) openFromHash(); }, 0);
  });
  window.addEventListener("hashchange", openFromHash);
})();
