"""The admission webhook: ``eksmllint serve`` (validating and mutating, admission.k8s.io/v1).

- :mod:`~eksmllint.server.linting`: one admitted object linted against the context; safe-fix patch;
- :mod:`~eksmllint.server.admission`: AdmissionReview parsing and responses;
- :mod:`~eksmllint.server.app`: the ASGI app (routes, body cap, time budget, failure mode, metrics),
  configured by :mod:`~eksmllint.server.settings`;
- :mod:`~eksmllint.server.context` / :mod:`~eksmllint.server.cluster`: context from a directory
  and from the live cluster;
- :mod:`~eksmllint.server.tls`: certificate rotation; :mod:`~eksmllint.server.runner`: uvicorn,
  draining shutdown; :mod:`~eksmllint.server.manifests`: ``eksmllint webhook-manifests``.

Heavy imports (uvicorn, prometheus_client, kubernetes) stay out of this package's ``__init__`` so
that ``eksmllint lint`` never pays for them.
"""
