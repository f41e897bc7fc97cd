"""Where does a lint run spend its time? Phases and rules, in CPU seconds, for one corpus.

    python bench/profile_rules.py bench/out/corpus-10000 [--top 25] [--json out.json]

Phases: start-up imports and the rule registry, loading (read + parse), the run's derived views
(workloads, NodePools, placement of every pod template: ``LintRun.landing``), then every enabled
rule on its own (in registry order, so each rule pays for the caches it fills first; placement is
computed before the rules so that it is not charged to the first placement rule). CPU time, not
wall time, so that the figures mean something on a busy machine. Run it on two sizes to see which
rules grow faster than the input (bench/README.md).
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
from pathlib import Path


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    phases: dict[str, float] = {}
    t = cpu()
    from eksmllint.config import Config
    from eksmllint.core import engine
    from eksmllint.core.context import LintRun, RunSettings
    from eksmllint.core.registry import default_registry
    from eksmllint.loader import load

    phases["import"] = cpu() - t
    t = cpu()
    registry = default_registry()
    rules = engine.select_rules(registry, Config())
    phases["registry"] = cpu() - t
    gc.collect()
    gc.disable()  # as lint_paths does (loader.gc_paused): else each phase pays for collections
    t = cpu()  # that re-scan everything loaded before it, and the figures blame whoever ran then
    loaded = load([str(args.corpus)])
    phases["load"] = cpu() - t
    run = LintRun(loaded.resources, loaded.files, RunSettings())
    t = cpu()
    templates = run.templates
    phases["workloads"] = cpu() - t
    t = cpu()
    pools = run.nodepools
    phases["nodepools"] = cpu() - t
    t = cpu()
    for tpl in templates:
        run.landing(tpl)
    phases["landing"] = cpu() - t

    per_rule = []
    for rule in rules:
        t = cpu()
        findings = engine.run_rules(run, [rule])
        per_rule.append(
            {"code": rule.code, "target": rule.spec.target, "cpu_s": round(cpu() - t, 4), "findings": len(findings)}
        )
    phases["rules"] = sum(r["cpu_s"] for r in per_rule)
    docs = len(loaded.resources)
    print(f"{args.corpus}: {docs} resources, {len(templates)} pod templates, {len(pools)} NodePools")
    for name, secs in phases.items():
        print(f"  {name:<10} {secs:8.3f} s  {secs / max(docs, 1) * 1000:8.4f} ms/resource")
    print("  slowest rules:")
    for r in sorted(per_rule, key=lambda r: -r["cpu_s"])[: args.top]:
        print(f"    {r['code']} {r['target']:<9} {r['cpu_s']:8.3f} s  {r['findings']:>6} findings")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "corpus": str(args.corpus),
                    "resources": docs,
                    "templates": len(templates),
                    "nodepools": len(pools),
                    "phases": phases,
                    "rules": per_rule,
                    "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    sys.exit(main())
