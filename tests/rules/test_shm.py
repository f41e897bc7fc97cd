"""Rule tests for EML302-EML305 (shared memory): fix values and when the rules stay silent."""

from __future__ import annotations

import textwrap

import pytest
from builders import said
from shm_precision_pods import gpu4, job, lint

from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.core.finding import RemovePath, SetValue
from eksmllint.fix.engine import fix_text
from eksmllint.platform import Platform

# --- shared memory ------------------------------------------------------------------------------


def test_eml302_fix_sets_quarter_of_memory_limit():
    found = lint(job(gpu4("160Gi"), "- name: dshm\n  emptyDir: {medium: Memory}\n"), "EML302")
    assert len(found) == 1
    (op,) = found[0].fix.ops
    assert isinstance(op, SetValue) and op.path[-1] == "sizeLimit" and op.value == "40Gi"


def test_eml302_silent_with_size_limit_and_for_disk_emptydir():
    assert not lint(job(gpu4(), "- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 8Gi}\n"), "EML302")
    assert not lint(job(gpu4(), "- name: dshm\n  emptyDir: {}\n"), "EML302")  # EML304's case


def test_eml302_no_fix_without_memory():
    container = gpu4().replace(", memory: MEM", "").replace(", memory: 160Gi", "")
    found = lint(job(container, "- name: dshm\n  emptyDir: {medium: Memory}\n"), "EML302")
    assert len(found) == 1 and found[0].fix is None
    assert "node's allocatable memory" in said(found[0])


def test_eml303_fix_scales_proportionally_to_half_the_limit():
    vols = (
        "- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 48Gi}\n"
        "- name: cache\n  emptyDir: {medium: Memory, sizeLimit: 16Gi}\n"
    )
    container = gpu4("48Gi") + "    - {name: cache, mountPath: /cache}\n"
    found = lint(job(container, vols), "EML303")
    assert len(found) == 1
    values = {op.path[-3]: op.value for op in found[0].fix.ops}
    assert values == {0: "18Gi", 1: "6Gi"}  # 24Gi budget split 3:1
    assert "64Gi" in said(found[0]) and "48Gi" in said(found[0])


def test_eml303_option_changes_budget():
    cfg = Config(select=("EML303",), rules={"EML303": {"budget-fraction": 0.25}})
    vols = "- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 64Gi}\n"
    result = lint_text(job(gpu4("32Gi"), vols), cfg)
    (f,) = [f for f in result.active if f.code == "EML303"]
    assert f.fix.ops[0].value == "8Gi"


def test_eml303_silent_when_a_container_has_no_limit_or_fits():
    vols = "- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 64Gi}\n"
    assert not lint(job(gpu4("64Gi"), vols), "EML303")  # equal: not more than the limit
    no_limit = gpu4().replace(", memory: MEM", "").replace(", memory: 160Gi", "")
    assert not lint(job(no_limit, vols), "EML303")


def test_eml303_uses_pod_level_limit():
    vols = "- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 64Gi}\n"
    found = lint(job(gpu4("128Gi"), vols, spec_extra="resources: {limits: {memory: 32Gi}}\n"), "EML303")
    assert len(found) == 1 and "32Gi" in said(found[0])


def test_eml304_hostpath_fix_replaces_source():
    found = lint(job(gpu4("1000Gi"), "- name: dshm\n  hostPath: {path: /dev/shm}\n"), "EML304")
    assert len(found) == 1
    ops = found[0].fix.ops
    assert isinstance(ops[0], RemovePath) and ops[0].path[-1] == "hostPath"
    assert isinstance(ops[1], SetValue) and ops[1].value == {"medium": "Memory", "sizeLimit": "250Gi"}
    assert found[0].location.path[-1] == "hostPath"


def test_eml304_disk_emptydir_and_memory_ok():
    found = lint(job(gpu4(), "- name: dshm\n  emptyDir: {sizeLimit: 10Gi}\n"), "EML304")
    assert len(found) == 1 and found[0].fix.ops == (
        SetValue(found[0].fix.ops[0].path, {"medium": "Memory", "sizeLimit": "40Gi"}),
    )
    assert not lint(job(gpu4(), "- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 10Gi}\n"), "EML304")


# --- EML305 shm-undersized ----------------------------------------------------------------------


def shm(size: str) -> str:
    return f"- name: dshm\n  emptyDir: {{medium: Memory, sizeLimit: {size}}}\n"


def no_workers(container: str) -> str:
    return container.replace(', "--num_workers", "4"', "")


@pytest.mark.parametrize("size, flagged", [("512Mi", True), ("1023Mi", True), ("1Gi", False), ("8Gi", False)])
def test_eml305_nccl_between_gpus_needs_the_documented_1gi(size, flagged):
    found = lint(job(no_workers(gpu4()), shm(size)), "EML305")
    assert bool(found) == flagged
    if flagged:
        (f,) = found
        assert f.location.path[-1] == "sizeLimit" and "4 GPUs" in said(f) and "1Gi" in said(f)
        assert f.fix.ops == (SetValue(f.location.path, "40Gi"),)  # EML301's formula: 25% of 160Gi


@pytest.mark.parametrize("size, flagged", [("32Mi", True), ("64Mi", True), ("65Mi", False), ("512Mi", False)])
def test_eml305_dataloader_workers_need_more_than_the_container_default(size, flagged):
    one_gpu = gpu4().replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 1")
    found = lint(job(one_gpu, shm(size)), "EML305")
    assert bool(found) == flagged
    if flagged:
        assert "4 DataLoader workers" in said(found[0]) and "64 MiB container default" in said(found[0])


def test_eml305_not_judged_without_a_known_user_of_shm_or_a_literal_size():
    one_gpu = no_workers(gpu4()).replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 1")
    assert not lint(job(one_gpu, shm("16Mi")), "EML305")  # one GPU, no DataLoader workers
    assert not lint(job(no_workers(gpu4()), shm('"${SHM_SIZE}"')), "EML305")  # a template placeholder
    assert not lint(job(no_workers(gpu4()), "- name: dshm\n  emptyDir: {sizeLimit: 64Mi}\n"), "EML305")  # EML304's


def test_eml305_nccl_shm_disabled_leaves_only_the_dataloader_floor():
    disabled = gpu4().replace("  volumeMounts:", '  env: [{name: NCCL_SHM_DISABLE, value: "1"}]\n  volumeMounts:')
    assert not lint(job(disabled, shm("512Mi")), "EML305")
    assert len(lint(job(disabled, shm("64Mi")), "EML305")) == 1


def test_eml305_no_fix_without_memory_or_when_the_pod_limit_would_overflow():
    no_memory = no_workers(gpu4()).replace(", memory: 160Gi", "")
    (f,) = lint(job(no_memory, shm("256Mi")), "EML305")
    assert f.fix is None
    # 4Gi limit: 3584Mi cache + 256Mi shm fit; raising shm to 1Gi would not (EML303 would fire)
    container = no_workers(gpu4("4Gi")) + "    - {name: cache, mountPath: /cache}\n"
    vols = shm("256Mi") + "- name: cache\n  emptyDir: {medium: Memory, sizeLimit: 3584Mi}\n"
    (f,) = lint(job(container, vols), "EML305")
    assert f.fix is None


def test_eml305_and_eml303_fixes_settle():
    # EML303 scales 2Gi down to half the 1536Mi limit (768Mi); EML305 then raises it to 1Gi, which fits
    text = textwrap.dedent(job(no_workers(gpu4("1536Mi")), shm("2Gi")))
    out = fix_text(text, Config(select=("EML303", "EML305")), name="job.yaml")
    assert out.error is None
    assert "sizeLimit: 1Gi" in out.fixed
    assert not [f for f in out.remaining if f.code in ("EML303", "EML305")]


# --- KubeRay's automatic /dev/shm by KubeRay release ---------------------------------------------

RAY_GPU = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r, namespace: ns}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
          - {name: head, image: "rayproject/ray:2.34.0", resources: {limits: {cpu: "2", memory: 8Gi}}}
  workerGroupSpecs:
    - groupName: gpu
      replicas: 1
      rayStartParams: PARAMS
      template:
        spec:
          containers:
            - name: worker
              image: rayproject/ray:2.34.0-gpu
              resources: RESOURCES
"""


GPU_ONLY = '{limits: {nvidia.com/gpu: 4, cpu: "40"}}'


def ray_lint(code: str, params: str = "{}", resources: str = GPU_ONLY, **platform: str):
    """Findings of ``code`` on a RayCluster whose GPU worker group has ``params`` and ``resources``."""
    text = RAY_GPU.replace("PARAMS", params).replace("RESOURCES", resources)
    cfg = Config(select=(code,), platform=Platform(**platform))
    return [f for f in lint_text(text, cfg).active if f.code == code]


PLASMA = "{plasma-directory: /tmp/plasma}"


def test_eml302_kuberay_with_request_only_is_bounded():
    request_only = '{limits: {nvidia.com/gpu: 4}, requests: {cpu: "8", memory: 8Gi}}'
    assert not ray_lint("EML302", resources=request_only)
    no_memory = request_only.replace(", memory: 8Gi", "")
    assert len(ray_lint("EML302", resources=no_memory)) == 1
    assert not ray_lint("EML302", PLASMA, resources=no_memory)


def test_eml301_plasma_directory_stops_kuberay_shm_from_1_6():
    assert not ray_lint("EML301")  # KubeRay adds /dev/shm to the Ray container
    (f,) = ray_lint("EML301", PLASMA)  # default: the newest KubeRay, which adds none then
    assert "KubeRay 1.6 (assumed; set platform.kuberay) adds none" in said(f)
    assert not ray_lint("EML301", PLASMA, kuberay="1.5")  # before 1.6 it is added anyway


def test_eml302_kuberay_unbounded_shm_names_the_release():
    (f,) = ray_lint("EML302")
    assert "KubeRay 1.6 (assumed; set platform.kuberay) adds" in said(f)
    assert not ray_lint("EML302", resources=GPU_ONLY.replace('"40"}', '"40", memory: 64Gi}'))
    assert not ray_lint("EML302", PLASMA)  # 1.6: no /dev/shm added, nothing unbounded (EML301's case)
    (f,) = ray_lint("EML302", PLASMA, kuberay="1.5")
    assert "KubeRay 1.5 (from the config)" in said(f) and "plasma-directory" in said(f)
