"""Per-run analyses that rules read instead of recomputing: what the workload is
(``workload_class``), where a pod template can land with its devices (``placement``),
and what its containers run (``commands``). Each answer is computed once per run."""
