"""Shared fixtures: the repository root, the `pipeline` binary (to compare with the CLI) and
WARC files packed from the bundled example pages."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "examples" / "pages").glob("*.html"))


def _target_dir() -> Path:
    """Cargo's target folder as cargo sees it (CARGO_TARGET_DIR, .cargo/config.toml …)."""
    meta = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=ROOT, check=True, capture_output=True
    )
    return Path(json.loads(meta.stdout)["target_directory"])


def _binary() -> Path:
    env = os.environ.get("PIPELINE_BIN")
    if env:
        return Path(env)
    target = _target_dir()
    for profile in ("debug", "release"):
        p = target / profile / "pipeline"
        if p.exists():
            return p
    subprocess.run(["cargo", "build", "--bin", "pipeline"], cwd=ROOT, check=True)
    return target / "debug" / "pipeline"


@pytest.fixture(scope="session")
def pipeline_bin() -> Path:
    return _binary()


@pytest.fixture(scope="session")
def pages() -> list:
    assert PAGES, "examples/pages is empty"
    return PAGES


def pack_warc(pipeline_bin: Path, out: Path, pages, base_url: str = "http://example.com/") -> Path:
    subprocess.run(
        [str(pipeline_bin), "pack-warc", "--out", str(out), "--base-url", base_url, "--date", "2026-11-24T00:00:00Z"]
        + [str(p) for p in pages],
        check=True,
    )
    return out


@pytest.fixture()
def example_warc(tmp_path, pipeline_bin, pages) -> Path:
    return pack_warc(pipeline_bin, tmp_path / "examples.warc.gz", pages)
