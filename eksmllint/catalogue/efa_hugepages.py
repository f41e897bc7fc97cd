"""Huge pages on EFA nodes: how many the EFA driver pre-allocates and what a pod should request.

Why this module exists: EML109 compares a pod's ``hugepages-2Mi`` with what an EFA node has.
The facts live once, with their sources, in ``efa_hugepages.yaml`` beside this file, validated on
first read.
"""

from __future__ import annotations

import functools
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eksmllint.catalogue import Source, packaged_facts, parse_facts


class EfaHugepages(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    version: Literal[1]
    sources: dict[str, Source]
    resource: str = Field(pattern=r"^hugepages-[0-9]+[KMG]i$")
    preallocated_pages: int = Field(ge=1)
    page_size_mib: int = Field(ge=1)
    preallocated_source: str
    recommended_request_mib: int = Field(ge=1)
    recommended_source: str
    requests_equal_limits_source: str

    @model_validator(mode="after")
    def _consistent(self) -> EfaHugepages:
        cited = {self.preallocated_source, self.recommended_source, self.requests_equal_limits_source}
        unknown = sorted(cited - set(self.sources))
        if unknown:
            raise ValueError(f"sources cited but not listed under sources: {unknown}")
        if self.recommended_request_mib > self.preallocated_mib:
            raise ValueError("recommended_request_mib exceeds what the node pre-allocates")
        return self

    @property
    def preallocated_mib(self) -> int:
        """The node's huge page allocatable in MiB (5128 pages x 2 MiB = 10256)."""
        return self.preallocated_pages * self.page_size_mib


def parse_efa_hugepages(text: str) -> EfaHugepages:
    """Parse and validate the facts YAML; raises :class:`CatalogueError` on any problem."""
    return parse_facts(EfaHugepages, text, "EFA huge page facts")


@functools.cache
def efa_hugepages() -> EfaHugepages:
    """The packaged facts (``efa_hugepages.yaml``), loaded and validated once per process."""
    return packaged_facts(EfaHugepages, "efa_hugepages.yaml", "EFA huge page facts")
