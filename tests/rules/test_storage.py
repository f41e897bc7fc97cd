"""Rule family 9xx (storage, platform versions): FSx capacity rounding, ACK FileSystem and shared
file systems, the AMI family's version dependence and fixes — behaviour the fixtures do not pin down."""

from __future__ import annotations

from pathlib import Path

import pytest
from scheduling_storage_manifests import MALFORMED, SEED, docs, findings

from eksmllint.checks.storage.eml901_fsx_parameters import capacity_increment_ok, round_up_capacity
from eksmllint.config import Config
from eksmllint.core.engine import lint_paths, lint_text
from eksmllint.fix.apply import apply_fix

GIB = 2**30


def test_seed_manifests():
    if not SEED.is_dir():
        pytest.skip("seed manifests not available")
    result = lint_paths([str(SEED)], Config(select=("EML9",)))
    got = {(Path(f.location.file).name, f.code) for f in result.active}
    assert ("18-fsx-lustre-filesystem-storageclass-pvc.yaml", "EML901") in got
    assert ("04-karpenter-gpu-a100-nodepool.yaml", "EML903") in got
    assert ("12-karpenter-trainium-nodepool.yaml", "EML903") in got
    assert ("10-llama3-lora-trainium-job.yaml", "EML902") in got


# --- EML901 -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "request_gib,deployment,storage,throughput,expected",
    [
        (1000, "SCRATCH_1", "SSD", None, 1200),
        (2500, "SCRATCH_1", "SSD", None, 3600),
        (3700, "SCRATCH_1", "SSD", None, 7200),
        (2000, "SCRATCH_2", "SSD", None, 2400),
        (2500, "PERSISTENT_2", "SSD", None, 4800),
        (100, "PERSISTENT_1", "HDD", 12, 6000),
        (2000, "PERSISTENT_1", "HDD", 40, 3600),
    ],
)
def test_fsx_capacity_rounding_matches_the_driver(request_gib, deployment, storage, throughput, expected):
    rounded = round_up_capacity(request_gib * GIB, deployment, storage, throughput)
    assert rounded == expected
    assert capacity_increment_ok(rounded, deployment, storage, throughput)
    assert not capacity_increment_ok(request_gib, deployment, storage, throughput)


FILESYSTEM = """\
apiVersion: fsx.services.k8s.aws/v1alpha1
kind: FileSystem
metadata:
  name: fs
spec:
  fileSystemType: LUSTRE
  storageCapacity: {cap}
  lustreConfiguration:
    deploymentType: {dt}
{extra}"""


def test_901_filesystem_valid_and_missing_throughput():
    ok = FILESYSTEM.format(cap=4800, dt="PERSISTENT_2", extra="    perUnitStorageThroughput: 250\n")
    assert findings(ok, "EML901") == []
    [f] = findings(FILESYSTEM.format(cap=2400, dt="PERSISTENT_1", extra=""), "EML901")
    assert "requires perUnitStorageThroughput" in f.message
    scratch = FILESYSTEM.format(cap=2400, dt="SCRATCH_1", extra="")
    assert findings(scratch, "EML901") == []


def test_901_storage_class_sharing_an_existing_filesystem_is_not_checked():
    sc = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: shared
provisioner: fsx.csi.aws.com
parameters:
  fileSystemId: fs-0123456789abcdef0
  deploymentType: SCRATCH_2
  perUnitStorageThroughput: "200"
"""
    assert findings(sc, "EML901") == []


# --- EML903 / EML904 -----------------------------------------------------------------------------
NODECLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: nc
spec:
  amiFamily: AL2
  amiSelectorTerms:
    - alias: al2@latest
  role: r
"""


def test_903_depends_on_the_target_version_and_fixes_family_and_alias():
    assert findings(NODECLASS, "EML903", Config.model_validate({"kubernetes-version": "1.32"})) == []
    [f] = findings(NODECLASS, "EML903", Config.model_validate({"kubernetes-version": "1.34"}))
    assert f.fix.applicability.value == "unsafe"
    fixed = apply_fix(NODECLASS, f.fix)
    assert "amiFamily: AL2023" in fixed and "alias: al2023@latest" in fixed
    assert findings(fixed, "EML903") == []


def test_904_fix_sets_encrypted():
    text = (
        NODECLASS.replace("AL2\n", "AL2023\n").replace("al2@", "al2023@")
        + """\
  blockDeviceMappings:
    - deviceName: /dev/xvda
      ebs:
        volumeSize: 100Gi
"""
    )
    [f] = findings(text, "EML904")
    fixed = apply_fix(text, f.fix)
    assert "encrypted: true" in fixed and findings(fixed, "EML904") == []


# --- robustness ------------------------------------------------------------------------------------
def test_malformed_input_never_crashes_the_rules():
    result = lint_text(docs(*MALFORMED), Config(select=("EML9",)), name="bad.yaml")
    crashes = [f.message for f in result.findings if f.code == "EML000"]
    assert crashes == []
