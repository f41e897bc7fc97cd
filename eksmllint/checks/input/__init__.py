"""Family 0xx: input and schema (EML000-EML007), one module per rule."""
