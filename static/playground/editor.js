// The scenario editor: CodeMirror 6 mounted beside <textarea id="scenario">, which stays the form field.
// Without JavaScript, or if the bundle fails to load, the plain textarea is the editor (see playground.js).
// The textarea is brought up to date only when something reads it (a run, a share, the draft): copying
// a 1 MB document on every key would cost more than the key. An edit only says `playground:edited`,
// which playground.js turns into a run once typing pauses; after a copy the textarea sends `input`.

const host = document.getElementById("editor");
const textarea = document.getElementById("scenario");

// complete.js (completion, hover, the shortcut keys) comes by its own URL: hashed static names in production.
if (host && textarea && host.dataset.codemirror) {
  Promise.all([import(host.dataset.codemirror), import(host.dataset.tools)]).then(([cm, tools]) => mount(cm, tools), (error) => {
    console.warn("The editor bundle did not load; the plain textarea stays.", error);
  });
}

// Over this many characters the editor drops the YAML language (colours, folding by structure):
// its parser re-reads a changed text within the key's own frame, and for a 1 MB dump that alone
// costs more than a frame per key. Typing stays O(change); the engine still reads the YAML.
const PLAIN_OVER = 512 * 1024;

function mount(cm, { editorTools }) {
  const { EditorView, EditorState, Compartment, Prec, keymap, basicSetup, indentWithTab } = cm;
  const { yaml, lintGutter, setDiagnostics } = cm;
  let stale = false; // the textarea is behind the editor
  const form = textarea.form;
  const darkQuery = window.matchMedia("(prefers-color-scheme: dark)");
  const appearance = new Compartment();
  const language = new Compartment();
  let plain = textarea.value.length > PLAIN_OVER;
  function languageFor(isPlain) { return isPlain ? [] : yaml(); }
  // Plain text past the size, YAML again below it (with some room, so a text at the edge does not
  // switch back and forth).
  function wantsPlain(length) { return plain ? length > PLAIN_OVER * 0.9 : length > PLAIN_OVER; }
  function followSize() {
    if (wantsPlain(view.state.doc.length) === plain) return;
    plain = !plain;
    view.dispatch({ effects: language.reconfigure(languageFor(plain)) });
    if (plain) announce(_("Syntax colours are off while the text is over 512 KB, so typing stays fast."), false);
  }
  let dark = isDark();
  // CodeMirror styles itself with a <style> element; under a nonce-based style-src it needs the page's nonce.
  const nonce = (document.querySelector("script[nonce]") || {}).nonce || "";

  function isDark() {
    const theme = document.documentElement.getAttribute("data-theme");
    return theme === "dark" || (theme !== "light" && darkQuery.matches);
  }

  function runNow() {
    sync();
    if (window.playgroundRuns) window.playgroundRuns.runNow();
    else form.requestSubmit();
    return true;
  }

  function sync() {
    if (!stale) return;
    stale = false;
    textarea.value = view.state.doc.toString();
    textarea.dispatchEvent(new Event("input", { bubbles: true }));
  }

  const view = new EditorView({
    parent: host,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        basicSetup,
        // Tab indents; Esc then Tab moves focus on, so the keyboard is never trapped.
        keymap.of([indentWithTab]),
        // Above basicSetup, whose Mod-Enter would insert a blank line.
        Prec.highest(keymap.of([{ key: "Mod-Enter", run: runNow }])),
        EditorState.tabSize.of(2),
        EditorView.cspNonce.of(nonce),
        language.of(languageFor(plain)),
        lintGutter(),
        EditorView.contentAttributes.of({ "aria-label": textarea.getAttribute("aria-label") || "Scenario YAML" }),
        layout(cm),
        appearance.of(appearanceFor(cm, dark)),
        editorTools(cm, { format: () => formatDocument() }),
        steadyCaret(EditorView),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          stale = true;
          // Not inside this update: a dispatch must wait until the update is over.
          if (wantsPlain(update.state.doc.length) !== plain) queueMicrotask(followSize);
          textarea.dispatchEvent(new CustomEvent("playground:edited", { bubbles: true }));
        }),
      ],
    }),
  });
  textarea.hidden = true;
  // Whatever sends the form reads the textarea: htmx asks htmx:confirm before it collects the fields.
  // Except a run of a text over PLAIN_OVER: playground.js's json-form sends the editor's own text, since
  // putting 1 MB into a textarea costs Chromium 80–300 ms of the page's time, at every pause in typing.
  // (htmx collects the fields with `new FormData(form)`, whose formdata event follows at once.)
  let runReadsEditor = false;
  document.addEventListener("htmx:confirm", (event) => {
    if (plain && event.detail && event.detail.elt === form && !form.getAttribute("hx-encoding")) {
      runReadsEditor = true;
      queueMicrotask(() => { runReadsEditor = false; });
      return;
    }
    sync();
  }, true);
  document.addEventListener("submit", sync, true);
  document.addEventListener("formdata", () => { if (!runReadsEditor) sync(); }, true);

  // Format: the server re-indents and checks that the YAML still means the same; one transaction,
  // so Undo brings the text back.
  async function formatDocument() {
    sync();
    const before = view.state.doc.toString();
    const result = await formatText(before);
    if (result.error) {
      announce(result.error, true);
      return false;
    }
    if (view.state.doc.toString() !== before) return false; // typed on meanwhile: that text wins
    if (result.text === before) {
      announce(_("Already formatted."), false);
      return true;
    }
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: result.text }, userEvent: "format" });
    announce(result.comments
      ? _("Formatted: indentation is two spaces per level; comments are kept. Ctrl+Z undoes it.")
      : _("Formatted: indentation is two spaces per level. Ctrl+Z undoes it."), false);
    return true;
  }
  window.playgroundEditor = {
    sync,
    format: formatDocument,
    text: () => view.state.doc.toString(),
    // The text a run of the form sends when the textarea was not brought up to date for it, else null.
    unsynced: () => (stale ? view.state.doc.toString() : null),
    // Whether the text is a large one (edited as plain text): its runs always wait (playground.js).
    isLarge: () => view.state.doc.length > PLAIN_OVER,
    focus: () => view.focus(),
    undo: () => cm.undo(view),
    // Where a piece of text is drawn (for tests and the benchmark that point at it): {left, top, bottom}.
    coordsOf: (text, offset = 0) => {
      const at = view.state.doc.toString().indexOf(text);
      return at < 0 ? null : view.coordsAtPos(at + offset);
    },
  };
  document.dispatchEvent(new CustomEvent("playground:editor-ready"));

  // Server problems arrive as #results[data-error-lines] = [{line, message, severity}, ...] with every swap.
  // No problems after no problems changes nothing, so the editor is not updated (most runs of a valid text).
  let shownNone = true;
  function showProblems() {
    const results = document.getElementById("results");
    let problems = [];
    try {
      problems = JSON.parse((results && results.getAttribute("data-error-lines")) || "[]");
    } catch (error) {
      problems = [];
    }
    if (!problems.length && shownNone) return;
    shownNone = !problems.length;
    const doc = view.state.doc;
    const diagnostics = [];
    for (const problem of problems) {
      // A line past the end belongs to an older text; the swap for the current text follows.
      if (!Number.isInteger(problem.line) || problem.line < 1 || problem.line > doc.lines) continue;
      const line = doc.line(problem.line);
      const indent = line.text.length - line.text.trimStart().length;
      const severity = problem.severity === "warning" ? "warning" : "error";
      diagnostics.push({ from: line.from + indent, to: line.to, severity, message: String(problem.message) });
    }
    view.dispatch(setDiagnostics(view.state, diagnostics));
  }

  function goToLine(number) {
    const doc = view.state.doc;
    const line = doc.line(Math.min(Math.max(number, 1), doc.lines));
    const start = line.from + line.text.length - line.text.trimStart().length;
    view.dispatch({ selection: { anchor: start }, effects: EditorView.scrollIntoView(start, { y: "center" }) });
    view.focus();
  }

  function followTheme() {
    if (isDark() === dark) return;
    dark = !dark;
    view.dispatch({ effects: appearance.reconfigure(appearanceFor(cm, dark)) });
  }

  // share.js puts a scenario from a `#s=` link into the textarea; show it in the editor too.
  textarea.addEventListener("playground:scenario-replaced", () => {
    const text = textarea.value;
    if (text !== view.state.doc.toString()) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    }
    stale = false; // the textarea holds the text already
  });

  document.addEventListener("htmx:afterSwap", window.oncePerSwap ? window.oncePerSwap(showProblems) : showProblems);
  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest(".goto-line[data-line]");
    const number = link && parseInt(link.getAttribute("data-line"), 10);
    if (!number) return;
    event.preventDefault();
    goToLine(number);
  });
  new MutationObserver(followTheme).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  darkQuery.addEventListener("change", followTheme);
  showProblems();
}

function _(text) { return window.gettext ? window.gettext(text) : text; }

function announce(message, isError) {
  const status = document.getElementById("editor-status");
  if (!status) return;
  status.textContent = message;
  status.classList.toggle("editor-status-error", isError);
  window.clearTimeout(announce.timer);
  announce.timer = window.setTimeout(() => { status.textContent = ""; }, isError ? 8000 : 4000);
}

async function formatText(text) {
  const form = document.getElementById("playground");
  const url = form && form.getAttribute("data-format-url");
  const token = form && form.querySelector("input[name=csrfmiddlewaretoken]");
  if (!url) return { error: _("Format is not available here.") };
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": token ? token.value : "" },
      body: JSON.stringify({ scenario: text }),
      credentials: "same-origin",
    });
    const data = await response.json();
    return response.ok ? data : { error: data.error || _("Format failed; the text was not changed.") };
  } catch (error) {
    return { error: _("Format did not reach the server; the text was not changed.") };
  }
}

// The caret stays lit while the text or the selection changes and blinks again once they rest, as in
// most editors. CodeMirror restarts its blink (a CSS animation) on every change instead, and a CSS
// animation started costs the page a second frame after the key's own: a third of a key's work.
const STEADY_CLASS = "cm-steady";
const BLINK_AFTER_MS = 500;
function steadyCaret(EditorView) {
  let timer = 0;
  let layer = null;
  return [
    EditorView.theme({ [".cm-cursorLayer." + STEADY_CLASS]: { animation: "none !important" } }),
    EditorView.updateListener.of((update) => {
      if (!update.docChanged && !update.selectionSet) return;
      if (!layer || !layer.isConnected) layer = update.view.scrollDOM.querySelector(".cm-cursorLayer");
      if (!layer) return;
      if (!timer) layer.classList.add(STEADY_CLASS);
      window.clearTimeout(timer);
      timer = window.setTimeout(() => {
        timer = 0;
        layer.classList.remove(STEADY_CLASS);
      }, BLINK_AFTER_MS);
    }),
  ];
}

// Sizes and colours from playground.css's variables, so both themes follow html[data-theme].
function layout({ EditorView }) {
  return EditorView.theme({
    "&": { flex: "1", minWidth: "0", height: "100%", fontSize: "var(--editor-font, 13px)", color: "var(--fg)", backgroundColor: "var(--panel)" },
    "&.cm-focused": { outline: "none" }, // .editor:focus-within draws the focus ring
    ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.5" },
    ".cm-gutters": { color: "var(--muted)", backgroundColor: "var(--code-bg)", borderRight: "1px solid var(--border)" },
    ".cm-tooltip": { color: "var(--fg)", backgroundColor: "var(--panel)", border: "1px solid var(--border)" },
    ".cm-tooltip-lint": { maxWidth: "min(40rem, 90vw)" },
    // Drawn with CSS rather than CodeMirror's data: URL images, which a strict Content-Security-Policy blocks.
    ".cm-lint-marker-error": { content: "none" },
    ".cm-lint-marker-error::before": { content: '"●"', display: "block", lineHeight: "1em", textAlign: "center", color: "var(--bad)" },
    ".cm-lintRange-error": {
      backgroundImage: "none",
      textDecoration: "underline wavy var(--bad)",
      textDecorationSkipInk: "none",
      textUnderlineOffset: "3px",
    },
    ".cm-diagnostic-error": { borderLeftColor: "var(--bad)" },
    // CEL messages point at a column with a caret line: keep their spacing in a fixed-width font.
    ".cm-diagnostic": { fontFamily: "var(--mono)", whiteSpace: "pre-wrap" },
    ".cm-lint-marker-warning": { content: "none" },
    ".cm-lint-marker-warning::before": { content: '"▲"', display: "block", lineHeight: "1em", textAlign: "center", color: "var(--warn)" },
    ".cm-lintRange-warning": {
      backgroundImage: "none",
      textDecoration: "underline wavy var(--warn)",
      textDecorationSkipInk: "none",
      textUnderlineOffset: "3px",
    },
    ".cm-diagnostic-warning": { borderLeftColor: "var(--warn)" },
  });
}

const PALETTES = {
  light: {
    key: "#2456c8", string: "#1d7a3a", comment: "#5c6370", meta: "#8a5a00", type: "#9a3e9a",
    selection: "#c9d8f7", activeLine: "rgba(36, 86, 200, 0.06)", cursor: "#1d1f24",
  },
  dark: {
    key: "#7aa2ff", string: "#8fd6a0", comment: "#98a0ad", meta: "#ffcc66", type: "#e0a0f0",
    selection: "#2f4670", activeLine: "rgba(122, 162, 255, 0.08)", cursor: "#e6e8ee",
  },
};

function appearanceFor({ EditorView, HighlightStyle, syntaxHighlighting, tags: t }, dark) {
  const p = dark ? PALETTES.dark : PALETTES.light;
  const theme = EditorView.theme({
    ".cm-content": { caretColor: p.cursor },
    ".cm-cursor, .cm-dropCursor": { borderLeftColor: p.cursor },
    "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection":
      { backgroundColor: p.selection },
    ".cm-activeLine": { backgroundColor: p.activeLine },
    ".cm-activeLineGutter": { backgroundColor: p.activeLine, color: "var(--fg)" },
  }, { dark });
  const highlight = HighlightStyle.define([
    { tag: [t.definition(t.propertyName), t.propertyName], color: p.key },
    { tag: [t.string, t.special(t.string)], color: p.string },
    { tag: [t.lineComment, t.comment], color: p.comment, fontStyle: "italic" },
    { tag: [t.meta, t.keyword, t.attributeValue], color: p.meta },
    { tag: [t.typeName, t.labelName], color: p.type },
    { tag: t.separator, color: "var(--muted)" },
    { tag: t.invalid, color: "var(--bad)" },
  ], { themeType: dark ? "dark" : "light" });
  return [theme, syntaxHighlighting(highlight)];
}
