#!/usr/bin/env bash
# Dataset checks, run by CI only when ../shared/datasets exists (a user's clone has none):
#  1. `pipeline eval` on every dev split agrees with ../shared/peers/score.py to 3 decimals;
#  2. `pipeline train` rebuilds models/default.nbm byte-identically, and `pipeline chooser`
#     models/chooser.json.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=../shared
ds=target/datasets
bash "$shared/datasets/unpack.sh" "$ds" >/dev/null
# The dev profile (optimised, Cargo.toml), which `cargo test` built already: a second build in
# the release profile took a third of CI's time. The figures are the same; the speed printed
# is the dev profile's, not the one to report (`pipeline bench`, docs/evaluation.md).
# `--tests`: the feature resolution of `cargo test` (scripts/test-python.sh says why).
cargo build --quiet --bins --tests
bin=target/debug/pipeline
manifests=()
for m in "$ds"/*/manifest.jsonl; do manifests+=(--manifest "$m"); done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" eval "${manifests[@]}" --split dev --threads 2 --json --out-dir "$out/pred" > "$out/ours.json" || true
python3 "$shared/peers/score.py" "${manifests[@]}" --split dev --pred "$out/pred" --json > "$out/ref.json"
python3 - "$out/ours.json" "$out/ref.json" <<'PY'
import json, sys
ours, ref = (json.load(open(p)) for p in sys.argv[1:3])
bad = []
rows = [("OVERALL", ours["overall"], ref["overall"])] + [(k, ours["datasets"][k], v) for k, v in ref["datasets"].items()]
for name, o, r in rows:
    for key in ("shingle_p", "shingle_r", "shingle_f1", "bow_f1", "cleaneval", "with", "without"):
        a, b = o.get(key), r.get(key)
        if (a is None) != (b is None) or (a is not None and abs(a - b) > 0.0005):
            bad.append(f"{name}.{key}: pipeline eval {a} vs score.py {b}")
print(f"dev-quality-check: pooled dev shingle F1 {ours['overall']['shingle_f1']:.3f} "
      f"({ours['throughput']['mb_per_s_per_thread']:.1f} MB/s per thread, dev profile)")
if bad:
    print("pipeline eval disagrees with score.py:\n  " + "\n  ".join(bad))
    sys.exit(1)
print("dev-quality-check: pipeline eval agrees with score.py to 3 decimals")
PY
# With no recipe flags: `pipeline train`'s defaults are the shipped recipe.
"$bin" train --manifest "$ds/wcxb/manifest.jsonl" --out "$out/default.nbm" --threads 2 2>/dev/null
cmp models/default.nbm "$out/default.nbm"
echo "dev-quality-check: models/default.nbm rebuilds byte-identically"
# The span chooser's file depends on the training pages only (--dev changes the report); its
# margin is the one leave-one-dataset-out chose, and it is the mean of four fits (models/README.md,
# "Span chooser", session 39).
"$bin" chooser --train "$ds/wcxb/manifest.jsonl" --train-all "$ds/aeb/manifest.jsonl" \
  --dev "$ds/big9/manifest.jsonl" --margin 0.02 --draws 4 --average --out "$out/chooser.json" \
  --threads 2 >/dev/null 2>&1
cmp models/chooser.json "$out/chooser.json"
echo "dev-quality-check: models/chooser.json rebuilds byte-identically"
