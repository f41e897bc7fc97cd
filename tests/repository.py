"""Where the repository is, for tests at any depth below tests/ (conftest puts tests/ on sys.path)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
