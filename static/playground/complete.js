// Completion and hover in the scenario editor, from the scenario itself: inside a CEL `expression:` the
// pasted slices' own drivers, attribute and capacity names (and their values on hover) and the CEL
// environment's functions; elsewhere the field names the kind knows. The words come from the server
// (/editor/words for this text, /editor/fields once), so they are the engine's, not a second list.
// Nothing here runs per keystroke beyond reading the cursor's line: the scenario's words are fetched
// when a completion or a hover first needs them after an edit.

function _(text) { return window.gettext ? window.gettext(text) : text; }

function csrfToken() {
  const input = document.querySelector("#playground input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
}

function urls() {
  const form = document.getElementById("playground");
  return {
    fields: form && form.getAttribute("data-fields-url"),
    words: form && form.getAttribute("data-words-url"),
  };
}

let fieldsPromise = null;
function knownFields() {
  if (!fieldsPromise) {
    const url = urls().fields;
    fieldsPromise = url ? fetch(url, { credentials: "same-origin" }).then((r) => r.json()).catch(() => null) : Promise.resolve(null);
  }
  return fieldsPromise;
}

// The scenario's words, for the document they were read from (a CodeMirror Text is immutable).
let wordsFor = null;
let wordsPromise = null;
function scenarioWords(doc) {
  if (wordsFor !== doc || !wordsPromise) {
    wordsFor = doc;
    const url = urls().words;
    wordsPromise = !url ? Promise.resolve(null) : fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify({ scenario: doc.toString() }),
    }).then((r) => (r.ok ? r.json() : null)).catch(() => null);
  }
  return wordsPromise;
}

function indentOf(text) { return text.length - text.trimStart().length; }

// Where the cursor's line sits: {cel: true, start} inside an `expression:` value (inline or a block
// scalar below it), else {path, kind} for field completion (the keys above the line, `[]` for an item).
function context(doc, pos) {
  const line = doc.lineAt(pos);
  const before = line.text.slice(0, pos - line.from);
  if (/^\s*(?:-\s+)?expression:\s/.test(before)) return { cel: true };
  // A block scalar's line: the first line above that is less indented holds `expression: |`.
  const indent = indentOf(line.text);
  for (let n = line.number - 1, seen = 0; indent > 0 && n >= 1 && seen < 200; n--, seen++) {
    const text = doc.line(n).text;
    if (!text.trim() || indentOf(text) >= indent) continue;
    if (/expression:\s*[|>][+-]?\s*$/.test(text)) return { cel: true };
    break;
  }
  return { cel: false, path: fieldPath(doc, line.number, before), kind: kindOf(doc, line.number) };
}

// The keys leading to the cursor's line, read upwards by indentation (kubectl's and hand-written YAML).
function fieldPath(doc, number, before) {
  const keys = [];
  const dash = before.match(/^(\s*)-\s+/);
  let limit = dash ? dash[1].length + 1 : indentOf(before); // a parent stands left of `limit`
  if (dash) keys.push("[]");
  for (let n = number - 1, seen = 0; n >= 1 && seen < 5000 && limit > 0; n--, seen++) {
    const text = doc.line(n).text;
    if (!text.trim() || text.trimStart().startsWith("#")) continue;
    if (/^(---|\.\.\.)/.test(text)) break;
    const indent = indentOf(text);
    if (indent >= limit) continue;
    const item = text.slice(indent).match(/^-\s+/);
    const keyColumn = item ? indent + item[0].length : indent;
    const key = text.slice(keyColumn).match(/^("[^"]*"|[^\s:#][^:#]*?):(\s|$)/);
    if (item && keyColumn >= limit) { // a sibling key in the same list item, or an earlier item
      if (keys[0] !== "[]") keys.unshift("[]");
      limit = indent + 1;
      continue;
    }
    if (!key) break;
    keys.unshift(key[1]);
    if (item) keys.unshift("[]");
    limit = item ? indent + 1 : indent;
  }
  if (keys[0] === "items" && keys[1] === "[]") keys.splice(0, 2); // a kubectl List: each item is an object
  return keys.join(".").replace(/\.\[\]/g, "[]").replace(/^\[\]/, "");
}

function kindOf(doc, number) {
  for (let n = number, seen = 0; n >= 1 && seen < 5000; n--, seen++) {
    const text = doc.line(n).text;
    const match = text.match(/^\s*(?:-\s+)?kind:\s*["']?([A-Za-z]+)/);
    if (match && match[1] !== "List") return match[1];
    if (/^---/.test(text)) break;
  }
  for (let n = number + 1, seen = 0; n <= doc.lines && seen < 200; n++, seen++) {
    const text = doc.line(n).text;
    if (/^---/.test(text)) break;
    const match = text.match(/^\s*(?:-\s+)?kind:\s*["']?([A-Za-z]+)/);
    if (match && match[1] !== "List") return match[1];
  }
  return null;
}

// A stored path may hold `*` for a map key the user names (an attribute's or a capacity's name).
function fieldsAt(table, path) {
  if (!table) return null;
  if (table[path]) return table[path];
  const parts = path.split(".");
  for (const key of Object.keys(table)) {
    const pattern = key.split(".");
    if (pattern.length === parts.length && pattern.every((p, i) => p === parts[i] || p === "*")) return table[key];
  }
  return null;
}

async function fieldSource(ctx) {
  const where = context(ctx.state.doc, ctx.pos);
  if (where.cel) return null;
  const line = ctx.state.doc.lineAt(ctx.pos);
  const before = line.text.slice(0, ctx.pos - line.from);
  const typed = before.match(/^\s*(?:-\s+)?([A-Za-z]*)$/);
  if (!typed || (!typed[1] && !ctx.explicit)) return null;
  const known = await knownFields();
  const table = known && known.fields && where.kind && known.fields[where.kind];
  const fields = fieldsAt(table, where.path);
  if (!fields) return null;
  return {
    from: ctx.pos - typed[1].length,
    options: fields.map((name) => ({ label: name, type: "property", apply: name + ": ", detail: where.kind })),
    validFor: /^[A-Za-z]*$/,
  };
}

function quoteEnd(after) { return after.startsWith('"]') ? "" : '"]'; }

async function celSource(ctx) {
  const { state, pos } = ctx;
  if (!context(state.doc, pos).cel) return null;
  const line = state.doc.lineAt(pos);
  const before = line.text.slice(0, pos - line.from);
  const after = line.text.slice(pos - line.from);
  let m = before.match(/device\.(attributes|capacity)\["([^"]*)$/);
  if (m) {
    const words = await scenarioWords(state.doc);
    const table = (words && words[m[1]]) || {};
    return {
      from: pos - m[2].length,
      options: Object.keys(table).map((domain) => ({ label: domain, type: "namespace", apply: domain + quoteEnd(after) })),
      validFor: /^[^"]*$/,
    };
  }
  m = before.match(/device\.(attributes|capacity)\["([^"]+)"\]\.([A-Za-z0-9_]*)$/);
  if (m) {
    const words = await scenarioWords(state.doc);
    const names = ((words && words[m[1]]) || {})[m[2]] || {};
    return {
      from: pos - m[3].length,
      options: Object.entries(names).map(([name, info]) => ({
        label: name,
        type: m[1] === "capacity" ? "variable" : "property",
        detail: info.kind || (m[1] === "capacity" ? _("quantity") : ""),
        info: valuesLine(info),
      })),
      validFor: /^[A-Za-z0-9_]*$/,
    };
  }
  const known = await knownFields();
  const cel = (known && known.cel) || { global: [], member: [], macros: [], device: [] };
  m = before.match(/\bdevice\.([A-Za-z]*)$/);
  if (m) {
    return {
      from: pos - m[1].length,
      options: cel.device.map((name) => ({
        label: name,
        type: "property",
        apply: name === "attributes" || name === "capacity" ? name + '["' : name,
      })),
      validFor: /^[A-Za-z]*$/,
    };
  }
  m = before.match(/\.([A-Za-z_]*)$/);
  if (m) {
    return {
      from: pos - m[1].length,
      options: cel.member.map((name) => ({ label: name, type: "method", apply: name + "(" })),
      validFor: /^[A-Za-z_]*$/,
    };
  }
  m = before.match(/(?:^|[^A-Za-z0-9_."\]])([A-Za-z_][A-Za-z0-9_]*)$/);
  if (m || ctx.explicit) {
    const word = m ? m[1] : "";
    const options = [{ label: "device", type: "variable", apply: "device." }]
      .concat(cel.global.map((name) => ({ label: name, type: "function", apply: name + "(" })))
      .concat(cel.macros.map((name) => ({ label: name, type: "keyword", apply: name + "(" })));
    return { from: pos - word.length, options, validFor: /^[A-Za-z0-9_]*$/ };
  }
  return null;
}

function valuesLine(info) {
  if (!info) return "";
  const values = info.values.join(", ");
  const more = info.values.length >= 12 ? " …" : "";
  return _("Values on the slices' devices:") + " " + values + more;
}

// Hover an attribute or capacity in a CEL expression: its kind and its values across the slices' devices.
async function hoverSource(view, pos) {
  const { doc } = view.state;
  if (!context(doc, pos).cel) return null;
  const line = doc.lineAt(pos);
  const pattern = /device\.(attributes|capacity)\["([^"]+)"\]\.([A-Za-z0-9_]+)/g;
  let match;
  while ((match = pattern.exec(line.text))) {
    const from = line.from + match.index;
    const to = from + match[0].length;
    if (pos < from || pos > to) continue;
    const words = await scenarioWords(doc);
    const info = (((words && words[match[1]]) || {})[match[2]] || {})[match[3]];
    return {
      pos: from,
      end: to,
      above: true,
      create() {
        const dom = document.createElement("div");
        dom.className = "cel-hover";
        const title = document.createElement("strong");
        title.textContent = `${match[2]}/${match[3]}`;
        dom.appendChild(title);
        const body = document.createElement("div");
        if (info) {
          const kind = info.kind || (match[1] === "capacity" ? _("quantity") : "");
          body.textContent = (kind ? kind + " · " : "") + valuesLine(info);
        } else {
          body.textContent = _("No device in the scenario's slices has this name.");
        }
        dom.appendChild(body);
        return { dom };
      },
    };
  }
  return null;
}

export function editorTools(cm, { format }) {
  const { EditorState, hoverTooltip, keymap, Prec } = cm;
  return [
    EditorState.languageData.of(() => [{ autocomplete: celSource }, { autocomplete: fieldSource }]),
    hoverTooltip(hoverSource, { hoverTime: 300 }),
    Prec.high(keymap.of([{ key: "Shift-Alt-f", run: () => { format(); return true; } }])),
  ];
}
