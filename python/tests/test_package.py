"""The Python package against the `pipeline` binary: same text, same records, thread safety,
errors as exceptions, WARC iteration."""

import gzip
import json
import subprocess
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import zstandard

import article_pipeline as ap


def cli_json(pipeline_bin, page: Path) -> dict:
    out = subprocess.run([str(pipeline_bin), "extract", "--json", str(page)], check=True, capture_output=True)
    return json.loads(out.stdout)


def _jsonl_records(folder):
    """The records of a run's `part-*.jsonl.zst` parts, in order."""
    records = []
    for part in sorted(Path(folder).glob("part-*.jsonl.zst")):
        with zstandard.open(part, "rt", encoding="utf-8") as f:
            records.extend(json.loads(line) for line in f)
    return records


def test_extraction_equals_the_cli_byte_for_byte(pipeline_bin, pages):
    for page in pages:
        want = cli_json(pipeline_bin, page)
        got = ap.extract(page.read_bytes(), url=page.name)
        assert got.text.encode() == want["text"].encode(), page.name
        assert got.title == want["title"]
        assert got.html_title == want["html_title"]
        meta = ap.extraction_metadata(got)
        assert meta["lang"] == want["metadata"]["lang"]
        assert list(got.span) == want["span"]
        assert got.tokens == want["tokens"]
        assert got.scorer == want["scorer"] == "nb"
        assert got.url == page.name


def test_options_are_the_cli_flags_as_keywords(pipeline_bin, pages):
    # The same flags through the CLI and as keywords give the same text, page by page.
    flags = ["--keep-boilerplate", "--keep-more-furniture", "--extra-span-ratio", "0", "--section-end-words", "0", "--hr",
             "--list-min-items", "0"]
    kwargs = dict(keep_boilerplate=True, keep_more_furniture=True, extra_span_ratio=0, section_end_words=0, hr=True,
                  list_min_items=0)
    ex = ap.Extractor(**kwargs)
    assert ap.Extractor(clean=False, noscript_fallback=True, title_anchor_ratio=None) is not None
    for page in pages:
        out = subprocess.run([str(pipeline_bin), "extract", "--json", *flags, str(page)], check=True, capture_output=True)
        assert ex.extract(page.read_bytes()).text == json.loads(out.stdout)["text"], page.name
    with pytest.raises(ValueError, match="unknown extraction option `no_such_option`"):
        ap.Extractor(no_such_option=1)
    with pytest.raises(ValueError, match="link_run_blocks"):
        ap.Extractor(link_run_blocks="many")
    with pytest.raises(ValueError):
        ap.Extractor(multi_item_ratio=1.5)


def test_span_widening_is_an_option_as_in_the_cli(tmp_path, pipeline_bin):
    # A product grid whose items lead with links: the default takes the grid, as the CLI does;
    # `list_min_items=0` keeps the one item the token scores chose.
    items = "".join(
        f'<li class="card card-{i}"><a href="/p/{i}">Item{i} name</a>'
        f'<div class="desc">{"A long description of the first product with many words in it. " * 4 if i == 0 else f"short{i} blurb here"}</div></li>'
        for i in range(12)
    )
    page = tmp_path / "grid.html"
    page.write_text(f'<html><body><div class="nav"><a href="/">Home</a></div><ul class="grid">{items}</ul></body></html>')
    for kwargs, flags in (({}, []), ({"list_min_items": 0}, ["--list-min-items", "0"])):
        out = subprocess.run([str(pipeline_bin), "extract", "--json", *flags, str(page)], check=True, capture_output=True)
        assert ap.Extractor(**kwargs).extract(page.read_bytes()).text == json.loads(out.stdout)["text"], kwargs
    wide, narrow = ap.Extractor().extract(page.read_bytes()).text, ap.Extractor(list_min_items=0).extract(page.read_bytes()).text
    assert "short7 blurb" in wide and "Item7 name" in wide, wide
    assert "short7 blurb" not in narrow, narrow


def test_a_model_with_its_own_chooser_extracts_as_the_cli(tmp_path, pipeline_bin, pages):
    # `pipeline train --chooser` stores a span chooser and its margin in the model file; the
    # Extractor reads that model as the CLI does: the chooser on by default, off with
    # chooser_margin=0.
    html = tmp_path / "html"
    html.mkdir()
    stories = [
        "The council voted to expand the park on Tuesday, and the work will start in May.",
        "A new bridge over the river opened this week after three years of building work.",
        "The school board said that it will hire ten new teachers for the coming year.",
        "Heavy rain flooded the old market on Sunday, but nobody was hurt, the police said.",
    ]
    with open(tmp_path / "manifest.jsonl", "w") as m:
        for i, story in enumerate(stories):
            (html / f"{i}.html").write_text(
                "<html><body><div class=nav><a href=/>Home</a> <a href=/a>Sport</a></div>"
                "<div class=comments><p>Great story, thanks!</p><p>I disagree with all of it.</p></div>"
                f"<article><h1>News</h1><p>{story}</p><p>{story}</p></article></body></html>"
            )
            gold = {"text": f"{story}\n\n{story}"}
            m.write(json.dumps({"id": str(i), "dataset": "t", "split": "train", "html": f"html/{i}.html", "gold": gold}) + "\n")
    model = tmp_path / "own.nbm"
    subprocess.run(
        [str(pipeline_bin), "train", "--manifest", str(tmp_path / "manifest.jsonl"), "--out", str(model), "--chooser", "--chooser-folds", "2"],
        check=True,
        capture_output=True,
    )
    for kwargs, flags in [({}, []), ({"chooser_margin": 0}, ["--chooser-margin", "0"]), ({"chooser_margin": 0.05}, ["--chooser-margin", "0.05"])]:
        ex = ap.Extractor(model=model, **kwargs)
        for page in pages:
            out = subprocess.run(
                [str(pipeline_bin), "extract", "--json", "--model", str(model), *flags, str(page)], check=True, capture_output=True
            )
            assert ex.extract(page.read_bytes()).text == json.loads(out.stdout)["text"], (page.name, kwargs)


def test_the_built_in_chooser_is_on_as_in_the_cli(tmp_path, pipeline_bin, pages):
    # The built-in model carries the built-in span chooser (the span or one of the page's
    # lists), on at its stored margin: the default Extractor, and chooser_margin=0, give the
    # CLI's text with the same settings, on the bundled pages and on a generated category page.
    cards = "".join(
        f'<li class="product-item"><a href="/p/{i}">Trail Runner {i}</a> <span>${60 + i}.99, 4.{i} stars</span></li>'
        for i in range(16)
    )
    listing = tmp_path / "listing.html"
    listing.write_text(
        "<html><head><title>Running Shoes</title></head><body><main><h1>Running Shoes</h1>"
        "<p>Our running shoes are made for every kind of runner, from a first jog to a mountain ultra.</p>"
        f"<ul class=products>{cards}</ul></main></body></html>"
    )
    for kwargs, flags in [({}, []), ({"chooser_margin": 0}, ["--chooser-margin", "0"])]:
        ex = ap.Extractor(**kwargs)
        for page in [*pages, listing]:
            out = subprocess.run([str(pipeline_bin), "extract", "--json", *flags, str(page)], check=True, capture_output=True)
            assert ex.extract(page.read_bytes()).text == json.loads(out.stdout)["text"], (page.name, kwargs)


def test_modal_dialogs_are_left_out_unless_kept_as_in_the_cli(tmp_path, pipeline_bin):
    # A shop page whose footer links its refund policy, shipped as a modal dialog after it and
    # longer than the page's own text: left out by default, read with keep_modals=True
    # (--keep-modals). (Inside the <footer> the footer filter would drop it either way.)
    intro = " ".join(f"intro{i}" for i in range(40))
    policy = " ".join(f"policy{i}" for i in range(200))
    page = tmp_path / "shop.html"
    page.write_text(
        f"<html><body><h1>Socks</h1><p>{intro}.</p><footer><a href=#r>Refund policy</a></footer>"
        f"<div role=dialog aria-modal=true><p>{policy}.</p></div></body></html>"
    )
    for kwargs, flags, has_policy in [({}, [], False), ({"keep_modals": True}, ["--keep-modals"], True)]:
        text = ap.Extractor(**kwargs).extract(page.read_bytes()).text
        out = subprocess.run([str(pipeline_bin), "extract", "--json", *flags, str(page)], check=True, capture_output=True)
        assert text == json.loads(out.stdout)["text"], kwargs
        assert ("policy0" in text) == has_policy and "intro0" in text, (kwargs, text[:80])


def test_str_input_gives_the_same_text_as_utf8_bytes(pages):
    page = next(p for p in pages if "windows-1252" not in p.name)
    assert ap.extract(page.read_text("utf-8")).text == ap.extract(page.read_bytes()).text


def test_threads_give_the_same_results(pages):
    ex = ap.Extractor()
    work = [p.read_bytes() for p in pages] * 30
    alone = [ex.extract(h).text for h in work]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda h: ex.extract(h).text, work))
    assert together == alone
    assert len(set(alone)) == len(pages)


def test_fingerprints_match_the_records(example_warc):
    records = list(ap.process_warc(example_warc))
    assert records
    for r in records:
        assert ap.fingerprints(r["text"]) == r["metadata"]["fingerprints"]
    x = ap.extract(b"<p>" + b"words of an article " * 20 + b"</p>", fingerprints=True)
    fp = ap.extraction_fingerprints(x)
    assert fp == ap.fingerprints(x.text)
    assert len(fp["minhash"]) == 112 and len(fp["bands"]) == 14


def test_bad_input_raises_with_the_rust_message(tmp_path):
    with pytest.raises(ap.ExtractionError, match="not html"):
        ap.extract(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", url="http://x.test/image")
    with pytest.raises(ap.ExtractionError, match="x.test/image"):
        ap.extract(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", url="http://x.test/image")
    with pytest.raises(ValueError):
        ap.extract(12345)
    # A str with a lone surrogate is not valid Unicode: a bad page, named by its URL.
    with pytest.raises(ap.ExtractionError, match="x.test/surrogate"):
        ap.extract("<p>broken \ud800 text</p>", url="http://x.test/surrogate")
    # Non-finite numbers would give empty text on every page: refused up front.
    for kwargs in ({"bias": float("nan")}, {"tag_bias": float("inf")}, {"extra_span_min": float("inf")},
                   {"furniture_escape_ratio": float("nan")}):
        with pytest.raises(ValueError):
            ap.Extractor(**kwargs)
    with pytest.raises(ap.ModelError, match="unknown scorer"):
        ap.Extractor("no-such-scorer")
    with pytest.raises(ap.ModelError, match="needs a model file"):
        ap.Extractor("svm")
    bad = tmp_path / "bad.nbm"
    bad.write_bytes(b"APMODEL\x01garbage")
    with pytest.raises(ap.ModelError, match="bad.nbm"):
        ap.Extractor("nb", str(bad))
    with pytest.raises(ap.WarcError, match="missing.warc.gz"):
        ap.read_warc(tmp_path / "missing.warc.gz")
    assert issubclass(ap.WarcError, ap.ArticlePipelineError)
    # Nothing crashes the interpreter on hostile pages.
    for page in [b"", b"<" * 100000, b"<div>" * 50000, "\u00e9" * 10000, b"\xff\xfe" + b"\x00<" * 1000]:
        try:
            ap.extract(page)
        except ap.ArticlePipelineError:
            pass


def test_a_warc_iterates_its_pages_in_order(example_warc, pages):
    got = list(ap.read_warc(example_warc))
    assert [p.url for p in got] == [f"http://example.com/{p.name}" for p in pages]
    assert [p.body for p in got] == [p.read_bytes() for p in pages]
    assert all(p.status == 200 and p.offset > 0 and p.file == str(example_warc) for p in got)
    assert [p.url for p in ap.read_warc(example_warc.read_bytes())] == [p.url for p in got]


def test_damaged_records_warn_or_raise_and_reading_goes_on(example_warc, pages):
    data = bytearray(example_warc.read_bytes())
    second = list(ap.read_warc(example_warc))[1].offset
    for i in range(second + 30, second + 80):
        data[i] ^= 0x5A
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        urls = [p.url for p in ap.read_warc(bytes(data))]
    assert len(urls) == len(pages) - 1
    assert any(f"record at byte {second}" in str(w.message) for w in caught), [str(w.message) for w in caught]
    it = ap.read_warc(bytes(data), on_error="raise")
    seen = []
    with pytest.raises(ap.WarcError, match=f"record at byte {second}"):
        for p in it:
            seen.append(p.url)
    seen.extend(p.url for p in it)  # the iterator goes on after the error
    assert seen == urls


def test_process_warc_gives_the_cli_records(tmp_path, pipeline_bin, example_warc):
    out = tmp_path / "out"
    subprocess.run([str(pipeline_bin), "--warc", str(example_warc), "--out", str(out)], check=True, capture_output=True)
    cli = _jsonl_records(out)
    py = list(ap.process_warc(example_warc))
    assert py == cli


def test_the_datatrove_example_runs_on_generated_warcs(tmp_path, pipeline_bin, pages):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
    import datatrove_warc
    from conftest import pack_warc

    src = tmp_path / "in"
    src.mkdir()
    pack_warc(pipeline_bin, src / "a.warc.gz", pages, "http://a.test/")
    pack_warc(pipeline_bin, src / "b.warc.gz", pages, "http://b.test/")
    out = tmp_path / "out"
    datatrove_warc.build(str(src), str(out), tasks=2, logging_dir=str(tmp_path / "logs")).run()
    docs = []
    for f in sorted(out.glob("*.jsonl.gz")):
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            docs.extend(json.loads(line) for line in fh)
    assert sorted(d["metadata"]["url"] for d in docs) == sorted(
        f"http://{h}.test/{p.name}" for h in "ab" for p in pages
    )
    want = {p.name: ap.extract(p.read_bytes()).text for p in pages}
    for d in docs:
        name = d["metadata"]["url"].rsplit("/", 1)[1]
        # datatrove's WarcReader decodes the page itself; the text must be the article's.
        assert d["text"] == want[name] or (name.startswith("marche") and "Le conseil a vot" in d["text"]), name
        assert d["metadata"]["extraction"]["scorer"] == "nb"
        assert d["metadata"]["lang"] in ("en", "fr"), d["metadata"]



def test_datatrove_takes_every_page_pack_warc_writes(tmp_path, pipeline_bin):
    # libmagic calls a page of bare markup text/plain; without WARC-Identified-Payload-Type
    # datatrove's WarcReader sniffs and drops it.
    from datatrove.pipeline.readers import WarcReader
    from conftest import pack_warc

    import magic

    page = tmp_path / "bare.html"
    page.write_bytes(b"<div class=story><p>The council voted on the harbour budget last night.</p></div>")
    assert magic.from_buffer(page.read_bytes(), mime=True) == "text/plain"
    src = tmp_path / "in"
    src.mkdir()
    pack_warc(pipeline_bin, src / "a.warc.gz", [page], "http://a.test/")
    docs = list(WarcReader(str(src), glob_pattern="*.warc.gz").run())
    assert [d.metadata["url"] for d in docs] == ["http://a.test/bare.html"]


def test_a_warc_over_http_reads_like_the_local_file(example_warc):
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(example_warc.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{example_warc.name}"
        remote = [(p.url, p.offset, p.body) for p in ap.read_warc(url)]
        local = [(p.url, p.offset, p.body) for p in ap.read_warc(example_warc)]
        assert remote == local and len(local) == 3
        with pytest.raises(ap.WarcError, match="404"):
            ap.read_warc(url + ".missing")
    finally:
        server.shutdown()


def test_process_warc_takes_the_cli_extraction_flags(tmp_path, pipeline_bin, example_warc):
    out = tmp_path / "out"
    flags = ["--keep-boilerplate", "--link-run-blocks", "0", "--scorer", "simple"]
    subprocess.run(
        [str(pipeline_bin), "--warc", str(example_warc), "--out", str(out)] + flags, check=True, capture_output=True
    )
    cli = _jsonl_records(out)
    py = list(ap.process_warc(example_warc, scorer="simple", keep_boilerplate=True, link_run_blocks=0))
    assert py == cli and {r["metadata"]["extraction"]["scorer"] for r in py} == {"simple"}
    with pytest.raises(ValueError, match="either an extractor"):
        next(ap.process_warc(example_warc, extractor=ap.Extractor(), link_run_blocks=0))
    with pytest.raises(ValueError, match="no_such_option"):
        next(ap.process_warc(example_warc, no_such_option=1))


def _records_from(source):
    """process_warc's records, each with the location it names (which differs by location)
    taken out and checked."""
    records = list(ap.process_warc(source, on_error="raise"))
    for r in records:
        assert r["metadata"]["source"].pop("file") == str(source)
    return records


def _serve(handler_class):
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_cut_connection_is_resumed_from_where_it_stopped(example_warc):
    import http.server

    data = example_warc.read_bytes()
    requests = []

    class Cutting(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            rng = self.headers.get("Range")
            requests.append(rng)
            start = int(rng.split("=")[1].split("-")[0]) if rng else 0
            body = data[start:]
            self.send_response(206 if rng else 200)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Accept-Ranges", "bytes")
            if rng:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.end_headers()
            # The first answer stops halfway and the connection drops.
            if not rng:
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self.wfile.write(body)

    server = _serve(Cutting)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/examples.warc.gz"
        remote = [(p.url, p.offset, p.body) for p in ap.read_warc(url, on_error="raise")]
        local = [(p.url, p.offset, p.body) for p in ap.read_warc(example_warc)]
        assert remote == local and len(local) == 3
        assert requests[0] is None and any(r and r.startswith("bytes=") for r in requests[1:]), requests
        assert _records_from(url) == _records_from(example_warc)
    finally:
        server.shutdown()


def test_a_warc_in_s3_reads_like_the_local_file(example_warc, monkeypatch):
    boto3 = pytest.importorskip("boto3")
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        for k, v in {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_REGION": "us-east-1",
        }.items():
            monkeypatch.setenv(k, v)
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        s3.create_bucket(Bucket="crawl")
        s3.upload_file(str(example_warc), "crawl", "2026/examples.warc.gz")
        remote = [(p.url, p.offset, p.body) for p in ap.read_warc("s3://crawl/2026/examples.warc.gz", on_error="raise")]
        local = [(p.url, p.offset, p.body) for p in ap.read_warc(example_warc)]
        assert remote == local and len(local) == 3
        assert _records_from("s3://crawl/2026/examples.warc.gz") == _records_from(example_warc)
        with pytest.raises(ap.WarcError, match="s3://crawl/2026/missing.warc.gz"):
            ap.read_warc("s3://crawl/2026/missing.warc.gz")
    finally:
        server.stop()


def test_parquet_parts_read_in_duckdb_pyarrow_and_datasets(tmp_path, pipeline_bin, pages):
    import duckdb
    import pyarrow.parquet as pq
    from conftest import pack_warc
    from datasets import load_dataset

    warc = pack_warc(pipeline_bin, tmp_path / "in.warc.gz", pages)
    out, jsonl = tmp_path / "out", tmp_path / "jsonl"
    for folder, extra in [(out, ["--format", "parquet"]), (jsonl, [])]:
        subprocess.run(
            [str(pipeline_bin), "--warc", str(warc), "--out", str(folder), "--threads", "1"] + extra,
            check=True,
            capture_output=True,
        )
    records = _jsonl_records(jsonl)
    parts = sorted(out.glob("part-*.parquet"))
    assert parts and not list(out.glob("part-*.jsonl.zst"))

    rows = duckdb.sql(f"SELECT count(*), lang FROM '{out}/part-*.parquet' GROUP BY lang").fetchall()
    langs = {}
    for r in records:
        langs[r["metadata"]["lang"]] = langs.get(r["metadata"]["lang"], 0) + 1
    assert sorted(rows, key=lambda r: str(r[1])) == sorted(((n, l) for l, n in langs.items()), key=lambda r: str(r[1]))

    table = pq.read_table(parts[0])
    assert table.num_rows == len(records)
    assert str(table.schema.field("fetched_at").type) == "timestamp[ms, tz=UTC]"
    assert str(table.schema.field("authors").type).startswith("list<")
    by_id = {r["id"]: r for r in records}
    for row in table.to_pylist():
        r = by_id[row["id"]]
        assert row["text"] == r["text"] and row["title"] == r["metadata"]["title"]
        assert row["authors"] == r["metadata"]["authors"]
        assert row["fingerprint_exact"] == int(r["metadata"]["fingerprints"]["exact"], 16)
        assert row["fingerprint_minhash"] == r["metadata"]["fingerprints"]["minhash"]

    ds = load_dataset("parquet", data_files=[str(p) for p in parts], split="train", cache_dir=str(tmp_path / "hf"))
    assert sorted(ds["id"]) == sorted(by_id)
    assert sorted(ds["text"]) == sorted(r["text"] for r in records)


def _site_pages(folder, n=30):
    """`n` article pages that share a newsletter box inside the article (site furniture)."""
    import random

    words = "harbour council ferry vote river bridge market winter school park budget street".split()
    folder.mkdir()
    paths = []
    for i in range(n):
        rng = random.Random(i)
        paras = "".join(
            "<p>" + " ".join(rng.choice(words) for _ in range(45)) + ".</p>" for _ in range(4)
        )
        box = "<div><p>Sign up for our morning briefing and get the day's top stories in your inbox.</p></div>"
        html = (
            f"<html><head><title>Story {i}</title></head><body><nav><a href=/>Home</a></nav>"
            f"<article><h1>Story {i}</h1>{paras[: len(paras) // 2]}{box}{paras[len(paras) // 2 :]}</article>"
            "</body></html>"
        )
        p = folder / f"story-{i:02}.html"
        p.write_text(html)
        paths.append(p)
    return paths


def test_process_warc_learns_site_memory_as_the_cli_does(tmp_path, pipeline_bin):
    paths = _site_pages(tmp_path / "pages")
    warc = tmp_path / "sites.warc.gz"
    subprocess.run(
        [str(pipeline_bin), "pack-warc", "--out", str(warc), "--hosts", "3", "--base-url", "http://news.test/",
         "--date", "2026-11-24T00:00:00Z"] + [str(p) for p in paths],
        check=True,
        capture_output=True,
    )

    def cli(*flags):
        out = tmp_path / ("out" + "".join(flags).replace("-", "_"))
        subprocess.run(
            [str(pipeline_bin), "--warc", str(warc), "--out", str(out), "--threads", "1"] + list(flags),
            check=True,
            capture_output=True,
        )
        return _jsonl_records(out)

    on = list(ap.process_warc(warc))
    assert on == cli()
    marked = [r for r in on if r["metadata"]["extraction"]["site_memory"]]
    assert len(marked) >= 15, len(marked)
    assert all("morning briefing" not in r["text"] for r in marked)
    off = list(ap.process_warc(warc, site_memory_pages=0))
    assert off == cli("--site-memory-pages", "0")
    assert all("morning briefing" in r["text"] for r in off)
    with pytest.raises(ValueError, match="site memory option `site_memory_nonsense`"):
        next(ap.process_warc(warc, site_memory_nonsense=1))
    # Records come one by one here: nothing is counted ahead, so two passes are refused.
    with pytest.raises(ValueError, match="site_memory_two_pass"):
        next(ap.process_warc(warc, site_memory_two_pass=True))
