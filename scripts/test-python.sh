#!/usr/bin/env bash
# The Python suite: builds the extension into .venv (maturin develop, debug profile, sharing
# cargo's target folder) and runs pytest on python/tests. Needs `bash scripts/install-deps.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/maturin ] || { echo "test-python: run bash scripts/install-deps.sh first" >&2; exit 2; }
export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"
maturin develop --quiet -m python/Cargo.toml
cargo build --quiet --bin pipeline   # the CLI the tests compare with
set +e
(cd python && python -m pytest -q tests "$@")
rc=$?
set -e
# pytest exits 5 when a selection holds no test: nothing failed, but nothing ran either.
if [ "$rc" -eq 5 ]; then echo "test-python: no test selected"; exit 0; fi
exit "$rc"
