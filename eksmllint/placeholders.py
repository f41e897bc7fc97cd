"""Template placeholders: values someone fills in before the manifest is applied.

Samples ship manifests with blanks: envsubst references (``$NUM_NODES``, ``${GPUS}``), Helm/Go
or Jinja expressions (``{{ .Values.x }}``), and fill-me-in markers (``PLACEHOLDER_NUM_NODES``,
``REPLACE_ME``, ``<your-bucket>``). A value that is only such a token is *unknown*: it is decided at
render time, so it is never a type error (EML002) and never read as a number.

What is not a placeholder stays an error: ``replicas: four`` or ``replicas: "8"`` are real type
errors. A single ALL-CAPS word counts only from :data:`MARKER_WORDS` (``restartPolicy: NEVER`` is a
real enum error); ALL-CAPS tokens need an underscore (``NUM_NODES``) otherwise.
"""

from __future__ import annotations

import re
from typing import Any

#: Single ALL-CAPS words that samples use as "fill this in".
MARKER_WORDS = ("PLACEHOLDER", "REPLACEME", "CHANGEME", "TODO", "TBD", "FIXME")

_PLACEHOLDER_RE = re.compile(
    r"""^(?:
        \$[A-Za-z_][A-Za-z0-9_]*                          # $VAR (envsubst, shell)
      | \$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^{}]*)?\}   # ${VAR}, ${VAR:-default}
      | \{\{.*\}\}                                        # {{ .Values.x }} (Helm, Go, Jinja)
      | <[^<>\n]+>                                        # <your-bucket>
      | [A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+                     # PLACEHOLDER_NUM_NODES, REPLACE_ME
      | (?:"""
    + "|".join(MARKER_WORDS)
    + r""")
    )$""",
    re.VERBOSE | re.DOTALL,
)


def is_placeholder(value: Any) -> bool:
    """True for a string that is, as a whole, one template placeholder token."""
    return isinstance(value, str) and bool(_PLACEHOLDER_RE.match(value.strip()))


__all__ = ["MARKER_WORDS", "is_placeholder"]
