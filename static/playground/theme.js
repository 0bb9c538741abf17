// Applies the stored theme before the first paint (loaded without defer in <head>).
(function () {
  "use strict";
  try {
    var stored = localStorage.getItem("dra-theme");
    if (stored) document.documentElement.setAttribute("data-theme", stored);
  } catch (e) { /* storage unavailable: follow the system */ }
})();
