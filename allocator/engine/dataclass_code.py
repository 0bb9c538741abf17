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

Regular expressions are kept the same way (`REGEX_TABLE`): `re` parses a pattern and writes its
matcher code in Python, a fifth of a millisecond for each of the sixty-odd patterns the engine
and PyYAML compile at import. What `re` hands to `_sre.compile` (the final flags, the code, the
groups) depends only on the pattern text, its flags and the Python version, so it is kept and
handed over again; `re`'s own cache and everything after it are unchanged. A Pattern made from
the table compares equal to the one `re` makes (Pattern equality compares the code).
"""
from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import marshal
import os
import re
import sys

import _sre

_HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(_HERE, "__pycache__", f"dataclass-code.{sys.implementation.cache_tag}.bin")
REGEX_TABLE = os.path.join(_HERE, "__pycache__", f"regex-code.{sys.implementation.cache_tag}.bin")
_HEADER = importlib.util.MAGIC_NUMBER + sys.version.encode()
_REGEX_HEADER = _HEADER + b" sre %d %d" % (_sre.MAGIC, _sre.CODESIZE)
MAX_REGEXES = 4096  # the engine, PyYAML and argparse compile about 70; Django's URL patterns a few hundred
_PARAMETERS = ["name", "args", "body", "globals", "locals", "return_type"]

_codes: dict[str, object] = {}
_new: dict[str, object] = {}
# (pattern, flags) -> (flags, code, groups - 1, groupindex, indexgroup): what re passes to _sre.compile
_regexes: dict[tuple, tuple] = {}
_new_regexes: dict[tuple, tuple] = {}
_installed = False
_re_compile = None  # re._compiler.compile, when the regex table is in use


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


def _regex_supported() -> bool:
    compiler = getattr(re, "_compiler", None)
    parser = getattr(re, "_parser", None)
    if sys.version_info[:2] != (3, 11) or compiler is None or parser is None:
        return False
    return callable(getattr(compiler, "_code", None)) and callable(getattr(parser, "parse", None))


def _compile_regex(p, flags=0):
    # What re._compiler.compile (Python 3.11) computes, kept by pattern text and flags.
    if flags & re.DEBUG or not isinstance(p, (str, bytes)):
        return _re_compile(p, flags)
    key = (p, int(flags))  # re passes plain ints; a RegexFlag would not marshal
    entry = _regexes.get(key)
    if entry is None:
        parsed = re._parser.parse(p, flags)
        code = [int(op) for op in re._compiler._code(parsed, flags)]  # plain ints, as marshal keeps them
        groupindex = dict(parsed.state.groupdict)
        indexgroup = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        entry = (int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup))
        if len(_regexes) < MAX_REGEXES:  # a process that compiles patterns made at run time keeps the first ones
            _regexes[key] = _new_regexes[key] = entry
    final_flags, code, groups, groupindex, indexgroup = entry
    return _sre.compile(p, final_flags, list(code), groups, dict(groupindex), indexgroup)


def _read_table(path: str = TABLE, header: bytes = _HEADER) -> dict:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return {}
    if not data.startswith(header):
        return {}
    try:
        table = marshal.loads(data[len(header):])
    except (EOFError, ValueError, TypeError):
        return {}
    return table if isinstance(table, dict) else {}


def write_table() -> bool:
    """Write the tables with what this process compiled; False when there was nothing new or the
    directory cannot be written (as for bytecode, a missing table only costs time)."""
    written = False
    for path, header, known, new in ((TABLE, _HEADER, _codes, _new),
                                     (REGEX_TABLE, _REGEX_HEADER, _regexes, _new_regexes)):
        if not new:
            continue
        table = _read_table(path, header)
        table.update(known)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            temporary = f"{path}.{os.getpid()}"
            with open(temporary, "wb") as handle:
                handle.write(header + marshal.dumps(table))
            os.replace(temporary, path)
        except OSError:
            continue
        new.clear()
        written = True
    return written


def _write_at_exit() -> None:
    if not sys.dont_write_bytecode:
        write_table()


def install() -> None:
    """Make `dataclasses` and `re` use the tables (once per process; a no-op where it does not apply)."""
    global _installed, _re_compile
    if _installed:
        return
    _installed = True
    if _supported():
        _codes.update(_read_table())
        dataclasses._create_fn = _create_fn
    if _regex_supported():
        _regexes.update(_read_table(REGEX_TABLE, _REGEX_HEADER))
        _re_compile = re._compiler.compile
        re._compiler.compile = _compile_regex
    import atexit

    atexit.register(_write_at_exit)


def compile_table() -> None:
    """Import every engine module and write the tables (what `make install` and the benchmark run)."""
    import pkgutil

    import allocator.engine as engine

    install()
    for module in pkgutil.walk_packages(engine.__path__, "allocator.engine."):
        __import__(module.name)
    write_table()
