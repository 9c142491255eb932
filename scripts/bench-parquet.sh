#!/usr/bin/env bash
# Parquet parts against zstd JSON Lines: `pipeline --warc` on the ~500 MB input of
# bench-pipeline.sh (the aeb + wcxb dev pages when unpacked, else the bundled examples),
# alternating the two formats for two rounds, 2 threads; reports MB/s of HTML, bytes of output
# and peak RSS (GNU time).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/pipeline
work=${BENCH_DIR:-target/bench-pipeline}
mkdir -p "$work"
source scripts/bench-pages.sh
warc=$(bench_input 500)
for round in 1 2; do
  for format in jsonl parquet; do
    out="$work/out-format-$format"
    rm -rf "$out"
    /usr/bin/time -f "%M" -o "$work/rss" "$bin" --warc "$warc" --out "$out" --threads 2 --format "$format" \
      --no-progress 2> "$work/log" || true
    python3 - "$out" "$work/rss" "$format" "$round" <<'PY'
import json, os, sys
out = sys.argv[1]
s = json.load(open(os.path.join(out, "stats.json"))); rss = int(open(sys.argv[2]).read().split()[-1])
size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out) if f.startswith("part-"))
print(f"round {sys.argv[4]} {sys.argv[3]:>7}: {s['html_bytes']/1e6:.0f} MB HTML, {s['written']} records, "
      f"{s['mb_per_s']:.1f} MB/s, {size/1e6:.1f} MB of parts, peak RSS {rss/1024:.0f} MB")
PY
  done
done
