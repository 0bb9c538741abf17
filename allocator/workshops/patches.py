"""A lesson's solution (and its declared wrong answers) as patches over another scenario.

    solution:
      patch:
      - kind: ResourceClaim                # names the object: kind, metadata.name [, metadata.namespace]
        metadata: {name: first-gpu}
        spec: {devices: {requests: [...]}}  # a JSON merge patch (RFC 7386, as `kubectl patch --type merge`)
      - {kind: DeviceClass, metadata: {name: old}, $delete: true}   # removes the object

A patch naming an object the base does not have adds it (the patch is the whole object). The
documents no patch touches are kept as written, comments included.
"""
from __future__ import annotations

import re

import yaml

from allocator.workshops.checks import NAMESPACED

DELETE = "$delete"
_SEPARATOR = re.compile(r"^---[ \t]*(#.*)?$", re.MULTILINE)


class PatchError(ValueError):
    def __init__(self, message: str, index: int | None = None):
        super().__init__(message)
        self.message = message
        self.index = index


def merge_patch(target, patch):
    """RFC 7386: a mapping merges key by key, null removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def identity(data) -> tuple | None:
    if not isinstance(data, dict):
        return None
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    kind = data.get("kind")
    if not isinstance(kind, str) or not isinstance(meta.get("name"), str):
        return None
    return kind, str(meta.get("namespace") or ("default" if kind in NAMESPACED else "")), meta["name"]


def split_documents(text: str) -> list[str]:
    """The scenario's documents as written (the text between `---` lines), empty ones dropped."""
    parts = _SEPARATOR.split(text)
    # re.split with a group interleaves the separator comments; keep only the documents
    documents = parts[0::2]
    return [d for d in documents if d is not None and d.strip() and not _only_comments(d)]


def _only_comments(document: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in document.splitlines())


def dump(data) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)


def apply_patches(text: str, patches) -> str:
    """The scenario `text` with every patch applied, as YAML text. An object inside a `kind: List`
    document is patched (or removed) in its list."""
    if not isinstance(patches, list) or not patches:
        raise PatchError("patch must be a non-empty list of objects (kind, metadata.name, and the fields to merge)")
    documents = split_documents(text)
    parsed = []
    for document in documents:
        try:
            parsed.append(yaml.safe_load(document))
        except yaml.YAMLError:
            parsed.append(None)
    where = {}  # identity -> (document index, item index or None)
    for at, data in enumerate(parsed):
        if isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list):
            for item_at, item in enumerate(data["items"]):
                if identity(item) is not None:
                    where.setdefault(identity(item), (at, item_at))
        elif identity(data) is not None:
            where.setdefault(identity(data), (at, None))
    added = []
    for index, patch in enumerate(patches):
        key = identity(patch)
        if key is None:
            raise PatchError("a patch names its object with kind and metadata.name", index)
        body = {k: v for k, v in patch.items() if k != DELETE}
        if key not in where:
            if patch.get(DELETE) is True:
                raise PatchError(f"the patch deletes {key[0]} {key[2]}, which the scenario does not have", index)
            added.append(dump(body))
            continue
        at, item_at = where[key]
        if item_at is None:
            if patch.get(DELETE) is True:
                documents[at] = parsed[at] = None
            else:
                parsed[at] = merge_patch(parsed[at], body)
                documents[at] = dump(parsed[at])
        else:
            items = parsed[at]["items"]
            items[item_at] = None if patch.get(DELETE) is True else merge_patch(items[item_at], body)
            documents[at] = dump({**parsed[at], "items": [i for i in items if i is not None]})
        del where[key]
    kept = [d.strip("\n") for d in documents if d is not None] + [d.strip("\n") for d in added]
    return "\n---\n".join(kept) + "\n"
