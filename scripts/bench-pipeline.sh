#!/usr/bin/env bash
# End-to-end benchmark of `pipeline --warc`: builds .warc.gz inputs of about 100 MB and 500 MB
# of HTML and reports MB/s of HTML with 1 and 2 threads and peak RSS (GNU time).
# Pages: the aeb + wcxb dev pages when the datasets are unpacked in target/datasets (the
# harness's speed set), otherwise the bundled example pages.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/pipeline
work=${BENCH_DIR:-target/bench-pipeline}
mkdir -p "$work"
source scripts/bench-pages.sh
for target_mb in 100 500; do
  warc=$(bench_input "$target_mb")
  for threads in 1 2; do
    out="$work/out-${target_mb}-${threads}"
    rm -rf "$out"
    /usr/bin/time -f "%M" -o "$work/rss" "$bin" --warc "$warc" --out "$out" --threads "$threads" --no-progress 2> "$work/log" || true
    python3 - "$out/stats.json" "$work/rss" "$target_mb" "$threads" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); rss = int(open(sys.argv[2]).read().split()[-1])
print(f"{sys.argv[3]:>4} MB input, {sys.argv[4]} thread(s): {s['html_bytes']/1e6:.0f} MB HTML, "
      f"{s['written']} records, {s['mb_per_s']:.1f} MB/s, peak RSS {rss/1024:.0f} MB")
PY
  done
done
