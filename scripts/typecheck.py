"""mypy over the whole tree (pyproject's [tool.mypy]), failing only on errors in the paths that are
already clean: the tree is cleaned up package by package (issue 13), and a clean path must stay so.

    python scripts/typecheck.py        # exit 1 and list the errors in clean paths

Run by the project's pre-commit hook and by tests/e2e/test_code_quality.py. When a module becomes
clean, remove it from NOT_YET (or add its package to CLEAN).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Packages and modules that type-check clean: the whole package, but for NOT_YET.
CLEAN = ("eksmllint/",)
#: Still to clean: the rule families not yet moved to one module per rule (old module or new
#: package; issue 13). Remove an entry as soon as it is clean.
NOT_YET = (
    "eksmllint/checks/efa",
    "eksmllint/checks/input",
    "eksmllint/checks/schema",
    "eksmllint/checks/resources",
)


def errors_in_clean_paths(mypy_output: str) -> list[str]:
    return [
        line
        for line in mypy_output.splitlines()
        if ": error:" in line and line.startswith(CLEAN) and not line.startswith(NOT_YET)
    ]


def main() -> int:
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    if "Found" not in result.stdout and "Success" not in result.stdout:  # mypy itself did not run
        sys.stderr.write(result.stdout + result.stderr)
        return 2
    errors = errors_in_clean_paths(result.stdout)
    print("\n".join(errors) if errors else f"mypy: no errors in the clean paths ({result.stdout.splitlines()[-1]})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
