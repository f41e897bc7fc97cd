"""The webhook's CPU per request, in process and countable (not a test: run it by hand).

    python bench/webhook_cost.py --requests 41                 # lint 41 varied PyTorchJob reviews
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/webhook_cost.py --requests 1
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/webhook_cost.py --requests 41
    python bench/webhook_cost.py --requests 200 --profile      # where a request's time goes

The same objects and context as ``bench/webhook.py`` (a PyTorchJob review, 50 NodePools of
context), linted with ``AdmissionLinter.lint`` as the server's handler does, without TLS and HTTP.
The instructions of one request are (count at N+1 requests - count at 1) / N: start-up, imports
and the first request's warm-up cancel out. Instruction counts do not depend on the other work of
a shared machine, so they compare two versions of the server path where latency figures cannot.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from webhook import nodepool, pytorchjob  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=41)
    ap.add_argument("--nodepools", type=int, default=50)
    ap.add_argument("--profile", action="store_true", help="cProfile the requests after the first")
    args = ap.parse_args()

    from eksmllint.config import Config
    from eksmllint.core.registry import default_registry
    from eksmllint.loader import LoadResult
    from eksmllint.loader.files import parse_source
    from eksmllint.resource import SourceFile
    from eksmllint.server.context import ContextSnapshot
    from eksmllint.server.linting import AdmissionLinter

    files, resources = [], []
    for i in range(args.nodepools):
        src = SourceFile(f"nodepool-{i:02d}.yaml", nodepool(i), "yaml")
        res, _ = parse_source(src)
        files.append(src)
        resources += res
    context = ContextSnapshot.build([LoadResult(files, resources)], 1)
    linter = AdmissionLinter(Config(), default_registry(), ["EML301"])
    objects = [pytorchjob(f"llama-pretrain-{i}") for i in range(args.requests)]
    findings = len(linter.lint(objects[0], context, "training").findings)  # warm-up: imports, caches
    rest = objects[1:]
    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.runcall(lambda: [linter.lint(o, context, "training") for o in rest])
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    else:
        for obj in rest:
            linter.lint(obj, context, "training")
    print(f"{args.requests} requests, {findings} findings each, {args.nodepools} NodePools of context")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
