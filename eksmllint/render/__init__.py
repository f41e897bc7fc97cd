"""Seeing the platform: the resource graph exported (DOT, Mermaid, JSON, HTML), drawn as SVG,
the self-contained HTML report, and the terminal progress bar.

Modules: :mod:`~eksmllint.render.graph_export` (graph model and text formats),
:mod:`~eksmllint.render.svg` (layered layout computed in Python), :mod:`~eksmllint.render.html`
(the report page) and :mod:`~eksmllint.render.progress` (the ``graph`` command is
:mod:`eksmllint.cli.graph`). Nothing is imported here on purpose: the CLI imports ``progress`` on
every run and must not pay for networkx or the HTML templates.
"""
