//! `pipeline pack-warc`: wraps HTML files into a `.warc.gz`, one request/response pair per
//! page, so local pages can go through `pipeline --warc` (this is how
//! `examples/sample.warc.gz` is made from `examples/pages/`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use article_pipeline::sources::warc_writer::{Exchange, WarcWriter};

use super::Outcome;

#[derive(Debug, Args)]
pub struct PackArgs {
    /// HTML files.
    #[arg(required = true)]
    pages: Vec<PathBuf>,
    /// The .warc.gz to write.
    #[arg(long)]
    out: PathBuf,
    /// Base URL of the pages (the file name is appended).
    #[arg(long, default_value = "http://example.com/")]
    base_url: String,
    /// WARC-Date of every record (default: now).
    #[arg(long)]
    date: Option<String>,
    /// Write the pages this many times (URLs get `?copy=N`), to make large benchmark inputs.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Spread the pages over this many hosts (`site-K.` before the base URL's host, page by
    /// page in turn), to measure per-host state such as site memory; 0 keeps the base URL's.
    #[arg(long, default_value_t = 0)]
    hosts: usize,
}

pub fn exec(args: PackArgs) -> anyhow::Result<Outcome> {
    let date =
        args.date.clone().unwrap_or_else(|| chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    let mut w = WarcWriter::create(&args.out, concat!("article-pipeline/", env!("CARGO_PKG_VERSION")))
        .with_context(|| format!("cannot create `{}`", args.out.display()))?;
    let mut written = 0usize;
    for copy in 0..args.repeat.max(1) {
        for page in &args.pages {
            let body = std::fs::read(page).with_context(|| format!("cannot read `{}`", page.display()))?;
            let name = page.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let base = match args.hosts {
                0 => args.base_url.clone(),
                n => args.base_url.replacen("://", &format!("://site-{}.", written % n), 1),
            };
            let url = match copy {
                0 => format!("{base}{name}"),
                _ => format!("{base}{name}?copy={copy}"),
            };
            let parsed = url::Url::parse(&url).ok();
            let host = parsed.as_ref().and_then(|u| u.host_str()).unwrap_or_default().to_string();
            let path = parsed.as_ref().map_or_else(|| "/".to_string(), |u| u.path().to_string());
            let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: article-pipeline\r\n\r\n");
            let mut response =
                format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n", body.len())
                    .into_bytes();
            response.extend_from_slice(&body);
            let ex = Exchange { url: &url, date: &date, request: request.as_bytes(), response: &response, ip: None };
            w.write_exchange(&ex).with_context(|| format!("cannot write `{}`", args.out.display()))?;
            written += 1;
        }
    }
    w.finish().with_context(|| format!("cannot write `{}`", args.out.display()))?;
    eprintln!("{written} page(s) -> {}", args.out.display());
    Ok(Outcome::Ok)
}
