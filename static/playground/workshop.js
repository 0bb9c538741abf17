// Workshops: the lesson panel (Hint, Reset, Show solution, Alt+←/→), progress kept in localStorage,
// and presenter mode (?present=1 puts the `present` class on <html>).
(function () {
  "use strict";
  // The page's language: strings from Django's JavaScript catalogue (/jsi18n/), English without it.
  function _(text) { return window.gettext ? window.gettext(text) : text; }
  function fill(text, values) {
    return text.replace(/%\((\w+)\)s/g, function (m, key) { return String(values[key]); });
  }

  if (new URLSearchParams(location.search).get("present") === "1") {
    document.documentElement.classList.add("present");
  }

  function load(key) {
    try { return JSON.parse(localStorage.getItem(key)) || {}; } catch (e) { return {}; }
  }
  function store(key, state) {
    try { localStorage.setItem(key, JSON.stringify(state)); } catch (e) { /* private mode: no progress */ }
  }

  // ---- the list and overview pages: where the attendee is, and which steps passed ----
  function showProgress() {
    document.querySelectorAll("[data-workshop-key]").forEach(function (box) {
      var state = load(box.getAttribute("data-workshop-key"));
      var note = box.querySelector(".workshop-progress");
      if (note && state.step) {
        var passed = (state.passed || []).length;
        var where = {step: state.step, steps: box.getAttribute("data-steps"), passed: passed};
        note.textContent = fill(passed ? _("You were at step %(step)s of %(steps)s; %(passed)s passed.")
          : _("You were at step %(step)s of %(steps)s."), where) + " ";
        var link = document.createElement("a");
        link.className = "workshop-continue";
        link.href = box.getAttribute("data-lesson-base") + state.step;
        link.textContent = fill(_("Continue at step %(step)s"), where);
        note.appendChild(link);
        note.hidden = false;
      }
      box.querySelectorAll(".lesson-list li[data-step]").forEach(function (item) {
        var done = (state.passed || []).indexOf(parseInt(item.getAttribute("data-step"), 10)) >= 0;
        var mark = item.querySelector(".lesson-done");
        if (mark) mark.hidden = !done;
      });
    });
  }

  // ---- the lesson page ----
  function lessonPage() {
    var panel = document.getElementById("lesson");
    var dataNode = document.getElementById("lesson-data");
    if (!panel || !dataNode) return;
    var data = JSON.parse(dataNode.textContent);
    var form = document.getElementById("playground");
    var area = document.getElementById("scenario");
    var step = String(data.step);
    // Without JavaScript, Check is a submit button (formaction) of the page's form. With htmx it posts by
    // itself (hx-post), so it stops being a submitter: otherwise Enter in a field submits through it, and
    // htmx sends the form's next live run to the formaction of the button clicked last.
    var checkButton = panel.querySelector(".lesson-check");
    if (checkButton && window.htmx) {
      checkButton.type = "button";
      checkButton.removeAttribute("formaction");
    }

    function gateBoxes() {
      return form.querySelectorAll('.gates input[type=checkbox][name^="gate-"]');
    }
    function versionSelects() {
      return form.querySelectorAll('.gate-versions select[name^="emulated-"], .gate-versions select[name^="mincompat-"]');
    }
    function currentVersions() {
      var versions = {};
      versionSelects().forEach(function (select) { versions[select.name] = select.value; });
      return versions;
    }
    function current() {
      var checked = [];
      gateBoxes().forEach(function (box) { if (box.checked) checked.push(box.name); });
      var node = document.getElementById("node");
      // The editor's text: a run of a large text no longer copies it into the textarea (editor.js).
      var text = window.playgroundEditor ? window.playgroundEditor.text() : area.value;
      return { scenario: text, node: node ? node.value : "", checked: checked, versions: currentVersions() };
    }
    function run() {
      if (window.htmx) window.htmx.trigger(form, "run"); else form.requestSubmit();
    }
    function setNode(name) {
      var select = document.getElementById("node");
      if (!select) return;
      if (name && !Array.prototype.some.call(select.options, function (o) { return o.value === name; })) {
        var option = document.createElement("option");
        option.value = option.textContent = name;
        select.appendChild(option);
      }
      select.value = name || "";
    }
    function apply(saved) {
      area.value = saved.scenario;
      area.dispatchEvent(new Event("playground:scenario-replaced"));
      setNode(saved.node);
      var versions = saved.versions || {};  // a state saved before versions were kept: leave them alone
      versionSelects().forEach(function (select) {
        if (select.name in versions) select.value = versions[select.name];
      });
      gateBoxes().forEach(function (box) { box.checked = saved.checked.indexOf(box.name) >= 0; });
      run();
    }
    function fromVariant(variant) {
      // {scenario, node, gates: {component: {gate: value}}} -> the form's state
      var checked = [];
      gateBoxes().forEach(function (box) {
        var parts = box.name.split("-");  // gate-<component>-<Gate>
        var component = parts[1], gate = parts.slice(2).join("-");
        var values = variant.gates[component] || {};
        var on = !!values[gate];  // the server sends every gate's value at the variant's versions
        if (on) checked.push(box.name);
      });
      var versions = {};  // the variant's --emulated-version and --min-compatibility-version per component
      Object.keys(variant.versions || {}).forEach(function (component) {
        versions["emulated-" + component] = variant.versions[component].emulated || "";
        versions["mincompat-" + component] = variant.versions[component].minCompat || "";
      });
      return { scenario: variant.scenario, node: variant.node, checked: checked, versions: versions };
    }
    function clearCheck() {
      var result = document.getElementById("check-result");
      if (result) { result.innerHTML = ""; result.removeAttribute("data-all-passed"); }
    }

    var state = load(data.key);
    state.steps = state.steps || {};
    state.passed = state.passed || [];
    state.step = data.step;
    var params = new URLSearchParams(location.search);
    if (params.get("reset") === "1") {
      delete state.steps[step];
      params.delete("reset");
      var query = params.toString();
      history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
    } else if (state.steps[step] && !document.getElementById("check-result").hasAttribute("data-all-passed")) {
      // A reload keeps the attendee's text (unless this page shows the answer to a plain-form Check).
      var saved = state.steps[step];
      var now = current();
      if (saved.scenario !== now.scenario || saved.node !== now.node || saved.checked.join() !== now.checked.join()
          || (saved.versions && JSON.stringify(saved.versions) !== JSON.stringify(now.versions))) {
        apply(saved);
      }
    }
    store(data.key, state);

    function save() {
      var latest = load(data.key);
      latest.steps = latest.steps || {};
      latest.steps[step] = current();
      latest.step = data.step;
      latest.passed = latest.passed || [];
      store(data.key, latest);
    }
    area.addEventListener("input", save);
    // An edit in the editor says so without touching the textarea: saved a moment after typing rests
    // (the text is read whole), and at once when the page goes.
    var saveTimer = null;
    area.addEventListener("playground:edited", function () {
      window.clearTimeout(saveTimer);
      saveTimer = window.setTimeout(function () { saveTimer = null; save(); }, 300);
    });
    window.addEventListener("pagehide", function () {
      if (saveTimer === null) return;
      window.clearTimeout(saveTimer);
      saveTimer = null;
      save();
    });
    form.addEventListener("change", function (event) {
      if (event.target.id === "node" || event.target.closest(".gates")) save();
    });

    // Hints, one at a time; without JavaScript the <details> shows them all.
    var hints = document.getElementById("lesson-hints");
    var hintButton = panel.querySelector(".lesson-hint");
    if (hints && hintButton) {
      var items = hints.querySelectorAll("li");
      items.forEach(function (item) { item.hidden = true; });
      hints.hidden = true;
      var shown = 0;
      hintButton.addEventListener("click", function () {
        if (shown >= items.length) return;
        hints.hidden = false;
        hints.open = true;
        items[shown].hidden = false;
        shown += 1;
        if (shown >= items.length) {
          hintButton.disabled = true;
          hintButton.textContent = _("No more hints");
        } else {
          hintButton.textContent = fill(_("Next hint (%(shown)s/%(count)s)"), {shown: shown, count: items.length});
        }
      });
    }

    panel.querySelector(".lesson-reset").addEventListener("click", function (event) {
      event.preventDefault();
      var latest = load(data.key);
      if (latest.steps) delete latest.steps[step];
      store(data.key, latest);
      clearCheck();
      apply(fromVariant(data.start));
    });
    panel.querySelector(".lesson-use-solution").addEventListener("click", function () {
      apply(fromVariant(data.solution));
      save();
    });

    document.addEventListener("htmx:afterSwap", function () {
      var result = document.getElementById("check-result");
      if (!result) return;
      if (result.getAttribute("data-all-passed") === "1") {
        var latest = load(data.key);
        latest.passed = latest.passed || [];
        if (latest.passed.indexOf(data.step) < 0) latest.passed.push(data.step);
        store(data.key, latest);
      }
    });

    window.addEventListener("keydown", function (event) {
      if (!event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      var target = event.key === "ArrowRight" ? panel.getAttribute("data-next")
        : event.key === "ArrowLeft" ? panel.getAttribute("data-prev") : null;
      if (!target) return;
      event.preventDefault();
      event.stopPropagation();
      save();
      location.href = target;
    }, true);
  }

  document.addEventListener("DOMContentLoaded", function () {
    showProgress();
    lessonPage();
  });
})();
