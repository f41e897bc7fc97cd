"""Tests for the instance catalogue: data validation, Karpenter allocatable, label matching."""

from __future__ import annotations

import copy
from importlib import resources
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from eksmllint.catalogue import (
    ACCELERATOR_RESOURCES,
    INSTANCE_LABEL_KEYS,
    Catalogue,
    CatalogueError,
    InstanceType,
    get_catalogue,
    karpenter_allocatable_cpu_millis,
    karpenter_allocatable_memory_mib,
    parse_catalogue,
)

TYPE = "node.kubernetes.io/instance-type"
K = "karpenter.k8s.aws/"

# Section 1 of ml-on-eks-facts.md: every instance type of the catalogue table.
FACTS_INSTANCES = {
    "p3.2xlarge",
    "p3.8xlarge",
    "p3.16xlarge",
    "p3dn.24xlarge",
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6-b200.48xlarge",
    *(f"g5.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")),
    *(f"g6.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")),
    *(f"g6e.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")),
    "trn1.2xlarge",
    "trn1.32xlarge",
    "trn1n.32xlarge",
    "trn2.48xlarge",
    "inf2.xlarge",
    "inf2.8xlarge",
    "inf2.24xlarge",
    "inf2.48xlarge",
}

# The allocatable table of ml-on-eks-facts.md section 1, row by row (instance(s), cpu m, memory Mi, pods).
FACTS_ALLOCATABLE = [
    (("p3.2xlarge",), 7910, 56786, 58),
    (("p3.8xlarge",), 31850, 228187, 234),
    (("p3.16xlarge",), 63770, 459304, 234),
    (("p3dn.24xlarge",), 95690, 718987, 737),
    (("p4d.24xlarge", "p4de.24xlarge"), 95690, 1082712, 737),
    (("p5.48xlarge", "p5e.48xlarge"), 191450, 1938410, 100),
    (("p5en.48xlarge", "p6-b200.48xlarge"), 191450, 1937332, 198),
    (("g5.xlarge", "g6.xlarge"), 3920, 14162, 58),
    (("g5.12xlarge",), 47810, 173400, 737),
    (("g5.48xlarge",), 191450, 723299, 345),
    (("g6.48xlarge",), 191450, 718987, 737),
    (("g6e.48xlarge",), 191450, 1449132, 492),
    (("trn1.32xlarge", "trn1n.32xlarge"), 127610, 481894, 247),
    (("trn2.48xlarge",), 191450, 1938410, 100),
    (("inf2.48xlarge",), 191450, 718987, 737),
]

# What Karpenter reports for every catalogue entry (cpu m, memory Mi, pods, efa, local NVMe GiB), read in
# aws/karpenter-provider-aws@0c5e7d8112409aff07b0f17a0f51c87bdba52ed1
# website/content/en/docs/reference/instance-types.md. Independent of the YAML: a typo there fails here.
KARPENTER_REPORTED = {
    "p3.2xlarge": (7910, 56786, 58, 0, 0),
    "p3.8xlarge": (31850, 228187, 234, 0, 0),
    "p3.16xlarge": (63770, 459304, 234, 0, 0),
    "p3dn.24xlarge": (95690, 718987, 737, 1, 1800),
    "p4d.24xlarge": (95690, 1082712, 737, 4, 8000),
    "p4de.24xlarge": (95690, 1082712, 737, 4, 8000),
    "p5.48xlarge": (191450, 1938410, 100, 32, 30400),
    "p5e.48xlarge": (191450, 1938410, 100, 32, 30400),
    "p5en.48xlarge": (191450, 1937332, 198, 16, 30400),
    "p6-b200.48xlarge": (191450, 1937332, 198, 8, 30400),
    "g5.xlarge": (3920, 14162, 58, 0, 250),
    "g5.2xlarge": (7910, 29317, 58, 0, 450),
    "g5.4xlarge": (15890, 57691, 234, 0, 600),
    "g5.8xlarge": (31850, 118312, 234, 1, 900),
    "g5.12xlarge": (47810, 173400, 737, 1, 3800),
    "g5.16xlarge": (63770, 239554, 234, 1, 1900),
    "g5.24xlarge": (95690, 355262, 737, 1, 3800),
    "g5.48xlarge": (191450, 723299, 345, 1, 7600),
    "g6.xlarge": (3920, 14162, 58, 0, 250),
    "g6.2xlarge": (7910, 29317, 58, 0, 450),
    "g6.4xlarge": (15890, 57691, 234, 0, 600),
    "g6.8xlarge": (31850, 118312, 234, 1, 900),
    "g6.12xlarge": (47810, 178933, 234, 1, 3760),
    "g6.16xlarge": (63770, 234021, 737, 1, 1880),
    "g6.24xlarge": (95690, 355262, 737, 1, 3760),
    "g6.48xlarge": (191450, 718987, 737, 1, 7520),
    "g6e.xlarge": (3920, 29317, 58, 0, 250),
    "g6e.2xlarge": (7910, 59627, 58, 0, 450),
    "g6e.4xlarge": (15890, 118312, 234, 0, 600),
    "g6e.8xlarge": (31850, 239554, 234, 1, 900),
    "g6e.12xlarge": (47810, 360157, 292, 1, 3800),
    "g6e.16xlarge": (63770, 476504, 737, 1, 1900),
    "g6e.24xlarge": (95690, 721682, 492, 2, 3800),
    "g6e.48xlarge": (191450, 1449132, 492, 4, 7600),
    "trn1.2xlarge": (7910, 29317, 58, 0, 474),
    "trn1.32xlarge": (127610, 481894, 247, 8, 7600),
    "trn1n.32xlarge": (127610, 481894, 247, 16, 7600),
    "trn2.48xlarge": (191450, 1938410, 100, 16, 7600),
    "inf2.xlarge": (3920, 14162, 58, 0, 0),
    "inf2.8xlarge": (31850, 118312, 234, 0, 0),
    "inf2.24xlarge": (95690, 355262, 737, 0, 0),
    "inf2.48xlarge": (191450, 718987, 737, 0, 0),
    "g4dn.xlarge": (3920, 14481, 29, 0, 125),
    "g4dn.2xlarge": (7910, 29636, 29, 0, 225),
    "g4dn.4xlarge": (15890, 59946, 29, 0, 225),
    "g4dn.8xlarge": (31850, 120248, 58, 1, 900),
    "g4dn.12xlarge": (47810, 178933, 234, 1, 900),
    "g4dn.16xlarge": (63770, 241490, 58, 1, 900),
    "g4dn.metal": (95690, 355262, 737, 1, 1800),
    # issue 14 additions, same file and commit: g5g (arm64, T4G) and the fractional-L4 g6f/gr6f
    "g5g.xlarge": (3920, 6525, 58, 0, 0),
    "g5g.2xlarge": (7910, 14103, 58, 0, 0),
    "g5g.4xlarge": (15890, 27322, 234, 0, 0),
    "g5g.8xlarge": (31850, 57632, 234, 0, 0),
    "g5g.16xlarge": (63770, 112720, 737, 0, 0),
    "g5g.metal": (63770, 112720, 737, 0, 0),
    "g6f.large": (1930, 7002, 20, 0, 100),
    "g6f.xlarge": (3920, 14162, 58, 0, 100),
    "g6f.2xlarge": (7910, 29317, 58, 0, 200),
    "g6f.4xlarge": (15890, 57691, 234, 0, 450),
    "gr6f.4xlarge": (15890, 118312, 234, 0, 450),
    # read at the later commit fbab471048e8d3dc4854c2e9f464dfbb126006b6 of the same file
    "p5.4xlarge": (15890, 240830, 118, 1, 3800),
}

# nvidia.com/gpu Karpenter reports for the issue-14 rows (a missing resource is 0): fractional L4s have none.
KARPENTER_REPORTED_GPUS = {
    **{f"g5g.{s}": 1 for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge")},
    "g5g.16xlarge": 2,
    "g5g.metal": 2,
    **{n: 0 for n in ("g6f.large", "g6f.xlarge", "g6f.2xlarge", "g6f.4xlarge", "gr6f.4xlarge")},
    "p5.4xlarge": 1,
}

#: Catalogue entries beyond the facts table: g4dn (T4), which the rule catalogue names for EML402,
#: and the issue-14 additions.
BEYOND_FACTS_TABLE = frozenset(
    name for name in KARPENTER_REPORTED if name.startswith("g4dn.") or name in KARPENTER_REPORTED_GPUS
)


@pytest.fixture(scope="module")
def cat() -> Catalogue:
    return get_catalogue()


def names(result: tuple[InstanceType, ...]) -> list[str]:
    return [it.name for it in result]


# ------------------------------------------------------------------------------------------------
# Data validation
# ------------------------------------------------------------------------------------------------
def test_catalogue_loads_and_covers_facts_table(cat: Catalogue) -> None:
    assert cat.names() == frozenset(FACTS_INSTANCES) | BEYOND_FACTS_TABLE
    assert len(cat.all()) == len(FACTS_INSTANCES) + len(BEYOND_FACTS_TABLE)
    assert cat.names() == frozenset(KARPENTER_REPORTED)  # every entry is checked against Karpenter
    assert cat.version >= 1
    assert get_catalogue() is cat  # cached


def test_every_instance_cites_known_sources(cat: Catalogue) -> None:
    for it in cat.all():
        assert it.source_keys, it.name
        assert set(it.source_keys) <= set(cat.sources), it.name
        assert any(k.startswith("karpenter-instance-types") for k in it.source_keys), it.name
    for key, source in cat.sources.items():
        assert source.url or source.note, key


def test_kind_specific_fields(cat: Catalogue) -> None:
    for it in cat.all():
        if it.is_neuron:
            assert it.neuron_cores_per_device and it.gpu_memory_mib is None and not it.nvlink
        else:
            assert it.neuron_cores_per_device is None and it.neuron_cores == 0
            assert it.gpu_memory_mib is not None


def test_unverified_facts_are_tagged(cat: Catalogue) -> None:
    for name in (
        "p3dn.24xlarge",
        "p5e.48xlarge",
        "g6.12xlarge",
        "g6.24xlarge",
        "g6.48xlarge",
        "g6e.12xlarge",
        "g6e.24xlarge",
        "g6e.48xlarge",
    ):
        assert cat.get(name).confidence_of("nvlink") == "unverified", name
    for it in cat.all():
        if it.accelerator in ("V100", "T4", "T4G"):
            assert it.confidence_of("bf16") == "unverified"
    assert cat.get("p4d.24xlarge").confidence_of("nvlink") == "verified"


def test_bf16_only_missing_on_v100_and_t4(cat: Catalogue) -> None:
    assert {it.name for it in cat.all() if not it.bf16} == {
        "p3.2xlarge",
        "p3.8xlarge",
        "p3.16xlarge",
        "p3dn.24xlarge",
    } | {n for n in BEYOND_FACTS_TABLE if n.startswith(("g4dn.", "g5g."))}


def test_models_are_frozen(cat: Catalogue) -> None:
    it = cat.get("p4d.24xlarge")
    with pytest.raises(ValidationError):
        it.max_efa = 99  # type: ignore[misc]
    assert {it, cat.get("p4d.24xlarge")} == {it}  # hashable


def _raw() -> dict[str, Any]:
    text = resources.files("eksmllint.catalogue").joinpath("instances.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def _first(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(i for i in data["instances"] if i["name"] == name)


def _mutated(mutate) -> str:
    data = copy.deepcopy(_raw())
    mutate(data)
    return yaml.safe_dump(data)


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda d: _first(d, "p4d.24xlarge").update(max_efa=-1), "max_efa"),
        (lambda d: _first(d, "p4d.24xlarge").update(neuron_cores_per_device=2), "neuron"),
        (lambda d: _first(d, "trn1.2xlarge").pop("neuron_cores_per_device"), "neuron_cores_per_device"),
        (lambda d: _first(d, "trn1.2xlarge").update(gpu_memory_mib=32768), "gpu_memory_mib"),
        (lambda d: _first(d, "p4d.24xlarge").update(family="p4de"), "family.size"),
        (lambda d: _first(d, "p4d.24xlarge").update(source="no-such-source"), "no-such-source"),
        (lambda d: _first(d, "p4d.24xlarge").update(nvlink="yes"), "nvlink"),
        (lambda d: _first(d, "p4d.24xlarge").update(max_pods="737"), "max_pods"),
        (lambda d: _first(d, "p4d.24xlarge").update(gpu_memory_mib=81920), "disagrees"),
        (lambda d: _first(d, "g5.xlarge").update(nvlink=True), "two accelerators"),
        (lambda d: _first(d, "p4d.24xlarge").update(confidence={"nvlinks": "unverified"}), "unknown fields"),
        (lambda d: _first(d, "p4d.24xlarge").update(confidence={"nvlink": "maybe"}), "confidence"),
        (lambda d: _first(d, "p4d.24xlarge").update(accelerator_kind="amd"), "accelerator_kind"),
        (lambda d: _first(d, "p4d.24xlarge").update(gpus=8), "gpus"),
        (lambda d: d["instances"].append(copy.deepcopy(d["instances"][0])), "duplicate"),
        (lambda d: d.pop("sources"), "sources"),
        (lambda d: _first(d, "g6f.large").pop("gpu_fraction"), "accelerator_count 0"),
        (lambda d: _first(d, "trn1.2xlarge").update(accelerator_count=0), "accelerator_count 0"),
        (lambda d: _first(d, "g5.xlarge").update(gpu_fraction=0.5), "gpu_fraction only applies"),
        (lambda d: _first(d, "g6f.large").update(gpu_fraction=1.5), "gpu_fraction"),
        (lambda d: _first(d, "trn2.48xlarge").update(default_lnc=3), "default_lnc must divide"),
        (lambda d: _first(d, "p5.48xlarge").update(default_lnc=2), "default_lnc"),
    ],
)
def test_invalid_data_is_rejected(mutate, fragment: str) -> None:
    with pytest.raises(CatalogueError) as err:
        parse_catalogue(_mutated(mutate))
    assert fragment in str(err.value)


@pytest.mark.parametrize("text", ["instances: [", "- just\n- a list\n", ""])
def test_unparseable_text_raises_catalogue_error(text: str) -> None:
    with pytest.raises(CatalogueError):
        parse_catalogue(text)


def test_round_trip_of_packaged_data_is_valid() -> None:
    assert parse_catalogue(_mutated(lambda d: None)).names() == frozenset(FACTS_INSTANCES) | BEYOND_FACTS_TABLE


# ------------------------------------------------------------------------------------------------
# Allocatable as Karpenter computes it
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("row", FACTS_ALLOCATABLE, ids=lambda r: "/".join(r[0]))
def test_allocatable_matches_facts_table(cat: Catalogue, row) -> None:
    instance_names, cpu_m, memory_mi, pods = row
    for name in instance_names:
        it = cat.get(name)
        assert it is not None, name
        assert it.max_pods == pods
        assert it.allocatable_cpu_millis == cpu_m
        assert it.allocatable_memory_mib == memory_mi


@pytest.mark.parametrize("name", sorted(KARPENTER_REPORTED))
def test_allocatable_and_counts_match_karpenter_reference(cat: Catalogue, name: str) -> None:
    cpu_m, memory_mi, pods, efa, nvme = KARPENTER_REPORTED[name]
    it = cat.get(name)
    assert (it.allocatable_cpu_millis, it.allocatable_memory_mib) == (cpu_m, memory_mi)
    assert (it.max_pods, it.max_efa, it.local_nvme_gib) == (pods, efa, nvme)


@pytest.mark.parametrize(
    "vcpu, memory_mib, pods, arch, cpu_m, memory_mi",
    [
        # Small and arm64 rows of the same Karpenter reference, to cover the low CPU bands and
        # the Graviton 64 MiB CMA deduction the catalogue's own types never hit.
        (1, 2048, 8, "arm64", 940, 1392),  # a1.medium
        (2, 4096, 29, "arm64", 1930, 3055),  # a1.large
        (4, 8192, 58, "arm64", 3920, 6525),  # a1.xlarge
        (2, 1740, 12, "amd64", 1930, 1122),  # c1.medium
        (36, 61440, 234, "amd64", 35840, 53903),  # c4.8xlarge
        (448, 6291456, 737, "amd64", 446810, 5811134),  # u-6tb1.112xlarge
    ],
)
def test_formula_on_other_reference_rows(vcpu, memory_mib, pods, arch, cpu_m, memory_mi) -> None:
    assert karpenter_allocatable_cpu_millis(vcpu) == cpu_m
    assert karpenter_allocatable_memory_mib(memory_mib, pods, arch=arch) == memory_mi


def test_more_pods_means_less_memory() -> None:
    assert karpenter_allocatable_memory_mib(1179648, 738) == karpenter_allocatable_memory_mib(1179648, 737) - 11


# ------------------------------------------------------------------------------------------------
# Labels and resources
# ------------------------------------------------------------------------------------------------
def test_labels_match_karpenter_for_samples(cat: Catalogue) -> None:
    p5 = cat.get("p5.48xlarge").labels()
    assert p5[TYPE] == "p5.48xlarge"
    assert p5[K + "instance-family"] == "p5"
    assert p5[K + "instance-category"] == "p"
    assert p5[K + "instance-generation"] == "5"
    assert p5[K + "instance-size"] == "48xlarge"
    assert p5[K + "instance-gpu-name"] == "h100"
    assert p5[K + "instance-gpu-count"] == "8"
    assert p5[K + "instance-gpu-memory"] == "81920"
    assert p5[K + "instance-memory"] == "2097152"
    assert p5[K + "instance-network-bandwidth"] == "3200000"
    assert p5[K + "instance-cpu-manufacturer"] == "amd"
    assert p5["kubernetes.io/arch"] == "amd64"
    b200 = cat.get("p6-b200.48xlarge").labels()
    assert (b200[K + "instance-family"], b200[K + "instance-generation"]) == ("p6-b200", "6")
    trn = cat.get("trn1n.32xlarge").labels()
    assert trn[K + "instance-category"] == "trn"
    assert trn[K + "instance-accelerator-name"] == "trainium"
    assert trn[K + "instance-accelerator-count"] == "16"
    assert K + "instance-gpu-name" not in trn
    inf = cat.get("inf2.xlarge").labels()
    assert inf[K + "instance-network-bandwidth"] == "2083"
    assert K + "instance-local-nvme" not in inf  # no instance store
    assert cat.get("trn1.2xlarge").labels()[K + "instance-network-bandwidth"] == "3125"


def test_labels_are_well_known_and_copies(cat: Catalogue) -> None:
    it = cat.get("g5.xlarge")
    labels = it.labels()
    labels[TYPE] = "mutated"
    assert it.labels()[TYPE] == "g5.xlarge"
    for each in cat.all():
        assert set(each.labels()) <= INSTANCE_LABEL_KEYS


@pytest.mark.parametrize(
    "name, expected",
    [
        ("p5.48xlarge", {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}),
        (
            "trn2.48xlarge",
            {
                "aws.amazon.com/neuron": 16,
                "aws.amazon.com/neurondevice": 16,
                "aws.amazon.com/neuroncore": 128,
                "vpc.amazonaws.com/efa": 16,
            },
        ),
        (
            "trn1.32xlarge",
            {
                "aws.amazon.com/neuron": 16,
                "aws.amazon.com/neurondevice": 16,
                "aws.amazon.com/neuroncore": 32,
                "vpc.amazonaws.com/efa": 8,
            },
        ),
        (
            "inf2.48xlarge",
            {"aws.amazon.com/neuron": 12, "aws.amazon.com/neurondevice": 12, "aws.amazon.com/neuroncore": 24},
        ),
        ("g5.xlarge", {"nvidia.com/gpu": 1}),
    ],
)
def test_resource_capacity(cat: Catalogue, name: str, expected: dict[str, int]) -> None:
    capacity = cat.get(name).resource_capacity()
    assert set(capacity) == set(ACCELERATOR_RESOURCES)
    assert capacity == {resource: expected.get(resource, 0) for resource in ACCELERATOR_RESOURCES}


def test_efa_capability_and_neuron_cores(cat: Catalogue) -> None:
    assert cat.get("p4d.24xlarge").is_efa_capable
    assert not cat.get("g5.4xlarge").is_efa_capable
    assert cat.get("trn2.48xlarge").neuron_cores == 128
    assert cat.get("inf2.xlarge").neuron_cores == 2
    assert cat.get("p5.48xlarge").neuron_cores == 0


def test_get_unknown(cat: Catalogue) -> None:
    assert cat.get("p9.huge") is None
    assert cat.get("P4D.24XLARGE") is None  # label values are case-sensitive
    assert cat.get(None) is None  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# Requirement matching
# ------------------------------------------------------------------------------------------------
def test_instance_type_in(cat: Catalogue) -> None:
    result = cat.matching([(TYPE, "In", ["trn1.32xlarge", "p4d.24xlarge", "nope.large"])])
    assert names(result) == ["p4d.24xlarge", "trn1.32xlarge"]  # catalogue order


def test_family_in_p5(cat: Catalogue) -> None:
    assert names(cat.matching([(K + "instance-family", "In", ["p5"])])) == ["p5.48xlarge", "p5.4xlarge"]


def test_gpu_count_gt_4(cat: Catalogue) -> None:
    result = names(cat.matching([(K + "instance-gpu-count", "Gt", ["4"])]))
    assert result == [
        "p3.16xlarge",
        "p3dn.24xlarge",
        "p4d.24xlarge",
        "p4de.24xlarge",
        "p5.48xlarge",
        "p5e.48xlarge",
        "p5en.48xlarge",
        "p6-b200.48xlarge",
        "g4dn.metal",
        "g5.48xlarge",
        "g6.48xlarge",
        "g6e.48xlarge",
    ]
    # integers as YAML would give them work the same, and Gte/Lte are inclusive
    assert names(cat.matching([(K + "instance-gpu-count", "Gt", [4])])) == result
    assert names(cat.matching([(K + "instance-gpu-count", "Gte", ["8"])])) == result
    assert "g5.12xlarge" in names(cat.matching([(K + "instance-gpu-count", "Lte", ["4"])]))
    assert "g5.12xlarge" not in names(cat.matching([(K + "instance-gpu-count", "Lt", ["4"])]))


def test_accelerator_name_trainium(cat: Catalogue) -> None:
    result = cat.matching([{"key": K + "instance-accelerator-name", "operator": "In", "values": ["trainium"]}])
    assert names(result) == ["trn1.2xlarge", "trn1.32xlarge", "trn1n.32xlarge"]
    assert names(cat.matching([(K + "instance-category", "In", ["trn"])])) == [
        "trn1.2xlarge",
        "trn1.32xlarge",
        "trn1n.32xlarge",
        "trn2.48xlarge",
    ]


def test_absent_labels_follow_kubernetes_semantics(cat: Catalogue) -> None:
    neuron = {it.name for it in cat.all() if it.is_neuron}
    not_a100 = set(names(cat.matching([(K + "instance-gpu-name", "NotIn", ["a100"])])))
    assert neuron <= not_a100 and "p4d.24xlarge" not in not_a100
    assert set(names(cat.matching([(K + "instance-gpu-name", "DoesNotExist", [])]))) == neuron
    assert set(names(cat.matching([(K + "instance-gpu-name", "Exists")]))) == cat.names() - neuron
    with_nvme = set(names(cat.matching([(K + "instance-local-nvme", "Gt", ["0"])])))
    assert "inf2.48xlarge" not in with_nvme and "p3.8xlarge" not in with_nvme and "p5.48xlarge" in with_nvme


def test_requirements_combine_with_and(cat: Catalogue) -> None:
    result = cat.matching(
        [
            (K + "instance-category", "In", ["g"]),
            (K + "instance-gpu-count", "Gt", ["1"]),
            (K + "instance-memory", "Gte", [str(768 * 1024)]),
            ("kubernetes.io/arch", "In", ["amd64"]),
        ]
    )
    assert names(result) == ["g5.48xlarge", "g6.48xlarge", "g6e.24xlarge", "g6e.48xlarge"]
    assert {it.family for it in cat.matching([("kubernetes.io/arch", "In", ["arm64"])])} == {"g5g"}


def test_non_instance_and_malformed_requirements_are_ignored(cat: Catalogue) -> None:
    everything = cat.all()
    assert cat.matching([]) == everything
    assert (
        cat.matching(
            [
                ("topology.kubernetes.io/zone", "In", ["us-east-1a"]),
                ("karpenter.sh/capacity-type", "In", ["spot"]),
                ("example.com/team", "DoesNotExist", []),
                (K + "instance-hypervisor", "In", ["xen"]),
                (K + "instance-gpu-count", "Gt", ["four"]),
                (K + "instance-gpu-count", "Gt", ["1", "2"]),
                (K + "instance-family", "Matches", ["p5"]),
                (K + "instance-family", "In", []),
                "not a requirement",
                {"operator": "In"},
                (None, "In", ["x"]),
            ]
        )
        == everything
    )


def test_beta_label_alias(cat: Catalogue) -> None:
    assert names(cat.matching([("beta.kubernetes.io/instance-type", "In", ["g6.xlarge"])])) == ["g6.xlarge"]


def test_matching_is_cached(cat: Catalogue) -> None:
    reqs = [(K + "instance-gpu-name", "In", ["h100", "h200"])]
    first = cat.matching(reqs)
    assert names(first) == ["p5.48xlarge", "p5.4xlarge", "p5e.48xlarge", "p5en.48xlarge"]
    assert cat.matching(list(reversed(reqs))) is first
    assert cat.matching([(K + "instance-gpu-name", "In", ["h200", "h100", "h100"])]) is first


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_in_on_random_subset_returns_exactly_that_subset(data) -> None:
    cat = get_catalogue()
    order = [it.name for it in cat.all()]
    subset = data.draw(st.sets(st.sampled_from(order), min_size=1))
    shuffled = data.draw(st.permutations(sorted(subset)))
    result = names(cat.matching([(TYPE, "In", shuffled)]))
    assert result == [n for n in order if n in subset]
    complement = names(cat.matching([(TYPE, "NotIn", shuffled)]))
    assert complement == [n for n in order if n not in subset]


@settings(max_examples=100, deadline=None)
@given(threshold=st.integers(min_value=-2, max_value=20), vcpu_floor=st.integers(min_value=0, max_value=256))
def test_numeric_requirements_agree_with_attributes(threshold: int, vcpu_floor: int) -> None:
    cat = get_catalogue()
    result = cat.matching(
        [
            (K + "instance-gpu-count", "Gt", [str(threshold)]),
            (K + "instance-cpu", "Gte", [str(vcpu_floor)]),
        ]
    )
    expected = [it for it in cat.all() if it.is_nvidia and it.accelerator_count > threshold and it.vcpu >= vcpu_floor]
    assert result == tuple(expected)


# ------------------------------------------------------------------------------------------------
# Issue 14 additions: uncounted GPUs, logical NeuronCores, HyperPod names, capacity types
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(KARPENTER_REPORTED_GPUS))
def test_gpu_resource_and_count_label_match_karpenter(cat: Catalogue, name: str) -> None:
    it = cat.get(name)
    assert it.resource_capacity()["nvidia.com/gpu"] == KARPENTER_REPORTED_GPUS[name]
    assert it.labels()[K + "instance-gpu-count"] == str(KARPENTER_REPORTED_GPUS[name])
    assert it.has_uncounted_gpu == (KARPENTER_REPORTED_GPUS[name] == 0)


def test_fractional_l4_types(cat: Catalogue) -> None:
    g6f = cat.get("g6f.large")
    assert g6f.gpu_fraction == 0.125 and g6f.confidence_of("gpu_fraction") == "derived"
    assert not g6f.offers({"nvidia.com/gpu": 1})
    labels = g6f.labels()
    assert labels[K + "instance-gpu-name"] == "l4" and labels[K + "instance-gpu-memory"] == "2861"
    assert K + "instance-network-bandwidth" not in labels  # Karpenter publishes none for g6f
    assert cat.get("gr6f.4xlarge").category == "gr"
    uncounted = {it.name for it in cat.all() if it.has_uncounted_gpu}
    assert uncounted == {"g6f.large", "g6f.xlarge", "g6f.2xlarge", "g6f.4xlarge", "gr6f.4xlarge"}


def test_g5g_is_arm64_t4g_without_bf16(cat: Catalogue) -> None:
    for it in cat.matching([(K + "instance-family", "In", ["g5g"])]):
        assert (it.arch, it.karpenter_name, it.bf16, it.cpu_manufacturer) == ("arm64", "t4g", False, "aws")
        assert it.labels()["kubernetes.io/arch"] == "arm64"


def test_trn2_logical_neuron_cores(cat: Catalogue) -> None:
    trn2 = cat.get("trn2.48xlarge")
    assert trn2.default_lnc == 2
    assert trn2.logical_cores_per_device() == 4 and trn2.accelerator_count * 4 == 64
    assert trn2.logical_cores_per_device(1) == 8
    assert trn2.logical_cores_per_device(3) is None
    assert trn2.resource_capacity()["aws.amazon.com/neuroncore"] == 128  # Karpenter counts physical cores
    assert cat.get("trn1.32xlarge").logical_cores_per_device() == 2
    assert cat.get("p5.48xlarge").logical_cores_per_device() is None


def test_hyperpod_ml_names_map_to_ec2_twins(cat: Catalogue) -> None:
    from eksmllint.catalogue import ec2_instance_name

    assert cat.get("ml.p5.48xlarge") is cat.get("p5.48xlarge")
    assert cat.get("ml.trn2u.48xlarge") is None  # HyperPod-only type: no EC2 twin in the catalogue
    assert ec2_instance_name("ml.g5.xlarge") == "g5.xlarge" and ec2_instance_name("g5.xlarge") == "g5.xlarge"
    assert names(cat.matching([(TYPE, "In", ["ml.trn2.48xlarge", "ml.p5.48xlarge"])])) == [
        "p5.48xlarge",
        "trn2.48xlarge",
    ]


def test_capacity_types_in_karpenter_preference_order() -> None:
    from eksmllint.catalogue import CAPACITY_TYPES, RECLAIMABLE_CAPACITY_TYPES

    assert CAPACITY_TYPES == ("reserved", "spot", "on-demand")
    assert RECLAIMABLE_CAPACITY_TYPES == {"spot"}
