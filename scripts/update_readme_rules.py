"""Regenerate the README rule table from the rule metadata: python scripts/update_readme_rules.py"""

import re
from pathlib import Path

from eksmllint.core.registry import default_registry
from eksmllint.docs import rules_markdown

readme = Path(__file__).resolve().parent.parent / "README.md"
text = readme.read_text(encoding="utf-8")
table = "<!-- rules:start -->\n" + rules_markdown(default_registry()) + "<!-- rules:end -->"
readme.write_text(
    re.sub(r"<!-- rules:start -->\n.*?<!-- rules:end -->", lambda _: table, text, flags=re.S), encoding="utf-8"
)
