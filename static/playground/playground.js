// DRA Playground page behaviour: theme, filtering, and the plain-textarea editor that editor.js replaces.
(function () {
  "use strict";

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
  document.addEventListener("htmx:afterSettle", applyWhyFilter);
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
      navigator.clipboard.writeText(text).then(function () { button.textContent = "Copied"; });
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
