#!/usr/bin/env bash
# Cost of site memory in `pipeline --warc`: MB/s of HTML and peak RSS (GNU time) with site
# memory off and on, alternating, on two generated inputs: the speed set's pages spread over
# 100 hosts (about 500 MB of HTML), and its pages under 60 KB spread over 10,000 hosts (about
# 10,000 pages, so every host holds state).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/pipeline
work=${BENCH_DIR:-target/bench-site-memory}
mkdir -p "$work"
source scripts/bench-pages.sh
bytes=$(cat "${pages[@]}" | wc -c)
small=()
for p in "${pages[@]}"; do [ "$(stat -c %s "$p")" -lt 60000 ] && small+=("$p"); done
[ -f "$work/h100.warc.gz" ] || "$bin" pack-warc "${pages[@]}" --repeat $(( (500000000 + bytes - 1) / bytes )) \
  --hosts 100 --out "$work/h100.warc.gz" --date 2026-01-01T00:00:00Z
[ -f "$work/h10000.warc.gz" ] || "$bin" pack-warc "${small[@]}" --repeat $(( 10000 / ${#small[@]} + 1 )) \
  --hosts 10000 --out "$work/h10000.warc.gz" --date 2026-01-01T00:00:00Z
for hosts in 100 10000; do
  for round in $(seq "${ROUNDS:-2}"); do
    for mode in off on; do
      flag=(); [ "$mode" = off ] && flag=(--site-memory-pages 0)
      out="$work/out"; rm -rf "$out"
      /usr/bin/time -f "%M %U %S" -o "$work/rss" "$bin" --warc "$work/h$hosts.warc.gz" --out "$out" --threads 1 \
        --no-progress "${flag[@]}" 2> "$work/log" || true
      python3 - "$out/stats.json" "$work/rss" "$hosts" "$mode" "$round" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); rss, user, system = open(sys.argv[2]).read().split()[-3:]
rss, cpu = int(rss), float(user) + float(system)
print(f"{sys.argv[3]:>5} hosts, round {sys.argv[5]}, site memory {sys.argv[4]:>3}: {s['html_bytes']/1e6:.0f} MB HTML, "
      f"{s['written']} records, {s['mb_per_s']:.1f} MB/s, CPU {cpu:.1f} s (all threads), peak RSS {rss/1024:.0f} MB")
PY
    done
  done
done
