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

Launchers held in shell variables and nested shells are followed, as the shell would run them:
an unquoted ``$LAUNCHER`` / ``${CMD}`` word whose variable the script assigned (unconditionally,
to a literal or partly literal value) stands for the words of that value, and the script of
``[srun ...|env ...] bash -c SCRIPT`` inside a script is split into its own calls (a double-quoted
script sees the outer script's variables; a single-quoted one only the exported ones). A value
word that is only known at run time (``$(hostname)``) stays one unknown word.

Each word keeps its document position: ``path`` (the command/args element), ``start`` (offset of
``raw`` inside that element when it is a script, None when the element is the word) and ``line``
(0-based line inside the script), enough to report the exact place and to edit only that word.
A word read through a variable or a nested script is positioned where its text is written (the
assignment's value, the nested script); ``editable`` is False when quoting makes that place
inexact, and fixes then leave it alone.
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
from eksmllint.launch.shell import lex, split_assignment, split_commands
from eksmllint.lazy import kept_on
from eksmllint.resource import Resource, SourceFile
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
    editable: bool = True


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

    @property
    def runs_elsewhere(self) -> bool:
        """``ray job submit ... -- ENTRYPOINT``: the entrypoint's flags act in the Ray cluster, not in
        this container (its /dev/shm, its devices)."""
        if self.program != "ray":
            return False
        texts = [w.text for w in self.words]
        at = next(i for i, t in enumerate(texts) if posixpath.basename(t) == "ray")  # after VAR=x words
        return texts[at + 1 : at + 3] == ["job", "submit"]


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
    """Index of the script of ``[wrapper ...] bash [-opts] -c SCRIPT`` (``env X=1``, ``srun -N2``,
    ``timeout 1h``...), or None.  The first shell word is the one that runs; a text program
    (``echo bash -c ...``) runs none."""
    if not argv or posixpath.basename(argv[0].strip()) in TEXT_PROGRAMS:
        return None
    # every shell name ends with "sh": a cheap test before the basename
    i = next(
        (k for k, v in enumerate(argv) if v.rstrip().endswith("sh") and posixpath.basename(v.strip()) in SHELLS),
        len(argv),
    )
    if i >= len(argv):
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


#: ``bash -c`` inside ``bash -c`` inside ...: deeper nesting is not followed.
_MAX_NESTING = 3
_VAR_WORD = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")
_DECLARERS = frozenset({"export", "declare", "local", "readonly", "typeset"})


@dataclass(frozen=True)
class _Text:
    """A script (or a variable's value) and where its first character is written in the element:
    offset and 0-based line; ``exact`` is False when quoting makes positions inside it inexact."""

    text: str
    offset: int = 0
    line: int = 0
    exact: bool = True


@dataclass(frozen=True)
class _Var:
    value: _Text
    exported: bool


def _placed(raw: str, display: str, offset: int, line: int, base: _Text) -> _Text:
    """The text a word holds after quote removal (a variable's value, a nested script) and where
    it is written: exact when the word is the text itself or the text in one pair of quotes."""
    if len(raw) >= 2 and raw[0] in "'\"" and raw[-1] == raw[0] and raw[1:-1] == display:
        return _Text(display, base.offset + offset + 1, base.line + line, base.exact)
    return _Text(display, base.offset + offset, base.line + line, base.exact and raw == display)


def _assignment(w: ShellWord, base: _Text) -> tuple[str, _Text | None] | None:
    """``NAME=value`` -> (NAME, value with its place), the value None when it cannot be followed
    (array, append, subscript)."""
    split = split_assignment(w)
    if split is None:
        return None
    name, sub, append, _ = split
    if w.array is not None or sub is not None or append:
        return name, None
    skip = len(name) + 1
    return name, _placed(w.raw[skip:], w.display()[skip:], w.offset + skip, w.line, base)


def _nested_script(words: tuple[ShellWord, ...]) -> int | None:
    """Index of the script of a ``... bash [-opts] -c SCRIPT`` inside a call, or None."""
    for i, w in enumerate(words):
        if posixpath.basename(w.display()) not in SHELLS:
            continue
        j = i + 1
        while j < len(words) and words[j].display().startswith("-"):
            opt = words[j].display()
            if not opt.startswith("--") and "c" in opt[1:]:
                return j + 1 if j + 1 < len(words) else None
            j += 1
        return None
    return None


class _Reader:
    """Splits a script into program calls (see the module docstring), numbering them in order."""

    def __init__(self, path: DocPath, env: dict[str, str | None]) -> None:
        self.path = path
        self.env = env
        self.calls: list[ProgramCall] = []

    def read(self, script: _Text, variables: dict[str, _Var | None], depth: int = 0) -> None:
        assigned = frozenset(_SH_ASSIGN.findall(script.text)) | frozenset(variables)
        for command in _script_commands_of(script.text):
            shell_words, conditional, subshell = command
            index = len(self.calls)
            words: list[CommandWord] = []
            for w in shell_words:
                m = _VAR_WORD.match(w.raw)
                var = variables.get(m.group(1) or m.group(2)) if m is not None else None
                if var is not None:
                    words.extend(self._value_words(var.value, assigned, index))
                else:
                    words.append(self._word(w, script, assigned, index))
            call_words = tuple(words)
            program = _program(call_words)
            if program not in TEXT_PROGRAMS:
                self._assign(shell_words, script, variables, conditional or subshell, program in _DECLARERS)
            nested = _nested_script(shell_words) if program not in TEXT_PROGRAMS else None
            self.calls.append(ProgramCall(program, call_words if nested is None else call_words[:nested], index))
            if nested is not None and depth < _MAX_NESTING:
                sw = shell_words[nested]
                inner = _placed(sw.raw, sw.display(), sw.offset, sw.line, script)
                double = shell_words[nested].raw[:1] != "'"
                seen = {k: v for k, v in variables.items() if double or (v is not None and v.exported)}
                self.read(inner, seen, depth + 1)

    def _word(self, w: ShellWord, script: _Text, assigned: frozenset[str], index: int) -> CommandWord:
        text = _expand(w.display() if w.array is None else w.raw, self.env, assigned)
        return CommandWord(text, w.raw, self.path, script.offset + w.offset, script.line + w.line, index, script.exact)

    def _value_words(self, value: _Text, assigned: frozenset[str], index: int) -> list[CommandWord]:
        """The words an unquoted ``$VAR`` holding ``value`` splits into."""
        out: list[CommandWord] = []
        for shell_words, _, _ in _script_commands_of(value.text):
            out.extend(self._word(w, value, assigned, index) for w in shell_words)
        return out

    @staticmethod
    def _assign(
        shell_words: tuple[ShellWord, ...],
        script: _Text,
        variables: dict[str, _Var | None],
        uncertain: bool,
        declarer: bool,
    ) -> None:
        """Record the call's ``NAME=value`` words (a prefix of a program call only sets its env);
        a value assigned conditionally or in ways not followed makes the name unknown (None)."""
        if not declarer and "=" not in shell_words[-1].raw:
            return  # a program call: ``VAR=x prog`` sets the program's env, not the script's
        targets = shell_words[1:] if declarer else shell_words
        exported = declarer and shell_words[0].display() == "export"
        found = [a for w in targets if (a := _assignment(w, script)) is not None]
        if not declarer and len(found) < len(shell_words):
            return
        for name, value in found:
            old = variables.get(name)
            keep = value is not None and not uncertain
            variables[name] = _Var(value, exported or (old is not None and old.exported)) if keep and value else None


@lru_cache(maxsize=1024)
def _script_commands_of(script: str) -> tuple[tuple[tuple[ShellWord, ...], bool, bool], ...]:
    """The simple commands of a script with whether each runs conditionally or in a subshell."""
    tokens, _, _ = lex(script)
    return tuple((cmd.words, cmd.conditional, cmd.subshell) for cmd in split_commands(tokens))


#: The document path the reader gives a Slurm batch script's words (the script is one element).
SCRIPT_PATH: DocPath = ("script",)


def script_calls(script: str, path: DocPath, env: dict[str, str | None]) -> tuple[ProgramCall, ...]:
    """The program calls of a shell script held in the command/args element at ``path``, with
    launchers held in variables and nested ``bash -c`` scripts followed (module docstring)."""
    reader = _Reader(path, env)
    reader.read(_Text(script), {})
    return tuple(reader.calls)


@kept_on
def batch_script_calls(src: SourceFile) -> tuple[ProgramCall, ...]:
    """The program calls of a Slurm batch script of the run, read once per file: its precision
    flags and the configs it names are both read from them."""
    return script_calls(src.text or "", SCRIPT_PATH, {})


def container_calls(c: Container) -> tuple[ProgramCall, ...]:
    """The program calls of container ``c`` (cached on the container: they read only it); none
    for a command too large to read (``Container.command_unread``: EML004 says so)."""
    found = c.__dict__.get("_program_calls")
    if found is None and c.command_unread:
        found = c.__dict__["_program_calls"] = ()
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
