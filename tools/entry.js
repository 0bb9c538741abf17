// Everything static/playground/editor.js (and complete.js) imports from CodeMirror 6, bundled into one ES module.
export { basicSetup } from "codemirror";
export { EditorView, keymap, hoverTooltip } from "@codemirror/view";
export { EditorState, Compartment, Prec } from "@codemirror/state";
export { indentWithTab, undo } from "@codemirror/commands";
export { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
export { tags } from "@lezer/highlight";
export { yaml } from "@codemirror/lang-yaml";
export { lintGutter, setDiagnostics } from "@codemirror/lint";
export { autocompletion, startCompletion, completionStatus, acceptCompletion } from "@codemirror/autocomplete";
