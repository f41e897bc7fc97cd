"""The autofix engine: apply rules' :class:`~eksmllint.core.finding.Fix` data to manifests.

- :func:`fix_text` / :func:`fix_sources`: the fixed-point loop (lint, apply non-conflicting
  fixes, re-lint; :mod:`eksmllint.fix.loop`, shared with the mutating webhook) in memory;
- :func:`apply_fix`: one fix spliced into text, byte-identical outside the edited node, verified;
- :func:`to_json_patch`: the same fix as an RFC 6902 JSON Patch (admission webhook);
- :mod:`eksmllint.fix.writer`: atomic writes; :mod:`eksmllint.fix.run`: what ``eksmllint fix``
  (:mod:`eksmllint.cli.fix`) and ``lint --fix`` do.
"""

from eksmllint.fix.apply import apply_findings, apply_fix, select_fixes
from eksmllint.fix.engine import (
    FileOutcome,
    FixReport,
    FixSource,
    fix_sources,
    fix_text,
)
from eksmllint.fix.jsonpatch import to_json_patch
from eksmllint.fix.spans import FixError

__all__ = [
    "FileOutcome",
    "FixError",
    "FixReport",
    "FixSource",
    "apply_findings",
    "apply_fix",
    "fix_sources",
    "fix_text",
    "select_fixes",
    "to_json_patch",
]
