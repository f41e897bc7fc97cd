"""The rule registry: built-in rule files plus third-party packs from entry points.

Explicit and greppable (no subclass scanning): every rule is a file under ``rules/``; a plugin
package exposes an entry point in the group ``eksmllint.rules`` whose object is either a directory
(str/Path) of rule files or an iterable of :class:`Rule`. Duplicate codes or slugs are errors.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable, Iterator
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from eksmllint.core.rule import FAMILIES, Rule, RuleSpec, check_module
from eksmllint.paths import builtin_rules_dir, rule_fixtures_dir
from eksmllint.tables import packaged_data

ENTRY_POINT_GROUP = "eksmllint.rules"
#: EML000 reports eksmllint's own failures: no manifest may produce it, so it has no examples.
WITHOUT_EXAMPLES = frozenset({"EML000"})


class RegistryError(Exception):
    """A rule pack is broken (bad rule file, duplicate code, missing check)."""


def _resolve(dotted: str):
    module, _, attr = dotted.partition(":")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as err:
        raise RegistryError(f"check {dotted!r} cannot be imported: {err}") from err


def load_rule_dir(directory: Path, source: str = "builtin") -> Iterator[Rule]:
    builtin = source == "builtin"
    for path in sorted(directory.rglob("EML*.yaml")) if builtin else sorted(directory.rglob("*.yaml")):
        try:
            data = packaged_data(path.read_text(encoding="utf-8"))  # the parse is cached, not the validation
            spec = RuleSpec.model_validate(data)
        except Exception as err:  # pydantic or YAML: name the file, keep the message short
            raise RegistryError(f"{path}: invalid rule file: {err}") from err
        expected = f"{spec.code}-{spec.slug}.yaml"
        if path.name != expected:
            raise RegistryError(f"{path}: file name must be {expected}")
        if builtin:
            yield Rule(spec, _builtin_check(path, spec), source)
        elif spec.check:
            yield Rule(spec, _resolve(spec.check), source)
        else:
            raise RegistryError(f"{path}: a plugin rule must name its check ('module:function')")


def _builtin_check(path: Path, spec: RuleSpec) -> str:
    """A built-in rule is three things found from its code and slug: ``rules/<family>/CODE-slug.yaml``,
    the module ``eksmllint/checks/<family>/code_slug.py`` with a function ``check``, and its bad/good
    examples in ``fixtures/rules/CODE-slug/``. A missing one is an error, not a silently dead rule."""
    family = FAMILIES[int(spec.code[3])] if int(spec.code[3]) in FAMILIES else "?"
    if path.parent.name != family:
        raise RegistryError(f"{path}: a {spec.code} rule belongs in rules/{family}/")
    if spec.code not in WITHOUT_EXAMPLES and not (rule_fixtures_dir() / f"{spec.code}-{spec.slug}").is_dir():
        raise RegistryError(f"{path}: no examples in fixtures/rules/{spec.code}-{spec.slug}/")
    if spec.check:
        raise RegistryError(
            f"{path}: a built-in rule names no check; its module is {check_module(spec.code, spec.slug)}"
        )
    module = check_module(spec.code, spec.slug)
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:
        found = False
    if not found:
        raise RegistryError(f"check {module + ':check'!r} cannot be imported: no module named {module!r}")
    return f"{module}:check"  # imported when the rule is selected and run (Rule.check)


class Registry:
    def __init__(self, rules: Iterable[Rule]) -> None:
        self._by_code: dict[str, Rule] = {}
        self._by_slug: dict[str, Rule] = {}
        for rule in rules:
            if rule.code in self._by_code:
                raise RegistryError(f"duplicate rule code {rule.code} ({rule.source})")
            if rule.slug in self._by_slug:
                raise RegistryError(f"duplicate rule slug {rule.slug} ({rule.source})")
            if int(rule.code[3]) not in FAMILIES:
                raise RegistryError(f"{rule.code}: unknown family digit")
            self._by_code[rule.code] = rule
            self._by_slug[rule.slug] = rule

    def __iter__(self) -> Iterator[Rule]:
        return iter(sorted(self._by_code.values(), key=lambda r: r.code))

    def __len__(self) -> int:
        return len(self._by_code)

    def get(self, name: str) -> Rule | None:
        """Look a rule up by code or slug (case-insensitive code)."""
        return self._by_code.get(name.upper()) or self._by_slug.get(name.lower())

    def select(self, selector: str) -> list[Rule]:
        """Rules named by a selector: code, slug, family name, code prefix (``EML3``) or ``ALL``."""
        s = selector.strip()
        if s.upper() == "ALL":
            return list(self)
        rule = self.get(s)
        if rule:
            return [rule]
        if s.upper().startswith("EML") and s[3:].isdigit():
            return [r for r in self if r.code.startswith(s.upper())]
        return [r for r in self if r.family == s.lower()]


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    rules = list(load_rule_dir(builtin_rules_dir()))
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception as err:
            raise RegistryError(f"rule pack {ep.name!r} failed to load: {err}") from err
        if callable(obj) and not isinstance(obj, (str, Path)):
            obj = obj()
        if isinstance(obj, (str, Path)):
            rules.extend(load_rule_dir(Path(obj), source=ep.name))
        else:
            rules.extend(obj)
    return Registry(rules)
