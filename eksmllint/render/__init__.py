"""Seeing the platform: the resource graph exported (DOT, Mermaid, JSON, HTML), drawn as SVG,
the self-contained HTML report, and the terminal progress bar.

Modules: :mod:`~eksmllint.render.graph_export` (graph model and text formats),
:mod:`~eksmllint.render.svg` (layered layout computed in Python), :mod:`~eksmllint.render.html`
(the report page), :mod:`~eksmllint.render.progress` and :mod:`~eksmllint.render.cli`.
Nothing is imported here on purpose: the loader imports ``progress`` on every run and must not
pay for networkx or the HTML templates.
"""
