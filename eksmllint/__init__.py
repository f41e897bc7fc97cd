"""eksmllint: policy and validation linter for ML training manifests on Kubernetes (EKS first)."""

__version__ = "0.1.0"
