"""Family 1xx: EFA and networking (EML101-EML106), one module per rule."""
