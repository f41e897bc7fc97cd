"""Platform versions: the releases of Karpenter, Kueue, KubeRay, the Neuron SDK and the training
operators a run assumes.

Some premises changed across releases (KubeRay's automatic ``/dev/shm``, Kueue's default
``waitForPodsReady``, Neuron's precision variables, Karpenter's ``do-not-disrupt`` durations).
eksmllint cannot see the cluster's versions, so the config states them (``platform:``, or
``--platform karpenter=1.8``) and each defaults to the newest release listed in
``platform/versions.yaml``. Rules read ``ctx.platform`` and name the release they assumed.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from eksmllint.tables import load_table

DATA = Path(__file__).with_name("versions.yaml")
_VERSION_RE = re.compile(r"v?(\d{1,3})\.(\d{1,4})(?:\.\d{1,4})?(?:[-+][0-9A-Za-z.-]*)?")


class Component(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    newest: str
    source: str


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    components: dict[str, Component]

    @model_validator(mode="after")
    def _versions(self) -> _Table:
        for name, c in self.components.items():
            parse_version(c.newest, f"{name}.newest")
        return self


@lru_cache(maxsize=1)
def components() -> dict[str, Component]:
    """The known components (config name -> label, newest release, source), validated once."""
    return load_table(_Table, DATA).components


def parse_version(value: Any, where: str = "version") -> tuple[int, int]:
    """``"1.8"``, ``"v1.8.2"``, ``"0.19.0-rc.1"`` -> (major, minor). Floats are refused: an unquoted
    ``1.10`` in YAML is the number 1.1 (the config loader keeps the text when it can)."""
    text = getattr(value, "text", value)  # config.RawFloat remembers how the number was written
    if not isinstance(text, str):
        raise ValueError(f'{where}: write the version as a string such as "1.8", got {value!r}')
    m = _VERSION_RE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f'{where}: expected a release such as "1.8" or "v0.19.1", got {text!r}')
    return int(m.group(1)), int(m.group(2))


def _default(name: str) -> Any:
    return Field(default_factory=lambda: components()[name].newest, alias=name)


class Platform(BaseModel):
    """The release of each component the run assumes (``major.minor``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    karpenter: str = _default("karpenter")
    kueue: str = _default("kueue")
    kuberay: str = _default("kuberay")
    neuron_sdk: str = _default("neuron-sdk")
    training_operator: str = _default("training-operator")
    mpi_operator: str = _default("mpi-operator")
    volcano: str = _default("volcano")
    #: Whether the cluster runs EKS Auto Mode (its built-in NodePools exist without a manifest).
    #: None: when the run holds an Auto Mode NodePool or NodeClass (platform/provisioners.yaml).
    eks_auto_mode: bool | None = Field(None, alias="eks-auto-mode")

    @field_validator(
        "karpenter", "kueue", "kuberay", "neuron_sdk", "training_operator", "mpi_operator", "volcano", mode="before"
    )
    @classmethod
    def _release(cls, v: Any) -> str:
        major, minor = parse_version(v)
        return f"{major}.{minor}"

    def version(self, component: str) -> tuple[int, int]:
        """(major, minor) of ``component`` (its config name: ``neuron-sdk`` or ``neuron_sdk``)."""
        return parse_version(getattr(self, component.replace("-", "_")))

    def at_least(self, component: str, release: str) -> bool:
        return self.version(component) >= parse_version(release)

    def describe(self, component: str) -> str:
        """``"Karpenter 1.14 (assumed; set platform.karpenter)"`` for messages: the release a finding
        rests on, and where to change it when it is not the cluster's."""
        name = component.replace("_", "-")
        value = getattr(self, name.replace("-", "_"))
        given = name.replace("-", "_") in self.model_fields_set
        how = "from the config" if given else f"assumed; set platform.{name}"
        return f"{components()[name].label} {value} ({how})"


def parse_assignments(values: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``--platform karpenter=1.8 --platform kueue=0.19`` -> {"karpenter": "1.8", "kueue": "0.19"}."""
    out: dict[str, str] = {}
    for item in values:
        for part in item.split(","):
            name, sep, version = part.partition("=")
            name = name.strip()
            if not sep or not name or not version.strip():
                raise ValueError(f"--platform expects NAME=VERSION such as karpenter=1.8, got {part!r}")
            if name.replace("_", "-") not in components():
                raise ValueError(f"--platform: unknown component {name!r}; known: {', '.join(components())}")
            out[name.replace("_", "-")] = version.strip()
    return out
