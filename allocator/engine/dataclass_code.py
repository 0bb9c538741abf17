"""Compiled code for the methods `@dataclass` writes, kept between runs like a module's bytecode.

Python 3.11's `dataclasses` writes `__init__`, `__repr__`, `__eq__`, `__hash__` and, for frozen
classes, `__setattr__`/`__delattr__` as source text and compiles each with `exec`: about a
millisecond per class, and the engine defines over a hundred, so compiling them was a third of
`manage.py allocate`'s start-up. The text depends only on the class's fields and options, so its
compiled code can be kept: `install()` makes `dataclasses` look the text up in a table of code
objects, compiling only what is new. The table is read from `__pycache__/` beside this module and
written there when Python writes bytecode (`compile_table()` builds it at install time, as
`compileall` builds the modules' bytecode). The functions made are the ones `dataclasses` makes:
the same text, compiled the same way, executed in the same globals. On another Python than the
one it was written for, the table is ignored; on a Python whose `dataclasses` has no
`_create_fn` of the shape below (3.12 and later write these methods differently, and faster),
nothing is changed.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import marshal
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(_HERE, "__pycache__", f"dataclass-code.{sys.implementation.cache_tag}.bin")
_HEADER = importlib.util.MAGIC_NUMBER + sys.version.encode()
_PARAMETERS = ["name", "args", "body", "globals", "locals", "return_type"]

_codes: dict[str, object] = {}
_new: dict[str, object] = {}
_installed = False


def _supported() -> bool:
    create = getattr(dataclasses, "_create_fn", None)
    if create is None or sys.version_info[:2] != (3, 11):
        return False
    try:
        return list(inspect.signature(create).parameters) == _PARAMETERS
    except (TypeError, ValueError):
        return False


def _create_fn(name, args, body, *, globals=None, locals=None, return_type=dataclasses.MISSING):
    # The text is built exactly as dataclasses._create_fn (Python 3.11) builds it.
    if locals is None:
        locals = {}
    return_annotation = ""
    if return_type is not dataclasses.MISSING:
        locals["_return_type"] = return_type
        return_annotation = "->_return_type"
    args = ",".join(args)
    body = "\n".join(f"  {b}" for b in body)
    txt = f" def {name}({args}){return_annotation}:\n{body}"
    local_vars = ", ".join(locals.keys())
    txt = f"def __create_fn__({local_vars}):\n{txt}\n return {name}"
    code = _codes.get(txt)
    if code is None:
        code = _codes[txt] = _new[txt] = compile(txt, "<string>", "exec")
    ns: dict = {}
    exec(code, globals, ns)
    return ns["__create_fn__"](**locals)


def _read_table() -> dict:
    try:
        with open(TABLE, "rb") as handle:
            data = handle.read()
    except OSError:
        return {}
    if not data.startswith(_HEADER):
        return {}
    try:
        table = marshal.loads(data[len(_HEADER):])
    except (EOFError, ValueError, TypeError):
        return {}
    return table if isinstance(table, dict) else {}


def write_table() -> bool:
    """Write the table with what this process compiled; False when there was nothing new or the
    directory cannot be written (as for bytecode, a missing table only costs time)."""
    if not _new:
        return False
    table = _read_table()
    table.update(_codes)
    try:
        os.makedirs(os.path.dirname(TABLE), exist_ok=True)
        temporary = f"{TABLE}.{os.getpid()}"
        with open(temporary, "wb") as handle:
            handle.write(_HEADER + marshal.dumps(table))
        os.replace(temporary, TABLE)
    except OSError:
        return False
    _new.clear()
    return True


def _write_at_exit() -> None:
    if not sys.dont_write_bytecode:
        write_table()


def install() -> None:
    """Make `dataclasses` use the table (once per process; a no-op where it does not apply)."""
    global _installed
    if _installed or not _supported():
        return
    _installed = True
    _codes.update(_read_table())
    dataclasses._create_fn = _create_fn
    import atexit

    atexit.register(_write_at_exit)


def compile_table() -> None:
    """Import every engine module and write the table (what `make install` and the benchmark run)."""
    import pkgutil

    import allocator.engine as engine

    install()
    for module in pkgutil.walk_packages(engine.__path__, "allocator.engine."):
        __import__(module.name)
    write_table()
