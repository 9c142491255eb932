//! A local S3-compatible server for trying `--warc s3://…` and `--out s3://…` without a cloud
//! account, and for `scripts/bench-shards.sh`: `s3s` (the S3 protocol, signatures checked)
//! over `s3s-fs` (each bucket a folder of ROOT, each object a file).
//!
//! ```text
//! cargo run --release --example s3_server -- ROOT [PORT]      # default port 9000
//! AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local-secret AWS_REGION=us-east-1 \
//!   pipeline --warc s3://crawl/in/ --out s3://crawl/out/ --s3-endpoint http://127.0.0.1:9000
//! ```
//!
//! Buckets are the folders of ROOT (create `ROOT/crawl` for `s3://crawl/`). It listens on
//! 127.0.0.1 only.

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let root = args.next().ok_or("usage: s3_server ROOT [PORT]")?;
    let port: u16 = args.next().map_or(Ok(9000), |p| p.parse())?;
    let key = std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "local".into());
    let secret = std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "local-secret".into());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(serve(root, port, key, secret))
}

async fn serve(root: String, port: u16, key: String, secret: String) -> Result<(), Error> {
    let fs = s3s_fs::FileSystem::new(&root).map_err(|e| format!("{root}: {e:?}"))?;
    let mut b = s3s::service::S3ServiceBuilder::new(fs);
    b.set_auth(s3s::auth::SimpleAuth::from_single(key, secret));
    let service = b.build();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("S3 server on http://{} serving {root}", listener.local_addr()?);
    loop {
        let (socket, _) = listener.accept().await?;
        let service = service.clone();
        tokio::spawn(async move {
            let http = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
            let _ = http.serve_connection(hyper_util::rt::TokioIo::new(socket), service).await;
        });
    }
}
