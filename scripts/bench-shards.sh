#!/usr/bin/env bash
# Sharding on one machine: 2 shard processes x 1 thread (`--shard 0/2`, `--shard 1/2`, run at
# once) against 1 process x 2 threads, over the same 4 local .warc.gz files (each the aeb +
# wcxb dev pages when unpacked in target/datasets, 170 MB of HTML, repeated to at least 50 MB;
# else the bundled pages). Reports MB/s of HTML over wall-clock time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/pipeline
work=${BENCH_DIR:-target/bench-shards}
mkdir -p "$work"
source scripts/bench-pages.sh
bytes=$(cat "${pages[@]}" | wc -c)
repeat=$(( (50 * 1000000 + bytes - 1) / bytes ))
for i in 0 1 2 3; do
  [ -f "$work/in-$i.warc.gz" ] || "$bin" pack-warc "${pages[@]}" --repeat "$repeat" --base-url "http://h$i.test/" \
    --out "$work/in-$i.warc.gz" --date 2026-01-01T00:00:00Z 2>/dev/null
done
html_mb() { python3 -c "import json,sys; print(sum(json.load(open(p))['html_bytes'] for p in sys.argv[1:])/1e6)" "$@"; }

rm -rf "$work/one"
t0=$(date +%s.%N)
"$bin" --warc "$work"/in-*.warc.gz --out "$work/one" --threads 2 --no-progress 2>/dev/null || true
t1=$(date +%s.%N)
mb=$(html_mb "$work/one/stats.json")
python3 -c "print(f'1 process x 2 threads: {$mb:.0f} MB of HTML in {$t1-$t0:.1f} s = {$mb/($t1-$t0):.1f} MB/s')"

rm -rf "$work/sharded"
t0=$(date +%s.%N)
for k in 0 1; do
  "$bin" --warc "$work"/in-*.warc.gz --out "$work/sharded" --threads 1 --shard "$k/2" --no-progress 2>/dev/null &
done
wait
t1=$(date +%s.%N)
mb=$(html_mb "$work"/sharded/shard-*/stats.json)
python3 -c "print(f'2 shard processes x 1 thread: {$mb:.0f} MB of HTML in {$t1-$t0:.1f} s = {$mb/($t1-$t0):.1f} MB/s')"

# The same two layouts reading the WARCs from, and writing the parts to, a local S3-compatible
# server (examples/s3_server.rs on 127.0.0.1; bytes go through its HTTP and signing like a
# real store's, without the network's latency).
cargo build --release --quiet --example s3_server
s3root="$work/s3"
rm -rf "$s3root" && mkdir -p "$s3root/crawl/in"
cp "$work"/in-*.warc.gz "$s3root/crawl/in/"
port=${S3_PORT:-19000}
export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local-secret AWS_REGION=us-east-1
target/release/examples/s3_server "$s3root" "$port" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 1
s3=(--s3-endpoint "http://127.0.0.1:$port")

t0=$(date +%s.%N)
"$bin" --warc s3://crawl/in/ --out s3://crawl/one/ "${s3[@]}" --staging "$work/stage-one" --threads 2 --no-progress 2>/dev/null || true
t1=$(date +%s.%N)
mb=$(html_mb "$s3root/crawl/one/stats.json")
python3 -c "print(f'S3, 1 process x 2 threads: {$mb:.0f} MB of HTML in {$t1-$t0:.1f} s = {$mb/($t1-$t0):.1f} MB/s')"

t0=$(date +%s.%N)
pids=()
for k in 0 1; do
  "$bin" --warc s3://crawl/in/ --out s3://crawl/sharded/ "${s3[@]}" --staging "$work/stage-$k" --threads 1 \
    --shard "$k/2" --no-progress 2>/dev/null &
  pids+=($!)
done
wait "${pids[@]}"
t1=$(date +%s.%N)
mb=$(html_mb "$s3root"/crawl/sharded/shard-*/stats.json)
python3 -c "print(f'S3, 2 shard processes x 1 thread: {$mb:.0f} MB of HTML in {$t1-$t0:.1f} s = {$mb/($t1-$t0):.1f} MB/s')"
