// Runs before the first paint (loaded without defer in <head>): the stored theme and editor text size,
// and the `js` class that shows what only works with JavaScript.
(function () {
  "use strict";
  var root = document.documentElement;
  root.classList.remove("no-js");
  root.classList.add("js");
  try {
    var stored = localStorage.getItem("dra-theme");
    if (stored) root.setAttribute("data-theme", stored);
    var size = localStorage.getItem("dra-font-size");
    if (size) root.style.setProperty("--editor-font", size + "px");
  } catch (e) { /* storage unavailable: follow the system */ }
})();
