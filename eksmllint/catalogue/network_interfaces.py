"""EC2NodeClass ``spec.networkInterfaces``: how many EFA devices the nodes of a class get.

Why this module exists: EML101-EML103 count the EFA devices a pod can get on a node. Without
``networkInterfaces`` Karpenter attaches the instance maximum (``InstanceType.max_efa``) when a pod
requests ``vpc.amazonaws.com/efa``; with it, every instance launches with exactly the interfaces
listed, so the node's EFA devices are its ``efa-only`` interfaces, one per network card at most.
Those facts live once, with their sources, in ``network_interfaces.yaml`` beside this file,
validated on first read.
"""

from __future__ import annotations

import functools
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eksmllint.catalogue import Source, packaged_facts, parse_facts


class InterfaceType(BaseModel):
    """One ``interfaceType`` value: the EFA devices an interface of that type gives the node."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    efa_devices: int = Field(ge=0)
    note: str = Field(min_length=1)
    source: str = Field(min_length=1)


class NetworkInterfaceFacts(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    version: Literal[1]
    sources: dict[str, Source]
    since_karpenter: str = Field(pattern=r"^\d+\.\d+$")
    since_source: str
    interface_types: dict[str, InterfaceType]
    efa_per_network_card: int = Field(ge=1)
    efa_per_network_card_source: str

    @model_validator(mode="after")
    def _cited(self) -> NetworkInterfaceFacts:
        cited = {self.since_source, self.efa_per_network_card_source}
        for t in self.interface_types.values():
            cited |= {part.strip() for part in t.source.split(";") if part.strip()}
        unknown = sorted(cited - set(self.sources))
        if unknown:
            raise ValueError(f"sources cited but not listed under sources: {unknown}")
        return self

    def efa_devices(self, network_interfaces: object) -> int | None:
        """EFA devices per node that a ``spec.networkInterfaces`` value configures; None when it
        configures nothing (absent or empty: the instance maximum applies) or cannot be read (an
        unknown ``interfaceType``, a card index that is not a number): then nothing is assumed."""
        if not isinstance(network_interfaces, list) or not network_interfaces:
            return None
        per_card: dict[int, int] = {}
        for item in network_interfaces:
            if not isinstance(item, dict):
                return None
            kind, card = item.get("interfaceType"), item.get("networkCardIndex")
            if not isinstance(kind, str) or kind not in self.interface_types:
                return None
            if isinstance(card, bool) or not isinstance(card, int):
                return None
            per_card[card] = per_card.get(card, 0) + self.interface_types[kind].efa_devices
        return sum(min(n, self.efa_per_network_card) for n in per_card.values())


def parse_network_interface_facts(text: str) -> NetworkInterfaceFacts:
    """Parse and validate the facts YAML; raises :class:`CatalogueError` on any problem."""
    return parse_facts(NetworkInterfaceFacts, text, "network interface facts")


@functools.cache
def network_interface_facts() -> NetworkInterfaceFacts:
    """The packaged facts (``network_interfaces.yaml``), loaded and validated once per process."""
    return packaged_facts(NetworkInterfaceFacts, "network_interfaces.yaml", "network interface facts")
