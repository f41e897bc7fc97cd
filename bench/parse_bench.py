"""The parsing phase alone, in one process, in CPU seconds (steady on a busy machine).

    python bench/parse_bench.py bench/out/corpus-10000 [--repeat 3]

Rows: the floor (``yaml.compose_all`` with CSafeLoader, what bench/run.py calls the floor),
``eksmllint.yamlpos.load_yaml_stream`` (compose + conversion to YMap/YList with positions),
``eksmllint.loader.load`` as lint runs it (read, parse, resources; cyclic GC paused) and the same
with the GC left running (what loading cost before the pause), and the transfer costs of parallel
parsing (pickling the loaded files and unpickling them). Medians of --repeat rounds.
"""

from __future__ import annotations

import argparse
import gc
import pickle
import resource
import statistics
from pathlib import Path

import yaml


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from eksmllint import loader
    from eksmllint.yamlpos import load_yaml_stream

    texts = [p.read_text(encoding="utf-8") for p in sorted(args.corpus.rglob("*.yaml"))]
    rows: dict[str, list[float]] = {}

    def timed(name: str, fn) -> None:
        gc.collect()
        t = cpu()
        fn()
        rows.setdefault(name, []).append(cpu() - t)

    def floor() -> None:
        for text in texts:
            for _ in yaml.compose_all(text, Loader=yaml.CSafeLoader):
                pass

    def yamlpos() -> None:
        for text in texts:
            load_yaml_stream(text)

    def with_gc() -> None:
        pause = loader.gc_paused
        loader.gc_paused = _no_pause
        try:
            loader.load([str(args.corpus)])
        finally:
            loader.gc_paused = pause

    loaded_items: list = []

    def load_files() -> None:
        loaded_items[:] = [loader.load_file(p) for p in loader.discover([str(args.corpus)])[0]]

    for _ in range(args.repeat):
        timed("floor: compose_all (CSafeLoader)", floor)
        timed("yamlpos.load_yaml_stream", yamlpos)
        timed("loader.load (GC paused, as lint runs it)", lambda: loader.load([str(args.corpus)]))
        timed("loader.load with the GC running", with_gc)
        with loader.gc_paused():
            load_files()
            t = cpu()
            blob = pickle.dumps(loaded_items, pickle.HIGHEST_PROTOCOL)
            rows.setdefault("parallel transfer: pickle.dumps (worker)", []).append(cpu() - t)
            t = cpu()
            pickle.loads(blob)
            rows.setdefault("parallel transfer: pickle.loads (parent)", []).append(cpu() - t)
    floor_s = statistics.median(rows["floor: compose_all (CSafeLoader)"])
    print(f"{args.corpus}: {len(texts)} files")
    for name, values in rows.items():
        med = statistics.median(values)
        print(f"  {name:<44} {med:7.3f} s CPU  x{med / floor_s:5.2f} floor")


class _no_pause:  # stands in for loader.gc_paused to measure loading with the collector on
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    main()
