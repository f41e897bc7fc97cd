"""The container command reader: a container's ``command``/``args`` into launches.

A container's ``command``/``args`` may start a launcher directly (``torchrun ...``), through
wrappers (``neuron_parallel_compile``, ``env``, ``numactl``, ``srun``...) or inside a
``bash -c`` script; :mod:`eksmllint.launch.analyser` recognises them, each recognised launch
becomes an :class:`Invocation`.

Kubernetes first expands ``$(VAR)`` in command/args from the container's env (exact
kubelet semantics, see :func:`expand_k8s_vars`); a shell, if there is one, then sees the
result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .analyser import AnalysisContext, analyse_argv
from .model import Arg, Invocation, position_at
from .shell import ExpansionBudget, Known, ShellState, Unknown

__all__ = ["analyse_container", "expand_k8s_vars", "k8s_env"]


# --------------------------------------------------------------------------- $(VAR)


def _expand_k8s(s: str, env: Mapping[str, str | None], budget: ExpansionBudget | None = None) -> tuple[str, bool]:
    """Kubelet's expansion (third_party/forked/golang/expansion): ``$(NAME)`` -> value when
    NAME is defined, ``$$`` -> ``$``, anything else copied.  Returns the text and whether a
    reference to a variable without a literal value (valueFrom) was left in place.  A result
    over the expansion budget (``B=$(A)$(A)``, ``C=$(B)$(B)``... doubles) is returned as written
    and unresolved: unknown."""
    budget = budget or ExpansionBudget()
    size = 0
    out: list[str] = []
    unresolved = False
    checkpoint = 0
    cursor = 0
    n = len(s)
    while cursor < n:
        if s[cursor] == "$" and cursor + 1 < n:
            out.append(s[checkpoint:cursor])
            nxt = s[cursor + 1]
            if nxt == "$":
                out.append("$")
                advance = 1
            elif nxt == "(":
                close = s.find(")", cursor + 2)
                if close < 0:
                    out.append("$(")
                    advance = 1
                else:
                    name = s[cursor + 2 : close]
                    if name in env and env[name] is not None:
                        value = str(env[name])
                        size += len(value)
                        if size > budget.value_limit:
                            return s, True
                        out.append(value)
                    else:
                        if name in env:
                            unresolved = True
                        out.append(f"$({name})")
                    advance = close - cursor
            else:
                out.append("$" + nxt)
                advance = 1
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    out.append(s[checkpoint:])
    if size and not budget.allow(size):
        return s, True
    return "".join(out), unresolved


def expand_k8s_vars(s: str, env: Mapping[str, str | None]) -> str:
    """Expand ``$(VAR)`` references the way the kubelet does for command, args and env.

    ``$(VAR)`` is replaced when VAR is defined in ``env`` with a literal value; a VAR whose
    value comes from ``valueFrom`` (given as None) is only known at run time, so the
    reference is kept; an undefined VAR is left as is (as Kubernetes does); ``$$`` is an
    escaped ``$``.
    """
    return _expand_k8s(s, env)[0]


def k8s_env(pairs: Sequence[tuple[str, str | None]]) -> dict[str, str | None]:
    """Build a container's env mapping from its ``env`` list in order, expanding ``$(VAR)``
    in each value from the variables defined before it (Kubernetes semantics).  A value
    that still references a run-time-only variable becomes None (not literally known)."""
    env: dict[str, str | None] = {}
    budget = ExpansionBudget()
    for name, value in pairs:
        if value is None:
            env[name] = None
            continue
        text, unresolved = _expand_k8s(value, env, budget)
        env[name] = None if unresolved else text
    return env


def _as_text(item: object) -> str:
    if isinstance(item, str):
        return item
    if item is None:
        return ""
    if isinstance(item, bool):
        return "true" if item else "false"
    return str(item)


def analyse_container(
    command: Sequence[object] | None,
    args: Sequence[object] | None,
    env: Mapping[str, str | None] | None = None,
) -> list[Invocation]:
    """All launches a container's ``command`` + ``args`` start.

    ``env`` maps the container's env names to literal values (None for ``valueFrom``).
    When ``command`` is None the image entrypoint is unknown and ``args`` are analysed
    alone (they often start with the launcher anyway).  Never raises.
    """
    env = dict(env or {})
    budget = ExpansionBudget()
    argv: list[Arg] = []
    for list_name, items in (("command", command), ("args", args)):
        if not isinstance(items, (list, tuple)):
            continue
        for idx, item in enumerate(items):
            raw = _as_text(item)
            text, unresolved = _expand_k8s(raw, env, budget)
            argv.append(Arg(text, None if unresolved else text, raw, position_at(list_name, idx)))
    if not argv:
        return []
    state = ShellState(
        {k: (Known(v) if v is not None else Unknown(False)) for k, v in env.items()},
        set(env),
        budget=budget,
    )
    ctx = AnalysisContext("exec", " ".join(a.value for a in argv), state)
    try:
        return analyse_argv(argv, ctx)
    except Exception:  # pragma: no cover - defensive: analysis must never break a lint run
        return []
