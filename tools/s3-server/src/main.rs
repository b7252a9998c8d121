//! An S3-compatible server over a local folder for workspace-search's tests
//! (`.ci/run` builds and starts it on 127.0.0.1): s3s-fs, with two changes.
//! s3s-fs checks `If-Match` / `If-None-Match` and then writes, so two
//! conditional PUTs of one key can both succeed; real S3 lets exactly one
//! win. Here every write takes one lock alone (reads share it), which makes
//! a conditional write atomic, as a test of "exactly one writer wins" needs.
//! And an object's body is read at once, not in s3s-fs's 4 KB steps.
//!
//! Usage: ws-s3-test-server <root> <port>; prints `listening <port>` once
//! it accepts connections (port 0: any free port, printed). Credentials:
//! access key `workspace-search`, secret `workspace-search-secret`.

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use s3s::auth::SimpleAuth;
use s3s::dto::*;
use s3s::service::S3ServiceBuilder;
use s3s::{S3Request, S3Response, S3Result, S3};
use s3s_fs::FileSystem;
use std::io::{Read, Seek, Write};
use std::path::{Component, Path, PathBuf};
use tokio::net::TcpListener;
use tokio::sync::RwLock;

/// The only credentials it accepts.
const ACCESS_KEY: &str = "workspace-search";
const SECRET_KEY: &str = "workspace-search-secret";

/// s3s-fs with its writes serialised.
struct Serialised {
    fs: FileSystem,
    /// The folder s3s-fs serves (canonical), for `get_object`'s fast body.
    root: std::path::PathBuf,
    lock: RwLock<()>,
}

/// Delegates read methods under the shared lock and write methods under the exclusive one.
macro_rules! delegate {
    ($($kind:ident $name:ident($input:ty) -> $output:ty;)*) => {
        #[async_trait::async_trait]
        impl S3 for Serialised {
            async fn get_object(&self, req: S3Request<GetObjectInput>) -> S3Result<S3Response<GetObjectOutput>> {
                let _held = self.lock.read().await;
                let path = object_path(&self.root, &req.input.bucket, &req.input.key);
                let mut answer = self.fs.get_object(req).await?;
                let whole = match path {
                    Some(p) => whole_body(p, &answer.output).await,
                    None => None,
                };
                if let Some(body) = whole {
                    answer.output.body = Some(body);
                }
                Ok(answer)
            }
            $(
                async fn $name(&self, req: S3Request<$input>) -> S3Result<S3Response<$output>> {
                    delegate!(@lock $kind self);
                    self.fs.$name(req).await
                }
            )*
        }
    };
    (@lock read $self:ident) => { let _held = $self.lock.read().await; };
    (@lock write $self:ident) => { let _held = $self.lock.write().await; };
}

delegate! {
    write create_bucket(CreateBucketInput) -> CreateBucketOutput;
    write delete_bucket(DeleteBucketInput) -> DeleteBucketOutput;
    write put_object(PutObjectInput) -> PutObjectOutput;
    write copy_object(CopyObjectInput) -> CopyObjectOutput;
    write delete_object(DeleteObjectInput) -> DeleteObjectOutput;
    write delete_objects(DeleteObjectsInput) -> DeleteObjectsOutput;
    write create_multipart_upload(CreateMultipartUploadInput) -> CreateMultipartUploadOutput;
    write upload_part(UploadPartInput) -> UploadPartOutput;
    write complete_multipart_upload(CompleteMultipartUploadInput) -> CompleteMultipartUploadOutput;
    write abort_multipart_upload(AbortMultipartUploadInput) -> AbortMultipartUploadOutput;
    read head_object(HeadObjectInput) -> HeadObjectOutput;
    read head_bucket(HeadBucketInput) -> HeadBucketOutput;
    read list_buckets(ListBucketsInput) -> ListBucketsOutput;
    read list_objects(ListObjectsInput) -> ListObjectsOutput;
    read list_objects_v2(ListObjectsV2Input) -> ListObjectsV2Output;
    read get_bucket_location(GetBucketLocationInput) -> GetBucketLocationOutput;
    read list_parts(ListPartsInput) -> ListPartsOutput;
}

/// The file of `bucket`/`key` under `root`, if the key has only plain
/// components (s3s-fs has checked it resolves under the root; anything
/// else keeps s3s-fs's own body).
fn object_path(root: &Path, bucket: &str, key: &str) -> Option<PathBuf> {
    let plain = |s: &str| Path::new(s).components().all(|c| matches!(c, Component::Normal(_)));
    (plain(bucket) && plain(key)).then(|| root.join(bucket).join(key))
}

/// s3s-fs streams a body in 4 KB reads, each a trip to tokio's blocking
/// pool (about 100 MB/s, which would make every part's transfer the
/// figure measured): the same bytes, read at once. `None`: keep s3s-fs's.
async fn whole_body(path: PathBuf, output: &GetObjectOutput) -> Option<StreamingBlob> {
    let len = usize::try_from(output.content_length?).ok()?;
    // "bytes first-last/total" for a range; the whole object otherwise.
    let first: u64 = match &output.content_range {
        None => 0,
        Some(r) => r.strip_prefix("bytes ")?.split('-').next()?.parse().ok()?,
    };
    let read = move || -> std::io::Result<Vec<u8>> {
        let mut file = std::fs::File::open(path)?;
        file.seek(std::io::SeekFrom::Start(first))?;
        let mut bytes = vec![0u8; len];
        file.read_exact(&mut bytes)?;
        Ok(bytes)
    };
    let bytes = tokio::task::spawn_blocking(read).await.ok()?.ok()?;
    Some(StreamingBlob::from(s3s::Body::from(bytes)))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(root), Some(port)) = (args.next(), args.next()) else {
        return Err("usage: ws-s3-test-server <root> <port>".into());
    };
    std::fs::create_dir_all(&root)?;
    let fs = FileSystem::new(&root).map_err(|e| format!("{e:?}"))?;
    let root = std::fs::canonicalize(&root)?;
    let mut builder = S3ServiceBuilder::new(Serialised { fs, root, lock: RwLock::new(()) });
    // Requests are signed as S3's are; the tests sign with these.
    builder.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
    let service = builder.build();
    let listener = TcpListener::bind(("127.0.0.1", port.parse::<u16>()?)).await?;
    let mut out = std::io::stdout();
    writeln!(out, "listening {}", listener.local_addr()?.port())?;
    out.flush()?;
    let http = ConnBuilder::new(TokioExecutor::new());
    loop {
        let (socket, _) = match listener.accept().await {
            Ok(c) => c,
            // Out of file handles, say: wait rather than spin.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        // Small answers (a manifest) go at once: without it Nagle's
        // algorithm and delayed ACKs hold each one about 40 ms.
        let _ = socket.set_nodelay(true);
        let conn = http.serve_connection(TokioIo::new(socket), service.clone()).into_owned();
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
}
