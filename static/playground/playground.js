// DRA Playground page behaviour: theme, filtering, and the plain-textarea editor that editor.js replaces.

// A run swaps #results and, out of band, a few small elements (node menu, example line, hidden fields): htmx
// fires htmx:afterSwap and htmx:afterSettle on each of them, once the whole answer is in. A handler that walks
// the results needs to run once per answer, not once per element: oncePerSwap(handler) does that (the events
// of one answer share their detail object).
window.oncePerSwap = function (handler) {
  var last = null;
  return function (event) {
    var detail = event && event.detail;
    if (detail && detail === last) return;
    last = detail || null;
    handler(event);
  };
};
(function () {
  "use strict";

  // The playground form goes to the server as JSON (field name -> list of values): a long scenario
  // URL-encoded is mostly escapes, which cost the server more to read than the run itself. While a
  // file is open the form is multipart (bigfile.js) and htmx encodes it as usual.
  // Only the form's own runs: buttons inside it (Share, …) post to views that read a plain form.
  function plainForm(elt) {
    return !elt || elt.tagName !== "FORM" || elt.getAttribute("hx-encoding") === "multipart/form-data";
  }
  if (window.htmx) {
    window.htmx.defineExtension("json-form", {
      onEvent: function (name, event) {
        if (name !== "htmx:configRequest" || plainForm(event.detail.elt)) return;
        event.detail.headers["Content-Type"] = "application/json";
        var token = event.detail.elt.querySelector("input[name=csrfmiddlewaretoken]");
        if (token) event.detail.headers["X-CSRFToken"] = token.value;
      },
      encodeParameters: function (xhr, parameters, elt) {
        if (plainForm(elt)) return null;
        var fields = {};
        parameters.forEach(function (value, name) {
          if (typeof value !== "string") return; // a file belongs to a multipart form
          (fields[name] = fields[name] || []).push(value);
        });
        // A large text is not copied into the textarea for a run (editor.js): it comes from the editor.
        var unsynced = window.playgroundEditor && window.playgroundEditor.unsynced();
        if (unsynced !== null && unsynced !== undefined) fields.scenario = [unsynced];
        xhr.overrideMimeType("text/html");
        return JSON.stringify(fields);
      }
    });
  }

  // Runs as you type. The wait after the last edit follows how fast the server has answered lately
  // (its median round trip, kept between MIN_WAIT and MAX_WAIT): a pause as long as an answer takes
  // sends the run, so a fast scenario shows its answer while a slow dump is not re-run on every key. An edit cancels the run still on its way,
  // and an answer that left the server before the latest edit or run is never painted.
  // The first edit after a rest runs at once when the server answers fast (its wait is at most LEADING_UP_TO):
  // nothing is waited for then, and the edits that follow it within the wait are gathered as before (the
  // run on its way is cancelled by the next edit). A slow scenario, or a text over 512 KB, keeps the wait for
  // every edit.
  var MIN_WAIT = 40, MAX_WAIT = 400, FIRST_WAIT = 150, KEPT = 5, LEADING_UP_TO = 100;
  var roundTrips = [];
  var runTimer = null;
  var latest = 0; // counts edits and runs started; an answer is painted only if nothing came after it
  var inFlight = null;
  var answered = 0;
  function playgroundForm() { return document.getElementById("playground"); }
  function runWait() {
    if (!roundTrips.length) return FIRST_WAIT;
    var sorted = roundTrips.slice().sort(function (a, b) { return a - b; });
    var median = sorted[Math.floor(sorted.length / 2)];
    return Math.round(Math.min(MAX_WAIT, Math.max(MIN_WAIT, median)));
  }
  function remember(roundTrip) {
    roundTrips.push(roundTrip);
    if (roundTrips.length > KEPT) roundTrips.shift();
  }
  function runNow() {
    window.clearTimeout(runTimer);
    runTimer = null;
    var form = playgroundForm();
    if (!form) return;
    if (window.htmx) window.htmx.trigger(form, "run"); else form.requestSubmit();
  }
  var lastEdit = -Infinity;
  function largeText() {  // over 512 KB: a run's start costs the page more than a key (editor.js)
    var editor = window.playgroundEditor;
    if (editor && editor.isLarge) return editor.isLarge();
    var area = document.getElementById("scenario");
    return !!area && area.value.length > 512 * 1024;
  }
  function edited() {
    var form = playgroundForm();
    if (!form || !window.htmx) return;
    latest++;
    var now = performance.now();
    var rested = !inFlight && runTimer === null && now - lastEdit > runWait();
    lastEdit = now;
    if (inFlight) {
      // Its answer is for older text. It has been on its way this long at least: a text the server takes
      // longer on than the pauses in typing (a large dump) is then not sent again at every short pause.
      var waited = performance.now() - inFlight.playgroundStart;
      if (waited > runWait()) remember(waited);
      window.htmx.trigger(form, "htmx:abort");
    }
    window.clearTimeout(runTimer);
    var wait = runWait();
    form.setAttribute("data-run-wait", String(wait));
    if (rested && roundTrips.length && wait <= LEADING_UP_TO && !largeText()) {
      // At once, but after the frame that shows the key: a run's start does not delay the typing. The
      // token stands for the timer (an edit or a run meanwhile replaces it, and this run is not started).
      var token = runTimer = {};
      window.requestAnimationFrame(function () {
        window.setTimeout(function () { if (runTimer === token) runNow(); }, 0);
      });
      return;
    }
    runTimer = window.setTimeout(runNow, wait);
  }
  // editor.js announces each CodeMirror edit with playground:edited; the plain textarea sends input.
  document.addEventListener("playground:edited", edited);
  document.addEventListener("input", function (event) {
    if (event.target.id === "scenario" && !event.target.hidden) edited();
  });
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt !== playgroundForm()) return;
    window.clearTimeout(runTimer); // a run by Ctrl+Enter, a gate or the node also runs the pending edit
    runTimer = null;
    var xhr = event.detail.xhr;
    xhr.playgroundTurn = ++latest;
    xhr.playgroundStart = performance.now();
    inFlight = xhr;
  });
  // The round trip ends when the answer arrives (htmx:beforeOnLoad), before it is swapped in: the page's
  // own work on it is not the server's time and must not lengthen the wait before the next run.
  document.addEventListener("htmx:beforeOnLoad", function (event) {
    var xhr = event.detail.xhr;
    if (xhr && xhr.playgroundStart && !xhr.playgroundArrived) xhr.playgroundArrived = performance.now();
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail.xhr;
    if (!xhr || !xhr.playgroundStart) return;
    if (inFlight === xhr) inFlight = null;
    if (event.detail.successful) {
      answered++;
      remember((xhr.playgroundArrived || performance.now()) - xhr.playgroundStart);
    }
  });
  document.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (xhr && xhr.playgroundTurn && xhr.playgroundTurn !== latest) event.detail.shouldSwap = false;
  });
  window.playgroundRuns = { wait: runWait, runNow: runNow,
    answered: function () { return answered; }, roundTrips: function () { return roundTrips.slice(); } };

  // Only while the plain textarea is the editor; once CodeMirror has mounted (textarea hidden) editor.js does this.
  function gotoLine(line) {
    var area = document.getElementById("scenario");
    if (!area || area.hidden || !line) return false;
    var lines = area.value.split("\n");
    var start = 0;
    for (var i = 0; i < line - 1 && i < lines.length; i++) start += lines[i].length + 1;
    area.focus();
    area.setSelectionRange(start, start + (lines[line - 1] || "").length);
    var lineHeight = parseFloat(getComputedStyle(area).lineHeight) || 19;
    area.scrollTop = Math.max(0, (line - 5) * lineHeight);
    return true;
  }

  function applyTheme(theme) {
    document.documentElement.setAttribute("data-theme", theme);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var toggle = document.getElementById("theme-toggle");
    if (toggle) {
      toggle.hidden = false; // it needs JavaScript, so the page ships it hidden
      toggle.addEventListener("click", function () {
        var current = document.documentElement.getAttribute("data-theme");
        var dark = current === "dark" || (current === "auto" && window.matchMedia("(prefers-color-scheme: dark)").matches);
        var next = dark ? "light" : "dark";
        applyTheme(next);
        try { localStorage.setItem("dra-theme", next); } catch (e) { /* ignore */ }
      });
    }
    var area = document.getElementById("scenario");
    if (area) {
      area.addEventListener("keydown", function (event) {
        if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
          event.preventDefault();
          var form = document.getElementById("playground");
          if (window.htmx) { htmx.trigger(form, "run"); } else { form.submit(); }
        }
      });
    }
  });

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest(".goto-line");
    if (link && gotoLine(parseInt(link.getAttribute("data-line"), 10))) event.preventDefault();
  });

  // The why table's filters: a text filter and "chosen and blocking only"; both kept across re-runs.
  var FILTER_KEY = "dra-why-filter";
  function filterState() {
    try { return JSON.parse(sessionStorage.getItem(FILTER_KEY)) || {}; } catch (e) { return {}; }
  }
  function applyWhyFilter() {
    var state = filterState();
    var text = document.getElementById("why-filter");
    var only = document.getElementById("why-blocking-only");
    if (text && text.value !== (state.text || "")) text.value = state.text || "";
    if (only) only.checked = !!state.blockingOnly;
    var needle = (state.text || "").toLowerCase();
    document.querySelectorAll("#panel-why table.why tbody tr:not(.pool-row)").forEach(function (row) {
      var hide = (needle && row.textContent.toLowerCase().indexOf(needle) < 0) ||
                 (state.blockingOnly && row.getAttribute("data-blocking") !== "1");
      row.classList.toggle("hidden-row", !!hide);
    });
  }
  function saveWhyFilter() {
    var text = document.getElementById("why-filter");
    var only = document.getElementById("why-blocking-only");
    var state = { text: text ? text.value : "", blockingOnly: !!(only && only.checked) };
    try { sessionStorage.setItem(FILTER_KEY, JSON.stringify(state)); } catch (e) { /* ignore */ }
    applyWhyFilter();
  }
  document.addEventListener("input", function (event) {
    if (event.target.id === "why-filter") saveWhyFilter();
  });
  document.addEventListener("change", function (event) {
    if (event.target.id === "why-blocking-only") saveWhyFilter();
  });
  document.addEventListener("DOMContentLoaded", applyWhyFilter);
  document.addEventListener("htmx:afterSettle", window.oncePerSwap(applyWhyFilter));
})();

// Copy and download the resulting claims.
document.addEventListener("click", function (event) {
  var button = event.target.closest && event.target.closest(".copy-yaml, .download-yaml");
  if (!button) return;
  var source = document.getElementById(button.getAttribute("data-target"));
  if (!source) return;
  var text = source.textContent;
  if (button.classList.contains("copy-yaml")) {
    if (navigator.clipboard) {
      navigator.clipboard.writeText(text).then(function () {
        var copied = window.gettext ? window.gettext("Copied") : "Copied";
        if (!button.hasAttribute("data-label")) button.setAttribute("data-label", button.textContent);
        button.textContent = copied;
        window.clearTimeout(button.flashTimer);
        button.flashTimer = window.setTimeout(function () { button.textContent = button.getAttribute("data-label"); }, 2000);
      });
    }
    return;
  }
  var link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text], { type: "text/yaml" }));
  link.download = button.getAttribute("data-filename") || "claims.yaml";
  document.body.appendChild(link);
  link.click();
  setTimeout(function () { URL.revokeObjectURL(link.href); link.remove(); }, 0);
});

// Open or closed sections of the results (details[data-keep]) stay as the reader left them across re-runs and reloads.
(function () {
  "use strict";
  var KEY = "dra-open-sections";
  function saved() {
    try { return JSON.parse(sessionStorage.getItem(KEY)) || {}; } catch (e) { return {}; }
  }
  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (!details.matches || !details.matches("details[data-keep]")) return;
    if (details.foldedByScript) { details.foldedByScript = false; return; }  // results.js folded it: nothing to keep
    var state = saved();
    if (state[details.getAttribute("data-keep")] === details.open) return;  // (a swap's <details open> fires toggle too)
    state[details.getAttribute("data-keep")] = details.open;
    try { sessionStorage.setItem(KEY, JSON.stringify(state)); } catch (e) { /* ignore */ }
  }, true);
  function restore() {
    var state = saved();
    document.querySelectorAll("details[data-keep]").forEach(function (details) {
      var key = details.getAttribute("data-keep");
      if (Object.prototype.hasOwnProperty.call(state, key) && details.open !== state[key]) details.open = state[key];
    });
  }
  document.addEventListener("DOMContentLoaded", restore);
  document.addEventListener("htmx:afterSwap", window.oncePerSwap(restore));
})();

// The gates table: the ≠ mark follows every toggle, and "Reset gates to defaults" works without a round trip.
(function () {
  "use strict";
  function markSkew(row) {
    var values = Array.prototype.map.call(row.querySelectorAll('input[type="checkbox"]'), function (box) { return box.checked; });
    row.classList.toggle("skewed", values.some(function (v) { return v !== values[0]; }));
  }
  document.addEventListener("change", function (event) {
    var row = event.target.closest && event.target.closest(".gates tr.gate-row");
    if (row) markSkew(row);
  });
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".reset-gates");
    if (!button || !window.htmx) return; // without htmx the button submits the form with reset-gates=1
    event.preventDefault();
    var changed = null;
    document.querySelectorAll(".gates tr.gate-row").forEach(function (row) {
      var wanted = row.getAttribute("data-default") === "true";
      row.querySelectorAll('input[type="checkbox"]').forEach(function (box) {
        if (box.checked !== wanted) { box.checked = wanted; changed = box; }
      });
      markSkew(row);
    });
    if (changed) changed.dispatchEvent(new Event("change", { bubbles: true }));
  });
})();

// The editor's text size (13 px is too small on a projector), kept in this browser.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var select = document.getElementById("font-size");
    if (!select) return;
    var stored = "";
    try { stored = localStorage.getItem("dra-font-size") || ""; } catch (e) { /* ignore */ }
    select.value = stored;
    select.addEventListener("change", function () {
      var size = select.value;
      if (size) document.documentElement.style.setProperty("--editor-font", size + "px");
      else document.documentElement.style.removeProperty("--editor-font");
      try {
        if (size) localStorage.setItem("dra-font-size", size); else localStorage.removeItem("dra-font-size");
      } catch (e) { /* ignore */ }
    });
  });
})();

// After a run the node options are swapped in; the browser may then keep the last option shown.
// The option the server marked `selected` is the node the run was for.
document.addEventListener("htmx:oobAfterSwap", function (event) {
  var select = event.detail && event.detail.target;
  if (!select || select.id !== "node") return;
  var marked = select.querySelector("option[selected]");
  select.value = marked ? marked.value : "";
});
