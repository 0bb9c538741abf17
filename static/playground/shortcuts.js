// The playground's keys and top-bar tools: `?` opens the shortcut list, Format, Compare (the compare
// page with this scenario on both sides), Share from the top bar, and Check in a lesson.
(function () {
  "use strict";
  function form() { return document.getElementById("playground"); }
  function syncEditor() { if (window.playgroundEditor) window.playgroundEditor.sync(); }
  function typingIn(target) {
    return target && target.closest && (target.closest(".cm-editor") ||
      /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) || target.isContentEditable);
  }

  function openHelp() {
    var dialog = document.getElementById("shortcuts");
    if (!dialog || dialog.open) return;
    if (typeof dialog.showModal === "function") dialog.showModal(); else dialog.setAttribute("open", "");
  }

  function compare() {
    var playground = form();
    var button = document.getElementById("compare-button");
    if (!playground || !button) return;
    syncEditor();
    var sent = document.createElement("form");
    sent.method = "post";
    sent.action = button.getAttribute("data-compare-url");
    sent.hidden = true;
    function field(name, value) {
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      input.value = value;
      sent.appendChild(input);
    }
    new FormData(playground).forEach(function (value, name) {
      if (typeof value !== "string" || name === "example") return;
      if (name === "csrfmiddlewaretoken") { field(name, value); return; }
      field("a-" + name, value);
      // B starts as A's settings with an empty text: the compare page reads that as "the same text".
      if (name !== "scenario" && name !== "node") field("b-" + name, value);
    });
    document.body.appendChild(sent);
    sent.submit();
  }

  function share() {
    var button = document.querySelector(".topbar-share");
    if (button && !button.disabled) button.click();
  }


  document.addEventListener("keydown", function (event) {
    var mod = event.ctrlKey || event.metaKey;
    if (event.key === "?" && !mod && !event.altKey && !typingIn(event.target)) {
      event.preventDefault();
      openHelp();
    } else if (mod && event.shiftKey && (event.key === "S" || event.key === "s") && form()) {
      event.preventDefault();
      share();
    }
  });

  document.addEventListener("click", function (event) {
    var target = event.target.closest ? event.target : null;
    if (!target) return;
    if (target.closest("#shortcuts-button")) openHelp();
    else if (target.closest("#compare-button")) compare();
    else if (target.closest("#format-button") && window.playgroundEditor) window.playgroundEditor.format();
  });

  // The short link lands in the share box below the editor: bring it into view from the top bar.
  document.addEventListener("htmx:afterSwap", function (event) {
    var elt = event.detail && event.detail.requestConfig && event.detail.requestConfig.elt;
    if (elt && elt.classList && elt.classList.contains("topbar-share")) {
      var result = document.getElementById("share-result");
      if (result) result.scrollIntoView({ block: "nearest" });
    }
  });

})();
