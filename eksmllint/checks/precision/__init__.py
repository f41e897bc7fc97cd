"""Family 4xx: training precision (fp16 / bf16) against the accelerators and the Neuron/XLA env."""
