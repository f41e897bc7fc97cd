"""Training configs a launch line names (DeepSpeed, accelerate, PyTorch Lightning, Hugging Face
``TrainingArguments``...): how each form is recognised and where each fact is written, as validated
data (``configs.yaml``, sources cited). :mod:`eksmllint.analysis.configs` reads configs with it."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eksmllint.tables import load_table

DATA = Path(__file__).with_name("configs.yaml")
PRECISIONS = ("fp16", "bf16")


class Recognise(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    all_of: tuple[str, ...] = Field((), alias="all-of")
    any_of: tuple[str, ...] = Field((), alias="any-of")
    deepspeed: bool = False  # eksmllint.launch.deepspeed.looks_like_deepspeed decides

    @model_validator(mode="after")
    def _something(self) -> Recognise:
        if not (self.all_of or self.any_of or self.deepspeed):
            raise ValueError("a form is recognised by `all-of` / `any-of` keys or `deepspeed: true`")
        return self


class PrecisionKey(BaseModel):
    """``key`` selects ``means`` when true; without ``means`` its value names the precision."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    means: str | None = None

    @model_validator(mode="after")
    def _known(self) -> PrecisionKey:
        if self.means is not None and self.means not in PRECISIONS:
            raise ValueError(f"{self.key}: means must be one of {PRECISIONS}")
        return self


class ConfigForm(BaseModel):
    """One config form: its label, source, recognition, the options naming it and its fact keys."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str = ""
    label: str
    source: str
    modelled: bool = True
    recognise: Recognise
    options: tuple[str, ...] = ()
    options_decide: bool = Field(False, alias="options-decide")
    precision: tuple[PrecisionKey, ...] = ()
    micro_batch: tuple[str, ...] = Field((), alias="micro-batch")
    global_batch: tuple[str, ...] = Field((), alias="global-batch")
    grad_accumulation: tuple[str, ...] = Field((), alias="grad-accumulation")
    grad_clipping: tuple[str, ...] = Field((), alias="grad-clipping")
    offload_paths: tuple[str, ...] = Field((), alias="offload-paths")
    checkpoint_paths: tuple[str, ...] = Field((), alias="checkpoint-paths")

    @model_validator(mode="after")
    def _modelled_has_facts(self) -> ConfigForm:
        if self.modelled and not self.precision:
            raise ValueError(f"{self.label}: a modelled form says where its precision is written")
        if not self.options:
            raise ValueError(f"{self.label}: name the launch options that point at it")
        return self


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    forms: dict[str, ConfigForm]


@lru_cache(maxsize=1)
def config_forms() -> tuple[ConfigForm, ...]:
    """The config forms, in recognition order (validated once)."""
    table = load_table(_Table, DATA)
    return tuple(form.model_copy(update={"name": name}) for name, form in table.forms.items())
