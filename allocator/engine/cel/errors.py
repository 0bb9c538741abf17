"""Error types of the CEL package and cel-go style issue formatting."""
from __future__ import annotations


class CelError(Exception):
    """Any failure while compiling or evaluating a CEL expression."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class CelCompileError(CelError):
    """The expression does not parse or type-check; `line`/`column` are 1-based, or None."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.line = line
        self.column = column


class CelRuntimeError(CelError):
    """Evaluation failed; `message` reads as cel-go prints it."""


class CelCostLimitError(CelRuntimeError):
    """The runtime cost budget was used up."""

    def __init__(self, message: str = "operation cancelled: actual cost limit exceeded"):
        super().__init__(message)


class CelInterruptedError(CelRuntimeError):
    """The caller's deadline passed during evaluation."""

    def __init__(self, message: str = "operation interrupted"):
        super().__init__(message)


class EvalError(CelRuntimeError):
    """A CEL error value: absorbed by `||`, `&&` and the comprehension macros like cel-go does."""


class Issue:
    """One compile problem at a 0-based offset into the source (None: no location)."""

    __slots__ = ("message", "offset", "exact")

    def __init__(self, message: str, offset: int | None, *, exact: bool = True):
        self.message = message
        self.offset = offset
        self.exact = exact  # False: a syntax error cel-go's ANTLR parser may word differently


# The last line of a message holding a syntax error the playground does not word as cel-go does
# (ANTLR's wording depends on its prediction state and it goes on to report more errors; the
# playground's parser finds the first one at the same place and stops).
SYNTAX_WORDING_NOTE = ("(this syntax error is worded by the playground; cel-go words it its own way "
                       "and may report more errors after it)")


class Source:
    """The expression text with line bookkeeping for error snippets."""

    def __init__(self, text: str):
        self.text = text
        starts = [0]
        for index, char in enumerate(text):
            if char == "\n":
                starts.append(index + 1)
        self.line_starts = starts

    def location(self, offset: int | None) -> tuple[int, int]:
        """(line, column) with line 1-based and column 0-based, cel-go style; (-1, -1) if unknown."""
        if offset is None:
            return -1, -1
        line = 0
        low, high = 0, len(self.line_starts) - 1
        while low <= high:
            mid = (low + high) // 2
            if self.line_starts[mid] <= offset:
                line = mid
                low = mid + 1
            else:
                high = mid - 1
        return line + 1, offset - self.line_starts[line]

    def snippet(self, line: int) -> str | None:
        if line < 1 or line > len(self.line_starts):
            return None
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.text)
        return self.text[start:end]


def format_issues(source: Source, issues: list[Issue]) -> str:
    """Render issues the way cel-go's Issues.String() does, sorted by position."""
    located = []
    for issue in issues:
        line, column = source.location(issue.offset)
        if not source.text:
            column = -1  # cel-go places the end of an empty input before its first column
        located.append((line, column, issue.message))
    located.sort(key=lambda item: (item[0], item[1]))
    parts = []
    for line, column, message in located[:100]:
        text = f"ERROR: <input>:{line}:{column + 1}: {message}"
        snippet = source.snippet(line) if source.text else None  # an empty input shows no snippet
        if snippet is not None and len(snippet) <= 16384:
            snippet = snippet.replace("\t", " ")
            marker = "".join("\uff0e" if len(ch.encode("utf-8")) > 1 else "." for ch in snippet[:column])
            at = snippet[column:column + 1]
            marker += "\uff3e" if at and len(at.encode("utf-8")) > 1 else "^"
            text += "\n | " + snippet + "\n | " + marker
        parts.append(text)
    if len(located) > 100:
        parts.append(f"{len(located) - 100} more errors were truncated")
    if not all(issue.exact for issue in issues):
        parts.append(SYNTAX_WORDING_NOTE)
    return "\n".join(parts)


def compile_error(source: Source, issues: list[Issue]) -> CelCompileError:
    message = format_issues(source, issues)
    located = sorted(source.location(issue.offset) for issue in issues if issue.offset is not None)
    if not located:
        return CelCompileError(message)
    line, column = located[0]
    return CelCompileError(message, line, column + 1)
