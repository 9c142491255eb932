//! S3-compatible object storage: `--warc s3://bucket/key`, `--warc s3://bucket/prefix/` and
//! `--out s3://bucket/prefix/`. The client is the `object_store` crate (the Arrow project's,
//! used by DataFusion, Polars and delta-rs: S3 request signing, retries of failed requests and
//! multipart uploads done right), with `ring` for signing like our TLS, so no second crypto
//! library is built. Credentials, region and endpoint come from the usual AWS environment
//! variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
//! `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, `AWS_SKIP_SIGNATURE` for public buckets);
//! `--s3-endpoint` ([`set_endpoint`]) points at an S3-compatible store (MinIO, Ceph, R2 …) and
//! allows plain HTTP when its URL says `http://`.
//!
//! The rest of the crate is synchronous, so this module owns one small tokio runtime and
//! blocks on it. [`S3Reader`] streams an object: never the whole file first. A body stream
//! that breaks is first retried by `object_store` itself (a ranged GET from the byte it got
//! to); if that gives up, the reader asks again from its own position, a bounded number of
//! times, as [`crate::sources::remote::HttpReader`] does for HTTP, and then fails naming the
//! object and the byte offset.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as Key;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};

/// Objects up to this size are uploaded with one PUT; larger ones in parts of this size.
pub const MULTIPART_CHUNK: usize = 8 << 20;

/// Errors of object storage, naming the object (and the local file where one is involved).
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("`{0}`: not an S3 location (expected s3://bucket/key or s3://bucket/prefix/)")]
    BadUrl(String),
    #[error("{url}: {message}")]
    Remote { url: String, message: String },
    #[error("{}: {source}", path.display())]
    Local { path: PathBuf, source: io::Error },
}

/// Is this input or output an `s3://` location?
pub fn is_s3(s: &str) -> bool {
    s.starts_with("s3://")
}

/// `s3://bucket/key`; a key that is empty or ends in `/` is a prefix.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct S3Url {
    pub bucket: String,
    pub key: String,
}

impl S3Url {
    pub fn parse(s: &str) -> Result<S3Url, StorageError> {
        let rest = s.strip_prefix("s3://").ok_or_else(|| StorageError::BadUrl(s.to_string()))?;
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        // The key is used as it is (see `object_key`): refuse what no store holds.
        let inner = key.strip_suffix('/').unwrap_or(key);
        if bucket.is_empty()
            || key.starts_with('/')
            || key.chars().any(|c| c.is_control())
            || (!inner.is_empty() && inner.split('/').any(|c| c.is_empty() || c == "." || c == ".."))
        {
            return Err(StorageError::BadUrl(s.to_string()));
        }
        Ok(S3Url { bucket: bucket.to_string(), key: key.to_string() })
    }

    pub fn is_prefix(&self) -> bool {
        self.key.is_empty() || self.key.ends_with('/')
    }

    /// The prefix form (`…/`) of this location.
    pub fn as_prefix(&self) -> S3Url {
        let mut p = self.clone();
        if !p.is_prefix() {
            p.key.push('/');
        }
        p
    }

    /// `rel` (a `/`-separated relative path) under this prefix.
    pub fn join(&self, rel: &str) -> S3Url {
        let p = self.as_prefix();
        S3Url { bucket: p.bucket, key: format!("{}{}", p.key, rel.trim_start_matches('/')) }
    }

    /// The key exactly as written (`Key::from` would percent-encode `%`, `#`, `*` … once more,
    /// so a key found by listing would be asked for under another name).
    fn object_key(&self) -> Key {
        let key = self.key.trim_end_matches('/');
        Key::parse(key).unwrap_or_else(|_| Key::from(key))
    }
}

impl std::fmt::Display for S3Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.key)
    }
}

/// Settings given explicitly (flags, a program embedding the crate); each one left `None` is
/// taken from the AWS environment variables.
#[derive(Debug, Clone, Default)]
pub struct S3Settings {
    /// An S3-compatible store's URL (`--s3-endpoint`); plain HTTP is allowed when it says
    /// `http://`.
    pub endpoint: Option<String>,
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub region: Option<String>,
}

static SETTINGS: OnceLock<S3Settings> = OnceLock::new();

/// Sets the process's S3 settings before the first request; later calls are ignored.
pub fn configure(settings: S3Settings) {
    let _ = SETTINGS.set(settings);
}

/// Sets only the endpoint (`--s3-endpoint`); see [`configure`].
pub fn set_endpoint(endpoint: Option<String>) {
    configure(S3Settings { endpoint, ..S3Settings::default() });
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("object-storage")
            .enable_all()
            .build()
            .expect("a tokio runtime starts")
    })
}

/// The client of one bucket (made once per bucket and process).
fn store(bucket: &str) -> Result<Arc<dyn ObjectStore>, StorageError> {
    static STORES: OnceLock<Mutex<HashMap<String, Arc<dyn ObjectStore>>>> = OnceLock::new();
    let stores = STORES.get_or_init(Default::default);
    let mut stores = stores.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(s) = stores.get(bucket) {
        return Ok(s.clone());
    }
    crate::transport::install_crypto_provider();
    let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
    let settings = SETTINGS.get().cloned().unwrap_or_default();
    if let Some(endpoint) = &settings.endpoint {
        b = b.with_endpoint(endpoint).with_allow_http(endpoint.starts_with("http://"));
    }
    if let Some(k) = settings.access_key_id {
        b = b.with_access_key_id(k);
    }
    if let Some(k) = settings.secret_access_key {
        b = b.with_secret_access_key(k);
    }
    if let Some(r) = settings.region {
        b = b.with_region(r);
    }
    let s: Arc<dyn ObjectStore> = Arc::new(
        b.build().map_err(|e| StorageError::Remote { url: format!("s3://{bucket}/"), message: e.to_string() })?,
    );
    stores.insert(bucket.to_string(), s.clone());
    Ok(s)
}

fn remote(url: &S3Url) -> impl Fn(object_store::Error) -> StorageError + '_ {
    move |e| StorageError::Remote { url: url.to_string(), message: e.to_string() }
}

/// Every object under a prefix, sorted by key, with its size.
pub fn list(prefix: &S3Url) -> Result<Vec<(S3Url, u64)>, StorageError> {
    let store = store(&prefix.bucket)?;
    let key = prefix.object_key();
    let key = if prefix.key.is_empty() { None } else { Some(&key) };
    let mut out = runtime().block_on(async {
        let mut s = store.list(key);
        let mut v = Vec::new();
        while let Some(meta) = s.next().await {
            let meta = meta.map_err(remote(prefix))?;
            v.push((S3Url { bucket: prefix.bucket.clone(), key: meta.location.to_string() }, meta.size));
        }
        Ok::<_, StorageError>(v)
    })?;
    out.sort();
    Ok(out)
}

/// The `*.warc` and `*.warc.gz` objects under a prefix, sorted.
pub fn list_warcs(prefix: &S3Url) -> Result<Vec<S3Url>, StorageError> {
    Ok(list(prefix)?
        .into_iter()
        .map(|(u, _)| u)
        .filter(|u| [".warc", ".warc.gz", ".arc", ".arc.gz"].iter().any(|e| u.key.ends_with(e)))
        .collect())
}

/// Uploads a local file: one PUT up to [`MULTIPART_CHUNK`], a multipart upload beyond.
pub fn upload(local: &Path, to: &S3Url) -> Result<(), StorageError> {
    upload_fenced(local, to, || Ok::<(), StorageError>(()))
}

/// [`upload`], asking `fence` first and again just before a multipart upload is completed:
/// an error of `fence` (the output's lock lost, `pipeline::remote_lock`) aborts the upload, so
/// that nothing of it appears. A writer that paused mid-upload past its lock's staleness thus
/// does not complete a large part over its successor's; the window left is the completing
/// request (object stores have no conditional multipart completion that `object_store`
/// offers). `fence` runs outside the storage runtime, so it may make requests of its own.
pub fn upload_fenced<E: From<StorageError>>(
    local: &Path,
    to: &S3Url,
    fence: impl Fn() -> Result<(), E>,
) -> Result<(), E> {
    fence()?;
    let store = store(&to.bucket)?;
    let key = to.object_key();
    let at = |source| StorageError::Local { path: local.to_path_buf(), source };
    let mut file = std::fs::File::open(local).map_err(at)?;
    let len = file.metadata().map_err(at)?.len();
    if len <= MULTIPART_CHUNK as u64 {
        let mut buf = Vec::with_capacity(len as usize);
        file.read_to_end(&mut buf).map_err(at)?;
        runtime().block_on(store.put(&key, PutPayload::from(buf))).map_err(remote(to))?;
        return Ok(());
    }
    let w = runtime().block_on(async {
        let upload = store.put_multipart(&key).await.map_err(remote(to))?;
        let mut w = WriteMultipart::new_with_chunk_size(upload, MULTIPART_CHUNK);
        let mut buf = vec![0u8; 1 << 20];
        loop {
            // At most two parts in flight: memory stays bounded whatever the file's size.
            w.wait_for_capacity(2).await.map_err(remote(to))?;
            let n = file.read(&mut buf).map_err(at)?;
            if n == 0 {
                break;
            }
            w.write(&buf[..n]);
        }
        Ok::<_, StorageError>(w)
    })?;
    if let Err(e) = fence() {
        // The store drops the parts of an aborted upload; a failed abort leaves them to the
        // bucket's lifecycle rule, invisible either way.
        let _ = runtime().block_on(w.abort());
        return Err(e);
    }
    runtime().block_on(w.finish()).map_err(remote(to))?;
    Ok(())
}

/// Writes a small object only if none is at `to` (a conditional PUT, `If-None-Match: *`):
/// its ETag when written, None when an object was there first. Two processes asking at once
/// cannot both be told it was written.
pub fn create_new(to: &S3Url, body: Vec<u8>) -> Result<Option<String>, StorageError> {
    put_if(to, body, object_store::PutMode::Create)
}

/// Writes a small object from memory, whatever is there.
pub fn put_small(to: &S3Url, body: Vec<u8>) -> Result<(), StorageError> {
    put_if(to, body, object_store::PutMode::Overwrite).map(drop)
}

/// Replaces a small object only if it is still the one whose ETag is `e_tag` (`If-Match`):
/// its new ETag, or None when it changed or went in between.
pub fn replace_if(to: &S3Url, body: Vec<u8>, e_tag: &str) -> Result<Option<String>, StorageError> {
    let v = object_store::UpdateVersion { e_tag: Some(e_tag.to_string()), version: None };
    put_if(to, body, object_store::PutMode::Update(v))
}

fn put_if(to: &S3Url, body: Vec<u8>, mode: object_store::PutMode) -> Result<Option<String>, StorageError> {
    let opts = object_store::PutOptions { mode, ..Default::default() };
    match with_object(to, |store, key| async move { store.put_opts(&key, PutPayload::from(body), opts).await })? {
        Ok(r) => Ok(Some(r.e_tag.unwrap_or_default())),
        // Another object there, or the one asked for changed or went.
        Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => Ok(None),
        Err(e) => absent_or(to, e),
    }
}

/// One request on the object `url` names, run on the storage runtime (the outer error: no
/// client for its bucket).
fn with_object<T, F: std::future::Future<Output = object_store::Result<T>>>(
    url: &S3Url,
    request: impl FnOnce(Arc<dyn ObjectStore>, Key) -> F,
) -> Result<object_store::Result<T>, StorageError> {
    let store = store(&url.bucket)?;
    Ok(runtime().block_on(request(store, url.object_key())))
}

/// None for "no such object", else the error, named by `url`.
fn absent_or<T>(url: &S3Url, e: object_store::Error) -> Result<Option<T>, StorageError> {
    match e {
        object_store::Error::NotFound { .. } => Ok(None),
        e => Err(remote(url)(e)),
    }
}

/// The most [`read_small`] reads: a lock, a shard's or a dedup's manifest are far smaller, and
/// an object of that name that is not (a foreign one) must not fill the memory.
pub const SMALL_MAX: u64 = 64 << 20;

/// A small object read whole, with its ETag and when the store last wrote it (Unix seconds,
/// by the store's clock); None when there is none. An object larger than [`SMALL_MAX`] is an
/// error, and is not read.
pub fn read_small(from: &S3Url) -> Result<Option<(Vec<u8>, String, i64)>, StorageError> {
    let r = with_object(from, |store, key| async move {
        let r = store.get(&key).await?;
        let (e_tag, modified) = (r.meta.e_tag.clone().unwrap_or_default(), r.meta.last_modified.timestamp());
        if r.meta.size > SMALL_MAX {
            return Ok(Err(r.meta.size));
        }
        Ok(Ok((r.bytes().await?.to_vec(), e_tag, modified)))
    })?;
    match r {
        Ok(Ok(v)) => Ok(Some(v)),
        Ok(Err(size)) => Err(StorageError::Remote {
            url: from.to_string(),
            message: format!("{size} bytes: larger than the {SMALL_MAX} bytes of the small files this crate writes"),
        }),
        Err(e) => absent_or(from, e),
    }
}

/// The ETag of an object, None when there is none.
pub fn e_tag(of: &S3Url) -> Result<Option<String>, StorageError> {
    let r = with_object(of, |store, key| async move { store.head(&key).await })?;
    r.map(|m| Some(m.e_tag.unwrap_or_default())).or_else(|e| absent_or(of, e))
}

/// Deletes an object (none there is no error).
pub fn delete(url: &S3Url) -> Result<(), StorageError> {
    let r = with_object(url, |store, key| async move { store.delete(&key).await })?;
    r.or_else(|e| absent_or::<()>(url, e).map(drop))
}

/// Downloads an object to a local file (streamed; written to a temporary name, then renamed).
pub fn download(from: &S3Url, local: &Path) -> Result<(), StorageError> {
    let at = |source| StorageError::Local { path: local.to_path_buf(), source };
    if let Some(dir) = local.parent() {
        std::fs::create_dir_all(dir).map_err(at)?;
    }
    let tmp = local.with_extension("download");
    let mut reader = S3Reader::open(from)?;
    let mut file = std::fs::File::create(&tmp).map_err(at)?;
    io::copy(&mut reader, &mut file)
        .map_err(|e| StorageError::Remote { url: from.to_string(), message: e.to_string() })?;
    file.flush().map_err(at)?;
    drop(file);
    std::fs::rename(&tmp, local).map_err(at)
}

/// A streaming, resuming reader of one object.
pub struct S3Reader {
    store: Arc<dyn ObjectStore>,
    url: S3Url,
    key: Key,
    /// Bytes delivered to the caller so far.
    pos: u64,
    size: u64,
    stream: Option<BoxStream<'static, object_store::Result<Bytes>>>,
    chunk: Bytes,
    resumes: u32,
}

impl S3Reader {
    /// Opens an object (the first request is made here, so a missing object fails at once).
    pub fn open(url: &S3Url) -> Result<S3Reader, StorageError> {
        if url.is_prefix() {
            return Err(StorageError::BadUrl(url.to_string()));
        }
        let store = store(&url.bucket)?;
        let mut r = S3Reader {
            store,
            key: url.object_key(),
            url: url.clone(),
            pos: 0,
            size: 0,
            stream: None,
            chunk: Bytes::new(),
            resumes: 0,
        };
        r.request().map_err(|e| StorageError::Remote { url: url.to_string(), message: e.to_string() })?;
        Ok(r)
    }

    /// Bytes delivered so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// How many times the stream was resumed.
    pub fn resumes(&self) -> u32 {
        self.resumes
    }

    fn request(&mut self) -> io::Result<()> {
        let options =
            GetOptions { range: (self.pos > 0).then_some(GetRange::Offset(self.pos)), ..GetOptions::default() };
        let store = self.store.clone();
        let key = self.key.clone();
        let got = runtime()
            .block_on(async move { store.get_opts(&key, options).await })
            .map_err(|e| io::Error::other(format!("{}: {e}", self.url)))?;
        if self.pos == 0 {
            self.size = got.meta.size;
        }
        self.stream = Some(got.into_stream());
        Ok(())
    }

    /// After a broken stream: asks again from `pos`, or gives up.
    fn resume(&mut self, why: &str) -> io::Result<()> {
        self.stream = None;
        crate::transport::resume_or_give_up(&self.url, self.pos, &mut self.resumes, why)?;
        self.request()
    }
}

impl Read for S3Reader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.chunk.is_empty() {
            if self.pos >= self.size {
                return Ok(0);
            }
            if self.stream.is_none() {
                self.request()?;
            }
            let stream = self.stream.as_mut().expect("requested above");
            match runtime().block_on(stream.next()) {
                Some(Ok(b)) => self.chunk = b,
                Some(Err(e)) => self.resume(&e.to_string())?,
                None => self.resume("the body ended early")?,
            }
        }
        let n = buf.len().min(self.chunk.len());
        buf[..n].copy_from_slice(&self.chunk.split_to(n));
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Any text either is refused or parses to a location that parses back from its printed
        /// form, whose object key is the key as written (never percent-encoded again).
        #[test]
        fn any_location_parses_or_is_refused_and_keeps_its_key(s in "s3://[a-z]{0,3}(/[^/]{0,6}){0,4}/?|\\PC{0,20}") {
            if let Ok(u) = S3Url::parse(&s) {
                proptest::prop_assert_eq!(S3Url::parse(&u.to_string()).ok(), Some(u.clone()));
                let key = u.object_key();
                proptest::prop_assert_eq!(key.as_ref(), u.key.trim_end_matches('/'));
            }
        }
    }

    #[test]
    fn keys_with_reserved_characters_are_kept_as_written() {
        let u = S3Url::parse("s3://b/in/ü x+%#*.warc.gz").unwrap();
        assert_eq!(u.object_key().as_ref(), "in/ü x+%#*.warc.gz");
        for bad in ["s3://b/a//c", "s3://b/a\u{1}b"] {
            assert!(S3Url::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn locations_parse_and_join() {
        let u = S3Url::parse("s3://crawl/2026/a.warc.gz").unwrap();
        assert_eq!((u.bucket.as_str(), u.key.as_str(), u.is_prefix()), ("crawl", "2026/a.warc.gz", false));
        let p = S3Url::parse("s3://crawl/out/").unwrap();
        assert!(p.is_prefix());
        assert_eq!(p.join("shard-00001/state.json").to_string(), "s3://crawl/out/shard-00001/state.json");
        assert_eq!(S3Url::parse("s3://crawl").unwrap().join("x").to_string(), "s3://crawl/x");
        assert_eq!(S3Url::parse("s3://crawl/out").unwrap().join("x").to_string(), "s3://crawl/out/x");
        for bad in ["s3://", "s3:///key", "http://b/k", "s3://b//k", "s3://b/a/../k"] {
            assert!(S3Url::parse(bad).is_err(), "{bad}");
        }
    }
}
