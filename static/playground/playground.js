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

  document.addEventListener("input", function (event) {
    if (event.target.id !== "why-filter") return;
    var needle = event.target.value.toLowerCase();
    document.querySelectorAll("table.why tbody tr").forEach(function (row) {
      row.classList.toggle("hidden-row", needle && row.textContent.toLowerCase().indexOf(needle) < 0);
    });
  });
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
