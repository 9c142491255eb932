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
Columns: the supervised model; the adapted model on every page (the paper: `--no-check
--no-guard`); the adapted model guarded by its pool's layouts (`--no-check`); what the default bootstrap writes (the guarded adapted model where the
check shows a gain, else the supervised model).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from manifests import read_manifest, write_manifest  # noqa: E402


def eval_f1(args, scored, model=None):
    cmd = [args.bin, "eval", "--manifest", scored, "--json", "--site-memory-pages", "0", "--threads", "2"]
    if model:
        cmd += ["--model", model]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return json.loads(p.stdout)["overall"]["shingle_f1"]


def per_page(args, scored, tmp, model=None):
    """Each scored page's (shingle precision, recall), site memory off."""
    out = os.path.join(tmp, "per-page.jsonl")
    cmd = [args.bin, "eval", "--manifest", scored, "--site-memory-pages", "0", "--threads", "2", "--per-page", out]
    if model:
        cmd += ["--model", model]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(out) as f:
        return {r["id"]: (r["sh_p"] or 0.0, r["sh_r"] or 0.0) for r in map(json.loads, f)}


def pooled(pages):
    p = sum(x[0] for x in pages) / len(pages)
    r = sum(x[1] for x in pages) / len(pages)
    return 2 * p * r / (p + r) if p + r else 0.0


def one_pool(args, rows, base, tmp):
    """Every site in one bootstrap run (each site a source, or each template with
    `host-template`): the check decides per source. Pool = the scored pages, and each year
    scored with the other three years of every site as the pool."""
    years = sorted({r["year"] for r in rows})
    print("big9, every site in one pool (per-source check), site memory off: "
          "supervised -> the paper (--no-check --no-guard) -> default with --iterations")
    for group in ("site", "host-template"):
        cases = [("pool = scored pages", rows, rows)]
        cases += [(f"held-out {y}", [r for r in rows if r["year"] != y], [r for r in rows if r["year"] == y])
                  for y in years]
        res = {"sup": {}, "paper": {}, "check": {}}
        for name, pool_rows, scored_rows in cases:
            pool, scored = os.path.join(tmp, "pool.jsonl"), os.path.join(tmp, "scored.jsonl")
            write_manifest(pool_rows, base, pool)
            write_manifest(scored_rows, base, scored)
            paper, checked = os.path.join(tmp, "paper.nbm"), os.path.join(tmp, "checked.nbm")
            bootstrap(args, pool, tmp, ["--no-check", "--no-guard"], paper, group)
            log = bootstrap(args, pool, tmp, [], checked, group)
            line = next((x for x in log.splitlines() if x.startswith("adapted for") or "not kept" in x),
                        "every source adapted")
            key = "scored" if name.startswith("pool") else "held"
            got = {k: per_page(args, scored, tmp, m) for k, m in (("sup", None), ("paper", paper), ("check", checked))}
            for k in res:
                res[k].setdefault(key, {}).update(got[k])
            print(f"  --group-by {group}, {name}: {pooled(list(got['sup'].values())):.4f} -> "
                  f"{pooled(list(got['paper'].values())):.4f} -> {pooled(list(got['check'].values())):.4f}  "
                  f"[{line[:100]}]", flush=True)
        held = [(r["site"], r["year"]) for r in rows]
        worst = min(
            (pooled([res["check"]["held"][r["id"]] for r in rows if (r["site"], r["year"]) == sy])
             - pooled([res["sup"]["held"][r["id"]] for r in rows if (r["site"], r["year"]) == sy]), sy)
            for sy in sorted(set(held)))
        print(f"  --group-by {group}, held-out years pooled: {pooled(list(res['sup']['held'].values())):.4f} -> "
              f"{pooled(list(res['paper']['held'].values())):.4f} -> {pooled(list(res['check']['held'].values())):.4f}; "
              f"worst site-year with the check {worst[1][0]} {worst[1][1]} {worst[0]:+.4f}")


def bootstrap(args, pool, tmp, extra, out, group="site"):
    cmd = [args.bin, "bootstrap", "--unlabeled", pool, "--out", out, "--group-by", group,
           "--iterations", str(args.iterations), "--cache-dir", tmp, "--site-memory-pages", "0"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return p.stderr


def run(args, pool, scored, tmp, extra):
    """(supervised, the paper's adapted model on every page, adapted model guarded by its
    pool's layouts, what the default bootstrap writes), pooled F1 on `scored`, the check's
    verdict and its lines."""
    checked = os.path.join(tmp, "checked.nbm")
    log = bootstrap(args, pool, tmp, extra, checked)
    checks = [line[len("check "):] for line in log.splitlines() if line.startswith("check ")]
    kept = "self-training not kept" not in log
    adapted = os.path.join(tmp, "adapted.nbm")
    # The paper's adapted model scores every page: no check, no layout guard.
    paper = os.path.join(tmp, "paper.nbm")
    bootstrap(args, pool, tmp, extra + ["--no-check", "--no-guard"], paper)
    unguarded = eval_f1(args, scored, paper)
    bootstrap(args, pool, tmp, extra + ["--no-check"], adapted)
    sup = eval_f1(args, scored)
    guarded = eval_f1(args, scored, adapted)
    return sup, unguarded, guarded, (guarded if kept else sup), kept, checks


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
    head = "supervised | adapted, every page | adapted, guarded by layout | check (default) | verdict"
    with tempfile.TemporaryDirectory() as tmp:
        print(f"big9, pool = the scored pages, {args.iterations} iteration(s): {head}")
        for s in sites:
            m = os.path.join(tmp, "site.jsonl")
            write_manifest([r for r in rows if r["site"] == s], base, m)
            sup, ung, gua, chk, kept, checks = run(args, m, m, tmp, args.extra)
            verdicts.append(("pool=scored", s, sup, ung, gua, chk, kept))
            print(f"  {s:<12} {sup:.3f} | {ung:.3f} | {gua:.3f} | {chk:.3f} | "
                  f"{'adapted kept' if kept else 'supervised kept'}  [{'; '.join(checks)}]", flush=True)
        print(f"big9 held-out years (pool = the other three years): {head}")
        for s in sites:
            for y in sorted({r["year"] for r in rows if r["site"] == s}):
                pool, scored = os.path.join(tmp, "pool.jsonl"), os.path.join(tmp, "scored.jsonl")
                write_manifest([r for r in rows if r["site"] == s and r["year"] != y], base, pool)
                write_manifest([r for r in rows if r["site"] == s and r["year"] == y], base, scored)
                sup, ung, gua, chk, kept, checks = run(args, pool, scored, tmp, args.extra)
                verdicts.append(("held-out year", f"{s} {y}", sup, ung, gua, chk, kept))
                print(f"  {s:<12} {y} {sup:.3f} | {ung:.3f} | {gua:.3f} | {chk:.3f} | "
                      f"{'adapted kept' if kept else 'supervised kept'}  [{'; '.join(checks)}]", flush=True)
        one_pool(args, [r for r in rows if r["split"] == "dev"], base, tmp)
    print("summary: mean F1 over the rows, and the worst row against the supervised model")
    for kind in ("pool=scored", "held-out year"):
        v = [x for x in verdicts if x[0] == kind]
        for col, name in ((3, "adapted, every page"), (4, "adapted, guarded"), (5, "check (default)")):
            d = [x[col] - x[2] for x in v]
            print(f"  {kind:<14} {name:<20} mean {sum(x[col] for x in v) / len(v):.4f} "
                  f"(supervised {sum(x[2] for x in v) / len(v):.4f}), worst {min(d):+.4f}, best {max(d):+.4f}")
        print(f"  {kind:<14} adapted model kept on {sum(1 for x in v if x[6])} of {len(v)} rows")

if __name__ == "__main__":
    main()
