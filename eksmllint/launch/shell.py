"""A small, position-keeping reader of POSIX/bash scripts.

Launch commands live in shell: ``bash -c`` blocks in container specs and Slurm batch
scripts.  We need every simple command with every word's line, plus the values of simple
variables, so that ``srun torchrun --nproc_per_node=$GPUS`` can be compared with
``#SBATCH --gpus-per-node``.

Why not bashlex: it raises on bash arrays (``declare -a ARGS=(...)``), arithmetic
expansion and several other constructs that most real training scripts use (it rejected
43 of the 61 real-world Slurm/shell scripts we tried), and one unparseable line loses the
whole file.  This lexer is deliberately forgiving: it never raises, records syntax errors
bash itself would report (unterminated quotes or substitutions), and skips what it does
not understand.

Scope (what is modelled): quoting, escapes, line continuations, comments, ``$VAR``,
``${VAR}``, ``${VAR:-x}``-style defaults, ``$(...)``/backticks (opaque), ``$((...))``
(evaluated when all operands are known), arrays, heredocs (skipped), redirections (dropped),
``;``/``&&``/``||``/``|``/``&``/newlines, compound commands (only to know whether an
assignment is conditional).  Variables assigned inside ``if``/loops/functions or after
``&&``/``||`` are merged: known only when every branch gives the same value.

Expansion is bounded (:class:`ExpansionBudget`): ``A="$A $A"`` repeated doubles a value, so
a few hundred bytes of script could otherwise ask for gigabytes.  A value over budget is
unknown, exactly like one the script reads at run time.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from .model import Arg, ArgPosition, Option

# --------------------------------------------------------------------------- lexer

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME_RE = re.compile(_NAME)
_ASSIGN_RE = re.compile(rf"({_NAME})(\[[^\]]*\])?(\+?)=")
_SPECIAL_PARAMS = "@*#?$!-0123456789"
_METACHARS = " \t\r\n;&|()<>"
_OPERATORS = (
    ";;&",
    "&>>",
    "<<<",
    "<<-",
    "&&",
    "||",
    ";;",
    ";&",
    "|&",
    "<<",
    ">>",
    "<&",
    ">&",
    "<>",
    ">|",
    "&>",
    "|",
    "&",
    ";",
    "(",
    ")",
    "<",
    ">",
)
_REDIRECTIONS = frozenset({"<<<", "<<-", "<<", ">>", "<&", ">&", "<>", ">|", "&>", "&>>", "<", ">"})
_SEPARATORS = frozenset({"\n", ";", "&", "&&", "||", "|", "|&", ";;", ";&", ";;&"})
_FD_REDIR_RE = re.compile(r"\d+(?=[<>])")
#: Characters that may start an operator (digits: an ``2>`` redirection): anything else is a word.
_OPERATOR_STARTS = frozenset("0123456789;&|()<>")
#: A run of characters a word takes one by one as unquoted literal text (read in one step).
_PLAIN_RUN = re.compile(r"[^ \t\r\n;&|()<>\\'\"$`]+")
#: The same inside double quotes.
_DQUOTE_RUN = re.compile(r'[^"\\$`]+')
_PARAM_OPS = (":-", ":=", ":+", ":?", "##", "%%", "//", "^^", ",,", "-", "=", "+", "?", "#", "%", "/", "^", ",", ":")


@dataclass(frozen=True)
class Part:
    """A piece of a word: literal text, a parameter (``var``), a command substitution
    (``cmd``, opaque) or an arithmetic expansion (``arith``)."""

    kind: str
    text: str
    quoted: bool
    source: str = ""
    op: str = ""
    arg: str = ""
    subscript: str | None = None
    special: bool = False

    def display(self) -> str:
        return self.text if self.kind == "lit" else self.source


@dataclass(frozen=True)
class Word:
    """A shell word with its source text, parts, and 0-based line of its first character.
    ``array`` holds the elements of a ``NAME=( ... )`` assignment."""

    raw: str
    parts: tuple[Part, ...]
    offset: int
    line: int
    array: tuple[Word, ...] | None = None

    def display(self) -> str:
        """Text after quote removal, with unexpanded references kept as written."""
        return "".join(p.display() for p in self.parts)

    def literal(self) -> str | None:
        """The word's text when it contains no expansion at all."""
        if self.array is not None or any(p.kind != "lit" for p in self.parts):
            return None
        return "".join(p.text for p in self.parts)


@dataclass(frozen=True)
class Operator:
    text: str
    offset: int
    line: int


Token = Word | Operator


class _Lexer:
    """Character-level lexer.  Every loop advances, so it terminates on any input."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.i = 0
        self.tokens: list[Token] = []
        self.errors: list[tuple[int, str]] = []  # (offset, message)
        self._newlines = [m.start() for m in re.finditer("\n", text)]
        self._pending_heredocs: list[tuple[str, bool]] = []

    def line_of(self, offset: int) -> int:
        return bisect.bisect_left(self._newlines, offset)

    # -- top level -------------------------------------------------------------
    def run(self) -> None:
        s = self.s
        expect_delim: bool | None = None
        while self.i < self.n:
            c = s[self.i]
            if c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
                continue
            if c in " \t\r":
                self.i += 1
                continue
            if c == "\n":
                self.tokens.append(Operator("\n", self.i, self.line_of(self.i)))
                self.i += 1
                if self._pending_heredocs:
                    self._skip_heredocs()
                continue
            if c == "#":
                self._skip_comment()
                continue
            op = self._match_operator()
            if op is not None:
                self.tokens.append(Operator(op, self.i, self.line_of(self.i)))
                self.i += len(op)
                if op in ("<<", "<<-"):
                    expect_delim = op == "<<-"
                continue
            start = self.i
            word = self._read_word()
            if self.i == start:  # cannot happen, but never loop forever
                self.i += 1
                continue
            if expect_delim is not None:
                delim = "".join(p.display() for p in word.parts)
                self._pending_heredocs.append((delim, expect_delim))
                expect_delim = None
            self.tokens.append(word)

    def _skip_comment(self) -> None:
        j = self.s.find("\n", self.i)
        self.i = self.n if j < 0 else j

    def _skip_heredocs(self) -> None:
        s = self.s
        for delim, strip_tabs in self._pending_heredocs:
            while self.i < self.n:
                j = s.find("\n", self.i)
                end = self.n if j < 0 else j
                line = s[self.i : end]
                self.i = end + 1 if j >= 0 else self.n
                if (line.lstrip("\t") if strip_tabs else line) == delim:
                    break
        self._pending_heredocs = []

    def _match_operator(self) -> str | None:
        s, i = self.s, self.i
        if s[i] not in _OPERATOR_STARTS:
            return None
        m = _FD_REDIR_RE.match(s, i)
        if m is not None:
            j = m.end()
            for op in _OPERATORS:
                if op in _REDIRECTIONS and s.startswith(op, j) and not s.startswith("(", j + len(op)):
                    return s[i:j] + op
            return None
        if s[i] in "<>" and s.startswith("(", i + 1):
            return None  # process substitution, read as a word
        for op in _OPERATORS:
            if s.startswith(op, i):
                return op
        return None

    # -- words -----------------------------------------------------------------
    def _read_word(self) -> Word:
        s = self.s
        start = self.i
        parts: list[Part] = []
        lit: list[str] = []
        lit_quoted = False

        def flush() -> None:
            if lit:
                parts.append(Part("lit", "".join(lit), lit_quoted))
                lit.clear()

        def add_lit(text: str, quoted: bool) -> None:
            nonlocal lit_quoted
            if lit and quoted != lit_quoted:
                flush()
            lit_quoted = quoted
            lit.append(text)

        array: tuple[Word, ...] | None = None
        while self.i < self.n:
            c = s[self.i]
            if c in _METACHARS:
                if c in "<>" and s.startswith("(", self.i + 1):
                    flush()
                    end = self._find_close(self.i + 2, 1)
                    parts.append(Part("cmd", s[self.i + 2 : end - 1], False, s[self.i : end]))
                    self.i = end
                    continue
                if c == "(" and not parts and _ASSIGN_RE.fullmatch("".join(lit)) and not lit_quoted:
                    array = self._read_array()
                break
            if c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                elif self.i + 1 < self.n:
                    add_lit(s[self.i + 1], True)
                    self.i += 2
                else:
                    add_lit("\\", False)
                    self.i += 1
            elif c == "'":
                j = s.find("'", self.i + 1)
                if j < 0:
                    self.errors.append((self.i, "unterminated single quote"))
                    j = self.n
                add_lit(s[self.i + 1 : j], True)
                self.i = j + 1
            elif c == '"':
                flush()
                self._read_dquote(parts)
            elif c == "$":
                if s.startswith("$'", self.i):
                    add_lit(self._read_ansi_c(), True)
                    continue
                if s.startswith('$"', self.i):
                    self.i += 1
                    flush()
                    self._read_dquote(parts)
                    continue
                part = self._read_dollar(False)
                if part is None:
                    add_lit("$", False)
                else:
                    flush()
                    parts.append(part)
            elif c == "`":
                flush()
                parts.append(self._read_backtick(False))
            else:
                m = _PLAIN_RUN.match(s, self.i)  # matches: c is none of the characters it stops at
                end = m.end() if m is not None else self.i + 1
                add_lit(s[self.i : end], False)
                self.i = end
        flush()
        self.i = min(self.i, self.n)
        return Word(s[start : self.i], tuple(parts), start, self.line_of(start), array)

    def _read_array(self) -> tuple[Word, ...]:
        s = self.s
        open_at = self.i
        self.i += 1
        items: list[Word] = []
        while self.i < self.n:
            c = s[self.i]
            if s.startswith("\\\n", self.i):
                self.i += 2
            elif c in " \t\r\n":
                self.i += 1
            elif c == "#":
                self._skip_comment()
            elif c == ")":
                self.i += 1
                return tuple(items)
            else:
                start = self.i
                w = self._read_word()
                if self.i == start:
                    self.i += 1  # a stray operator character inside ( ): skip it
                    continue
                items.append(w)
        self.errors.append((open_at, "unterminated array assignment '('"))
        return tuple(items)

    def _read_dquote(self, parts: list[Part]) -> None:
        s = self.s
        open_at = self.i
        first_part = len(parts)
        self.i += 1
        lit: list[str] = []

        def flush() -> None:
            if lit:
                parts.append(Part("lit", "".join(lit), True))
                lit.clear()

        while self.i < self.n:
            c = s[self.i]
            if c == '"':
                self.i += 1
                flush()
                if len(parts) == first_part:  # "" is an (empty) argument, not nothing
                    parts.append(Part("lit", "", True))
                return
            if c == "\\" and self.i + 1 < self.n and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    lit.append(s[self.i + 1])
                self.i += 2
            elif c == "$":
                part = self._read_dollar(True)
                if part is None:
                    lit.append("$")
                else:
                    flush()
                    parts.append(part)
            elif c == "`":
                flush()
                parts.append(self._read_backtick(True))
            else:
                m = _DQUOTE_RUN.match(s, self.i)
                end = m.end() if m is not None else self.i + 1  # a backslash that escapes nothing
                lit.append(s[self.i : end])
                self.i = end
        flush()
        self.errors.append((open_at, "unterminated double quote"))

    def _read_ansi_c(self) -> str:
        s = self.s
        open_at = self.i
        self.i += 2
        out: list[str] = []
        escapes = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "e": "\x1b"}
        while self.i < self.n:
            c = s[self.i]
            if c == "'":
                self.i += 1
                return "".join(out)
            if c == "\\" and self.i + 1 < self.n:
                out.append(escapes.get(s[self.i + 1], "\\" + s[self.i + 1]))
                self.i += 2
            else:
                out.append(c)
                self.i += 1
        self.errors.append((open_at, "unterminated $'...' string"))
        return "".join(out)

    def _read_backtick(self, quoted: bool) -> Part:
        s = self.s
        open_at = self.i
        j = self.i + 1
        while j < self.n and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        if j >= self.n:
            self.errors.append((open_at, "unterminated backquote"))
            j = self.n
        self.i = min(j + 1, self.n)
        return Part("cmd", s[open_at + 1 : j], quoted, s[open_at : self.i])

    def _skip_quoted(self, j: int) -> int:
        """From an opening quote at j, return the index after its closing quote."""
        s = self.s
        q = s[j]
        j += 1
        while j < self.n and s[j] != q:
            j += 2 if (s[j] == "\\" and q == '"') else 1
        return min(j + 1, self.n)

    def _find_close(self, j: int, depth: int) -> int:
        """Index after the ``)`` that closes ``depth`` open parentheses from j."""
        s = self.s
        start = j
        while j < self.n:
            c = s[j]
            if c in "'\"":
                j = self._skip_quoted(j)
                continue
            if c == "\\":
                j += 2
                continue
            if c == "`":
                k = s.find("`", j + 1)
                j = self.n if k < 0 else k + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        self.errors.append((max(start - 2, 0), "unterminated '$(' or '('"))
        return self.n

    def _find_brace(self, j: int) -> int:
        s = self.s
        start = j
        depth = 1
        while j < self.n:
            c = s[j]
            if c in "'\"":
                j = self._skip_quoted(j)
                continue
            if c == "\\":
                j += 2
                continue
            if s.startswith("${", j):
                depth += 1
                j += 2
                continue
            if c == "}":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        self.errors.append((max(start - 2, 0), "unterminated '${'"))
        return self.n

    def _read_dollar(self, quoted: bool) -> Part | None:
        s = self.s
        i = self.i
        if s.startswith("$((", i):
            end = self._find_close(i + 3, 2)
            src = s[i:end]
            if src.endswith("))"):
                self.i = end
                return Part("arith", s[i + 3 : end - 2], quoted, src)
            self.i = end
            return Part("cmd", s[i + 2 : end - 1], quoted, src)
        if s.startswith("$(", i):
            end = self._find_close(i + 2, 1)
            self.i = end
            return Part("cmd", s[i + 2 : end - 1], quoted, s[i:end])
        if s.startswith("${", i):
            end = self._find_brace(i + 2)
            self.i = end
            inner = s[i + 2 : end - 1] if s[end - 1 : end] == "}" else s[i + 2 : end]
            return _parse_braced(inner, quoted, s[i:end])
        m = _NAME_RE.match(s, i + 1)
        if m is not None:
            self.i = m.end()
            return Part("var", m.group(0), quoted, s[i : m.end()])
        if i + 1 < self.n and s[i + 1] in _SPECIAL_PARAMS:
            self.i = i + 2
            return Part("var", s[i + 1], quoted, s[i : i + 2], special=True)
        self.i = i + 1
        return None


def _parse_braced(inner: str, quoted: bool, source: str) -> Part:
    """``${...}`` contents: name, optional ``[subscript]``, optional operator and argument."""
    if inner.startswith(("#", "!")) and len(inner) > 1:
        return Part("var", inner[1:], quoted, source, special=True)
    m = _NAME_RE.match(inner)
    if m is None:
        if inner[:1] and inner[:1] in _SPECIAL_PARAMS:
            return Part("var", inner[:1], quoted, source, special=True)
        return Part("var", inner, quoted, source, special=True)
    name = m.group(0)
    rest = inner[m.end() :]
    subscript = None
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0:
            return Part("var", name, quoted, source, special=True)
        subscript = rest[1:close]
        rest = rest[close + 1 :]
    if not rest:
        return Part("var", name, quoted, source, subscript=subscript)
    for op in _PARAM_OPS:
        if rest.startswith(op):
            return Part("var", name, quoted, source, op=op, arg=rest[len(op) :], subscript=subscript)
    return Part("var", name, quoted, source, special=True)


def lex(text: str) -> tuple[list[Token], list[tuple[int, str]], Callable[[int], int]]:
    """Tokens, syntax errors as (0-based line, message), and an offset->line function."""
    lx = _Lexer(text)
    lx.run()
    return lx.tokens, [(lx.line_of(off), msg) for off, msg in lx.errors], lx.line_of


# --------------------------------------------------------------------------- commands

_OPENERS = {"if": "if", "while": "loop", "until": "loop", "for": "loop", "select": "loop", "case": "case"}
_CLOSERS = frozenset({"fi", "done", "esac"})
_SKIP_WORDS = frozenset({"then", "do", "else", "elif", "!", "in"})


@dataclass(frozen=True)
class SimpleCommand:
    """A simple command: its words (redirections removed) and how it runs.

    ``conditional``: inside a compound command or function, or after ``&&``/``||`` — its
    assignments may or may not happen.  ``subshell``: part of a pipeline or backgrounded —
    its assignments do not reach the script."""

    words: tuple[Word, ...]
    conditional: bool
    subshell: bool
    line: int


def split_commands(tokens: list[Token]) -> list[SimpleCommand]:
    """Group tokens into simple commands, tracking compound nesting."""
    commands: list[SimpleCommand] = []
    stack: list[str] = []
    cur: list[Word] = []
    prev_sep: str | None = None
    skip_rest = False
    redirect_next = False
    pending_func = False
    after_function_kw = False

    def flush(sep: str | None) -> None:
        nonlocal cur, prev_sep, skip_rest
        if cur:
            commands.append(
                SimpleCommand(
                    tuple(cur),
                    conditional=bool(stack) or prev_sep in ("&&", "||") or sep == "||",
                    subshell=prev_sep in ("|", "|&") or sep in ("|", "|&", "&"),
                    line=cur[0].line,
                )
            )
        cur = []
        if sep is not None:
            prev_sep = sep if sep in ("&&", "||", "|", "|&") else None
            if sep in ("\n", ";", ";;", ";&", ";;&", "&"):
                skip_rest = False

    k = 0
    while k < len(tokens):
        tok = tokens[k]
        k += 1
        if isinstance(tok, Operator):
            t = tok.text
            if t.lstrip("0123456789") in _REDIRECTIONS:
                redirect_next = True
                continue
            if t in _SEPARATORS:
                flush(t)
                continue
            if t == "(":
                nxt = tokens[k] if k < len(tokens) else None
                if isinstance(nxt, Operator) and nxt.text == ")" and (len(cur) == 1 or after_function_kw):
                    cur = []
                    k += 1
                    pending_func = True
                    after_function_kw = False
                    continue
                flush(None)
                stack.append("subshell")
                continue
            if t == ")":
                if stack and stack[-1] == "case":
                    cur = []  # a case pattern such as ``a|b)``
                    continue
                flush(None)
                if stack:
                    stack.pop()
                continue
            continue
        if redirect_next:
            redirect_next = False
            continue
        if skip_rest:
            continue
        if not cur:
            lit = tok.literal()
            if after_function_kw:
                after_function_kw = False
                pending_func = True
                continue
            if lit in _OPENERS:
                stack.append(_OPENERS[lit])
                skip_rest = lit in ("for", "select", "case")
                continue
            if lit in _CLOSERS or lit == "}":
                if stack:
                    stack.pop()
                continue
            if lit == "{":
                stack.append("func" if pending_func else "brace")
                pending_func = False
                continue
            if lit == "function":
                after_function_kw = True
                continue
            if lit in _SKIP_WORDS:
                continue
            if pending_func:
                stack.append("func")  # ``f() ( ... )`` or a one-command body
                pending_func = False
        cur.append(tok)
    flush(None)
    return commands


# --------------------------------------------------------------------------- budget

# Measured over every script and container command of /work/shared/corpus/realworld and the seed
# (bench/README.md, "Shell expansion budget"): the largest expansion was 5,784 characters (a
# container script after kubelet ``$(VAR)`` expansion; 639 in shell) and the most work one analysis
# did 8,816 characters; nothing was refused.  The limits leave 11x and 119x of room above real use
# while keeping a hostile script's peak memory at a few megabytes.
MAX_VALUE_CHARS = 65_536
MAX_WORK_CHARS = 1_048_576
# what one argument or array element costs beyond its text (the object that holds it)
_ITEM_COST = 16


@dataclass
class ExpansionBudget:
    """How much expansion one analysis may do: no value larger than ``value_limit`` characters,
    no more than ``work_limit`` characters produced in all (values built, references copied,
    arguments and variable snapshots made, ``bash -c`` scripts re-read).  Shared by a script,
    its commands' variable snapshots and the ``bash -c`` scripts it runs."""

    value_limit: int = MAX_VALUE_CHARS
    work_limit: int = MAX_WORK_CHARS
    spent: int = 0

    def allow(self, size: int) -> bool:
        """Charge an expansion of ``size`` characters, asked before it is built; False (the value
        is then unknown) when it is larger than one value may be or the work budget is spent."""
        if size > self.value_limit or self.spent + size > self.work_limit:
            return False
        self.spent += size
        return True


# --------------------------------------------------------------------------- values

_OPTION_LIKE_RE = re.compile(r"\s*(?:-|\Z)")


@dataclass(frozen=True)
class Known:
    """A scalar variable with a literal value.  ``option_like`` (empty, blank or starting with
    ``-``) is decided once here: a value may be long and referenced many times."""

    text: str
    option_like: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "option_like", _OPTION_LIKE_RE.match(self.text) is not None)


@dataclass(frozen=True)
class KnownArray:
    """An array variable whose elements are known words (each keeps its own position)."""

    items: tuple[Arg, ...]


@dataclass(frozen=True)
class Unknown:
    """A variable whose value cannot be known statically.  ``option_like``: every value it
    can take is empty or starts with ``-`` (so option parsers may step over it)."""

    option_like: bool = False


@dataclass(frozen=True)
class Partial:
    """A scalar whose text is known except for pieces that are only known at run time
    (``LAUNCHER="torchrun --node_rank $(hostname) ..."``): ``pieces`` holds literal text (str)
    and the unknown pieces as written (:class:`Part`).  Word splitting keeps it partial: a word
    holding an unknown piece is one unknown word, and only an unquoted variable standing alone
    may be any number of words (opaque), so the launcher and its other options stay known."""

    pieces: tuple[str | Part, ...]

    @property
    def option_like(self) -> bool:
        first = self.pieces[0] if self.pieces else ""
        return isinstance(first, str) and _OPTION_LIKE_RE.match(first) is not None and bool(first.strip())


VarValue = Known | KnownArray | Partial | Unknown


def _value_option_like(v: VarValue) -> bool:
    if isinstance(v, (Known, Partial)):
        return v.option_like
    if isinstance(v, KnownArray):
        return not v.items or v.items[0].text.startswith("-")
    return v.option_like


@dataclass
class ShellState:
    """Variables visible to a script, with which of them are exported.

    ``protected`` names (SLURM_* derived from directives) survive ``source`` of an
    unknown file."""

    vars: dict[str, VarValue] = field(default_factory=dict)
    exported: set[str] = field(default_factory=set)
    protected: frozenset[str] = frozenset()
    budget: ExpansionBudget = field(default_factory=ExpansionBudget)

    def get(self, name: str) -> VarValue:
        return self.vars.get(name, Unknown(False))

    def child(self) -> ShellState:
        """State seen by a child shell (``bash -c``): exported variables only."""
        return ShellState(
            {k: v for k, v in self.vars.items() if k in self.exported},
            set(self.exported),
            self.protected,
            self.budget,
        )

    def copy(self) -> ShellState:
        return ShellState(dict(self.vars), set(self.exported), self.protected, self.budget)

    def snapshot(self) -> ShellState:
        """A copy for a command to keep, charged to the budget (a script alternating thousands of
        assignments and commands would otherwise copy its variables once per command); when
        the budget is spent the command sees no variable at all (every one unknown)."""
        if self.budget.allow(len(self.vars) + len(self.exported)):
            return self.copy()
        return ShellState(exported=set(), protected=self.protected, budget=self.budget)

    def assign(self, name: str, value: VarValue, conditional: bool, is_array: bool = False) -> None:
        del is_array  # arrays and scalars merge alike (kept for call-site clarity)
        if conditional:
            old = self.vars.get(name)
            if old is None:
                # First assignment is conditional (typically if/else branches).  The value
                # stays unknown, but it counts as option-like when what the script assigns
                # is: ``FLAG="-x NCCL_DEBUG=INFO"`` / ``FLAG=""`` in two branches.
                value = Unknown(_value_option_like(value))
            elif old != value:
                value = Unknown(_value_option_like(old) and _value_option_like(value))
        self.vars[name] = value

    def taint(self) -> None:
        """After ``source``/``eval`` of unknown code, nothing but protected names is known."""
        for name in list(self.vars):
            if name not in self.protected:
                self.vars[name] = Unknown(False)


# arithmetic ----------------------------------------------------------------

_ARITH_TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)|(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|[A-Za-z_][A-Za-z0-9_]*)|(\*\*|[-+*/%()]))"
)
_ARITH_LIMIT = 2**63


def eval_arith(expr: str, state: ShellState) -> int | None:
    """Evaluate ``$((...))`` integer arithmetic over known variables; None if anything is
    unknown, unsupported, out of range, or divides by zero (never guesses)."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    expr = expr.strip()
    while pos < len(expr):
        m = _ARITH_TOKEN.match(expr, pos)
        if m is None or m.end() == pos:
            return None
        pos = m.end()
        if m.group(1):
            tokens.append(("num", m.group(1)))
        elif m.group(2):
            tokens.append(("name", m.group(2).strip("${}")))
        else:
            tokens.append(("op", m.group(3)))
        if len(tokens) > 200:
            return None
    idx = 0

    class _Fail(Exception):
        pass

    def peek() -> tuple[str, str] | None:
        return tokens[idx] if idx < len(tokens) else None

    def take() -> tuple[str, str]:
        nonlocal idx
        if idx >= len(tokens):
            raise _Fail
        idx += 1
        return tokens[idx - 1]

    def check(v: int) -> int:
        if abs(v) >= _ARITH_LIMIT:
            raise _Fail
        return v

    def atom(depth: int) -> int:
        if depth > 50:
            raise _Fail
        kind, text = take()
        if kind == "num":
            return check(
                int(text, 16)
                if text[:2].lower() == "0x"
                else int(text, 8)
                if len(text) > 1 and text[0] == "0"
                else int(text)
            )
        if kind == "name":
            value = state.get(text)
            if isinstance(value, KnownArray):
                first = value.items[0].resolved if value.items else None
                value = Known(first) if first is not None else Unknown()
            if not isinstance(value, Known):
                raise _Fail
            if len(value.text) > 64:  # longer than any in-range integer: not worth scanning
                raise _Fail
            t = value.text.strip()
            if not re.fullmatch(r"[+-]?\d+", t):
                raise _Fail
            return check(int(t))
        if text == "(":
            v = add(depth + 1)
            if take() != ("op", ")"):
                raise _Fail
            return v
        if text in "+-":
            v = unary(depth + 1)
            return -v if text == "-" else v
        raise _Fail

    def unary(depth: int) -> int:
        return power(depth)

    def power(depth: int) -> int:
        base = atom(depth + 1)
        if peek() == ("op", "**"):
            take()
            exp = unary(depth + 1)
            if exp < 0 or exp > 64:
                raise _Fail
            return check(base**exp)
        return base

    def mul(depth: int) -> int:
        v = unary(depth + 1)
        while peek() in (("op", "*"), ("op", "/"), ("op", "%")):
            op = take()[1]
            r = unary(depth + 1)
            if op == "*":
                v = check(v * r)
            elif r == 0:
                raise _Fail
            else:
                q = abs(v) // abs(r)
                q = q if (v >= 0) == (r >= 0) else -q  # C semantics: truncate toward zero
                v = q if op == "/" else v - q * r
        return v

    def add(depth: int) -> int:
        v = mul(depth + 1)
        while peek() in (("op", "+"), ("op", "-")):
            op = take()[1]
            r = mul(depth + 1)
            v = check(v + r if op == "+" else v - r)
        return v

    try:
        result = add(0)
    except (_Fail, RecursionError, ValueError):
        return None
    return result if idx == len(tokens) else None


# expansion -----------------------------------------------------------------


def _simple_literal(raw: str) -> str | None:
    """The text of a ``${X:-default}`` argument when it is plain (no expansions)."""
    if any(ch in raw for ch in "$`\\"):
        return None
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    if any(ch in raw for ch in "'\""):
        return None
    return raw


def _scalar_of(v: VarValue) -> str | None:
    if isinstance(v, Known):
        return v.text
    if isinstance(v, KnownArray):
        if not v.items:
            return ""
        return v.items[0].resolved
    return None


def resolve_part(p: Part, state: ShellState) -> str | None:
    """Value of a ``var``/``arith`` part as one string, or None if not known (also when the
    expansion budget refuses it: every caller copies or scans what it gets)."""
    text = _resolve_part(p, state)
    if text is None or not state.budget.allow(len(text)):
        return None
    return text


def _array_text(items: tuple[Arg, ...], budget: ExpansionBudget) -> str | None:
    """``${ARR[@]}`` as one string, when every element is known and the result is in budget."""
    texts = [a.resolved for a in items]
    if any(t is None for t in texts) or any(a.opaque for a in items):
        return None
    if sum(len(t) + 1 for t in texts if t is not None) > budget.value_limit:
        return None
    return " ".join(t for t in texts if t is not None)


def _resolve_part(p: Part, state: ShellState) -> str | None:
    if p.kind == "arith":
        r = eval_arith(p.text, state)
        return None if r is None else str(r)
    if p.kind != "var" or p.special:
        return None
    v = state.get(p.text)
    if p.subscript is not None:
        if p.subscript in ("@", "*"):
            if isinstance(v, KnownArray):
                base: str | None = _array_text(v.items, state.budget)
            else:
                base = _scalar_of(v)
        elif p.subscript.isdigit() and isinstance(v, KnownArray):
            k = int(p.subscript)
            base = (
                v.items[k].resolved
                if k < len(v.items) and not v.items[k].opaque
                else ("" if k >= len(v.items) else None)
            )
        elif p.subscript == "0":
            base = _scalar_of(v)
        else:
            return None
    else:
        base = _scalar_of(v)
    op = p.op
    if not op:
        return base
    if base is None:
        return None
    if op in (":-", ":=", "-", "="):
        if base != "" or op in ("-", "="):
            # a Known empty value counts as "set" for the colon-less forms
            return base
        return _simple_literal(p.arg)
    if op in (":+", "+"):
        if base == "" and op == ":+":
            return ""
        return _simple_literal(p.arg)
    if op in ("#", "##", "%", "%%"):
        pat = _simple_literal(p.arg)
        if pat is None or any(ch in pat for ch in "*?["):
            return None
        if op.startswith("#"):
            return base[len(pat) :] if base.startswith(pat) else base
        return base[: len(base) - len(pat)] if pat and base.endswith(pat) else base
    return None


def _items_cost(items: tuple[Arg, ...]) -> int:
    return sum(len(a.resolved or a.value) + _ITEM_COST for a in items)


def _part_option_like(p: Part, state: ShellState) -> bool:
    if p.kind == "var" and not p.special and not p.op:
        return _value_option_like(state.get(p.text))
    return False


def expand_word(word: Word, state: ShellState, pos: Callable[[int], ArgPosition]) -> list[Arg]:
    """Expand a word into zero or more arguments (word splitting of unquoted known values,
    ``"${ARR[@]}"`` to its elements with their own positions)."""
    parts = word.parts
    position = pos(word.line)
    display = word.display()
    if len(parts) == 1 and parts[0].kind == "var" and not parts[0].special and not parts[0].op:
        p = parts[0]
        v = state.get(p.text)
        if p.subscript in ("@", "*") and isinstance(v, KnownArray):
            if not state.budget.allow(_items_cost(v.items)):
                return [Arg(display, None, word.raw, position, opaque=not p.quoted or p.subscript == "@")]
            if p.quoted and p.subscript == "@":
                return list(v.items)
            if not p.quoted:
                split = [
                    (item, None if item.resolved is None or item.opaque else item.resolved.split()) for item in v.items
                ]
                if not state.budget.allow(sum(len(pieces) for _, pieces in split if pieces) * _ITEM_COST):
                    return [Arg(display, None, word.raw, position, opaque=True)]
                out: list[Arg] = []
                for item, pieces in split:
                    if pieces is None:
                        out.append(item)
                    else:
                        out.extend(replace(item, value=t, resolved=t) for t in pieces)
                return out
        if isinstance(v, Partial) and p.subscript is None:
            if p.quoted:
                partial = _partial_text(p, state)
                value = partial if state.budget.allow(len(partial)) else display
                return [Arg(value, None, word.raw, position, option_like=v.option_like)]
            return _split_partial(v, display, word.raw, position, state)
        if isinstance(v, (Unknown, Partial)) or (p.subscript in ("@", "*") and not isinstance(v, (Known, KnownArray))):
            opt_like = _value_option_like(v)
            return [
                Arg(display, None, word.raw, position, opaque=not p.quoted or p.subscript == "@", option_like=opt_like)
            ]
        text = resolve_part(p, state)
        if text is None:
            return [Arg(display, None, word.raw, position, opaque=not p.quoted, option_like=False)]
        if p.quoted:
            return [Arg(display, text, word.raw, position)]
        pieces = text.split()
        if len(pieces) == 1:
            return [Arg(display, pieces[0], word.raw, position)]
        if not state.budget.allow(len(pieces) * _ITEM_COST):  # each argument is an object, not a character
            return [Arg(display, None, word.raw, position, opaque=True)]
        return [Arg(t, t, word.raw, position) for t in pieces]
    text_parts: list[str] = []
    # the word as far as it is known: unknown pieces as written (a nested ``bash -c`` re-reads it)
    partial_parts: list[str] = []
    ok = True
    all_unquoted = True
    for p in parts:
        if p.quoted:
            all_unquoted = False
        if p.kind == "lit":
            text_parts.append(p.text)
            partial_parts.append(p.text)
            continue
        r = resolve_part(p, state)
        if r is None or (not p.quoted and any(ch.isspace() for ch in r)):
            ok = False
            partial_parts.append(_partial_text(p, state) if p.quoted and r is None else p.display())
            continue
        text_parts.append(r)
        partial_parts.append(r)
    if ok and len(text_parts) > 1 and not state.budget.allow(sum(map(len, text_parts))):
        ok = False  # the joined word is over budget: unknown
    if ok:
        text = "".join(text_parts)
        if text == "" and all_unquoted and parts:
            return []
        return [Arg(display, text, word.raw, position)]
    option_like = display.startswith("-") or (bool(parts) and _part_option_like(parts[0], state))
    partial = "".join(partial_parts)
    value = partial if partial != display and state.budget.allow(len(partial)) else display
    return [Arg(value, None, word.raw, position, option_like=option_like)]


def _partial_text(p: Part, state: ShellState) -> str:
    """A quoted reference to a :class:`Partial` variable as far as it is known (its unknown
    pieces as written); any other unknown reference as written."""
    if p.kind == "var" and not p.special and not p.op and p.subscript is None:
        v = state.get(p.text)
        if isinstance(v, Partial):
            return "".join(x if isinstance(x, str) else x.display() for x in v.pieces)
    return p.display()


def _split_partial(v: Partial, display: str, raw: str, position: ArgPosition, state: ShellState) -> list[Arg]:
    """Word splitting of an unquoted :class:`Partial` value (see there)."""
    words: list[list[str | Part]] = []
    current: list[str | Part] = []
    for piece in v.pieces:
        if isinstance(piece, Part):
            current.append(piece)
            continue
        chunks = re.split(r"(\s+)", piece)
        for chunk in chunks:
            if not chunk:
                continue
            if chunk.isspace():
                if current:
                    words.append(current)
                current = []
            else:
                current.append(chunk)
    if current:
        words.append(current)
    if not state.budget.allow(len(words) * _ITEM_COST):
        return [Arg(display, None, raw, position, opaque=True)]
    out: list[Arg] = []
    for pieces in words:
        text = "".join(x if isinstance(x, str) else x.display() for x in pieces)
        holes = [x for x in pieces if isinstance(x, Part)]
        if not holes:
            out.append(Arg(text, text, raw, position))
        elif len(pieces) == 1 and holes[0].kind == "var":
            # an unquoted unknown variable alone may stand for any number of words
            out.append(Arg(text, None, raw, position, opaque=True, option_like=_part_option_like(holes[0], state)))
        else:
            out.append(Arg(text, None, raw, position, option_like=text.startswith("-")))
    return out


def assignment_value(value_parts: tuple[Part, ...], state: ShellState) -> tuple[str, VarValue]:
    """Value of ``NAME=...`` (no word splitting in assignments): display and VarValue.  A value
    with literal text around pieces that are unknown until run time stays :class:`Partial`."""
    display = "".join(p.display() for p in value_parts)
    pieces: list[str | Part] = []
    for p in value_parts:
        if p.kind == "lit":
            pieces.append(p.text)
            continue
        r = resolve_part(p, state)
        if r is None:
            if len(value_parts) == 1 and p.kind == "var" and not p.op:
                return display, Unknown(_value_option_like(state.get(p.text)))
            if p.kind not in ("var", "cmd") or p.special:
                return display, Unknown(display.startswith("-"))
            pieces.append(p)
            continue
        pieces.append(r)
    if any(isinstance(x, Part) for x in pieces):
        if not any(isinstance(x, str) and x.strip() for x in pieces):
            return display, Unknown(display.startswith("-"))
        return display, Partial(tuple(pieces))
    texts = [x for x in pieces if isinstance(x, str)]
    if len(texts) > 1 and not state.budget.allow(sum(map(len, texts))):
        return display, Unknown(False)  # over budget: as unknown as a value read at run time
    return display, Known("".join(texts))


def split_assignment(word: Word) -> tuple[str, str | None, bool, tuple[Part, ...]] | None:
    """``NAME[sub]+=value`` -> (name, subscript, append, value parts), else None."""
    if not word.parts or word.parts[0].kind != "lit" or word.parts[0].quoted:
        return None
    first = word.parts[0].text
    m = _ASSIGN_RE.match(first)
    if m is None:
        return None
    rest = first[m.end() :]
    value_parts = ((Part("lit", rest, False),) if rest else ()) + word.parts[1:]
    sub = m.group(2)[1:-1] if m.group(2) else None
    return m.group(1), sub, m.group(3) == "+", value_parts


# --------------------------------------------------------------------------- walking


@dataclass(frozen=True)
class Assignment:
    """A variable assignment seen in a script (0-based line)."""

    name: str
    value: str
    resolved: str | None
    line: int
    exported: bool
    conditional: bool


@dataclass(frozen=True)
class CommandLine:
    """A simple command ready for launcher analysis: expanded args, the temporary
    environment of leading ``VAR=x`` words, the state after preceding commands, and its
    text as written."""

    args: tuple[Arg, ...]
    env: dict[str, Option]
    state: ShellState
    line: int
    text: str


_ASSIGN_BUILTINS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_SAFE_SOURCES = re.compile(r"(^|/)(activate|conda\.sh|mamba\.sh)$")


def _apply_assignment(
    word: Word,
    state: ShellState,
    conditional: bool,
    exported: bool,
    pos: Callable[[int], ArgPosition],
    log: list[Assignment],
    integer: bool = False,
) -> bool:
    split = split_assignment(word)
    if split is None:
        return False
    name, sub, append, value_parts = split
    if word.array is not None:
        items: list[Arg] = []
        for w in word.array:
            items.extend(expand_word(w, state, pos))
        old = state.vars.get(name)
        if append:
            value: VarValue = KnownArray(old.items + tuple(items)) if isinstance(old, KnownArray) else Unknown(False)
        else:
            value = KnownArray(tuple(items))
        if isinstance(value, KnownArray) and not state.budget.allow(_items_cost(value.items)):
            value = Unknown(False)
        state.assign(name, value, conditional, is_array=True)
        log.append(Assignment(name, word.raw[len(name) + 1 :], None, word.line, exported, conditional))
    else:
        display, value = assignment_value(value_parts, state)
        if integer and isinstance(value, Known):
            r = eval_arith(value.text, state)
            value = Known(str(r)) if r is not None else Unknown(False)
        if sub is not None:
            value = Unknown(False)
        elif append:
            old = state.vars.get(name)
            if (
                isinstance(old, Known)
                and isinstance(value, Known)
                and state.budget.allow(len(old.text) + len(value.text))
            ):
                value = Known(old.text + value.text)
            else:
                value = Unknown(False)
        state.assign(name, value, conditional, is_array=sub is not None)
        resolved = value.text if isinstance(value, Known) else None
        log.append(Assignment(name, display, resolved, word.line, exported, conditional))
    if exported:
        state.exported.add(name)
    return True


def _apply_builtin(
    words: tuple[Word, ...],
    state: ShellState,
    cmd: SimpleCommand,
    pos: Callable[[int], ArgPosition],
    log: list[Assignment],
) -> bool:
    """Apply variable-changing builtins; True when the command was one of them."""
    head = words[0].literal()
    if head is None:
        return False
    cond = cmd.conditional
    if head in _ASSIGN_BUILTINS:
        exported = head == "export"
        integer = False
        for w in words[1:]:
            lit = w.literal()
            if lit is not None and lit.startswith(("-", "+")) and split_assignment(w) is None:
                exported = exported or ("x" in lit and lit.startswith("-"))
                integer = integer or ("i" in lit and lit.startswith("-"))
                if head == "export" and lit == "-n":
                    exported = False
                continue
            if _apply_assignment(w, state, cond, exported, pos, log, integer):
                continue
            if lit is not None and _NAME_RE.fullmatch(lit):
                if exported:
                    state.exported.add(lit)
                if "-a" in [x.literal() for x in words[1:]] and lit not in state.vars:
                    state.assign(lit, KnownArray(()), cond, is_array=True)
        return True
    if head == "unset":
        for w in words[1:]:
            lit = w.literal()
            if lit is not None and _NAME_RE.fullmatch(lit):
                state.assign(lit, Known(""), cond)
        return True
    if head in ("read", "mapfile", "readarray", "getopts"):
        for w in words[1:]:
            lit = w.literal()
            if lit is not None and _NAME_RE.fullmatch(lit):
                state.vars[lit] = Unknown(False)
        return True
    if head in ("source", ".", "eval"):
        target = words[1].literal() if len(words) > 1 else None
        if head == "eval" or target is None or not _SAFE_SOURCES.search(target):
            state.taint()
        return True
    if head == "let":
        for w in words[1:]:
            lit = w.literal()
            m = re.fullmatch(rf"({_NAME})=(.*)", lit or "")
            if m:
                r = eval_arith(m.group(2), state)
                state.assign(m.group(1), Known(str(r)) if r is not None else Unknown(False), cond)
        return True
    return False


def walk_script(
    text: str,
    state: ShellState,
    make_pos: Callable[[int], ArgPosition],
    index_args: bool = False,
    assignments: list[Assignment] | None = None,
) -> tuple[list[CommandLine], list[tuple[int, str]]]:
    """Lex a script, apply its variable assignments in order and return the commands that
    may start programs, each with the variable state in force when it runs, and the
    syntax errors (0-based line, message).  Never raises.

    ``make_pos`` turns a 0-based line of ``text`` into an ArgPosition; with ``index_args``
    each argument's ``index`` is set to its index within its command (Slurm scripts),
    otherwise the factory's index is kept (the container list item holding the script)."""
    text = text.replace("\r\n", "\n")  # CRLF scripts: same lines, no stray \r in words
    tokens, errors, _ = lex(text)
    log = assignments if assignments is not None else []
    out: list[CommandLine] = []
    kept: ShellState | None = None  # the variables as last snapshotted, while no assignment changed them
    for cmd in split_commands(tokens):
        words = cmd.words
        k = 0
        leading: list[Word] = []
        while k < len(words) and split_assignment(words[k]) is not None:
            leading.append(words[k])
            k += 1
        rest = words[k:]
        if not rest:
            if not cmd.subshell:
                for w in leading:
                    _apply_assignment(w, state, cmd.conditional, False, make_pos, log)
                kept = None
            continue
        if _apply_builtin(rest, state, cmd, make_pos, log):
            kept = None
            continue
        env: dict[str, Option] = {}
        if kept is None or leading:
            tmp = state.snapshot()
            kept = None if leading else tmp  # leading ``VAR=x`` words change this command's copy
        else:
            tmp = kept
        for w in leading:
            split = split_assignment(w)
            if split is None:
                continue
            name, _, _, value_parts = split
            display, value = assignment_value(value_parts, tmp)
            resolved = value.text if isinstance(value, Known) else None
            env[name] = Option(name, display, w.raw, make_pos(w.line), resolved)
            tmp.vars[name] = value
            tmp.exported.add(name)
        args: list[Arg] = []
        for w in rest:
            args.extend(expand_word(w, state, make_pos))
        if index_args:
            args = [a.at_index(i) for i, a in enumerate(args)]
        cmd_text = text[words[0].offset : rest[-1].offset + len(rest[-1].raw)]
        out.append(CommandLine(tuple(args), env, tmp, cmd.line, cmd_text))
    return out, errors


def iter_words(text: str) -> Iterator[Word]:
    """All words of a script (for callers that only need tokens)."""
    tokens, _, _ = lex(text)
    for t in tokens:
        if isinstance(t, Word):
            yield t
