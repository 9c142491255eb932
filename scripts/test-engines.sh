#!/usr/bin/env bash
# Runs the Spark and Ray examples (examples/python/spark_warc.py, ray_warc.py) on generated
# WARCs and checks their Parquet output against the package's own process_warc. Their
# packages are large (pyspark, ray), so this is not part of .ci/run; run it by hand:
#   bash scripts/install-deps.sh && bash scripts/test-engines.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/maturin ] || { echo "test-engines: run bash scripts/install-deps.sh first" >&2; exit 2; }
export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"
python -c "import pyspark, ray, pyarrow" 2>/dev/null || python -m pip install -q "pyspark>=3.5" "ray[data]" pyarrow
maturin develop --quiet --release -m python/Cargo.toml
cargo build --quiet --release --bin pipeline
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for host in a b c d; do
  target/release/pipeline pack-warc --out "$work/$host.warc.gz" --base-url "http://$host.test/" --repeat 5 examples/pages/*.html 2>/dev/null
done
ls "$work"/*.warc.gz > "$work/paths.txt"

python examples/python/spark_warc.py "$work/paths.txt" "$work/spark.parquet" --master "local[2]"
python examples/python/ray_warc.py "$work/paths.txt" "$work/ray.parquet" --actors 2
python - "$work" <<'PY'
import sys, pyarrow.parquet as pq, article_pipeline as ap
from pathlib import Path
work = Path(sys.argv[1])
want = {}
for p in sorted(work.glob("*.warc.gz")):
    for r in ap.process_warc(p):
        want[r["id"]] = (r["metadata"]["url"], r["text"], r["metadata"]["near_duplicate_of"])
for name in ("spark.parquet", "ray.parquet"):
    t = pq.read_table(work / name).to_pydict()
    got = {i: (u, x, d) for i, u, x, d in zip(t["id"], t["url"], t["text"], t["near_duplicate_of"])}
    assert got == want, f"{name}: {len(got)} records, expected {len(want)}; mismatches: " + str(
        [k for k in want if got.get(k) != want[k]][:3])
    print(f"test-engines: {name}: {len(got)} records, equal to process_warc")
PY
echo "test-engines: Spark and Ray examples passed"
