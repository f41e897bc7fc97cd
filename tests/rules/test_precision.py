"""Rule tests for EML401-EML404 (precision): the command-line scanner, the rules, and robustness on
malformed input."""

from __future__ import annotations

import textwrap

import pytest
from builders import said
from hypothesis import given, settings
from hypothesis import strategies as st
from shm_precision_pods import gpu4, job, lint

from eksmllint.analysis.commands import script_calls
from eksmllint.checks.precision._shared import combine_edits
from eksmllint.checks.precision._uses import BF16, FP16, Edit, flag_uses
from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.platform import Platform


def script_words(script, path, env):
    return [w for call in script_calls(script, path, env) for w in call.words]


# --- precision: the scanner ---------------------------------------------------------------------


def test_script_words_lines_commands_and_comments():
    script = "set -e  # --fp16 in a comment\nexport A=1 && \\\n  torchrun x.py --bf16 'quoted arg'\n"
    words = script_words(script, ("args", 0), {})
    texts = [w.text for w in words]
    assert "--fp16" not in texts and "quoted arg" in texts
    bf16 = next(w for w in words if w.text == "--bf16")
    assert bf16.line == 2 and script[bf16.start : bf16.start + len(bf16.raw)] == "--bf16"
    export = next(w for w in words if w.text == "export")
    assert bf16.command != export.command  # split by &&


def test_flag_spellings():
    words = script_words(
        "x --fp16 false --bf16=True --mixed_precision fp16 --precision 16-mixed trainer.precision=bf16 "
        "--fp16_full_eval --precision 3",
        ("c", 0),
        {},
    )
    got = [(u.precision, u.text) for u in flag_uses(None, words)]  # type: ignore[arg-type]
    assert got == [
        (BF16, "--bf16=True"),
        (FP16, "--mixed_precision fp16"),
        (FP16, "--precision 16-mixed"),
        (BF16, "trainer.precision=bf16"),
    ]


def test_combine_edits_applies_all_edits_of_one_script():
    class T:  # minimal template stand-in: only .resource.get is used
        class resource:
            @staticmethod
            def get(path):
                return "a --fp16 b --mixed_precision=fp16\n"

    e1 = Edit(("args", 0), "--bf16", 2, "--fp16")
    e2 = Edit(("args", 0), "--mixed_precision=bf16", 11, "--mixed_precision=fp16")
    (op,) = combine_edits([e1, e2], T)  # type: ignore[arg-type]
    assert op.value == "a --bf16 b --mixed_precision=bf16\n"


# --- precision: the rules -----------------------------------------------------------------------


NEURON = """\
- name: c
  image: repo/neuron:1.0
  command: CMD
  env: ENV
  resources:
    limits: {aws.amazon.com/neuron: 1, cpu: "7", memory: 28Gi}
"""


def test_eml401_neuron_needs_no_pinned_instance_but_gpu_does():
    neuron = NEURON.replace("CMD", '["python", "t.py", "--fp16"]').replace("ENV", "[]")
    found = lint(job(neuron), "EML401")
    assert len(found) == 1 and found[0].fix.ops[0].value == "--bf16"
    gpu = gpu4().replace('"--num_workers", "4"', '"--fp16"')
    assert not lint(job(gpu), "EML401")
    pinned = job(gpu, spec_extra="nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n")
    assert len(lint(pinned, "EML401")) == 1


def test_eml401_mixed_landing_is_unknown():
    gpu = gpu4().replace('"--num_workers", "4"', '"--fp16"')
    affinity = """\
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
            - matchExpressions:
                - {key: node.kubernetes.io/instance-type, operator: In, values: [p3.8xlarge, g5.12xlarge]}
    """
    assert not lint(job(gpu, spec_extra=affinity), "EML401", "EML402")


def test_eml401_value_from_env_reference_is_reported_without_fix():
    neuron = NEURON.replace("CMD", '["accelerate", "launch", "--mixed_precision=$(MP)", "t.py"]').replace(
        "ENV", "[{name: MP, value: fp16}]"
    )
    (f,) = lint(job(neuron), "EML401")
    assert f.fix is None and "--mixed_precision=fp16" in said(f)


def test_mpijob_launcher_flags_use_worker_accelerators():
    mpi = """\
    apiVersion: kubeflow.org/v2beta1
    kind: MPIJob
    metadata: {name: m}
    spec:
      mpiReplicaSpecs:
        Launcher:
          replicas: 1
          template:
            spec:
              containers:
                - name: l
                  image: repo/img:1.0
                  command: ["mpirun", "-np", "16", "python", "t.py", "--bf16"]
        Worker:
          replicas: 2
          template:
            spec:
              nodeSelector: {node.kubernetes.io/instance-type: p3dn.24xlarge}
              containers:
                - name: w
                  image: repo/img:1.0
                  resources: {limits: {nvidia.com/gpu: 8}}
    """
    (f,) = lint(mpi, "EML402")
    assert f.fix is not None and f.fix.applicability.value == "unsafe"
    assert f.fix.ops[0].value == "--fp16" and f.location.path[-2:] == ("command", 5)


def test_eml403_and_eml404_cross_sources():
    neuron = NEURON.replace("CMD", '["bash", "-c", "export XLA_USE_BF16=1\\npython t.py --fp16"]').replace("ENV", "[]")
    codes = sorted(f.code for f in lint(job(neuron)))
    assert codes == ["EML401", "EML404"]
    both = NEURON.replace("CMD", '["python", "t.py", "--fp16"]').replace(
        "ENV", "[{name: ACCELERATE_MIXED_PRECISION, value: bf16}]"
    )
    codes = sorted(f.code for f in lint(job(both)))
    assert codes == ["EML403"]


SDK_218 = (
    "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.0-neuronx-py310-sdk2.18.0-ubuntu20.04"
)


def test_seed_style_bf16_with_xla_use_bf16_is_consistent():
    # the seed's image names Neuron SDK 2.18, where XLA_USE_BF16 still casts to bf16
    neuron = (
        NEURON.replace("CMD", '["torchrun", "--nproc_per_node=2", "t.py", "--bf16"]')
        .replace("ENV", '[{name: XLA_USE_BF16, value: "1"}]')
        .replace("repo/neuron:1.0", SDK_218)
    )
    assert not lint(job(neuron))


@pytest.mark.parametrize(
    "image, dead",
    [
        (SDK_218, False),
        (SDK_218.replace("sdk2.18.0", "sdk2.24.1"), False),
        (SDK_218.replace("sdk2.18.0", "sdk2.25.0"), True),
        ("repo/neuron:1.0", True),  # no SDK in the tag: the current SDK is assumed
    ],
)
def test_eml404_xla_bf16_env_is_dead_from_neuron_sdk_2_25(image, dead):
    neuron = (
        NEURON.replace("CMD", '["torchrun", "--nproc_per_node=2", "t.py", "--bf16"]')
        .replace("ENV", '[{name: XLA_USE_BF16, value: "1"}]')
        .replace("repo/neuron:1.0", image)
    )
    found = lint(job(neuron), "EML404")
    assert bool(found) == dead
    if dead:
        assert "2.25" in said(found[0]) and ("assumed" in said(found[0])) == (image == "repo/neuron:1.0")


def test_deepspeed_config_found_without_reference_when_unique():
    cm = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ds, namespace: ns}\ndata:\n"
        '  a.json: \'{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}\'\n'
        "  notes.txt: hello\n---\n"
    )
    container = (
        NEURON.replace("CMD", '["deepspeed", "t.py"]').replace("ENV", "[]")
        + "  volumeMounts: [{name: cfg, mountPath: /cfg}]\n"
    )
    found = lint(cm + job(container, "- name: cfg\n  configMap: {name: ds}\n"), "EML401")
    assert len(found) == 1 and found[0].location.path == ("data", "a.json") and found[0].fix is None


# --- robustness ---------------------------------------------------------------------------------


def test_malformed_input_never_crashes():
    weird = """\
    apiVersion: batch/v1
    kind: Job
    metadata: {name: w}
    spec:
      template:
        spec:
          containers:
            - name: c
              command: "python t.py --fp16"
              args: [null, {a: 1}, 16, true, "--precision"]
              env: [{name: XLA_USE_BF16}, {value: 1}, "x", {name: ACCELERATE_MIXED_PRECISION, value: 7}]
              resources: {limits: {aws.amazon.com/neuron: "x", nvidia.com/gpu: 2}}
              volumeMounts: [{name: v, mountPath: /dev/shm}, {name: 3}, "m", {name: cm, mountPath: 5}]
          volumes:
            - {name: v, emptyDir: null}
            - {name: cm, configMap: {name: [1]}}
            - {name: v2, emptyDir: {medium: Memory, sizeLimit: lots}}
            - {name: p, projected: {sources: [null, {configMap: {name: x, items: [{key: 1}]}}]}}
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: x}
    data: ["not", "a", "map"]
    """
    found = lint(weird)
    assert all(f.code != "EML000" for f in found), [said(f) for f in found]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(list("ab -=\"'\\\n;&|#$(){}") + ["--fp16", "--bf16", "XLA_USE_BF16=1", "$X"]), max_size=40
    ).map("".join)
)
def test_script_scanner_never_raises(script):
    words = script_words(script, ("args", 0), {"X": "fp16"})
    for w in words:
        assert script[w.start : w.start + len(w.raw)] == w.raw
    flag_uses(None, words)  # type: ignore[arg-type]


def test_accelerate_config_file_in_configmap_conflicts_with_flag():
    cm = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: acc, namespace: ns}\ndata:\n"
        "  default.yaml: |\n    distributed_type: MULTI_GPU\n    mixed_precision: fp16\n---\n"
    )
    container = (
        NEURON.replace(
            "CMD", '["accelerate", "launch", "--config_file", "/etc/acc/default.yaml", "t.py", "--bf16"]'
        ).replace("ENV", "[]")
        + "  volumeMounts: [{name: acc, mountPath: /etc/acc, readOnly: true}]\n"
    )
    found = lint(cm + job(container, "- name: acc\n  configMap: {name: acc}\n"), "EML403")
    assert len(found) == 1 and "accelerate mixed_precision: fp16" in said(found[0])


def test_eml402_on_t4_g4dn_and_silent_on_a10g():
    # The rule catalogue names T4 on g4dn beside V100: the catalogue carries g4dn (no BF16).
    container = gpu4().replace('"--num_workers", "4"', '"--bf16"').replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 1")
    on = {"node.kubernetes.io/instance-type": "g4dn.12xlarge"}
    found = lint(
        job(
            container,
            "- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 8Gi}\n",
            spec_extra=f"nodeSelector: {on}\n".replace("'", '"'),
        ),
        "EML402",
    )
    assert len(found) == 1 and "T4" in said(found[0]) and "g4dn.12xlarge" in said(found[0])
    a10g = "nodeSelector: {node.kubernetes.io/instance-type: g5.12xlarge}\n"
    assert not lint(
        job(container, "- name: dshm\n  emptyDir: {medium: Memory, sizeLimit: 8Gi}\n", spec_extra=a10g), "EML402"
    )


# --- EML403: DeepSpeed configs on their own -----------------------------------------------------

DS_BOTH = '{\n  "train_batch_size": 64,\n  "fp16": {"enabled": true},\n  "bf16": {\n    "enabled": true\n  }\n}\n'


def test_eml403_deepspeed_json_file_on_its_own():
    result = lint_text(DS_BOTH, Config(select=("EML403",)), name="configs/zero2.json")
    (f,) = [f for f in result.active if f.code == "EML403"]
    assert (f.location.file, f.location.line) == ("configs/zero2.json", 5)  # bf16.enabled, the later one
    assert "fp16.enabled at line 3, bf16.enabled at line 5" in said(f) and "cannot be simultaneously" in said(f)


@pytest.mark.parametrize(
    "text",
    [
        DS_BOTH.replace('"enabled": true\n', '"enabled": "auto"\n'),  # bf16 left to the trainer
        '{"fp16": true, "bf16": true, "output_dir": "/out"}',  # HF TrainingArguments, not DeepSpeed's blocks
        '{"fp16": {"enabled": true}, "fp16": {"enabled": false}, "bf16": {"enabled": true}}',  # EML005's
    ],
)
def test_eml403_json_file_silent_without_a_loadable_conflict(text):
    result = lint_text(text, Config(select=("EML403",)), name="ds_config.json")
    assert not [f for f in result.active if f.code == "EML403"]


def configmap(name: str, key: str = "ds.json", text: str = DS_BOTH) -> str:
    value = textwrap.indent(text, "    ")
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: ns}}\ndata:\n  {key}: |\n{value}---\n"
    )


def test_eml403_configmap_named_by_a_launcher_is_reported_once():
    container = (
        NEURON.replace("CMD", '["deepspeed", "t.py", "--deepspeed", "/ds/ds.json"]').replace("ENV", "[]")
        + "  volumeMounts: [{name: ds, mountPath: /ds}]\n"
    )
    found = lint(configmap("ds") + job(container, "- name: ds\n  configMap: {name: ds}\n"), "EML403")
    assert len(found) == 1 and "container 'c'" in said(found[0])


def test_eml403_configmap_no_launcher_names_is_judged_on_its_own():
    # two DeepSpeed configs mounted, none named: the container's analysis cannot tell which one it reads
    container = (
        NEURON.replace("CMD", '["deepspeed", "t.py"]').replace("ENV", "[]")
        + "  volumeMounts: [{name: ds, mountPath: /ds}]\n"
    )
    other = DS_BOTH.replace('"enabled": true\n', '"enabled": false\n')
    cm = configmap("ds").replace("---\n", f"  other.json: |\n{textwrap.indent(other, '    ')}---\n")
    found = lint(cm + job(container, "- name: ds\n  configMap: {name: ds}\n"), "EML403")
    assert len(found) == 1 and found[0].location.path == ("data", "ds.json")
    assert "ConfigMap ds key 'ds.json'" in said(found[0])


def test_eml403_configmap_mounted_only_by_a_serving_pod_is_not_judged():
    serve = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: serve, namespace: ns}
    spec:
      replicas: 2
      selector: {matchLabels: {app: s}}
      template:
        metadata: {labels: {app: s}}
        spec:
          containers:
            - name: s
              image: vllm/vllm-openai:v0.6.0
              args: ["--model", "m"]
              ports: [{containerPort: 8000}]
              resources: {limits: {nvidia.com/gpu: 1}}
              volumeMounts: [{name: ds, mountPath: /ds}]
          volumes:
            - {name: ds, configMap: {name: ds}}
    """
    assert not lint(configmap("ds") + textwrap.dedent(serve), "EML403")
    assert len(lint(configmap("ds"), "EML403")) == 1  # the same ConfigMap alone is judged


# --- EML404: the Neuron SDK from the platform when the image does not name it ------------------


def neuron_lint(flag: str, image: str = "repo/neuron:1.0", **platform: str):
    neuron = (
        NEURON.replace("CMD", f'["torchrun", "--nproc_per_node=2", "t.py", "{flag}"]')
        .replace("ENV", '[{name: XLA_USE_BF16, value: "1"}]')
        .replace("repo/neuron:1.0", image)
    )
    cfg = Config(select=("EML404",), platform=Platform(**platform))
    return [f for f in lint_text(textwrap.dedent(job(neuron)), cfg).active if f.code == "EML404"]


def test_eml404_names_the_platform_neuron_sdk_it_assumed():
    (f,) = neuron_lint("--bf16")
    assert "Neuron SDK 2.26 (assumed; set platform.neuron-sdk)" in said(f) and "ignore" in said(f)
    (f,) = neuron_lint("--bf16", neuron_sdk="2.25")
    assert "Neuron SDK 2.25 (from the config)" in said(f)


def test_eml404_platform_sdk_before_2_25_judges_the_cast():
    assert not neuron_lint("--bf16", neuron_sdk="2.24")  # the cast agrees with --bf16
    (f,) = neuron_lint("--fp16", neuron_sdk="2.24")
    assert "casts fp32 tensors to bf16" in said(f) and "Neuron SDK 2.24 (from the config)" in said(f)


def test_eml404_the_image_tag_wins_over_the_platform():
    assert not neuron_lint("--bf16", SDK_218)  # default platform 2.26, but the image runs 2.18
    (f,) = neuron_lint("--bf16", SDK_218.replace("sdk2.18.0", "sdk2.25.0"), neuron_sdk="2.24")
    assert "the image names Neuron SDK 2.25" in said(f)
