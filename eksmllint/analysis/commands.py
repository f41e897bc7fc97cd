"""What a container runs: each program call of its command line, with its words and where they
are written.

One reader for every rule that looks at flags or ``VAR=value`` words (precision, shm, EFA,
launch): the container's ``command``/``args`` list is one call (exec form); the script of
``[env ...] bash [-opts] -c SCRIPT`` is split into its simple commands by the launch analysis'
shell lexer (:mod:`eksmllint.launch.shell`), which already drops comments, here-document bodies
(text written to files) and redirection targets. A word of ``echo``/``printf`` (text a program
prints, not flags it reads) belongs to a call whose :attr:`ProgramCall.reads_arguments` is False,
and :func:`argument_words` leaves it out, so ``echo "... --fp16 ..."`` is never read as a flag
and never rewritten by a fix.

Each word keeps its document position: ``path`` (the command/args element), ``start`` (offset of
``raw`` inside that element when it is a script, None when the element is the word) and ``line``
(0-based line inside the script), enough to report the exact place and to edit only that word.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from eksmllint.core.finding import DocPath, Location
from eksmllint.launch.command import expand_k8s_vars
from eksmllint.launch.programs import SHELLS
from eksmllint.launch.shell import Word as ShellWord
from eksmllint.launch.shell import lex, split_commands
from eksmllint.resource import Resource
from eksmllint.workload import Container

#: Programs whose arguments are text they print or compare, never options they act on: a flag
#: written there (``echo "training with --fp16"``, ``[ "$P" = --bf16 ]``) selects nothing.
TEXT_PROGRAMS = frozenset({"echo", "printf", "logger", "test", "[", "[[", ":", "true", "false"})

_SH_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_SH_ASSIGN = re.compile(r"(?:^|[\s;&|(])(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?)?([A-Za-z_][A-Za-z0-9_]*)=")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")
_BLOCK_SCALAR = re.compile(r"(?:^|[\s:-])[|][0-9+-]*\s*(?:#.*)?$")


@dataclass(frozen=True)
class CommandWord:
    """One word of a program call: ``text`` after quote removal with Kubernetes ``$(VAR)`` (and,
    in scripts, shell ``$VAR`` not assigned by the script) expanded from the container's literal
    env; ``raw`` as written; ``command`` the index of its call."""

    text: str
    raw: str
    path: DocPath
    start: int | None = None
    line: int = 0
    command: int = 0


@dataclass(frozen=True)
class ProgramCall:
    """One simple command: the program (basename of its first word after ``VAR=value``
    assignments) and all its words, the program's included."""

    program: str
    words: tuple[CommandWord, ...]
    index: int

    @property
    def reads_arguments(self) -> bool:
        """Whether the words are arguments a program acts on (not text it prints)."""
        return self.program not in TEXT_PROGRAMS


def _argv(c: Container) -> list[tuple[DocPath, str]]:
    out = []
    for key in ("command", "args"):
        items = c.data.get(key)
        if isinstance(items, list):
            for i, v in enumerate(items):
                if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                    continue
                out.append((c.path + (key, i), str(v)))
    return out


def script_index(argv: list[str]) -> int | None:
    """Index of the script of ``[env ...] bash [-opts] -c SCRIPT``, or None."""
    i = 0
    if argv and posixpath.basename(argv[0]) == "env":
        i = 1
        while i < len(argv) and _ENV_ASSIGN.match(argv[i]):
            i += 1
    if i >= len(argv) or posixpath.basename(argv[i].strip()) not in SHELLS:
        return None
    i += 1
    while i < len(argv) and argv[i].startswith("-"):
        opt = argv[i]
        if not opt.startswith("--") and "c" in opt[1:]:
            return i + 1 if i + 1 < len(argv) else None
        i += 1
    return None


def _expand(text: str, env: dict[str, str | None], shell_assigned: frozenset[str] | None) -> str:
    """Kubernetes ``$(VAR)`` (kubelet semantics) and, in scripts, shell ``$VAR`` from the literal
    container env; a variable the script assigns itself is left as written (its value is the script's)."""
    if "$" not in text:
        return text
    text = expand_k8s_vars(text, env)
    if shell_assigned is not None and "$" in text:

        def sh(m: re.Match) -> str:
            name = m.group(1) or m.group(2)
            value = env.get(name)
            return value if value is not None and name not in shell_assigned else m.group(0)

        text = _SH_REF.sub(sh, text)
    return text


def _program(words: tuple[CommandWord, ...]) -> str:
    for w in words:
        if not _ENV_ASSIGN.match(w.text):
            return posixpath.basename(w.text)
    return ""


@lru_cache(maxsize=1024)
def _script_commands(script: str) -> tuple[tuple[ShellWord, ...], ...]:
    """The simple commands of a script (lexed once per distinct script text)."""
    tokens, _, _ = lex(script)
    return tuple(cmd.words for cmd in split_commands(tokens))


def script_calls(script: str, path: DocPath, env: dict[str, str | None]) -> tuple[ProgramCall, ...]:
    """The program calls of a shell script held in the command/args element at ``path``."""
    assigned = frozenset(_SH_ASSIGN.findall(script))
    calls = []
    for index, shell_words in enumerate(_script_commands(script)):
        words = tuple(
            CommandWord(
                _expand(w.display() if w.array is None else w.raw, env, assigned), w.raw, path, w.offset, w.line, index
            )
            for w in shell_words
        )
        calls.append(ProgramCall(_program(words), words, index))
    return tuple(calls)


def container_calls(c: Container) -> tuple[ProgramCall, ...]:
    """The program calls of container ``c`` (cached on the container: they read only it)."""
    found = c.__dict__.get("_program_calls")
    if found is None:
        argv = _argv(c)
        env = c.env
        idx = script_index([v for _, v in argv])
        if idx is not None:
            path, script = argv[idx]
            found = script_calls(script, path, env)
        elif argv:
            words = tuple(CommandWord(_expand(v, env, None), v, p) for p, v in argv)
            found = (ProgramCall(_program(words), words, 0),)
        else:
            found = ()
        c.__dict__["_program_calls"] = found
    return found


def argument_words(c: Container) -> list[CommandWord]:
    """The words of every call of ``c`` that reads its arguments, in order (``echo``/``printf``
    text, comments and here-documents left out)."""
    return [w for call in container_calls(c) if call.reads_arguments for w in call.words]


def word_location(resource: Resource, w: CommandWord) -> Location:
    """Where ``w`` is written: inside a ``|`` block-scalar script, the script line and column
    (verified against the file text, else the element's line); otherwise the element itself."""
    loc = resource.location(w.path)
    if w.start is None or not loc.line:
        return loc
    lines = resource.doc.file.lines
    if loc.line - 1 >= len(lines) or not _BLOCK_SCALAR.search(lines[loc.line - 1]):
        return loc
    target = loc.line + 1 + w.line
    if target - 1 < len(lines) and (col := lines[target - 1].find(w.raw)) >= 0:
        return replace(loc, line=target, col=col + 1)
    return loc
