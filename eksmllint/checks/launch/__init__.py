"""Family 8xx: launch and job semantics (EML801-EML810), one module per rule."""
