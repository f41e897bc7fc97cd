"""Family 5xx: voluntary disruption of training nodes by Karpenter (EML501-EML503), one module per rule."""
