//! Pipeline configuration files (`pipelines/*.toml`): what a run reads, how it extracts and
//! where it writes. Loading checks the whole file first and reports every problem at once
//! (unknown keys with their table, wrong types, bad values), before anything runs; command-line
//! flags then override single values.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::dedup::DedupOptions;
use crate::sink::SinkOptions;
use crate::site_memory::SiteMemoryOptions;
use crate::sources::fetch::FetchOptions;

/// A whole pipeline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineConfig {
    /// WARC input (exclusive with `feeds`).
    pub warc: Option<WarcConfig>,
    /// Feed input (exclusive with `warc`).
    pub feeds: Option<FeedsConfig>,
    pub extractor: ExtractorConfig,
    pub run: RunConfig,
    pub sink: SinkConfig,
    pub dedup: DedupOptions,
    pub site_memory: SiteMemoryOptions,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WarcConfig {
    /// WARC files, folders of `*.warc` / `*.warc.gz` files, `http(s)://` URLs, `s3://bucket/key`
    /// objects or `s3://bucket/prefix/` prefixes (every `*.warc(.gz)` under it).
    pub paths: Vec<PathBuf>,
    /// Files listing one input per line (plain or `.gz`; `#` starts a comment), such as
    /// Common Crawl's `warc.paths.gz`.
    pub lists: Vec<PathBuf>,
    /// Prefix of the relative lines of `lists` (a URL, an `s3://` prefix or a folder).
    pub base_url: String,
}

/// Where the relative lines of a `warc.paths.gz` point by default.
pub const COMMON_CRAWL_BASE: &str = "https://data.commoncrawl.org/";

impl Default for WarcConfig {
    fn default() -> Self {
        WarcConfig { paths: Vec::new(), lists: Vec::new(), base_url: COMMON_CRAWL_BASE.to_string() }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FeedsConfig {
    /// A file with one feed URL per line (`#` starts a comment).
    pub list: PathBuf,
    /// Poll every feed once, fetch its new articles, and stop.
    pub once: bool,
    /// Seconds between polls of a feed that says nothing about its update rate and has not
    /// been observed yet, when not `once`; after that each feed's own schedule applies.
    pub interval_secs: u64,
    /// Shortest interval between two polls of one feed (seconds); also, in a continuous run,
    /// how long an article that failed transiently (a 503, a timeout) rests before its next
    /// try, at most [`crate::pipeline::feeds_run::MAX_ATTEMPTS`] tries in all.
    pub min_interval_secs: u64,
    /// Longest interval between two polls of one feed (seconds).
    pub max_interval_secs: u64,
    /// Requests in flight over all hosts.
    pub max_connections: usize,
    /// Requests in flight to one host.
    pub per_host_connections: usize,
    /// Days after which an article no feed lists any more is forgotten (its row pruned).
    pub forget_after_days: u64,
    pub user_agent: String,
    /// Milliseconds between two requests to one host (the larger of it and robots.txt's Crawl-delay, capped at 30 s, is used).
    pub delay_ms: u64,
    /// Let feed URLs reach loopback, private, link-local and multicast addresses.
    pub allow_private_addresses: bool,
    /// Also archive every fetched response as WARC files in this folder.
    pub warc_out: Option<PathBuf>,
    /// Seconds to wait for a connection.
    pub connect_timeout_secs: u64,
    /// Seconds for a whole response.
    pub timeout_secs: u64,
    /// Largest body read (bytes); larger pages are counted as too large.
    pub max_body_bytes: u64,
    /// Retries on 5xx, timeouts and 429.
    pub max_retries: u32,
}

impl Default for FeedsConfig {
    /// The fetcher's own defaults ([`FetchOptions::default`]), polled every 15 minutes.
    fn default() -> Self {
        let f = FetchOptions::default();
        FeedsConfig {
            list: PathBuf::new(),
            once: false,
            interval_secs: 900,
            min_interval_secs: 60,
            max_interval_secs: 86_400,
            max_connections: 64,
            per_host_connections: 1,
            forget_after_days: 365,
            user_agent: f.user_agent,
            delay_ms: f.delay.as_millis() as u64,
            allow_private_addresses: f.allow_private_addresses,
            warc_out: None,
            connect_timeout_secs: f.connect_timeout.as_secs(),
            timeout_secs: f.timeout.as_secs(),
            max_body_bytes: f.max_body_bytes,
            max_retries: f.max_retries,
        }
    }
}

impl FeedsConfig {
    /// The fetcher settings this configuration asks for.
    pub fn fetch_options(&self) -> FetchOptions {
        FetchOptions {
            user_agent: self.user_agent.clone(),
            delay: Duration::from_millis(self.delay_ms),
            connect_timeout: Duration::from_secs(self.connect_timeout_secs),
            timeout: Duration::from_secs(self.timeout_secs),
            max_body_bytes: self.max_body_bytes,
            max_retries: self.max_retries,
            allow_private_addresses: self.allow_private_addresses,
            ..FetchOptions::default()
        }
    }
}

/// The `[extractor]` table: the scorer and its model, and every extraction option of
/// [`ExtractOptions`](crate::extract::ExtractOptions) under its own field name. The options are
/// declared there once; the table's known keys are derived from them ([`known_keys`]), so a new
/// option needs nothing here. (`deny_unknown_fields` does not work with `flatten`: unknown keys
/// are reported by [`PipelineConfig::load`] from the known keys instead.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExtractorConfig {
    /// Token scorer, one of `scoring::NAMES` (default `nb`; see "choosing a scorer" in README.md).
    pub scorer: String,
    /// Model file (default: the built-in model).
    pub model: Option<PathBuf>,
    /// Replaces the model's bias.
    pub bias: Option<f64>,
    /// Replaces the model's extra bias of tags.
    pub tag_bias: Option<f64>,
    #[serde(flatten)]
    pub options: crate::extract::ExtractOptions,
}

impl Default for ExtractorConfig {
    fn default() -> Self {
        ExtractorConfig {
            scorer: "nb".into(),
            model: None,
            bias: None,
            tag_bias: None,
            options: crate::extract::ExtractOptions::default(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Extraction threads (0: one per core).
    pub threads: usize,
    /// Continue the run recorded in the output folder.
    pub resume: bool,
    /// Process one slice of the inputs: `K/N` (0-based K) or `auto/N` (K from
    /// SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX); output under
    /// `OUT/shard-0000K/`, always resumed.
    pub shard: Option<String>,
    /// Endpoint of an S3-compatible store for `s3://` inputs and outputs (plain HTTP allowed
    /// when the URL says `http://`); default: `AWS_ENDPOINT_URL`, else AWS.
    pub s3_endpoint: Option<String>,
    /// Local folder where an `s3://` output is staged (its state and parts, uploaded as each
    /// part is committed); default: a folder under the system's temporary folder.
    pub staging: Option<PathBuf>,
    /// Serve Prometheus metrics at `http://ADDR/metrics` while the run lasts (off when none).
    pub metrics_addr: Option<String>,
    /// Let `metrics_addr` be other than a loopback address.
    pub metrics_allow_remote: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SinkConfig {
    /// Output folder.
    pub out: PathBuf,
    /// Drop near duplicates instead of marking them.
    pub drop_near_duplicates: bool,
    pub part_bytes: u64,
    pub zstd_level: i32,
    /// `jsonl` (zstd JSON Lines, the default) or `parquet`.
    pub format: crate::sink::Format,
}

impl Default for SinkConfig {
    fn default() -> Self {
        let s = SinkOptions::default();
        SinkConfig {
            out: PathBuf::new(),
            drop_near_duplicates: false,
            part_bytes: s.part_bytes,
            zstd_level: s.zstd_level,
            format: s.format,
        }
    }
}

impl SinkConfig {
    pub fn options(&self) -> SinkOptions {
        SinkOptions { part_bytes: self.part_bytes, zstd_level: self.zstd_level, format: self.format }
    }
}

/// An input or output named by a URL (`http(s)://`, `s3://`) rather than a path.
pub fn is_url(p: &Path) -> bool {
    let s = p.to_string_lossy();
    crate::sources::remote::is_remote(&s) || crate::storage::is_s3(&s)
}

/// A configuration that could not be used: every problem found, one per line.
#[derive(Debug, thiserror::Error)]
#[error("{}: {} problem(s):\n  {}", path.display(), problems.len(), problems.join("\n  "))]
pub struct ConfigError {
    pub path: PathBuf,
    pub problems: Vec<String>,
}

/// Why `table.key = value` is not accepted, if it is not: the table's struct is read from a
/// table holding that key alone (every other field takes its default).
fn bad_value(table: &str, key: &str, value: &toml::Value) -> Option<String> {
    fn check<T: serde::de::DeserializeOwned>(one: toml::Table) -> Option<String> {
        T::deserialize(toml::Value::Table(one)).err().map(|e| e.message().trim().to_string())
    }
    let mut one = toml::Table::new();
    one.insert(key.to_string(), value.clone());
    match table {
        "warc" => check::<WarcConfig>(one),
        "feeds" => check::<FeedsConfig>(one),
        "extractor" => check::<ExtractorConfig>(one),
        "run" => check::<RunConfig>(one),
        "sink" => check::<SinkConfig>(one),
        "dedup" => check::<DedupOptions>(one),
        "site_memory" => check::<SiteMemoryOptions>(one),
        _ => None,
    }
}

/// The 1-based line of `key = …` inside `[table]`, found by reading the text line by line
/// (enough for the flat tables these files have).
fn line_of(text: &str, table: &str, key: &str) -> Option<usize> {
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.split(']').next()) {
            current = name.trim().to_string();
        } else if current == table
            && let Some(rest) = l.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            return Some(i + 1);
        }
    }
    None
}

/// Known keys per table, for reporting every unknown key (serde stops at the first): the
/// fields of each table's struct, read from its serialised default, so a knob is declared once,
/// in its struct (`[extractor]` holds the scorer's fields and every field of
/// [`ExtractOptions`](crate::extract::ExtractOptions), flattened).
pub fn known_keys() -> Vec<(&'static str, Vec<String>)> {
    fn keys_of<T: Serialize + Default>() -> Vec<String> {
        let v = serde_json::to_value(T::default()).expect("config structs serialise");
        v.as_object().expect("a struct").keys().cloned().collect()
    }
    vec![
        ("", keys_of::<PipelineConfig>()),
        ("warc", keys_of::<WarcConfig>()),
        ("feeds", keys_of::<FeedsConfig>()),
        ("extractor", keys_of::<ExtractorConfig>()),
        ("run", keys_of::<RunConfig>()),
        ("sink", keys_of::<SinkConfig>()),
        ("dedup", keys_of::<DedupOptions>()),
        ("site_memory", keys_of::<SiteMemoryOptions>()),
    ]
}

impl PipelineConfig {
    /// Reads and checks a configuration file. Relative paths inside it are taken relative to
    /// the file's folder.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let fail = |problems: Vec<String>| ConfigError { path: path.to_path_buf(), problems };
        let text = std::fs::read_to_string(path).map_err(|e| fail(vec![format!("cannot read: {e}")]))?;
        let value: toml::Table = toml::from_str(&text).map_err(|e| fail(vec![e.message().to_string()]))?;
        let mut problems = Vec::new();
        let known = known_keys();
        let find = |table: &str| known.iter().find(|(t, _)| *t == table).map(|(_, keys)| keys);
        for (key, v) in &value {
            match find(key) {
                None => problems.push(format!("unknown table or key `{key}` (known: {})", known[0].1.join(", "))),
                Some(keys) => match v.as_table() {
                    None => problems.push(format!("`{key}` must be a table")),
                    Some(t) => {
                        for k in t.keys() {
                            if !keys.contains(k) {
                                problems.push(format!("unknown key `{key}.{k}` (known: {})", keys.join(", ")));
                            }
                        }
                    }
                },
            }
        }
        // serde stops at the first bad value and does not say where it is: check each known
        // key's value on its own, so every one is reported with its key and line.
        for (table, v) in &value {
            let (Some(t), Some(keys)) = (v.as_table(), find(table)) else { continue };
            for (k, kv) in t.iter().filter(|(k, _)| keys.contains(k)) {
                if let Some(message) = bad_value(table, k, kv) {
                    let at = line_of(&text, table, k).map(|l| format!("line {l}: ")).unwrap_or_default();
                    problems.push(format!("{at}`{table}.{k}`: {message}"));
                }
            }
        }
        if !problems.is_empty() {
            return Err(fail(problems));
        }
        let mut config: PipelineConfig =
            PipelineConfig::deserialize(toml::Value::Table(value)).map_err(|e| fail(vec![e.message().to_string()]))?;
        let base = path.parent().unwrap_or(Path::new(""));
        config.make_relative_to(base);
        Ok(config)
    }

    fn make_relative_to(&mut self, base: &Path) {
        let fix = |p: &mut PathBuf| {
            if p.is_relative() && !p.as_os_str().is_empty() {
                *p = base.join(&*p);
            }
        };
        if let Some(w) = &mut self.warc {
            w.paths.iter_mut().filter(|p| !is_url(p)).for_each(fix);
            w.lists.iter_mut().for_each(fix);
        }
        if let Some(f) = &mut self.feeds {
            fix(&mut f.list);
            if let Some(w) = &mut f.warc_out {
                fix(w);
            }
        }
        if let Some(m) = &mut self.extractor.model {
            fix(m);
        }
        if !is_url(&self.sink.out) {
            fix(&mut self.sink.out);
        }
        if let Some(s) = &mut self.run.staging {
            fix(s);
        }
    }

    /// Every problem of a complete configuration (after command-line overrides).
    pub fn validate(&self) -> Vec<String> {
        let mut p = Vec::new();
        match (&self.warc, &self.feeds) {
            (None, None) => {
                p.push("nothing to read: give --warc FILES, --feeds FILE or a config with [warc] or [feeds]".into())
            }
            (Some(_), Some(_)) => p.push("give either WARC input or feeds, not both".into()),
            (Some(w), None) => {
                if w.paths.is_empty() && w.lists.is_empty() {
                    p.push("warc.paths and warc.lists are empty".into());
                }
                for f in &w.paths {
                    if is_url(f) {
                        if crate::storage::is_s3(&f.to_string_lossy())
                            && let Err(e) = crate::storage::S3Url::parse(&f.to_string_lossy())
                        {
                            p.push(e.to_string());
                        }
                    } else if !f.exists() {
                        p.push(format!("warc input `{}` does not exist", f.display()));
                    }
                }
                for f in &w.lists {
                    if !f.is_file() {
                        p.push(format!("warc list `{}` is not a file", f.display()));
                    }
                }
            }
            (None, Some(f)) => {
                if !f.list.is_file() {
                    p.push(format!("feeds.list `{}` is not a file", f.list.display()));
                }
                if self.site_memory.two_pass {
                    p.push("site_memory.two_pass is for WARC runs: a feeds run's pages arrive poll by poll".into());
                }
                if f.interval_secs == 0 {
                    p.push("feeds.interval_secs must be at least 1".into());
                }
                if f.min_interval_secs == 0 || f.min_interval_secs > f.max_interval_secs {
                    p.push(format!(
                        "feeds.min_interval_secs ({}) must be at least 1 and at most feeds.max_interval_secs ({})",
                        f.min_interval_secs, f.max_interval_secs
                    ));
                }
                if f.max_connections == 0 || f.per_host_connections == 0 {
                    p.push("feeds.max_connections and feeds.per_host_connections must be at least 1".into());
                }
                if f.forget_after_days == 0 {
                    p.push("feeds.forget_after_days must be at least 1".into());
                }
                if f.timeout_secs == 0 || f.connect_timeout_secs == 0 {
                    p.push("feeds timeouts must be at least 1 s".into());
                }
                if f.max_body_bytes == 0 {
                    p.push("feeds.max_body_bytes must be positive".into());
                }
                if f.user_agent.trim().is_empty() {
                    p.push("feeds.user_agent is empty".into());
                }
            }
        }
        if self.sink.out.as_os_str().is_empty() {
            p.push("no output folder: give --out DIR or sink.out".into());
        }
        let out = self.sink.out.to_string_lossy();
        if crate::storage::is_s3(&out) {
            if let Err(e) = crate::storage::S3Url::parse(&out) {
                p.push(e.to_string());
            }
        } else if crate::sources::remote::is_remote(&out) {
            p.push(format!("output `{out}`: give a folder or an s3://bucket/prefix/"));
        }
        if !crate::methods::NAMES.contains(&self.extractor.scorer.as_str()) {
            p.push(format!(
                "extractor.scorer `{}` is not one of {}",
                self.extractor.scorer,
                crate::methods::NAMES.join(", ")
            ));
        }
        let method = crate::methods::METHODS.iter().find(|m| m.name == self.extractor.scorer);
        if let Some(m) = method {
            match (m.model, &self.extractor.model) {
                (crate::methods::ModelUse::Required, None) => p.push(format!(
                    "extractor.scorer `{}` needs extractor.model (a model file from `pipeline train`)",
                    m.name
                )),
                (crate::methods::ModelUse::Never, Some(_)) => {
                    p.push(format!("extractor.scorer `{}` takes no extractor.model", m.name))
                }
                _ => {}
            }
        }
        if let Some(m) = &self.extractor.model
            && !m.is_file()
        {
            p.push(format!("extractor.model `{}` is not a file", m.display()));
        }
        p.extend(self.extractor.options.problems().into_iter().map(|e| format!("extractor.{e}")));
        for (key, v) in [("bias", self.extractor.bias), ("tag_bias", self.extractor.tag_bias)] {
            if let Some(v) = v.filter(|v| !v.is_finite()) {
                p.push(format!("extractor.{key} must be a finite number, not {v}"));
            }
        }
        if let Some(spec) = &self.run.shard
            && let Err(e) = super::shard::Shard::parse(spec, |v| std::env::var(v).ok())
        {
            p.push(format!("run.shard: {e}"));
        }
        if let Some(a) = &self.run.metrics_addr
            && let Err(e) = super::metrics::check_addr(a, self.run.metrics_allow_remote)
        {
            p.push(e);
        }
        if self.run.threads > 1024 {
            p.push(format!("run.threads {} is too many", self.run.threads));
        }
        p.extend(self.sink.options().validate());
        p.extend(self.dedup.validate());
        p.extend(self.site_memory.problems());
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unknown_key_is_reported_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, "[warc]\npaths=['a']\nglob='x'\n[sink]\nout='o'\ncompression=1\n[extra]\n").unwrap();
        let e = PipelineConfig::load(&path).unwrap_err();
        assert_eq!(e.problems.len(), 3, "{e}");
        assert!(e.to_string().contains("warc.glob") && e.to_string().contains("sink.compression"));
        assert!(e.to_string().contains("`extra`"));
    }

    #[test]
    fn every_bad_value_is_reported_with_its_key_and_line_together_with_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        let text = "[warc]\npaths = 'not-a-list'\n\n[run]\nthreads = -1\nresume = 'yes'\n\n[sink]\nout = 'o'\n\
                    part_bytes = 'big'\ncolour = 'red'\n[dedup]\nbands = 1.5\n";
        std::fs::write(&path, text).unwrap();
        let e = PipelineConfig::load(&path).unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.problems.len(), 6, "{msg}");
        for (line, key) in
            [(2, "warc.paths"), (5, "run.threads"), (6, "run.resume"), (10, "sink.part_bytes"), (13, "dedup.bands")]
        {
            assert!(
                e.problems.iter().any(|p| p.starts_with(&format!("line {line}: `{key}`: "))),
                "no problem for {key} at line {line}:\n{msg}"
            );
        }
        assert!(msg.contains("unknown key `sink.colour`"), "{msg}");
        assert!(msg.contains("-1"), "{msg}");
    }

    #[test]
    fn the_known_key_list_matches_the_config_structs() {
        // KNOWN is kept by hand so that every unknown key can be reported at once; this keeps
        // it equal to what serde accepts.
        let full = PipelineConfig {
            warc: Some(WarcConfig::default()),
            feeds: Some(FeedsConfig { warc_out: Some("w".into()), ..FeedsConfig::default() }),
            extractor: ExtractorConfig {
                model: Some("m".into()),
                bias: Some(0.0),
                tag_bias: Some(0.0),
                options: crate::extract::ExtractOptions {
                    chooser_margin: Some(0.2),
                    ..crate::extract::ExtractOptions::default()
                },
                ..ExtractorConfig::default()
            },
            run: RunConfig {
                shard: Some("0/1".into()),
                s3_endpoint: Some("http://127.0.0.1:9000".into()),
                staging: Some("s".into()),
                metrics_addr: Some("127.0.0.1:9898".into()),
                ..RunConfig::default()
            },
            site_memory: SiteMemoryOptions { from: Some("m.sitemem".into()), ..SiteMemoryOptions::default() },
            ..PipelineConfig::default()
        };
        let value = toml::Value::try_from(&full).unwrap();
        let tables = value.as_table().unwrap();
        let top: Vec<&str> = tables.keys().map(String::as_str).collect();
        let known = known_keys();
        assert_eq!(sorted(top), sorted(known[0].1.iter().map(String::as_str).collect()));
        for (name, keys) in &known[1..] {
            let fields: Vec<&str> = tables[*name].as_table().unwrap().keys().map(String::as_str).collect();
            assert_eq!(sorted(fields), sorted(keys.iter().map(String::as_str).collect()), "table {name}");
        }
    }

    fn sorted(mut v: Vec<&str>) -> Vec<&str> {
        v.sort_unstable();
        v
    }

    #[test]
    fn the_sink_format_is_read_and_an_unknown_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.toml");
        std::fs::write(&path, "[warc]\npaths=['in.warc.gz']\n[sink]\nout='out'\nformat='parquet'\n").unwrap();
        let c = PipelineConfig::load(&path).unwrap();
        assert_eq!(c.sink.options().format, crate::sink::Format::Parquet);
        assert!(c.validate().iter().all(|p| !p.contains("sink")), "{:?}", c.validate());
        std::fs::write(&path, "[warc]\npaths=['in.warc.gz']\n[sink]\nout='out'\nformat='csv'\n").unwrap();
        assert!(PipelineConfig::load(&path).is_err());
    }

    #[test]
    fn paths_are_relative_to_the_file_and_validation_lists_problems() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, "[warc]\npaths=['in.warc.gz']\n[sink]\nout='out'\nzstd_level=40\n[dedup]\nbands=0\n")
            .unwrap();
        let c = PipelineConfig::load(&path).unwrap();
        assert_eq!(c.warc.as_ref().unwrap().paths[0], dir.path().join("in.warc.gz"));
        assert_eq!(c.sink.out, dir.path().join("out"));
        let problems = c.validate();
        assert_eq!(problems.len(), 3, "{problems:?}");
        std::fs::write(&path, "[sink]\nout=3\n").unwrap();
        assert!(PipelineConfig::load(&path).is_err());
        std::fs::write(&path, "[warc]\npaths=['in.warc.gz']\n[sink]\nout='out'\n[extractor]\nscorer='crf'\n").unwrap();
        let problems = PipelineConfig::load(&path).unwrap().validate();
        assert!(problems.iter().any(|p| p.contains("needs extractor.model")), "{problems:?}");
        std::fs::write(
            &path,
            "[warc]\npaths=['in.warc.gz']\n[sink]\nout='out'\n[extractor]\nmulti_item_ratio=1.5\nextra_span_min=-1.0\n",
        )
        .unwrap();
        let problems = PipelineConfig::load(&path).unwrap().validate();
        assert!(problems.iter().any(|p| p.contains("extractor.multi_item_ratio 1.5")), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("extractor.extra_span_min -1")), "{problems:?}");
    }
}
