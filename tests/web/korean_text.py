"""What counts as English interface text on a Korean page (issue 23), for the browser test and the
web audit: the allow-list of what stays English on purpose, reviewed; keep it short.

What stays English, and why:
- Kubernetes' own words: object kinds, field names, gate names, component names, the scheduler's and the
  apiserver's messages, CEL, quantities — users type and search them. They are found by the elements
  that carry them (`lang="en"`, code, the YAML editor) or by the patterns below.
- Names from the scenario (nodes, devices, pools, claims, drivers) and the product's name.
"""
import re
from html.parser import HTMLParser

# Words that stay English everywhere: Kubernetes' vocabulary and the scenario's names.
ALLOWED_WORDS = {
    "DRA", "Playground", "YAML", "CLI", "API", "CEL", "JSON", "UTC", "Ctrl", "Enter", "Esc", "Tab", "GA",
    "English", "Alt", "kubectl", "kubelet", "MIG", "vGPU", "GPU", "GPUs", "NIC", "NUMA", "RBAC", "PATCH", "PUT", "KiB",
    "Shift", "Cmd",
}
ALLOWED = [
    re.compile(r"^[\w./:@#=*\-]+$"),  # one identifier: a node, a device, a gate, a field path, a driver
    re.compile(r"\b(kube-apiserver|kube-scheduler|kube-controller-manager|resource-claim controller)\b"),
    re.compile(r"[A-Z][a-z]+[A-Z]\w*"),  # CamelCase: kinds and gate names (ResourceClaim, DRAAdminAccess)
    re.compile(r"\b[a-z]+[A-Z]\w*\b"),  # camelCase: field names (allowMultipleAllocations)
    re.compile(r"--[a-z][\w-]*"),  # a component's flag (--emulated-version)
    re.compile(r"[\w-]+(\.[\w-]+)+(/[\w.-]+)*"),  # a driver or domain, a dotted field path (status.devices)
    re.compile(r"[\w-]+/[\w./-]+"),  # namespace/name, driver/pool, resource/subresource
]
HANGUL = re.compile(r"[가-힣]")


def english_left(texts: list, scenario: str = "") -> list:
    """The texts that still read as English interface words once Kubernetes' words, and the names the
    scenario itself holds (its devices, counters, pools, attributes), are taken out."""
    names = set(re.findall(r"[A-Za-z]{3,}", scenario))
    left = []
    for text in texts:
        if HANGUL.search(text):
            continue  # a Korean sentence, which may name kinds, fields and gates
        rest = text
        for pattern in ALLOWED:
            rest = pattern.sub(" ", rest)
        words = [w for w in re.findall(r"[A-Za-z]{3,}", rest) if w not in ALLOWED_WORDS and w not in names]
        if words:
            left.append(text)
    return left


# --- reading rendered HTML (the web audit; the browser test reads the live page instead) ------------------

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_SKIPPED_TAGS = {"code", "pre", "kbd", "samp", "script", "style", "textarea", "template"}
_READ_ATTRIBUTES = ("aria-label", "title", "placeholder", "alt")


class _Texts(HTMLParser):
    """The text a reader meets in a page, and the labels its elements carry, without what stays English
    on purpose: elements marked `lang="en"` (Kubernetes' words), code, scripts, the editor's text, and
    elements hidden with the `hidden` attribute."""

    def __init__(self, skip_classes: set):
        super().__init__(convert_charrefs=True)
        self.skip_classes = skip_classes
        self.stack: list = []  # True for an element whose content is skipped
        self.texts: list = []
        self.scenario: list = []  # the textareas' text: the scenario's names may show anywhere

    def _skipped(self, tag: str, attrs: dict) -> bool:
        lang = (attrs.get("lang") or "").lower()
        classes = set((attrs.get("class") or "").split())
        return (tag in _SKIPPED_TAGS or lang.startswith("en") or "hidden" in attrs
                or bool(classes & self.skip_classes) or bool(self.stack and self.stack[-1]))

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        skipped = self._skipped(tag, attrs)
        if not skipped:
            self.texts.extend(v.strip() for k, v in attrs.items() if k in _READ_ATTRIBUTES and v and v.strip())
        if tag not in _VOID:
            self.stack.append(skipped)
            self.tag = tag

    def handle_startendtag(self, tag, attrs):
        attrs = dict(attrs)
        if not self._skipped(tag, attrs):
            self.texts.extend(v.strip() for k, v in attrs.items() if k in _READ_ATTRIBUTES and v and v.strip())

    def handle_endtag(self, tag):
        if tag not in _VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1]:
            if getattr(self, "tag", "") == "textarea":
                self.scenario.append(data)
            return
        text = " ".join(data.split())
        if text:
            self.texts.append(text)


def page_texts(html: str, skip_classes=()) -> tuple[list, str]:
    """(the texts of a rendered page a reader meets, the scenario text of its textareas)."""
    parser = _Texts(set(skip_classes))
    parser.feed(html)
    return parser.texts, "\n".join(parser.scenario)
