"""Schema validation (EML002) and API deprecation data (EML003).

``validate_core`` checks core Kubernetes kinds against the strict OpenAPI
schemas bundled with kubernetes-validate; ``api_status`` says whether an
apiVersion is deprecated or removed for a target Kubernetes version.
Both are pure functions over bundled data, so rules can call them per
document without I/O after the first use.
"""

from eksmllint.schema.core import MAX_ISSUES, SchemaIssue, supported_versions, validate_core
from eksmllint.schema.deprecations import ApiStatus, api_status

__all__ = ["MAX_ISSUES", "ApiStatus", "SchemaIssue", "api_status", "supported_versions", "validate_core"]
