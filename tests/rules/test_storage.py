"""Rule family 9xx (storage, platform versions): FSx capacity rounding, ACK FileSystem and shared
file systems, the AMI family's version dependence and fixes — behaviour the fixtures do not pin down."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from builders import container, manifest, pod_template
from builders import job as builders_job
from scheduling_storage_manifests import MALFORMED, docs, findings, fsx_class, job, pvc

from eksmllint.checks.storage.eml901_fsx_parameters import capacity_increment_ok, round_up_capacity
from eksmllint.config import Config
from eksmllint.core.engine import lint_paths, lint_text
from eksmllint.fix.apply import apply_fix

GIB = 2**30


def test_seed_manifests(shared):
    result = lint_paths([str(shared / "seed" / "manifests")], Config(select=("EML9",)))
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
    sc = fsx_class(
        "shared", fileSystemId="fs-0123456789abcdef0", deploymentType="SCRATCH_2", perUnitStorageThroughput="200"
    )
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


# --- issue 14 decisions: Intelligent-Tiering (EML901), al2023@latest (EML903) -----------------------


def tiered(deployment: str, **throughput: str) -> str:
    return fsx_class("tiered", deploymentType=deployment, storageType="INTELLIGENT_TIERING", **throughput)


def tiered_filesystem(throughput: str = "") -> str:
    """An ACK PERSISTENT_2 Intelligent-Tiering FileSystem (elastic: no storageCapacity)."""
    text = FILESYSTEM.format(cap=0, dt="PERSISTENT_2", extra=throughput)
    return text.replace("  storageCapacity: 0\n", "  storageType: INTELLIGENT_TIERING\n")


@pytest.mark.parametrize(
    "text,reported",
    [
        # ACK calls the FSx API directly: throughput per file system is required, in steps of 4000 MB/s
        (tiered_filesystem(), "requires throughputCapacity"),
        (tiered_filesystem("    throughputCapacity: 8000\n"), None),
        (tiered("PERSISTENT_2", throughputCapacity="2000000"), None),
        (tiered("PERSISTENT_2", throughputCapacity="2004000"), "up to 2000000"),
        (
            tiered("PERSISTENT_2", throughputCapacity="0"),
            "is not valid for INTELLIGENT_TIERING",
        ),
        (
            tiered("PERSISTENT_2", throughputCapacity="fast"),
            "is not valid for INTELLIGENT_TIERING",
        ),
        # the CSI driver's StorageClass may leave the throughput to its defaults
        (tiered("PERSISTENT_2"), None),
        (tiered("PERSISTENT_1"), "only available with PERSISTENT_2, not PERSISTENT_1"),
    ],
)
def test_901_intelligent_tiering_is_a_persistent_2_storage_type_with_throughput_in_steps_of_4000(text, reported):
    found = findings(text, "EML901")
    assert [f.message for f in found if reported and reported in f.message] == [f.message for f in found]
    assert len(found) == (1 if reported else 0)


def test_901_intelligent_tiering_capacity_is_elastic_so_no_pvc_size_is_off_increment():
    claim = pvc("data", "tiered", "1000Gi")
    assert findings(docs(tiered("PERSISTENT_2", throughputCapacity="4000"), claim), "EML901") == []
    ssd = fsx_class("tiered", deploymentType="PERSISTENT_2", storageType="SSD")
    [f] = findings(docs(ssd, claim), "EML901")  # the same request on SSD is rounded up to 1200 GiB
    assert "1200 GiB" in f.message


def test_903_fix_does_not_carry_a_pinned_al2_release_over():
    """al2@v20240807 -> al2023@latest, not al2023@v20240807: an AMI release from before the target
    Kubernetes version reached EKS has no AL2023 AMI for that version either."""
    pinned = NODECLASS.replace("  amiFamily: AL2\n", "").replace("al2@latest", "al2@v20240807")
    [f] = findings(pinned, "EML903", Config.model_validate({"kubernetes-version": "1.33"}))
    assert "al2@v20240807" in f.message and "Kubernetes 1.33" in f.message
    fixed = apply_fix(pinned, f.fix)
    assert "alias: al2023@latest" in fixed and "v20240807" not in fixed
    assert findings(fixed, "EML903", Config.model_validate({"kubernetes-version": "1.33"})) == []


# --- EML902: checkpoint argument forms ---------------------------------------------------------------
SCRATCH_STORAGE = docs(fsx_class("fsx-scratch", deploymentType="SCRATCH_2"), pvc("scratch", "fsx-scratch", "1200Gi"))


@pytest.mark.parametrize(
    "args,reported",
    [
        ('["--checkpoint-file", "/fsx/ckpt/model.pth.tar"]', True),  # torchelastic ImageNet example
        ('["--checkpoint_file=/fsx/ckpt/model.pth.tar"]', True),
        ('["--checkpoint_dir", "/fsx/ckpt"]', True),
        ('["--save", "/fsx/ckpt"]', True),
        ('["--resume_from_checkpoint", "/fsx/ckpt/last"]', False),  # read, not written
        ('["--checkpoint-file", "/home/model.pth.tar"]', False),  # not on the scratch volume
    ],
)
def test_902_checkpoint_arguments(args, reported):
    body = f"""\
restartPolicy: Never
containers:
  - name: train
    image: example.com/train:1.0
    command: ["python", "main.py"]
    args: {args}
    resources:
      limits:
        nvidia.com/gpu: 1
    volumeMounts:
      - name: fsx
        mountPath: /fsx
volumes:
  - name: fsx
    persistentVolumeClaim:
      claimName: scratch
"""
    found = findings(docs(SCRATCH_STORAGE, job("train", body)), "EML902")
    assert len(found) == (1 if reported else 0), [f.message for f in found]


# --- EML906 -------------------------------------------------------------------------------------
def _nodeclass(alias: str) -> str:
    return f"""\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: gpu}}
spec:
  amiSelectorTerms: [{{alias: "{alias}"}}]
  role: r
"""


def _on(version: str, **rules: dict) -> Config:
    return Config.model_validate({"kubernetes-version": version, "rules": rules})


@pytest.mark.parametrize(
    "alias,version,reported",
    [
        ("al2023@v20240807", "1.31", True),  # 1.31 reached EKS on 2024-09-26
        ("al2023@v20240807", "1.30", False),
        ("al2023@v20250520", "1.33", False),  # within the margin before 2025-05-29
        ("al2023@v20250401", "1.33", True),
        ("al2@v20240807", "1.32", True),
        ("al2@v20240807", "1.33", False),  # no AL2 AMI at all for 1.33: EML903's finding
        ("al2023@latest", "1.34", False),
        ("bottlerocket@v1.20.4", "1.34", False),  # a version number, not a date
        ("al2023@v20200101", "1.28", False),  # a version the table does not list
        ("al2023@v20241399", "1.34", False),  # not a date
    ],
)
def test_906_alias_date_against_the_eks_release(alias, version, reported):
    assert len(findings(_nodeclass(alias), "EML906", _on(version))) == int(reported)


def test_906_margin_option_and_fix():
    assert findings(_nodeclass("al2023@v20250520"), "EML906", _on("1.33", EML906={"margin-days": 0}))
    [f] = findings(_nodeclass("al2023@v20240807"), "EML906", _on("1.33"))
    assert [op.value for op in f.fix.ops] == ["al2023@latest"]


# --- EML905 -------------------------------------------------------------------------------------
def _offload_case(volume: str, device: str = "nvme", path: str = "/scratch/offload") -> str:
    config = {"zero_optimization": {"stage": 3, "offload_param": {"device": device, "nvme_path": path}}}
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ds", "namespace": "ml"},
        "data": {"ds_config.json": json.dumps(config)},
    }
    train = container(
        "c",
        command=["deepspeed", "--num_gpus=8", "train.py", "--deepspeed", "/cfg/ds_config.json"],
        gpus=8,
        volumeMounts=[{"name": "scratch", "mountPath": "/scratch"}, {"name": "cfg", "mountPath": "/cfg"}],
    )
    volumes = [{"name": "cfg", "configMap": {"name": "ds"}}, yaml.safe_load(volume)]
    return manifest(
        configmap, builders_job("j", pod_template(train, restartPolicy="Never", volumes=volumes), namespace="ml")
    )


EFS_INLINE = "{name: scratch, csi: {driver: efs.csi.aws.com, volumeHandle: fs-1}}"


def test_905_network_volumes_and_node_local_ones():
    [f] = findings(_offload_case(EFS_INLINE), "EML905")
    assert "EFS" in f.message and "offload_param" in f.message
    assert findings(_offload_case("{name: scratch, nfs: {server: 10.0.0.1, path: /}}"), "EML905")
    assert findings(_offload_case("{name: scratch, emptyDir: {}}"), "EML905") == []
    assert findings(_offload_case("{name: scratch, hostPath: {path: /mnt/k8s-disks/0}}"), "EML905") == []
    assert findings(_offload_case(EFS_INLINE, device="cpu"), "EML905") == []
    assert findings(_offload_case(EFS_INLINE, path="/other/offload"), "EML905") == []  # not on the mount
    unknown_claim = "{name: scratch, persistentVolumeClaim: {claimName: elsewhere}}"
    assert findings(_offload_case(unknown_claim), "EML905") == []
