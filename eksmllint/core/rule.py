"""Rule metadata (declared in ``rules/<family>/EMLnnn-slug.yaml``) bound to check code.

A rule is one YAML file holding everything a user or the docs need (code, slug, severity, fix
safety, summary, rationale, references, options) plus the dotted name of its check function. Its
bad/good examples live in ``fixtures/rules/<code>-<slug>/`` — linked by that one name.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from eksmllint.core.finding import Severity

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext

FAMILIES = {
    0: "input",
    1: "efa",
    2: "gang",
    3: "shm",
    4: "precision",
    5: "disruption",
    6: "resources",
    7: "scheduling",
    8: "launch",
    9: "storage",
}
CODE_RE = re.compile(r"^EML\d{3}$")
SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
TARGETS = ("templates", "workloads", "resources", "files", "run")

CheckFn = Callable[["RuleContext", Any], Iterable[Any]]

#: The value types a rule option may have (its schema, as yamllint's ``CONF``): declared in the
#: rule file's ``option-types`` or inferred from the option's default.
OptionType = Literal["boolean", "integer", "number", "string", "strings", "string-or-strings"]
_OPTION_TYPE_TEXT = {
    "boolean": "true or false",
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "strings": "a list of strings",
    "string-or-strings": "a string or a list of strings",
}


def _is_strings(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


_OPTION_CHECKS: dict[str, Callable[[Any], bool]] = {
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "strings": _is_strings,
    "string-or-strings": lambda v: isinstance(v, str) or _is_strings(v),
}


def infer_option_type(default: Any) -> OptionType | None:
    for name in ("boolean", "integer", "number", "string", "strings"):
        if _OPTION_CHECKS[name](default):
            return name
    return None


def option_problem(kind: str, value: Any) -> str | None:
    """Why ``value`` is not of option type ``kind`` (None: it is)."""
    if _OPTION_CHECKS[kind](value):
        return None
    return f"expected {_OPTION_TYPE_TEXT[kind]}, got {value!r}"


class RuleSpec(BaseModel):
    """The validated content of one rule file."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    code: str
    slug: str
    severity: Literal["error", "warning", "info"]
    fix: Literal["safe", "unsafe", "no"]
    summary: str
    #: Plugin rules name their check ('module:function'). A built-in rule names none: its check is
    #: the function ``check`` of ``eksmllint/checks/<family>/emlNNN_<slug>.py`` (see check_module).
    check: str | None = Field(default=None, description="dotted path 'module:function' of the check")
    target: Literal["templates", "workloads", "resources", "files", "run"]
    kinds: tuple[str, ...] = ()  # with target 'resources': only these kinds (empty = all)
    description: str
    rationale: str
    fix_description: str | None = Field(default=None, alias="fix-description")
    references: tuple[str, ...] = ()
    options: dict[str, Any] = Field(default_factory=dict)
    #: An option's type when its default does not say it (``kinds: auto`` also takes a list).
    option_types: dict[str, OptionType] = Field(default_factory=dict, alias="option-types")
    #: Workload classes the rule judges (eksmllint.analysis.workload_class); empty = every workload.
    #: With target templates/workloads the check is only called on targets of these classes.
    workload_classes: tuple[str, ...] = Field(default=(), alias="workload-classes")
    mandatory: bool = False  # cannot be suppressed or deselected (EML000, EML001)
    #: Platform components whose release the rule's premise depends on (eksmllint.platform); `explain`
    #: names the release assumed.
    platform: tuple[str, ...] = ()

    @field_validator("code")
    @classmethod
    def _code(cls, v: str) -> str:
        if not CODE_RE.match(v):
            raise ValueError(f"rule code {v!r} must look like EML301")
        return v

    @field_validator("slug")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not SLUG_RE.match(v):
            raise ValueError(f"rule slug {v!r} must be kebab-case")
        return v

    @field_validator("workload_classes")
    @classmethod
    def _classes(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        from eksmllint.analysis.workload_class import CLASS_NAMES

        unknown = sorted(set(v) - CLASS_NAMES)
        if unknown:
            raise ValueError(f"unknown workload class(es) {unknown}; known: {sorted(CLASS_NAMES)}")
        return v

    @field_validator("platform")
    @classmethod
    def _components(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        from eksmllint.platform import components

        unknown = sorted(set(v) - set(components()))
        if unknown:
            raise ValueError(f"unknown platform component(s) {unknown}; known: {sorted(components())}")
        return v

    @model_validator(mode="after")
    def _option_schema(self) -> RuleSpec:
        for name in self.option_types:
            if name not in self.options:
                raise ValueError(f"{self.code}: option-types names {name!r}, which is not an option")
        for name, default in self.options.items():
            kind = self.option_types.get(name) or infer_option_type(default)
            if kind is None:
                raise ValueError(f"{self.code}: option {name!r}: declare its type in option-types")
            if (why := option_problem(kind, default)) is not None:
                raise ValueError(f"{self.code}: option {name!r} default: {why}")
        return self

    @property
    def option_schema(self) -> dict[str, OptionType]:
        """Option name -> its type (declared, else inferred from the default)."""
        out: dict[str, OptionType] = {}
        for name, default in self.options.items():
            kind = self.option_types.get(name) or infer_option_type(default)
            assert kind is not None  # _option_schema checked it
            out[name] = kind
        return out

    @model_validator(mode="after")
    def _fix_text(self) -> RuleSpec:
        if self.fix != "no" and not self.fix_description:
            raise ValueError(f"{self.code}: a fixable rule needs 'fix-description'")
        return self


def check_module(code: str, slug: str) -> str:
    """The module holding the check of a built-in rule: one rule, one module, found from its code."""
    return f"eksmllint.checks.{FAMILIES[int(code[3])]}.{code.lower()}_{slug.replace('-', '_')}"


class Rule:
    """A registered rule: immutable metadata plus its check function. Stateless by design
    (the webhook runs rules concurrently), so options live in a read-only mapping. ``check`` may
    be given as ``"module:function"``: the module is imported when the check is first asked for,
    so a run imports the modules of the rules it selects only (and ``rules``/``explain`` none)."""

    __slots__ = ("_check", "options", "severity", "source", "spec")

    def __init__(self, spec: RuleSpec, check: CheckFn | str, source: str = "builtin") -> None:
        self.spec = spec
        self._check = check
        self.source = source
        self.options: Mapping[str, Any] = MappingProxyType(dict(spec.options))
        self.severity: Severity = Severity.parse(spec.severity)  # read for every finding

    @property
    def check(self) -> CheckFn:
        check = self._check
        if isinstance(check, str):
            module, _, attr = check.partition(":")
            check = self._check = getattr(importlib.import_module(module), attr)
        return check

    @property
    def code(self) -> str:
        return self.spec.code

    @property
    def slug(self) -> str:
        return self.spec.slug

    @property
    def family(self) -> str:
        return FAMILIES[int(self.code[3])]

    @property
    def fixable(self) -> bool:
        return self.spec.fix != "no"

    def with_options(self, options: Mapping[str, Any]) -> Rule:
        rule = Rule.__new__(Rule)
        rule.spec, rule._check, rule.source, rule.severity = self.spec, self._check, self.source, self.severity
        merged = dict(self.spec.options)
        merged.update(options)
        rule.options = MappingProxyType(merged)
        return rule

    def __repr__(self) -> str:
        return f"Rule({self.code} {self.slug})"
