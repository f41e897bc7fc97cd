"""The EC2NodeClass networkInterfaces facts (eksmllint/catalogue/network_interfaces.yaml): validated
data with sources, and the EFA devices a networkInterfaces list gives a node."""

from __future__ import annotations

from importlib import resources

import pytest

from eksmllint.catalogue import CatalogueError
from eksmllint.catalogue.network_interfaces import network_interface_facts, parse_network_interface_facts
from eksmllint.platform import parse_version

PRIMARY = {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}


def efa_only(card: int, device: int = 0) -> dict:
    return {"networkCardIndex": card, "deviceIndex": device, "interfaceType": "efa-only"}


def test_efa_only_interfaces_count_once_per_network_card():
    facts = network_interface_facts()
    assert facts.efa_devices([PRIMARY]) == 0
    assert facts.efa_devices([PRIMARY, efa_only(0, 1), *(efa_only(c) for c in range(1, 16))]) == 16
    # two efa-only interfaces on one card still give one EFA device (one per network card)
    assert facts.efa_devices([PRIMARY, efa_only(1, 0), efa_only(1, 1)]) == 1


@pytest.mark.parametrize(
    "value",
    [
        None,  # not set: the instance maximum applies
        [],  # the CRD allows an empty list, which configures nothing
        [PRIMARY, {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa"}],  # not a Karpenter type
        [PRIMARY, {"networkCardIndex": "${CARD}", "deviceIndex": 0, "interfaceType": "efa-only"}],
        [PRIMARY, {"networkCardIndex": True, "deviceIndex": 0, "interfaceType": "efa-only"}],
        "interface",
    ],
)
def test_unreadable_or_absent_lists_configure_nothing(value):
    assert network_interface_facts().efa_devices(value) is None


def test_packaged_facts_cite_listed_sources_and_a_known_karpenter_release():
    facts = network_interface_facts()
    assert parse_version(facts.since_karpenter) == (1, 11)
    assert set(facts.interface_types) == {"interface", "efa-only"}
    assert all(s.url and s.url.startswith("https://") for s in facts.sources.values())
    # one EFA per network card, as the instance catalogue's max_efa counts them
    assert facts.efa_per_network_card == 1


def test_validation_rejects_an_uncited_source():
    text = resources.files("eksmllint.catalogue").joinpath("network_interfaces.yaml").read_text(encoding="utf-8")
    broken = text.replace("source: karpenter-efa-static-capacity; karpenter-pr-9027", "source: nowhere", 1)
    with pytest.raises(CatalogueError, match="nowhere"):
        parse_network_interface_facts(broken)
    with pytest.raises(CatalogueError, match="not valid YAML"):
        parse_network_interface_facts("interface_types: [")
