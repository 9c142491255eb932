//! An S3-compatible server on 127.0.0.1 for the object-storage tests: `s3s` (the S3 protocol
//! with request signing checked) over `s3s-fs` (buckets are folders of a temporary folder),
//! in-process on its own tokio runtime. An object `s3://B/K` is the file `root/B/K`, so a test
//! puts inputs in place and reads outputs back as plain files.

use std::path::PathBuf;

pub const ACCESS_KEY: &str = "test-access-key";
pub const SECRET_KEY: &str = "test-secret-key";

pub struct S3Server {
    pub endpoint: String,
    root: tempfile::TempDir,
    _rt: tokio::runtime::Runtime,
}

impl S3Server {
    /// Starts a server with the given (empty) buckets.
    pub fn start(buckets: &[&str]) -> S3Server {
        let root = tempfile::tempdir().unwrap();
        for b in buckets {
            std::fs::create_dir_all(root.path().join(b)).unwrap();
        }
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let fs = s3s_fs::FileSystem::new(root.path()).unwrap();
        let mut b = s3s::service::S3ServiceBuilder::new(fs);
        b.set_auth(s3s::auth::SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
        let service = b.build();
        // s3s-fs checks a conditional PUT's If-Match / If-None-Match and then writes, in two
        // steps, and writes an object and then its ETag: two writers racing for one lock could
        // both pass the check, and a read beside a write could pair new bytes with the old
        // ETag. S3 decides each request atomically, so here writes take turns and reads wait
        // for the write under way; each body is read in full before its turn, so a client
        // stopped mid-upload (SIGSTOP) holds up no other.
        let writes = std::sync::Arc::new(tokio::sync::RwLock::new(()));
        rt.spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else { continue };
                let (service, writes) = (service.clone(), writes.clone());
                tokio::spawn(async move {
                    let one_at_a_time = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                        let (service, writes) = (service.clone(), writes.clone());
                        async move {
                            use http_body_util::BodyExt;
                            if req.method() == http::Method::GET || req.method() == http::Method::HEAD {
                                let _read = writes.read().await;
                                return service.call(req.map(s3s::Body::from)).await;
                            }
                            let (head, body) = req.into_parts();
                            let body = body.collect().await.map_err(|e| s3s::HttpError::new(Box::new(e)))?.to_bytes();
                            let _turn = writes.write().await;
                            service.call(http::Request::from_parts(head, s3s::Body::from(body))).await
                        }
                    });
                    let http = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
                    let _ = http.serve_connection(hyper_util::rt::TokioIo::new(socket), one_at_a_time).await;
                });
            }
        });
        S3Server { endpoint, root, _rt: rt }
    }

    /// The file behind `s3://bucket/key`.
    pub fn path(&self, bucket: &str, key: &str) -> PathBuf {
        self.root.path().join(bucket).join(key)
    }

    /// Environment of a client of this server (and nothing of the outer AWS setup).
    pub fn env(&self, cmd: &mut std::process::Command) {
        for v in ["AWS_ENDPOINT_URL", "AWS_ENDPOINT", "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SKIP_SIGNATURE"] {
            cmd.env_remove(v);
        }
        cmd.env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ALLOW_HTTP", "true");
    }
}
