"""mypy over the whole package (pyproject's [tool.mypy]); exit 1 and list the errors when there are any.

    python scripts/typecheck.py

Run by the project's pre-commit hook and by tests/e2e/test_code_quality.py. The tree is clean:
every module of ``eksmllint/`` type-checks, and a change that adds an error fails the guard rail.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def errors_in(mypy_output: str) -> list[str]:
    return [line for line in mypy_output.splitlines() if ": error:" in line]


def main() -> int:
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    if "Found" not in result.stdout and "Success" not in result.stdout:  # mypy itself did not run
        sys.stderr.write(result.stdout + result.stderr)
        return 2
    errors = errors_in(result.stdout)
    print("\n".join(errors) if errors else f"mypy: {result.stdout.splitlines()[-1]}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
