"""EKS release dates of Kubernetes minor versions (``eks_releases.yaml``), validated once.

Why this module exists: an AMI alias pinned to a dated release (``al2023@v20240807``) resolves only
for the Kubernetes versions EKS had released by then (EML906). The dates live once, with their
sources, beside this file.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eksmllint.platform.versions import parse_version
from eksmllint.tables import load_table

DATA = Path(__file__).with_name("eks_releases.yaml")


class _Source(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str = Field(min_length=1)
    url: str = Field(pattern=r"^https?://")


class Release(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    eks_release: date
    source: str
    confidence: Literal["verified", "third_party"] = "verified"


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sources: dict[str, _Source]
    releases: dict[str, Release]

    @model_validator(mode="after")
    def _consistent(self) -> _Table:
        for version, r in self.releases.items():
            parse_version(version, f"releases.{version}")
            if r.source not in self.sources:
                raise ValueError(f"releases.{version}: source {r.source!r} is not listed under sources")
        return self


@lru_cache(maxsize=1)
def eks_releases() -> dict[tuple[int, int], Release]:
    """(major, minor) -> its EKS release, from the validated table."""
    table = load_table(_Table, DATA)
    return {parse_version(v): r for v, r in table.releases.items()}


def eks_release(version: tuple[int, int]) -> Release | None:
    """When ``version`` reached EKS; None when the table does not know it."""
    return eks_releases().get(version)
