// Long parts of a result fold to their count: every <details data-fold> is sent open (so a page
// without JavaScript shows everything) and closed here, with a filter box over its rows
// ([data-filter-row] whose nearest fold it is). A fold the reader opened stays open across
// re-runs (its data-keep state, see playground.js).
(function () {
  "use strict";
  var KEPT = "dra-open-sections";
  var gettext = window.gettext || function (text) { return text; };
  function keptOpen(details) {
    var key = details.getAttribute("data-keep");
    try { return key && (JSON.parse(sessionStorage.getItem(KEPT)) || {})[key] === true; } catch (e) { return false; }
  }
  function rowsOf(details) {
    return Array.prototype.filter.call(details.querySelectorAll("[data-filter-row]"), function (row) {
      return row.parentElement.closest("details[data-fold]") === details;
    });
  }
  function filter(details, text) {
    var needle = text.trim().toLowerCase();
    var shown = 0;
    rowsOf(details).forEach(function (row) {
      var hide = needle && row.textContent.toLowerCase().indexOf(needle) < 0;
      row.hidden = !!hide;
      if (!hide) shown += 1;
    });
    var count = details.querySelector(".fold-count");
    if (count) count.textContent = needle ? gettext("%s shown").replace("%s", shown) : "";
  }
  function fold(root) {
    root.querySelectorAll("details[data-fold]:not([data-folded])").forEach(function (details) {
      details.setAttribute("data-folded", "");
      if (!keptOpen(details) && details.open) { details.foldedByScript = true; details.open = false; }
      var label = document.createElement("label");
      label.className = "fold-filter";
      var box = document.createElement("input");
      box.type = "search";
      box.setAttribute("aria-label", gettext("Filter these rows"));
      box.placeholder = gettext("Filter");
      box.addEventListener("input", function () { filter(details, box.value); });
      var count = document.createElement("span");
      count.className = "fold-count muted";
      label.appendChild(box);
      label.appendChild(count);
      details.querySelector("summary").insertAdjacentElement("afterend", label);
    });
  }
  document.addEventListener("DOMContentLoaded", function () { fold(document); });
  document.addEventListener("htmx:afterSwap", window.oncePerSwap(function () { fold(document); }));
})();
