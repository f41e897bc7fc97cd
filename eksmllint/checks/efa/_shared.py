"""Helpers shared by several EFA rules: where a pod lands, how findings name pods and instance
types, and the transport settings (env and launcher arguments) that steer NCCL/libfabric.

Where a template lands and which instance types it gets on each NodePool is the run's one
placement answer (:mod:`eksmllint.analysis.placement`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eksmllint.analysis.commands import container_calls
from eksmllint.analysis.placement import placement
from eksmllint.catalogue import InstanceType
from eksmllint.checks.helpers import fmt_list
from eksmllint.core.finding import DocPath, Location
from eksmllint.resource import Resource
from eksmllint.scheduling import NodePoolView
from eksmllint.workload import EFA, Container, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun

REQUIREMENTS: DocPath = ("spec", "template", "spec", "requirements")


def pool_of(run: LintRun, resource: Resource) -> NodePoolView | None:
    return run.nodepool_of(resource)


def types_on(run: LintRun, t: PodTemplate, pool: NodePoolView) -> tuple[InstanceType, ...] | None:
    """Catalogue instance types ``t`` can get on ``pool`` with all its accelerators (the run's
    placement answer); None when unknown."""
    return placement(run, t).hosting_types(pool)


def template_location(t: PodTemplate) -> Location:
    return t.resource.location(t.path)


def who(templates: list[PodTemplate]) -> str:
    return fmt_list([t.display() for t in templates], limit=2)


def type_list(types: Iterable[InstanceType], attr: str = "max_efa") -> str:
    return fmt_list([f"{it.name} ({getattr(it, attr)})" for it in sorted(types, key=lambda i: i.name)])


def efa_containers(t: PodTemplate) -> list[Container]:
    return [c for c in t.containers if c.count(EFA) > 0]


# --- transport settings (EML103 reads FI_PROVIDER, EML104 every variable) ------------------

TRANSPORT_VARS = ("FI_PROVIDER", "NCCL_NET", "NCCL_NET_PLUGIN")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


@dataclass
class EnvSetting:
    name: str
    value: str
    path: DocPath
    how: str  # "env", "mpirun -x", "export"


def env_settings(c: Container) -> Iterator[EnvSetting]:
    for i, e in enumerate(c.env_list):
        name, value = e.get("name"), e.get("value")
        if name in TRANSPORT_VARS and "valueFrom" not in e and value is not None:
            yield EnvSetting(name, str(value), c.path + ("env", i, "value"), "env")


def argv_settings(c: Container) -> Iterator[EnvSetting]:
    """``mpirun -x VAR=value`` / ``-genv VAR value`` / ``export VAR=value`` among the arguments the
    container's programs read (:mod:`eksmllint.analysis.commands`: not echo text, comments or
    here-documents); a setting pairs with the word after it only within one command."""
    for call in container_calls(c):
        if not call.reads_arguments:
            continue
        words = call.words
        for j, w in enumerate(words):
            tok = w.text
            nxt = words[j + 1] if j + 1 < len(words) else None
            if tok in ("-x", "export") and nxt is not None and nxt.text:
                m = _ASSIGN.match(nxt.text)
                if m and m.group(1) in TRANSPORT_VARS:
                    yield EnvSetting(m.group(1), m.group(2), nxt.path, "mpirun -x" if tok == "-x" else "export")
                elif tok == "-x" and nxt.text in TRANSPORT_VARS and c.env.get(nxt.text) is not None:
                    yield EnvSetting(nxt.text, c.env[nxt.text] or "", nxt.path, "mpirun -x")
            elif tok in ("-genv", "-env") and nxt is not None and nxt.text in TRANSPORT_VARS and j + 2 < len(words):
                yield EnvSetting(nxt.text, words[j + 2].text, words[j + 2].path, f"mpirun {tok}")
            elif tok.startswith("-x") and len(tok) > 2 and (m := _ASSIGN.match(tok[2:].lstrip("="))):
                if m.group(1) in TRANSPORT_VARS:
                    yield EnvSetting(m.group(1), m.group(2), w.path, "mpirun -x")
