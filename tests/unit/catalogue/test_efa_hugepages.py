"""The EFA huge page facts table: loaded, validated, and bad tables refused with a clear error."""

from __future__ import annotations

import pytest
from repository import ROOT

from eksmllint.catalogue import CatalogueError
from eksmllint.catalogue.efa_hugepages import efa_hugepages, parse_efa_hugepages

TEXT = (ROOT / "eksmllint" / "catalogue" / "efa_hugepages.yaml").read_text()


def test_packaged_facts():
    facts = efa_hugepages()
    assert facts.resource == "hugepages-2Mi"
    assert facts.preallocated_mib == 10256  # 5128 pages of 2 MiB
    assert facts.recommended_request_mib <= facts.preallocated_mib


def test_bad_tables_are_refused():
    with pytest.raises(CatalogueError, match="nowhere"):
        parse_efa_hugepages(TEXT.replace("preallocated_source: eks-node-efa", "preallocated_source: nowhere"))
    with pytest.raises(CatalogueError, match="exceeds"):
        parse_efa_hugepages(TEXT.replace("recommended_request_mib: 5120", "recommended_request_mib: 20000"))
    with pytest.raises(CatalogueError, match="not valid YAML"):
        parse_efa_hugepages("version: [1")
