"""The one reader of embedded training configs (eksmllint.analysis.configs + platform/configs.yaml):
forms recognised by content, facts read from the table's keys, configs found from the launch line."""

from __future__ import annotations

import json

import pytest
import yaml

from eksmllint.analysis.configs import EmbeddedConfig, container_configs, recognise, unmodelled_configmap_keys
from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.loader import parse_source
from eksmllint.platform.configs import config_forms
from eksmllint.resource import SourceFile
from eksmllint.workload import workload_of

DS = {
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 8,
    "gradient_clipping": 1.0,
    "bf16": {"enabled": True},
    "zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}},
}
LIGHTNING = {
    "trainer": {
        "precision": "16-mixed",
        "accumulate_grad_batches": 4,
        "gradient_clip_val": 0.5,
        "default_root_dir": "/ckpt/run",
    },
    "data": {"init_args": {"batch_size": 32}},
}
HF = {"output_dir": "/ckpt/hf", "per_device_train_batch_size": 2, "gradient_accumulation_steps": 16, "fp16": True}


def _cfg(data) -> EmbeddedConfig:
    form = recognise(data)
    assert form is not None
    return EmbeddedConfig(form, data)


def test_every_form_reads_its_facts_from_the_table():
    ds, lt, hf = _cfg(DS), _cfg(LIGHTNING), _cfg(HF)
    assert (ds.form.name, lt.form.name, hf.form.name) == ("deepspeed", "lightning", "hf-training-arguments")
    assert ds.precisions() == [("bf16", "bf16.enabled: true")] and ds.micro_batch() == 4
    assert (ds.grad_accumulation(), ds.grad_clipping(), ds.offload_paths()) == (
        8,
        1.0,
        [("zero_optimization.offload_param.nvme_path", "/local_nvme")],
    )
    assert lt.precisions() == [("fp16", "trainer.precision: 16-mixed")] and lt.micro_batch() == 32
    assert (lt.grad_accumulation(), lt.grad_clipping(), lt.checkpoint_paths()) == (
        4,
        0.5,
        [("trainer.default_root_dir", "/ckpt/run")],
    )
    assert hf.precisions() == [("fp16", "fp16: true")] and hf.checkpoint_paths() == [("output_dir", "/ckpt/hf")]


@pytest.mark.parametrize("data", [{"trainer": "x"}, {"output_dir": "/o"}, {"fp16": True}, [1, 2], "text"])
def test_thin_evidence_is_no_form(data):
    assert recognise(data) is None


def test_table_validates_and_every_modelled_form_says_where_precision_is():
    forms = config_forms()
    assert {f.name for f in forms} >= {"deepspeed", "accelerate", "lightning", "hf-training-arguments"}
    assert all(f.source.startswith("http") for f in forms)
    assert all(f.precision for f in forms if f.modelled)


def _resources(text: str):
    resources, _ = parse_source(SourceFile("m.yaml", text, "yaml"))
    return resources


def test_unmodelled_form_in_a_configmap_is_said_once():
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {
            "tune.yaml": yaml.safe_dump({"model": {"_component_": "torchtune.models.llama3_2.lora"}}),
            "ds.json": json.dumps(DS),
        },
    }
    (res,) = _resources(yaml.safe_dump(cm))
    assert [(k, f.name) for k, f in unmodelled_configmap_keys(res)] == [("tune.yaml", "torchtune")]
    found = [f for f in lint_text(yaml.safe_dump(cm), Config(), name="m.yaml").active if f.code == "EML004"]
    assert len(found) == 1 and found[0].message.startswith("not judged: key tune.yaml holds a config for torchtune")


def test_container_finds_lightning_config_it_names_in_a_mounted_configmap():
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "lt"},
        "data": {"fit.yaml": yaml.safe_dump(LIGHTNING)},
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "volumes": [{"name": "cfg", "configMap": {"name": "lt"}}],
                    "containers": [
                        {
                            "name": "c",
                            "image": "i",
                            "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}],
                            "command": ["bash", "-c", 'ARGS="fit --config /cfg/fit.yaml"\npython main.py $ARGS'],
                        }
                    ],
                }
            }
        },
    }
    resources = _resources(yaml.safe_dump_all([cm, job]))
    (t,) = workload_of(resources[1]).templates

    class _Run:  # what the reader asks of a run: its ConfigMaps, and a memo
        def once(self, name, obj, compute):
            return compute(self, obj)

        def find(self, kind, name, ns):
            return [r for r in resources if r.kind == kind and r.name == name]

    refs = container_configs(_Run(), t.containers[0])
    assert [(r.config.form.name, r.word.text if r.word else None) for r in refs] == [("lightning", "/cfg/fit.yaml")]
