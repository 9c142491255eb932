# Sourced by the benchmark scripts: sets `pages` to the harness's speed set, the aeb + wcxb
# dev pages when the datasets are unpacked in target/datasets, else the bundled example pages.
if [ -d target/datasets/aeb/html ] && [ -d target/datasets/wcxb/html ]; then
  mapfile -t pages < <(python3 - <<'PY'
import json
for ds in ("aeb", "wcxb"):
    for line in open(f"target/datasets/{ds}/manifest.jsonl"):
        e = json.loads(line)
        if e["split"] == "dev":
            print(f"target/datasets/{ds}/{e['html']}")
PY
)
else
  pages=(examples/pages/*.html)
fi

# `bench_input MB`: the path of a .warc.gz of about MB megabytes of HTML made of `pages`
# repeated (packed once into $work with `$bin pack-warc`, then reused).
bench_input() {
  local bytes repeat warc
  bytes=$(cat "${pages[@]}" | wc -c)
  repeat=$(( ($1 * 1000000 + bytes - 1) / bytes ))
  warc="$work/bench-$1.warc.gz"
  [ -f "$warc" ] || "$bin" pack-warc "${pages[@]}" --repeat "$repeat" --out "$warc" --date 2026-01-01T00:00:00Z >&2
  echo "$warc"
}
