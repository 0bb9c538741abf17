"""Lexer and recursive-descent parser for CEL, with cel-go's macro expansion.

Produces the same tree shapes as cel-go: `||`/`&&` chains are balanced, runs of
`!` or `-` collapse pairwise, and macros (`has`, `all`, `exists`, `map`, ...)
become comprehensions while parsing.
"""
from __future__ import annotations

import re

from . import ast
from .errors import Issue
from .values import Uint

MAX_RECURSION_DEPTH = 250
MAX_CODE_POINTS = 100_000
RECURSION_MESSAGE = f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}"

_PUNCTUATION = (
    "==", "!=", "<=", ">=", "&&", "||",
    "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", ".", ",", "(", ")", "[", "]", "{", "}",
)
_KEYWORDS = {"true", "false", "null", "in"}
RESERVED_IDS = frozenset({
    "as", "break", "const", "continue", "else", "false", "for", "function", "if", "import",
    "in", "let", "loop", "package", "namespace", "null", "return", "true", "var", "void", "while",
})
_EXPR_START = (
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
    "STRING, BYTES, IDENTIFIER}"
)
_BINARY = {
    "<": (1, "_<_"), "<=": (1, "_<=_"), ">=": (1, "_>=_"), ">": (1, "_>_"),
    "==": (1, "_==_"), "!=": (1, "_!=_"), "in": (1, "@in"),
    "+": (2, "_+_"), "-": (2, "_-_"),
    "*": (3, "_*_"), "/": (3, "_/_"), "%": (3, "_%_"),
}
_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?",
}
_HEX = "0123456789abcdefABCDEF"
_RESERVED_NO_VIABLE = re.compile("no viable alternative at input '.(true|false|null)'")


class _SyntaxError(Exception):
    """A syntax error at `offset`. `exact`: the playground words it as cel-go's ANTLR parser does
    (only the forms checked against cel-go; the others keep their place but not the wording).
    `resume`: for a lexer error, where ANTLR's lexer goes on after dropping the bad text."""

    def __init__(self, message: str, offset: int | None, *, exact: bool = False, resume: int | None = None):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.exact = exact
        self.resume = resume


class Token:
    __slots__ = ("kind", "text", "offset", "value")

    def __init__(self, kind: str, text: str, offset: int, value=None):
        self.kind = kind  # punct, ident, keyword, int, uint, double, string, bytes, eof
        self.text = text
        self.offset = offset
        self.value = value

    def display(self) -> str:
        return "<EOF>" if self.kind == "eof" else self.text


def _starts_expression(tok) -> bool:
    if tok is None:
        return False
    if tok.kind == "punct":
        return tok.text in ("[", "{", "(", ".", "-", "!")
    if tok.kind == "keyword":
        return tok.text in ("true", "false", "null")
    return tok.kind in ("ident", "int", "uint", "double", "string", "bytes")


def tokenize(text: str, errors: list | None = None) -> list[Token]:
    """The tokens of `text`. With `errors`, a lexer error ANTLR's lexer recovers from is appended
    there and lexing goes on where that lexer would (cel-go reports each, then parses the rest)."""
    tokens = []
    i, n = 0, len(text)
    while i < n:
        if errors is None:
            i = _lex_one(text, i, tokens)
            continue
        try:
            i = _lex_one(text, i, tokens)
        except _SyntaxError as exc:
            if exc.resume is None:
                raise
            errors.append(exc)
            i = exc.resume
    tokens.append(Token("eof", "", n))
    return tokens


def _lex_one(text: str, i: int, tokens: list) -> int:
    """Lex the token (or skip the blank or comment) at `i`; the index after it."""
    n = len(text)
    c = text[i]
    if c in " \t\r\n\f":
        return i + 1
    if text.startswith("//", i):
        j = text.find("\n", i)
        return n if j < 0 else j + 1
    start = i
    if c.isascii() and (c.isalpha() or c == "_"):
        j = i + 1
        while j < n and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
            j += 1
        word = text[i:j]
        quote = text[j] if j < n else ""
        lowered = word.lower()
        if quote in ("'", '"') and lowered in ("r", "b", "br"):
            try:
                return _lex_string(text, i, j, "r" in lowered, "b" in lowered, tokens)
            except _SyntaxError as exc:
                if exc.resume is None:
                    raise
                # Unterminated: ANTLR's lexer falls back to the longest token it had matched, the word.
        tokens.append(Token("keyword" if word in _KEYWORDS else "ident", word, start))
        return j
    if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
        return _lex_number(text, i, tokens)
    if c in ("'", '"'):
        return _lex_string(text, i, i, False, False, tokens)
    if c == "`":
        # ESC_IDENTIFIER: letters, digits and `_.-/ ` between backticks; the lexer fails at the first
        # other character (or the end) and drops the text through it.
        j = i + 1
        while j < n and (text[j].isascii() and (text[j].isalnum() or text[j] in "_.-/ ")):
            j += 1
        if j < n and text[j] == "`" and j > i + 1:
            tokens.append(Token("escaped_ident", text[i:j + 1], start, text[i + 1:j]))
            return j + 1
        end = min(j + 1, n)
        raise _SyntaxError(f"Syntax error: token recognition error at: '{text[i:end]}'", i, exact=True, resume=end)
    for punct in _PUNCTUATION:
        if text.startswith(punct, i):
            tokens.append(Token("punct", punct, start))
            return i + len(punct)
    if c in "=&|":
        # `==`, `&&`, `||` begin with it: ANTLR's lexer reads the next character too, fails
        # there, and drops both.
        end = min(i + 2, n)
        raise _SyntaxError(f"Syntax error: token recognition error at: '{text[i:end]}'", i, exact=True,
                           resume=end)
    raise _SyntaxError(f"Syntax error: token recognition error at: '{c}'", i, exact=True, resume=i + 1)




def _lex_number(text: str, i: int, tokens: list) -> int:
    n = len(text)
    start = i
    if text.startswith("0x", i) and i + 2 < n and text[i + 2] in _HEX:
        j = i + 2
        while j < n and text[j] in _HEX:
            j += 1
        digits = text[i + 2:j]
        if j < n and text[j] in "uU":
            tokens.append(Token("uint", text[start:j + 1], start, ("hex", digits)))
            return j + 1
        tokens.append(Token("int", text[start:j], start, ("hex", digits)))
        return j
    j = i
    while j < n and text[j].isdigit():
        j += 1
    is_float = False
    if j < n and text[j] == "." and j + 1 < n and text[j + 1].isdigit():
        is_float = True
        j += 1
        while j < n and text[j].isdigit():
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and text[k].isdigit():
            while k < n and text[k].isdigit():
                k += 1
            is_float = True
            j = k
    if is_float:
        tokens.append(Token("double", text[start:j], start, text[start:j]))
        return j
    if j < n and text[j] in "uU":
        tokens.append(Token("uint", text[start:j + 1], start, ("dec", text[start:j])))
        return j + 1
    tokens.append(Token("int", text[start:j], start, ("dec", text[start:j])))
    return j


def _lex_string(text: str, start: int, i: int, raw: bool, is_bytes: bool, tokens: list) -> int:
    n = len(text)
    quote = text[i]
    triple = text.startswith(quote * 3, i)
    delim = quote * 3 if triple else quote
    j = i + len(delim)
    while True:
        if j >= n:  # unterminated: the lexer has read to the end
            raise _SyntaxError(f"Syntax error: token recognition error at: '{text[start:]}'", start, exact=True,
                               resume=n)
        if text.startswith(delim, j):
            break
        ch = text[j]
        if not triple and ch in "\r\n":
            raise _SyntaxError(f"Syntax error: token recognition error at: '{text[start:j]}'", start)
        if ch == "\\" and not raw:
            j += 2
            continue
        j += 1
    body = text[i + len(delim):j]
    end = j + len(delim)
    if raw:
        value = body
        if is_bytes:
            value = body.encode("utf-8")
    else:
        value = _unescape(body, is_bytes, text, start)
    tokens.append(Token("bytes" if is_bytes else "string", text[start:end], start, value))
    return end


def _unescape(body: str, is_bytes: bool, text: str, offset: int):
    out_bytes = bytearray()
    out = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            if is_bytes:
                out_bytes += ch.encode("utf-8")
            else:
                out.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            raise _SyntaxError("Syntax error: token recognition error at: '\\'", offset)
        esc = body[i + 1]
        if esc in _SIMPLE_ESCAPES:
            value = _SIMPLE_ESCAPES[esc]
            if is_bytes:
                out_bytes += value.encode("utf-8")
            else:
                out.append(value)
            i += 2
            continue
        if esc in "xX":
            digits = body[i + 2:i + 4]
            if len(digits) != 2 or any(d not in _HEX for d in digits):
                raise _SyntaxError(f"Syntax error: token recognition error at: '{body[i:i + 4]}'", offset)
            code = int(digits, 16)
            if is_bytes:
                out_bytes.append(code)
            else:
                out.append(chr(code))
            i += 4
            continue
        if esc in "uU":
            width = 4 if esc == "u" else 8
            digits = body[i + 2:i + 2 + width]
            if len(digits) != width or any(d not in _HEX for d in digits):
                raise _SyntaxError(f"Syntax error: token recognition error at: '{body[i:i + 2 + width]}'", offset)
            code = int(digits, 16)
            if is_bytes:
                raise _SyntaxError("Syntax error: unicode escapes are not allowed in bytes literals", offset)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise _SyntaxError(f"Syntax error: invalid unicode code point in escape: {body[i:i + 2 + width]}", offset)
            out.append(chr(code))
            i += 2 + width
            continue
        if esc in "0123":
            digits = body[i + 1:i + 4]
            if len(digits) != 3 or any(d not in "01234567" for d in digits):
                raise _SyntaxError(f"Syntax error: token recognition error at: '{body[i:i + 4]}'", offset)
            code = int(digits, 8)
            if is_bytes:
                out_bytes.append(code)
            else:
                out.append(chr(code))
            i += 4
            continue
        raise _SyntaxError(f"Syntax error: token recognition error at: '{body[i:i + 2]}'", offset)
    return bytes(out_bytes) if is_bytes else "".join(out)


class ParseResult:
    def __init__(self, expr, offsets: dict, issues: list):
        self.expr = expr
        self.offsets = offsets
        self.issues = issues


class Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens: list[Token] = []
        self.pos = 0
        self.next_id = 1
        self.offsets: dict[int, int] = {}
        self.depth = 0
        self.issues: list[Issue] = []
        self.dropped: list[tuple[int, int]] = []  # source spans the lexer dropped after an error

    # -- helpers -------------------------------------------------------------

    def new_id(self, offset: int) -> int:
        node_id = self.next_id
        self.next_id += 1
        self.offsets[node_id] = offset
        return node_id

    def peek(self) -> Token:
        return self.tokens[self.pos]

    def advance(self) -> Token:
        tok = self.tokens[self.pos]
        if tok.kind != "eof":
            self.pos += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.tokens[self.pos]
        return tok.kind in ("punct", "keyword") and tok.text == text

    def expect(self, text: str) -> Token:
        tok = self.peek()
        if tok.kind in ("punct", "keyword") and tok.text == text:
            return self.advance()
        raise _SyntaxError(f"Syntax error: mismatched input '{tok.display()}' expecting '{text}'", tok.offset)

    def error(self, offset: int | None, message: str):
        self.issues.append(Issue(message, offset))
        return ast.Literal(self.new_id(offset if offset is not None else 0), None)

    # -- entry -----------------------------------------------------------------

    def parse(self) -> ParseResult:
        if len(self.text) > MAX_CODE_POINTS:
            message = f"expression code point size exceeds limit: size: {len(self.text)}, limit {MAX_CODE_POINTS}"
            self.issues.append(Issue(message, None))
            return ParseResult(None, self.offsets, self.issues)
        lexer_errors: list[_SyntaxError] = []
        try:
            self.tokens = tokenize(self.text, lexer_errors)
            self.dropped = [(e.offset, e.resume) for e in lexer_errors]
            expr = self.parse_expr()
            tok = self.peek()
            if tok.kind != "eof":
                # ANTLR drops a single stray token when the end follows it, and says so.
                following = self.tokens[self.pos + 1] if self.pos + 1 < len(self.tokens) else None
                word = "extraneous" if following is not None and following.kind == "eof" else "mismatched"
                raise _SyntaxError(f"Syntax error: {word} input '{tok.display()}' expecting <EOF>", tok.offset,
                                   exact=True)
        except _SyntaxError as exc:
            lexer_errors.append(exc)
        except _DepthError:
            self.issues.append(Issue(RECURSION_MESSAGE, None))
            return ParseResult(None, self.offsets, self.issues)
        if lexer_errors:
            # cel-go reports every error its lexer recovers from and then its parser's on the rest;
            # the playground's parser stops at its first.
            self.issues.extend(Issue(e.message, e.offset, exact=e.exact) for e in lexer_errors)
            return ParseResult(None, self.offsets, self.issues)
        if not self.issues and _tree_depth(expr) > MAX_RECURSION_DEPTH:
            self.issues.append(Issue("max recursion depth exceeded", None))
        return ParseResult(expr, self.offsets, self.issues)

    # -- grammar ---------------------------------------------------------------

    def parse_expr(self):
        self.depth += 1
        if self.depth > MAX_RECURSION_DEPTH:
            raise _DepthError()
        cond = self.parse_logical("||", "_||_", self.parse_and)
        if self.at("?"):
            op = self.advance()
            if_true = self.parse_logical("||", "_||_", self.parse_and)
            self.expect(":")
            if_false = self.parse_expr()
            cond = ast.Call(self.new_id(op.offset), "_?_:_", [cond, if_true, if_false])
        self.depth -= 1
        return cond

    def parse_and(self):
        return self.parse_logical("&&", "_&&_", self.parse_relation)

    def parse_logical(self, token: str, function: str, parse_term):
        terms = [parse_term()]
        ops = []
        while self.at(token):
            ops.append(self.advance().offset)
            terms.append(parse_term())
        if len(terms) == 1:
            return terms[0]
        op_ids = [self.new_id(offset) for offset in ops]
        return self._balance(function, terms, op_ids, 0, len(op_ids) - 1)

    def _balance(self, function, terms, op_ids, lo, hi):
        mid = (lo + hi + 1) // 2
        left = terms[mid] if mid == lo else self._balance(function, terms, op_ids, lo, mid - 1)
        right = terms[mid + 1] if mid == hi else self._balance(function, terms, op_ids, mid + 1, hi)
        return ast.Call(op_ids[mid], function, [left, right])

    def parse_relation(self):
        return self.parse_binary(1)

    def parse_binary(self, min_prec: int):
        left = self.parse_unary()
        while True:
            tok = self.peek()
            entry = _BINARY.get(tok.text) if tok.kind in ("punct", "keyword") else None
            if entry is None or entry[0] < min_prec:
                return left
            self.advance()
            right = self.parse_binary(entry[0] + 1)
            left = ast.Call(self.new_id(tok.offset), entry[1], [left, right])

    def parse_unary(self):
        tok = self.peek()
        if self.at("!"):
            count = 0
            while self.at("!"):
                self.advance()
                count += 1
            member = self.parse_member()
            if count % 2 == 0:
                return member
            return self.global_call_or_macro(tok.offset, "!_", [member])
        if self.at("-"):
            count = 0
            while self.at("-"):
                self.advance()
                count += 1
            nxt = self.peek()
            if count == 1 and nxt.kind in ("int", "double"):
                self.advance()
                literal = self.number_literal(nxt, tok.offset, negative=True)
                return self.parse_member_suffix(literal)
            member = self.parse_member()
            if count % 2 == 0:
                return member
            return self.global_call_or_macro(tok.offset, "-_", [member])
        return self.parse_member()

    def parse_member(self):
        return self.parse_member_suffix(self.parse_primary())

    def parse_member_suffix(self, operand):
        while True:
            if self.at("."):
                dot = self.advance()
                optional = False
                if self.at("?"):
                    self.advance()
                    optional = True
                tok = self.peek()
                if tok.kind == "ident":
                    self.advance()
                    name = tok.text
                elif tok.kind == "escaped_ident":
                    self.advance()
                    name = tok.value
                elif optional:
                    raise _SyntaxError(
                        f"Syntax error: mismatched input '{tok.display()}' expecting {{IDENTIFIER, ESC_IDENTIFIER}}",
                        tok.offset,
                    )
                else:
                    # Two of ANTLR's alternatives for a member begin with '.': its prediction
                    # looks past the dot, finds neither, and names the input from the dot on.
                    raise _SyntaxError(self._no_viable(dot, tok), tok.offset, exact=self._recovers_to_end(dot))
                if not optional and tok.kind == "ident" and self.at("("):
                    open_tok = self.advance()
                    args = self.parse_args(")")
                    operand = self.receiver_call_or_macro(open_tok.offset, name, operand, args)
                    continue
                if optional:
                    field = ast.Literal(self.new_id(tok.offset), name)
                    operand = ast.Call(self.new_id(dot.offset), "_?._", [operand, field])
                else:
                    operand = ast.Select(self.new_id(dot.offset), operand, name)
                continue
            if self.at("["):
                bracket = self.advance()
                optional = False
                if self.at("?"):
                    self.advance()
                    optional = True
                index = self.parse_expr()
                self.expect("]")
                function = "_[?_]" if optional else "_[_]"
                operand = ast.Call(self.new_id(bracket.offset), function, [operand, index])
                continue
            return operand

    def parse_args(self, close: str) -> list:
        args = []
        if self.at(close):
            self.advance()
            return args
        while True:
            args.append(self.parse_expr())
            if self.at(","):
                self.advance()
                continue
            self.expect(close)
            return args

    def parse_primary(self):
        tok = self.peek()
        if tok.kind in ("int", "uint", "double"):
            self.advance()
            return self.number_literal(tok, tok.offset, negative=False)
        if tok.kind in ("string", "bytes"):
            self.advance()
            return ast.Literal(self.new_id(tok.offset), tok.value)
        if tok.kind == "keyword" and tok.text in ("true", "false", "null"):
            self.advance()
            value = {"true": True, "false": False, "null": None}[tok.text]
            return ast.Literal(self.new_id(tok.offset), value)
        leading_dot = False
        if self.at(".") and self.tokens[self.pos + 1].kind == "ident":
            self.advance()
            leading_dot = True
            tok = self.peek()
        elif self.at("."):
            following = self.tokens[self.pos + 1]
            raise _SyntaxError(self._no_viable(tok, following), following.offset, exact=following.kind == "eof")
        if tok.kind == "ident":
            self.advance()
            name = ("." if leading_dot else "") + tok.text
            if self.at("("):
                open_tok = self.advance()
                args = self.parse_args(")")
                if tok.text in RESERVED_IDS:
                    return self.error(tok.offset, f"reserved identifier: {tok.text}")
                return self.global_call_or_macro(open_tok.offset, name, args)
            if self.at("{") or (self.at(".") and self._struct_ahead()):
                return self.parse_struct(name, tok)
            if tok.text in RESERVED_IDS:
                return self.error(tok.offset, f"reserved identifier: {tok.text}")
            return ast.Ident(self.new_id(tok.offset), name)
        if self.at("("):
            self.advance()
            inner = self.parse_expr()
            self.expect(")")
            return inner
        if self.at("["):
            open_tok = self.advance()
            elements, optional = self.parse_list_items()
            return ast.CreateList(self.new_id(open_tok.offset), elements, frozenset(optional))
        if self.at("{"):
            open_tok = self.advance()
            map_id = self.new_id(open_tok.offset)
            entries = self.parse_map_entries()
            return ast.CreateMap(map_id, entries)
        # ANTLR drops one stray token when an expression can start right after it, and says so.
        word = "extraneous" if _starts_expression(self.tokens[self.pos + 1] if self.pos + 1 < len(self.tokens)
                                                  else None) else "mismatched"
        raise _SyntaxError(f"Syntax error: {word} input '{tok.display()}' expecting {_EXPR_START}", tok.offset,
                           exact=tok.kind == "eof" and self._operand_expected())

    def _operand_expected(self) -> bool:
        """Whether the input so far ends where ANTLR expects exactly an expression's first token (its
        start, or after a binary operator): there the end of the input is one error, worded as above.
        After a unary operator, a bracket or a comma ANTLR's expected set and recovery differ."""
        if self.pos == 0:
            return True
        prev = self.tokens[self.pos - 1]
        if prev.kind not in ("punct", "keyword") or prev.text not in (*_BINARY, "&&", "||", "?", ":"):
            return False
        if prev.text != "-":
            return True
        before = self.tokens[self.pos - 2] if self.pos >= 2 else None
        return before is not None and (before.kind not in ("punct", "keyword") or before.text in (
            ")", "]", "}", "true", "false", "null"))

    def _no_viable(self, first: Token, offending: Token) -> str:
        """ANTLR's words when no alternative fits: the tokens' text (blanks included, what the lexer
        dropped left out) from `first` through `offending`."""
        end = offending.offset + len(offending.text)
        text = "".join(ch for index, ch in enumerate(self.text[first.offset:end], first.offset)
                       if not any(lo <= index < hi for lo, hi in self.dropped))
        message = f"no viable alternative at input '{text}'"
        # cel-go rewords it when the input is one character and a literal keyword (its regex's dot
        # matches any character), as earlier versions of CEL said it.
        message = _RESERVED_NO_VIABLE.sub(r"mismatched input '\1' expecting IDENTIFIER", message)
        return "Syntax error: " + message

    def _recovers_to_end(self, first: Token) -> bool:
        """Whether ANTLR, recovering from an error at `first`, skips to the end of the input: no token
        from there on is one it resynchronises at (an operator, a closing bracket, a separator) or
        one that opens a nested rule. Only then is its one error the playground's one error."""
        index = self.tokens.index(first)
        return all(tok.kind not in ("punct", "keyword") or tok.text == "." or tok.text in ("true", "false", "null")
                   for tok in self.tokens[index:])

    def _struct_ahead(self) -> bool:
        """`a.b.C{` names a message type; `a.b.c` without a brace is a selection."""
        i = self.pos
        while (
            self.tokens[i].kind == "punct" and self.tokens[i].text == "."
            and self.tokens[i + 1].kind == "ident"
        ):
            i += 2
        tok = self.tokens[i]
        return tok.kind == "punct" and tok.text == "{"

    def parse_struct(self, name: str, first: Token):
        while self.at("."):
            self.advance()
            name += "." + self.advance().text
        open_tok = self.advance()
        struct_id = self.new_id(open_tok.offset)
        fields = []
        while not self.at("}"):
            optional = False
            if self.at("?"):
                self.advance()
                optional = True
            tok = self.advance()
            if tok.kind not in ("ident", "escaped_ident", "keyword"):
                raise _SyntaxError(
                    f"Syntax error: mismatched input '{tok.display()}' expecting {{'?', IDENTIFIER, ESC_IDENTIFIER}}",
                    tok.offset,
                )
            colon = self.expect(":")
            value = self.parse_expr()
            field_name = tok.value if tok.kind == "escaped_ident" else tok.text
            fields.append(ast.StructField(self.new_id(colon.offset), field_name, value, optional))
            if self.at(","):
                self.advance()
                continue
            break
        self.expect("}")
        return ast.CreateStruct(struct_id, name, fields)

    def parse_list_items(self):
        elements, optional = [], []
        if self.at(","):  # `[,]`: the grammar's optional trailing comma after no elements
            self.advance()
            self.expect("]")
            return elements, optional
        while not self.at("]"):
            if self.at("?"):
                self.advance()
                optional.append(len(elements))
            elements.append(self.parse_expr())
            if self.at(","):
                self.advance()
                continue
            break
        self.expect("]")
        return elements, optional

    def parse_map_entries(self):
        entries = []
        if self.at(","):  # `{,}`, as `[,]`
            self.advance()
            self.expect("}")
            return entries
        while not self.at("}"):
            optional = False
            if self.at("?"):
                self.advance()
                optional = True
            key = self.parse_expr()
            colon = self.expect(":")
            value = self.parse_expr()
            entries.append(ast.MapEntry(self.new_id(colon.offset), key, value, optional))
            if self.at(","):
                self.advance()
                continue
            break
        self.expect("}")
        return entries

    def number_literal(self, tok: Token, offset: int, negative: bool):
        node_id = self.new_id(offset)
        if tok.kind == "double":
            value = float(tok.value)
            return ast.Literal(node_id, -value if negative else value)
        base, digits = tok.value
        number = int(digits, 16 if base == "hex" else 10)
        if tok.kind == "uint":
            if number >= 1 << 64:
                return self.error(offset, "invalid uint literal")
            return ast.Literal(node_id, Uint(number))
        if negative:
            number = -number
        if not -(1 << 63) <= number < (1 << 63):
            return self.error(offset, "invalid int literal")
        return ast.Literal(node_id, number)

    # -- calls and macros --------------------------------------------------------

    def global_call_or_macro(self, offset: int, function: str, args: list):
        expander = _GLOBAL_MACROS.get((function, len(args)))
        if expander is not None:
            expanded = self.expand(expander, offset, None, args)
            if expanded is not None:
                return expanded
        return ast.Call(self.new_id(offset), function, args)

    def receiver_call_or_macro(self, offset: int, function: str, target, args: list):
        expander = _RECEIVER_MACROS.get((function, len(args)))
        if expander is not None:
            expanded = self.expand(expander, offset, target, args)
            if expanded is not None:
                return expanded
        return ast.Call(self.new_id(offset), function, args, target)

    def expand(self, expander, offset, target, args):
        helper = _MacroHelper(self, offset)
        try:
            return expander(helper, target, args)
        except _MacroError as exc:
            where = self.offsets.get(exc.node.id, offset) if exc.node is not None else offset
            return self.error(where, exc.message)


class _DepthError(Exception):
    pass


def _tree_depth(root) -> int:
    """Nesting depth without recursion (comprehension internals count once)."""
    best = 0
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > best:
            best = depth
        if isinstance(node, ast.Comprehension):
            kids = [node.iter_range, node.accu_init, node.loop_step, node.result]
        else:
            kids = ast.children(node)
        for kid in kids:
            stack.append((kid, depth + 1))
    return best


class _MacroError(Exception):
    def __init__(self, node, message: str):
        super().__init__(message)
        self.node = node
        self.message = message


class _MacroHelper:
    """Builds macro expansions; every new node is located at the macro call."""

    def __init__(self, parser: Parser, offset: int):
        self.parser = parser
        self.offset = offset

    def id(self) -> int:
        return self.parser.new_id(self.offset)

    def lit(self, value):
        return ast.Literal(self.id(), value)

    def ident(self, name: str):
        return ast.Ident(self.id(), name)

    def accu(self):
        return ast.Ident(self.id(), ast.ACCUMULATOR)

    def call(self, function: str, *args, target=None):
        return ast.Call(self.id(), function, list(args), target)

    def new_list(self, *elements):
        return ast.CreateList(self.id(), list(elements))

    def new_map(self):
        return ast.CreateMap(self.id(), [])

    def fold(self, iter_range, iter_var, iter_var2, accu_init, condition, step, result, accu=ast.ACCUMULATOR):
        return ast.Comprehension(self.id(), iter_range, iter_var, iter_var2, accu, accu_init, condition, step, result)

    def copy(self, node):
        """A structural copy with fresh ids (cel-go copies the target of optMap)."""
        if isinstance(node, ast.Literal):
            return ast.Literal(self.id(), node.value)
        if isinstance(node, ast.Ident):
            return ast.Ident(self.id(), node.name)
        if isinstance(node, ast.Select):
            return ast.Select(self.id(), self.copy(node.operand), node.field, node.test_only)
        if isinstance(node, ast.Call):
            target = self.copy(node.target) if node.target is not None else None
            return ast.Call(self.id(), node.function, [self.copy(a) for a in node.args], target)
        if isinstance(node, ast.CreateList):
            return ast.CreateList(self.id(), [self.copy(e) for e in node.elements], node.optional_indices)
        if isinstance(node, ast.CreateMap):
            return ast.CreateMap(self.id(), [
                ast.MapEntry(self.id(), self.copy(e.key), self.copy(e.value), e.optional) for e in node.entries
            ])
        if isinstance(node, ast.CreateStruct):
            return ast.CreateStruct(self.id(), node.type_name, [
                ast.StructField(self.id(), f.name, self.copy(f.value), f.optional) for f in node.fields
            ])
        return ast.Comprehension(
            self.id(), self.copy(node.iter_range), node.iter_var, node.iter_var2, node.accu_var,
            self.copy(node.accu_init), self.copy(node.loop_condition), self.copy(node.loop_step),
            self.copy(node.result),
        )


def _simple_name(node, message: str) -> str:
    if isinstance(node, ast.Ident):
        return node.name
    raise _MacroError(node, message)


def _iter_var(node) -> str:
    name = _simple_name(node, "argument must be a simple name")
    if name == ast.ACCUMULATOR:
        raise _MacroError(node, "iteration variable overwrites accumulator variable")
    return name


def _macro_has(h: _MacroHelper, target, args):
    arg = args[0]
    if isinstance(arg, ast.Select) and not arg.test_only:
        return ast.Select(h.id(), arg.operand, arg.field, True)
    raise _MacroError(arg, "invalid argument to has() macro")


def _quantifier(kind: str, two_vars: bool):
    def expand(h: _MacroHelper, target, args):
        if two_vars:
            first = _iter_var(args[0])
            second = _iter_var(args[1])
            if first == second:
                raise _MacroError(args[1], f"duplicate variable name: {first}")
            pred = args[2]
        else:
            first, second, pred = _iter_var(args[0]), None, args[1]
        if kind == "all":
            init = h.lit(True)
            condition = h.call("@not_strictly_false", h.accu())
            step = h.call("_&&_", h.accu(), pred)
            result = h.accu()
        elif kind == "exists":
            init = h.lit(False)
            condition = h.call("@not_strictly_false", h.call("!_", h.accu()))
            step = h.call("_||_", h.accu(), pred)
            result = h.accu()
        else:
            init = h.lit(0)
            condition = h.lit(True)
            step = h.call("_?_:_", pred, h.call("_+_", h.accu(), h.lit(1)), h.accu())
            result = h.call("_==_", h.accu(), h.lit(1))
        return h.fold(target, first, second, init, condition, step, result)
    return expand


def _macro_map(h: _MacroHelper, target, args):
    name = _simple_name(args[0], "argument is not an identifier")
    if name == ast.ACCUMULATOR:
        raise _MacroError(args[0], "iteration variable overwrites accumulator variable")
    transform = args[-1]
    step = h.call("_+_", h.accu(), h.new_list(transform))
    if len(args) == 3:
        step = h.call("_?_:_", args[1], step, h.accu())
    return h.fold(target, name, None, h.new_list(), h.lit(True), step, h.accu())


def _macro_filter(h: _MacroHelper, target, args):
    name = _simple_name(args[0], "argument is not an identifier")
    if name == ast.ACCUMULATOR:
        raise _MacroError(args[0], "iteration variable overwrites accumulator variable")
    step = h.call("_+_", h.accu(), h.new_list(h.ident(name)))
    step = h.call("_?_:_", args[1], step, h.accu())
    return h.fold(target, name, None, h.new_list(), h.lit(True), step, h.accu())


def _transform(kind: str):
    def expand(h: _MacroHelper, target, args):
        first = _iter_var(args[0])
        second = _iter_var(args[1])
        if first == second:
            raise _MacroError(args[1], f"duplicate variable name: {first}")
        transform = args[-1]
        if kind == "list":
            init = h.new_list()
            step = h.call("_+_", h.accu(), h.new_list(transform))
        elif kind == "map":
            init = h.new_map()
            step = h.call("cel.@mapInsert", h.accu(), h.ident(first), transform)
        else:
            init = h.new_map()
            step = h.call("cel.@mapInsert", h.accu(), transform)
        if len(args) == 4:
            step = h.call("_?_:_", args[2], step, h.accu())
        return h.fold(target, first, second, init, h.lit(True), step, h.accu())
    return expand


def _macro_bind(h: _MacroHelper, target, args):
    if not (isinstance(target, ast.Ident) and target.name == "cel"):
        return None
    name = _simple_name(args[0], "cel.bind() variable names must be simple identifiers")
    return h.fold(h.new_list(), ast.UNUSED_ITER_VAR, None, args[1], h.lit(False), h.ident(name), args[2], accu=name)


def _opt_map(flat: bool):
    def expand(h: _MacroHelper, target, args):
        label = "optFlatMap" if flat else "optMap"
        name = _simple_name(args[0], f"{label}() variable name must be a simple identifier")
        value = h.call("value", target=h.copy(target))
        inner = h.fold(h.new_list(), ast.UNUSED_ITER_VAR, None, value, h.lit(False), h.ident(name), args[1], accu=name)
        if not flat:
            inner = h.call("optional.of", inner)
        return h.call("_?_:_", h.call("hasValue", target=target), inner, h.call("optional.none"))
    return expand


def _macro_sort_by(h: _MacroHelper, target, args):
    name = _simple_name(args[0], "sortBy(var, ...) variable name must be a simple identifier")
    if not isinstance(target, (ast.CreateList, ast.Ident, ast.Comprehension, ast.Call, ast.Select)):
        raise _MacroError(target, "sortBy can only be applied to a list, identifier, comprehension, call or select expression")
    var = "@__sortBy_input__"
    keys = h.fold(h.ident(var), name, None, h.new_list(), h.lit(True),
                  h.call("_+_", h.accu(), h.new_list(args[1])), h.accu())
    body = h.call("@sortByAssociatedKeys", keys, target=h.ident(var))
    return h.fold(h.new_list(), ast.UNUSED_ITER_VAR, None, target, h.lit(False), h.ident(var), body, accu=var)


_GLOBAL_MACROS = {("has", 1): _macro_has}
_RECEIVER_MACROS = {
    ("all", 2): _quantifier("all", False),
    ("exists", 2): _quantifier("exists", False),
    ("exists_one", 2): _quantifier("exists_one", False),
    ("map", 2): _macro_map,
    ("map", 3): _macro_map,
    ("filter", 2): _macro_filter,
    ("all", 3): _quantifier("all", True),
    ("exists", 3): _quantifier("exists", True),
    ("existsOne", 3): _quantifier("exists_one", True),
    ("exists_one", 3): _quantifier("exists_one", True),
    ("transformList", 3): _transform("list"),
    ("transformList", 4): _transform("list"),
    ("transformMap", 3): _transform("map"),
    ("transformMap", 4): _transform("map"),
    ("transformMapEntry", 3): _transform("entry"),
    ("transformMapEntry", 4): _transform("entry"),
    ("bind", 3): _macro_bind,
    ("optMap", 2): _opt_map(False),
    ("optFlatMap", 2): _opt_map(True),
    ("sortBy", 2): _macro_sort_by,
}


def parse(text: str) -> ParseResult:
    return Parser(text).parse()
