// Opening or dropping a scenario file. A small file goes into the editor as text. A large one
// (a cluster dump) would make the editor slow, so it is posted as the file itself (multipart,
// field `scenario-file`) and only its beginning is shown, read-only, until it is closed.
(function () {
  "use strict";
  // The page's language: strings from Django's JavaScript catalogue (/jsi18n/), English without it.
  function _(text) { return window.gettext ? window.gettext(text) : text; }
  function fill(text, values) {
    return text.replace(/%\((\w+)\)s/g, function (m, key) { return String(values[key]); });
  }
  var INLINE_BYTES = 512 * 1024;
  var PREVIEW_BYTES = 64 * 1024;
  var PREVIEW_LINES = 300;

  function megabytes(bytes) {
    return (bytes / (1024 * 1024)).toFixed(1) + " MiB";
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("scenario-file-box");
    var input = document.getElementById("scenario-file");
    var form = document.getElementById("playground");
    var editor = document.getElementById("editor");
    var area = document.getElementById("scenario");
    var view = document.getElementById("file-view");
    var refused = document.getElementById("file-refused");
    if (!box || !input || !form || !editor || !area || !view || !refused) return;
    var max = parseInt(box.getAttribute("data-max-bytes"), 10) || 0;
    box.hidden = false;

    function run() {
      if (window.htmx) window.htmx.trigger(form, "run");
      else form.requestSubmit();
    }

    function refuse(message) {
      refused.textContent = message;
      refused.hidden = false;
      input.value = "";
    }

    function showLarge(file) {
      form.setAttribute("hx-encoding", "multipart/form-data");
      form.enctype = "multipart/form-data";  // for a submit without htmx too
      document.getElementById("file-name").textContent = file.name;
      document.getElementById("file-size").textContent = megabytes(file.size);
      var preview = document.getElementById("file-preview");
      preview.textContent = "";
      file.slice(0, PREVIEW_BYTES).text().then(function (head) {
        var lines = head.split("\n");
        var shown = lines.slice(0, Math.min(PREVIEW_LINES, lines.length - 1)).join("\n");
        preview.textContent = shown + "\n# " + fill(_("… the rest of %(name)s (%(size)s) is not shown here"), { name: file.name, size: megabytes(file.size) });
      });
      editor.hidden = true;
      view.hidden = false;
      run();
    }

    function closeFile() {
      input.value = "";
      var node = document.getElementById("node");
      if (node) node.value = "";  // a node of the file's scenario means nothing in the editor's
      form.removeAttribute("hx-encoding");
      form.removeAttribute("enctype");
      view.hidden = true;
      editor.hidden = false;
      run();
    }

    function open(file) {
      refused.hidden = true;
      var node = document.getElementById("node");
      if (node) node.value = "";  // a node of the previous scenario means nothing in this one
      if (max && file.size > max) {
        refuse(fill(_("%(name)s is %(size)s bytes; the limit is %(limit)s bytes."), { name: file.name, size: file.size.toLocaleString(), limit: max.toLocaleString() }));
        return;
      }
      if (file.size > INLINE_BYTES) {
        showLarge(file);
        return;
      }
      file.text().then(function (text) {
        input.value = "";
        if (!view.hidden) closeFile();
        area.value = text;
        // editor.js shows it in CodeMirror (whose change posts it); the plain textarea posts on input.
        area.dispatchEvent(new Event("playground:scenario-replaced"));
        area.dispatchEvent(new Event("input", { bubbles: true }));
      });
    }

    input.addEventListener("change", function () {
      if (input.files && input.files.length) open(input.files[0]);
    });
    document.getElementById("file-close").addEventListener("click", closeFile);

    editor.addEventListener("dragover", function (event) {
      if (event.dataTransfer && Array.prototype.indexOf.call(event.dataTransfer.types, "Files") >= 0) {
        event.preventDefault();
        editor.classList.add("dropping");
      }
    });
    editor.addEventListener("dragleave", function () { editor.classList.remove("dropping"); });
    editor.addEventListener("drop", function (event) {
      editor.classList.remove("dropping");
      var files = event.dataTransfer && event.dataTransfer.files;
      if (!files || !files.length) return;
      event.preventDefault();
      event.stopPropagation();  // CodeMirror would insert the file's text itself
      input.files = files;  // a large file is posted from the input
      open(files[0]);
    }, true);
  });
})();
