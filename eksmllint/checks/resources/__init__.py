"""Family 6xx: accelerator and resource math, one module per rule (shared helpers in ``_shared``)."""
