"""Family 7xx: the scheduling graph and references (taints, NodePool matches, references, zones)."""
