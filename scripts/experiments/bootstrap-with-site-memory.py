#!/usr/bin/env python3
"""Issue 30, session 35: does the paper's self-training (with the bootstrap's label-free check
and layout guard) add anything on top of site memory?

Three columns for each of issue 30's protocols: supervised (site memory off), site memory
alone (what `pipeline bootstrap` gives with its defaults: the supervised model and the pool's
site memory), and the model `pipeline bootstrap --iterations N [FLAGS]` writes, with site
memory. Rows: big9 dev with the pool = the scored pages (pooled and per site); big9 held-out
years (each year scored, the pool = the other three years, as site memory's pool too); the
dragnet dev pages of the sites with at least 5 pages in dev + train (the pool); both together.
The pools, the pooling and the evaluation runs are those of `scripts/site-memory-eval.py`.

Usage: scripts/experiments/bootstrap-with-site-memory.py N [BOOTSTRAP FLAGS...]
       (from the repository root, after `cargo build --release`; datasets in target/datasets)
"""
import collections
import importlib.util
import os
import subprocess
import sys
import tempfile

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, SCRIPTS)
from manifests import read_manifest, write_manifest  # noqa: E402

_spec = importlib.util.spec_from_file_location("site_memory_eval", os.path.join(SCRIPTS, "site-memory-eval.py"))
sme = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sme)

BIN = "target/release/pipeline"
DS = "target/datasets"
OFF = ["--site-memory-pages", "0"]
COLUMNS = ("supervised", "site memory", "bootstrap + site memory")


def bootstrap(pool, out, iterations, flags):
    """The model `pipeline bootstrap` writes for the unlabelled `pool`, and its verdict line."""
    cmd = [BIN, "bootstrap", "--unlabeled", pool, "--out", out] + (["--iterations", iterations] if iterations != "0" else [])
    p = subprocess.run(cmd + flags, capture_output=True, text=True, check=True)
    verdict = [line for line in (p.stderr + p.stdout).splitlines() if line.startswith("adapted for")]
    return out, (verdict[0][:100] if verdict else "the supervised model kept")


def row(name, results, ids=None):
    f = [sme.pooled([results[c][i] for i in (ids if ids is not None else results[c])]) for c in COLUMNS]
    print(f"{name}: " + " -> ".join(f"{x:.4f}" for x in f))


def main():
    iterations, flags = sys.argv[1], sys.argv[2:]
    work = tempfile.mkdtemp(prefix="bootstrap-with-site-memory-")

    b9d = os.path.join(DS, "big9")
    big9 = [r for r in read_manifest(os.path.join(b9d, "manifest.jsonl")) if r["split"] == "dev"]
    whole = os.path.join(work, "big9-dev.jsonl")
    write_manifest(big9, b9d, whole)
    model, verdict = bootstrap(whole, os.path.join(work, "big9.nbm"), iterations, flags)
    print(f"big9, pool = the scored pages ({verdict})")
    res = {
        "supervised": sme.run_eval(BIN, whole, OFF),
        "site memory": sme.run_eval(BIN, whole, []),
        "bootstrap + site memory": sme.run_eval(BIN, whole, ["--model", model]),
    }
    row("  pooled (" + ", ".join(COLUMNS) + ")", res)
    for s in sorted({r["site"] for r in big9}):
        row(f"    {s}", res, [r["id"] for r in big9 if r["site"] == s])

    held = {c: {} for c in COLUMNS}
    for y in sorted({r["year"] for r in big9}):
        scored, pool = os.path.join(work, f"big9-{y}.jsonl"), os.path.join(work, f"big9-not-{y}.jsonl")
        write_manifest([r for r in big9 if r["year"] == y], b9d, scored)
        write_manifest([r for r in big9 if r["year"] != y], b9d, pool)
        model, verdict = bootstrap(pool, os.path.join(work, f"big9-not-{y}.nbm"), iterations, flags)
        print(f"  held-out {y}: {verdict}")
        held["supervised"].update(sme.run_eval(BIN, scored, OFF))
        held["site memory"].update(sme.run_eval(BIN, scored, [], pool=pool))
        held["bootstrap + site memory"].update(sme.run_eval(BIN, scored, ["--model", model], pool=pool))
    row("big9 held-out years, pooled", held)
    by_site_year = collections.defaultdict(list)
    for r in big9:
        by_site_year[(r["site"], r["year"])].append(r["id"])
    worst = min(
        (sme.pooled([held[COLUMNS[2]][i] for i in ids]) - sme.pooled([held[COLUMNS[0]][i] for i in ids]), sy)
        for sy, ids in by_site_year.items()
    )
    print(f"  worst site-year, bootstrap + site memory against supervised: {worst[0]:+.4f} {worst[1]}")

    dd = os.path.join(DS, "dragnet")
    dn = read_manifest(os.path.join(dd, "manifest.jsonl"))
    counts = collections.Counter(sme.site_of(r) for r in dn)
    pool_rows = [r for r in dn if sme.site_of(r) and counts[sme.site_of(r)] >= 5]
    dev = [r["id"] for r in pool_rows if r["split"] == "dev"]
    pool = os.path.join(work, "dragnet-pool.jsonl")
    write_manifest(pool_rows, dd, pool)
    model, verdict = bootstrap(pool, os.path.join(work, "dragnet.nbm"), iterations, flags)
    print(f"dragnet ({verdict})")
    full = os.path.join(dd, "manifest.jsonl")
    dres = {
        "supervised": sme.run_eval(BIN, full, OFF),
        "site memory": sme.run_eval(BIN, full, []),
        "bootstrap + site memory": sme.run_eval(BIN, full, ["--model", model]),
    }
    row(f"  the sites with >= 5 pages ({len(dev)} dev pages)", dres, dev)
    row("  every dev page", dres)
    both = {c: {**res[c], **{i: dres[c][i] for i in dev}} for c in COLUMNS}
    row("big9 and those dragnet pages together", both)


if __name__ == "__main__":
    main()
