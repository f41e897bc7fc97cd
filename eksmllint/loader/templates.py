"""Template sources: envsubst manifests, Helm chart templates, and other ``{{ }}`` files.

* **envsubst templates** (``fsdp.yaml-template``, ``job.yml.tpl``, ``job.yaml.tmpl``): YAML with
  ``$VAR`` blanks, filled in before ``kubectl apply``. They are linted like the manifest they
  become; their placeholders are unknown values (:mod:`eksmllint.placeholders`). A bare
  ``*.template``/``*.tpl``/``*.tmpl`` is linted only when its text says what it is (a top-level
  ``apiVersion:``/``kind:`` line, or ``#SBATCH``); otherwise it is skipped, and the run says so.
* **Helm chart templates**: a file under ``templates/`` of a chart (a ``Chart.yaml`` beside that
  folder) holding ``{{ }}`` is not a manifest until ``helm template`` renders it. Such files are
  skipped and the chart gets one EML007 finding naming the command that renders it for linting.
* Any other file whose YAML parse stops on ``{{ }}`` / ``{% %}`` syntax is reported as EML007
  (render first), not EML001: that syntax is the template engine's, not broken YAML.
"""

from __future__ import annotations

import os
import re

TEMPLATE_CODE = "EML007"

#: Suffixes of a manifest template, with the manifest suffix they stand for.
_TEMPLATE_SUFFIX_RE = re.compile(r"(\.(?:ya?ml|json))(?:-template|\.template|\.tpl|\.tmpl|\.j2|\.jinja2?)$")
#: Template suffixes that do not say what the file becomes.
BARE_TEMPLATE_SUFFIXES = (".template", ".tpl", ".tmpl")
_MANIFEST_LINE_RE = re.compile(r"^(?:apiVersion|kind):", re.MULTILINE)
#: Where a Go/Helm/Jinja expression or tag opens (an opener is enough: the search stays linear).
_TEMPLATE_OPEN_RE = re.compile(r"\{\{|\{%")

CHART_FILE = "Chart.yaml"
CHART_TEMPLATES_DIR = "templates"


def untemplated_name(lower_name: str) -> tuple[str, bool]:
    """(the name the file has once rendered, whether it is a template): ``a.yaml-template`` ->
    (``a.yaml``, True); a bare ``a.template`` -> (``a``, True); ``a.yaml`` -> (``a.yaml``, False)."""
    m = _TEMPLATE_SUFFIX_RE.search(lower_name)
    if m:
        return lower_name[: m.start()] + m.group(1), True
    for suffix in BARE_TEMPLATE_SUFFIXES:
        if lower_name.endswith(suffix):
            return lower_name[: -len(suffix)], True
    return lower_name, False


def is_template_name(lower_name: str) -> bool:
    """Is this (lower-case) file name one of the template names above? Discovery picks them up."""
    return untemplated_name(lower_name)[1]


def looks_like_manifest(text: str) -> bool:
    """A top-level ``apiVersion:`` or ``kind:`` line: the text is meant to be a Kubernetes manifest."""
    return bool(_MANIFEST_LINE_RE.search(text))


def has_template_expressions(text: str) -> bool:
    return "{" in text and bool(_TEMPLATE_OPEN_RE.search(text))


def template_syntax_at(text: str, line: int) -> bool:
    """Did the YAML parser stop on template syntax: a ``{{``/``{%`` on the line it stopped at or the
    line before? Broken YAML elsewhere in a file that merely uses ``{{ }}`` values (an Argo
    Workflow, a CI file) stays EML001."""
    if line < 1 or "{" not in text:
        return False
    lines = text.split("\n", line)[max(line - 2, 0) : line]
    return any("{{" in ln or "{%" in ln for ln in lines)


def _chart_of_templates_dir(directory: str) -> str | None:
    """The chart a ``templates`` folder (or a folder below one) belongs to, or None."""
    head = directory
    while True:
        parent, name = os.path.split(head)
        if name == CHART_TEMPLATES_DIR and os.path.isfile(os.path.join(parent, CHART_FILE)):
            return parent or "."
        if not parent or parent == head:
            return None
        head = parent


def chart_of(path: str) -> str | None:
    """The Helm chart folder whose ``templates/`` holds ``path``, or None (not a chart template).
    Not cached: a long-running server may see a Chart.yaml appear; only paths with a
    ``templates`` folder cost a few stat calls."""
    directory = os.path.dirname(path)
    if CHART_TEMPLATES_DIR not in directory or CHART_TEMPLATES_DIR not in directory.replace(os.sep, "/").split("/"):
        return None
    return _chart_of_templates_dir(directory)


def chart_source(path: str, text: str) -> str | None:
    """The chart of a Helm chart template that needs rendering (``{{ }}`` in a chart's templates/)."""
    chart = chart_of(path)  # first: most paths have no templates/ folder, and then the text is not read
    return chart if chart and has_template_expressions(text) else None


def chart_file(chart: str) -> str:
    """Where a chart's one finding goes: its Chart.yaml."""
    return os.path.normpath(os.path.join(chart, CHART_FILE))


def chart_skip_reason(chart: str) -> str:
    return f"Helm chart template of {chart}: not YAML until rendered (see {TEMPLATE_CODE})"


def chart_message(count: int) -> str:
    """On the chart's Chart.yaml; the command to run is the finding's detail."""
    return f"Helm chart: {count} template file(s) with {{{{ }}}} were not linted; render the chart first"


def template_parse_message(error: str, line: int) -> str:
    """One line (the finding is on the line where the YAML parser stopped, ``error`` says why)."""
    return "template source with {{ }} / {% %}, not YAML until rendered: render it, then lint the output"


def script_template_line(name: str, text: str) -> int | None:
    """The first line with a ``{{ }}``/``{% %}`` expression of a batch-script *template* (a templated
    file name), or None. Such a script is judged after rendering: ``--job-name={{ NAME }}-x`` is not
    an ``#SBATCH`` error."""
    if not is_template_name(name.lower()):
        return None
    m = _TEMPLATE_OPEN_RE.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else None


def script_template_message() -> str:
    return "batch script template with {{ }} / {% %}: it is judged once rendered; render it, then lint the output"


def skip_reason(lower_name: str) -> str:
    """Why :func:`eksmllint.loader.read_source` passed over a discovered file."""
    _, templated = untemplated_name(lower_name)
    if templated:
        return "template with no top-level apiVersion/kind line and no #SBATCH line: not a manifest or batch script"
    return "shell script without an #SBATCH line: not a Slurm batch script"


__all__ = [
    "BARE_TEMPLATE_SUFFIXES",
    "TEMPLATE_CODE",
    "chart_file",
    "chart_message",
    "chart_of",
    "chart_skip_reason",
    "chart_source",
    "has_template_expressions",
    "is_template_name",
    "looks_like_manifest",
    "script_template_line",
    "script_template_message",
    "skip_reason",
    "template_parse_message",
    "template_syntax_at",
    "untemplated_name",
]
