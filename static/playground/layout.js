// The page around the editor and the results: focus kept across a re-run, the headline announced (and
// only the headline), phone tabs (Scenario / Results / Gates), and the lesson's Check shortcut.
// Without JavaScript none of this exists and the page stays one stacked column.
(function () {
  "use strict";
  function _(text) { return window.gettext ? window.gettext(text) : text; }

  // ---- Focus kept where it was when htmx swaps the results (or any target) under it. ----
  // The element is found again by id, by its data-keep box, or by a few identifying attributes;
  // failing those, by its position among its swapped siblings.
  var IDENTIFYING = ["data-replay-go", "data-replay-jump", "data-replay-dir", "data-replay-play", "data-target", "name",
    "data-line", "data-filter", "aria-label"];

  function cssEscape(value) { return window.CSS && CSS.escape ? CSS.escape(value) : value.replace(/["\\]/g, "\\$&"); }

  function describeFocus(target) {
    var active = document.activeElement;
    if (!active || active === document.body || !target.contains(active)) return null;
    if (active.id && active !== target) return { selector: "#" + cssEscape(active.id) };
    var parts = [], node = active;
    while (node && node !== target) {
      var keep = node.getAttribute && node.getAttribute("data-keep");
      if (keep && node !== active) { parts.unshift('[data-keep="' + cssEscape(keep) + '"]'); break; }
      var part = node.tagName.toLowerCase();
      var named = IDENTIFYING.filter(function (a) { return node.hasAttribute(a); });
      if (named.length) {
        part += named.map(function (a) { return "[" + a + '="' + cssEscape(node.getAttribute(a)) + '"]'; }).join("");
      } else if (node.parentElement) {
        part += ":nth-child(" + (Array.prototype.indexOf.call(node.parentElement.children, node) + 1) + ")";
      }
      parts.unshift(part);
      if (named.length && node === active) {
        // An identified control: look it up anywhere in the new target, not by its exact path.
        return { selector: part, fallback: parts.join(" > ") };
      }
      node = node.parentElement;
    }
    return { selector: parts.join(" > ") };
  }

  var keptFocus = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    keptFocus = target ? describeFocus(target) : null;
    if (keptFocus) keptFocus.targetId = target.id;
  });

  function restoreFocus() {
    if (!keptFocus) return;
    var kept = keptFocus;
    keptFocus = null;
    var active = document.activeElement;
    if (active && active !== document.body && document.contains(active)) return;  // focus already somewhere real
    var scope = (kept.targetId && document.getElementById(kept.targetId)) || document;
    var found = null;
    try {
      found = scope.querySelector(kept.selector) || (kept.fallback && scope.querySelector(kept.fallback));
    } catch (e) { found = null; }
    if (found && typeof found.focus === "function") found.focus({ preventScroll: true });
  }

  // ---- The headline, announced once per run (the results section itself is not a live region). ----
  function announce() {
    var region = document.getElementById("announce");
    var results = document.getElementById("results");
    if (!region || !results) return;
    var heading = results.querySelector(".outcome h2");
    var headline = results.querySelector("#headline");
    var text = [heading, headline].filter(Boolean).map(function (n) { return n.textContent.replace(/\s+/g, " ").trim(); }).join(" ");
    region.textContent = "";
    window.setTimeout(function () { region.textContent = text; }, 30);
    markResultsTab(heading);
  }

  // ---- Phone tabs. ----
  var TABS = [["scenario", _("Scenario")], ["results", _("Results")], ["gates", _("Feature gates")]];

  function panelOf(form, name) {
    var panel = name === "results" ? form.querySelector("#results")
      : name === "gates" ? form.querySelector("details.gates") : form.querySelector(".editor-pane");
    if (panel && !panel.id) panel.id = name + "-pane";
    return panel;
  }

  function buildTabs(form) {
    if (form.querySelector(".phone-tabs")) return;
    var bar = document.createElement("div");
    bar.className = "phone-tabs";
    bar.setAttribute("role", "tablist");
    bar.setAttribute("aria-label", _("Show"));
    TABS.forEach(function (entry) {
      var button = document.createElement("button");
      button.type = "button";
      button.id = "tab-" + entry[0];
      button.setAttribute("role", "tab");
      button.setAttribute("data-tab", entry[0]);
      var panel = panelOf(form, entry[0]);
      if (panel) button.setAttribute("aria-controls", panel.id);
      var label = document.createElement("span");
      label.textContent = entry[1];
      button.appendChild(label);
      if (entry[0] === "results") {
        var mark = document.createElement("span");
        mark.className = "tab-mark";
        mark.setAttribute("aria-hidden", "true");
        button.appendChild(mark);
      }
      button.addEventListener("click", function () { selectTab(form, entry[0], true); });
      bar.appendChild(button);
    });
    bar.addEventListener("keydown", function (event) {
      if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
      var names = TABS.map(function (t) { return t[0]; });
      var at = names.indexOf(form.getAttribute("data-tab"));
      var next = names[(at + (event.key === "ArrowRight" ? 1 : names.length - 1)) % names.length];
      selectTab(form, next, true);
      document.getElementById("tab-" + next).focus();
      event.preventDefault();
    });
    form.insertBefore(bar, form.firstChild);
    selectTab(form, "scenario", false);
  }

  function selectTab(form, name, scroll) {
    form.setAttribute("data-tab", name);
    form.querySelectorAll(".phone-tabs [role=tab]").forEach(function (tab) {
      var on = tab.getAttribute("data-tab") === name;
      tab.setAttribute("aria-selected", on ? "true" : "false");
      tab.tabIndex = on ? 0 : -1;
    });
    if (name === "gates") {
      var gates = form.querySelector("details.gates");
      if (gates) gates.open = true;
    }
    if (scroll) form.scrollIntoView({ block: "start" });
  }

  function markResultsTab(heading) {
    var mark = document.querySelector(".phone-tabs .tab-mark");
    if (!mark) return;
    var outcome = heading && heading.parentElement;
    var word = "";
    if (outcome && /outcome-allocated/.test(outcome.className)) word = "✔";
    else if (outcome && /outcome-unsatisfiable/.test(outcome.className)) word = "✘";
    else if (outcome && /outcome-invalid/.test(outcome.className)) word = "⚠";
    mark.textContent = word ? " " + word : "";
  }

  // ---- A lesson's Check from anywhere, the editor included: Ctrl+Shift+Enter (⌘+Shift+Enter). ----
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || !event.shiftKey || !(event.ctrlKey || event.metaKey) || event.altKey) return;
    var check = document.querySelector(".lesson-check");
    if (!check) return;
    event.preventDefault();
    event.stopPropagation();
    if (window.playgroundEditor) window.playgroundEditor.sync();  // the editor copies its text lazily
    check.click();
  }, true);

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("playground");
    if (form) buildTabs(form);
    markResultsTab(document.querySelector("#results .outcome h2"));
  });
  document.addEventListener("htmx:afterSettle", (window.oncePerSwap || function (f) { return f; })(function (event) {
    restoreFocus();
    if (event.detail.target && event.detail.target.id === "results") announce();
  }));
})();
