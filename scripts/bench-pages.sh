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
