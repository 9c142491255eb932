#!/usr/bin/env python3
"""The label-free check of `pipeline bootstrap` against the gold (models/README, "Adapted
models"): for each big9 site, self-train on an unlabelled pool, and compare the check's verdict
with what the adapted model does to shingle F1 (as `pipeline eval` pools it, default span
options, no site memory: the bootstrap's own `--eval-manifest` score).

Usage: scripts/bootstrap-check-eval.py [--bin target/release/pipeline] [--datasets target/datasets]
       [--iterations 1] [-- EXTRA BOOTSTRAP FLAGS...]

Rows:
- pool = the scored pages, per site (`--group-by site`);
- held-out years: each site-year scored, the pool = the site's other three years.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from manifests import read_manifest, write_manifest  # noqa: E402


F1 = re.compile(r"eval: pooled F1 ([0-9.]+)")


def run(args, pool, scored, tmp, extra):
    out = os.path.join(tmp, "adapted.nbm")
    cmd = [args.bin, "bootstrap", "--unlabeled", pool, "--out", out, "--group-by", "site",
           "--iterations", str(args.iterations), "--eval-manifest", scored, "--cache-dir", tmp,
           "--site-memory-pages", "0", "--threads", "2"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    f1s = [float(m.group(1)) for m in F1.finditer(p.stderr)]
    checks = [line[len("check "):] for line in p.stderr.splitlines() if line.startswith("check ")]
    kept = "self-training not kept" not in p.stderr
    return f1s[0], f1s[-1], kept, checks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/pipeline")
    ap.add_argument("--datasets", default="target/datasets")
    ap.add_argument("--iterations", type=int, default=1)
    ap.add_argument("extra", nargs="*")
    args = ap.parse_args()
    base = os.path.join(args.datasets, "big9")
    rows = read_manifest(os.path.join(base, "manifest.jsonl"))
    sites = sorted({r["site"] for r in rows})
    verdicts = []
    with tempfile.TemporaryDirectory() as tmp:
        print(f"big9, pool = the scored pages, {args.iterations} iteration(s): supervised -> adapted, verdict")
        for s in sites:
            m = os.path.join(tmp, "site.jsonl")
            write_manifest([r for r in rows if r["site"] == s], base, m)
            sup, ada, kept, checks = run(args, m, m, tmp, args.extra)
            verdicts.append(("pool=scored", s, sup, ada, kept))
            print(f"  {s:<12} {sup:.3f} -> {ada:.3f} ({ada - sup:+.3f})  {'kept' if kept else 'supervised kept'}"
                  f"  [{'; '.join(checks)}]", flush=True)
        print("big9 held-out years (pool = the other three years)")
        for s in sites:
            for y in sorted({r["year"] for r in rows if r["site"] == s}):
                pool, scored = os.path.join(tmp, "pool.jsonl"), os.path.join(tmp, "scored.jsonl")
                write_manifest([r for r in rows if r["site"] == s and r["year"] != y], base, pool)
                write_manifest([r for r in rows if r["site"] == s and r["year"] == y], base, scored)
                sup, ada, kept, checks = run(args, pool, scored, tmp, args.extra)
                verdicts.append(("held-out year", f"{s} {y}", sup, ada, kept))
                print(f"  {s:<12} {y} {sup:.3f} -> {ada:.3f} ({ada - sup:+.3f})  "
                      f"{'kept' if kept else 'supervised kept'}  [{'; '.join(checks)}]", flush=True)
    print("summary: rows where the adapted model was kept / rejected, and its F1 change there")
    for kind in ("pool=scored", "held-out year"):
        v = [x for x in verdicts if x[0] == kind]
        for kept in (True, False):
            d = [x[3] - x[2] for x in v if x[4] == kept]
            if d:
                print(f"  {kind:<14} {'kept' if kept else 'rejected':<9} {len(d):>3} rows, F1 change "
                      f"mean {sum(d) / len(d):+.4f}, worst {min(d):+.4f}, best {max(d):+.4f}")
        res = [x[2] if not x[4] else x[3] for x in v]
        sup = [x[2] for x in v]
        print(f"  {kind:<14} mean F1: supervised {sum(sup) / len(sup):.4f}, with the check "
              f"{sum(res) / len(res):.4f}, always adapted {sum(x[3] for x in v) / len(v):.4f}")


if __name__ == "__main__":
    main()
