//! Snapshots in S3-compatible object storage: publishing them, and following the
//! current one from a replica.
//!
//! # The layout under a prefix
//!
//! ```text
//! s3://BUCKET/PREFIX/NAME.snap   a snapshot, written once, never changed afterwards
//! s3://BUCKET/PREFIX/current     the pointer: JSON naming the snapshot replicas serve
//! ```
//!
//! ```json
//! {"format":1,"key":"PREFIX/NAME.snap","hash":"<xxh3-128 hex>","bytes":4183104,
//!  "data_updated":"2026-08-22T06:46:45.039Z","published_at":"2026-11-23T04:30:00.000Z"}
//! ```
//!
//! [`Remote::publish`] uploads the snapshot object first and writes the pointer only
//! after the store acknowledged the whole object, so a reader never follows a pointer to
//! a missing or partial object (S3 is strongly consistent for reads after writes, and a
//! PUT is atomic: an object is there whole or not at all). A snapshot object is created
//! with a conditional PUT (`If-None-Match: *`), so an object a replica may be reading is
//! never replaced by other bytes under its name: publishing the same content again is a
//! no-op, other content under a taken name is refused. `publish` names objects after
//! their content hash, so it can always be repeated; `build --output s3://…/NAME.snap`
//! keeps the name it is given. The pointer's `hash` is checked again by the reader
//! against the downloaded file's own verified header.
//!
//! A replica ([`replica::Replica`]) reads the pointer with a conditional GET
//! (`If-None-Match` with the pointer's last ETag: a 304 costs no body), downloads a new
//! snapshot into its data directory under a temporary name, verifies it exactly as a
//! local file is verified (header, content hash, bytecheck, invariants:
//! [`crate::store::Store::verify_async`]), checks its hash against the pointer, swaps it
//! in through the store, and only then renames it into place as the cached copy it
//! serves from after a restart when the store is unreachable.
//!
//! # Configuration
//!
//! The client is `object_store`'s S3 implementation, configured from the standard AWS
//! environment variables: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//! `AWS_SESSION_TOKEN`, `AWS_REGION` / `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL` (any
//! S3-compatible server: MinIO, Ceph, R2, moto), `AWS_ALLOW_HTTP=true` for a plain-HTTP
//! endpoint, and the rest `object_store` documents (`AWS_VIRTUAL_HOSTED_STYLE_REQUEST`,
//! web-identity and container credentials...). Without keys in the environment it asks
//! the instance metadata service, as the AWS SDKs do.

pub mod replica;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as ObjectPath;
use object_store::{
    Attribute, AttributeValue, Attributes, BackoffConfig, ClientOptions, GetOptions, ObjectStore,
    PutMode, PutOptions, PutPayload, RetryConfig,
};

use crate::files::Pending;
use crate::snapshot::Snapshot;

/// The scheme of a location in object storage.
pub const SCHEME: &str = "s3://";
/// Name of the pointer object under a prefix.
pub const POINTER_NAME: &str = "current";
/// Version of the pointer's JSON.
pub const POINTER_FORMAT: u64 = 1;
/// The user metadata (`x-amz-meta-…`) that records a snapshot object's content hash, so
/// that publishing under a taken name can tell the same content from other content.
const HASH_METADATA: &str = "tldsnap-content-hash";
/// A pointer is a few hundred bytes; anything much larger is not one.
const MAX_POINTER_BYTES: usize = 64 * 1024;

/// Whether `s` names a location in object storage (`s3://…`) rather than a local file.
pub fn is_remote(s: &str) -> bool {
    s.starts_with(SCHEME)
}

/// Installs rustls's `ring` provider as the process's TLS provider (the project's TLS
/// standard; reqwest is built without a provider of its own). Call before the first
/// [`Remote::from_env`]; calling it again is harmless.
pub fn install_tls_provider() {
    // Err only when a provider is already installed: then that one is used.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Where snapshots live: `s3://BUCKET[/PREFIX…][/NAME.snap]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The bucket.
    pub bucket: String,
    /// The prefix, without leading or trailing `/` (empty: the bucket's root).
    pub prefix: String,
    /// The snapshot object's name, when the URL ends with `NAME.snap`.
    pub name: Option<String>,
}

impl Location {
    /// Parses `s3://BUCKET/PREFIX/` (a prefix; the trailing `/` is optional) or
    /// `s3://BUCKET/PREFIX/NAME.snap` (a prefix and an object name: the last segment,
    /// when it ends with `.snap`). Bucket names follow S3's rules (3-63 characters:
    /// lowercase letters, digits, `.` and `-`); prefix segments and names use S3's safe
    /// characters (letters, digits, `!-_.*'()`), and no segment may be empty, `.` or `..`.
    pub fn parse(url: &str) -> Result<Location, RemoteError> {
        let bad = |why: &str| RemoteError::Url(format!("{url:?}: {why}"));
        let rest = url
            .strip_prefix(SCHEME)
            .ok_or_else(|| bad("expected s3://BUCKET/PREFIX/"))?;
        let (bucket, path) = rest.split_once('/').unwrap_or((rest, ""));
        let bucket_ok = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
            && bucket.as_bytes()[0].is_ascii_alphanumeric()
            && bucket.as_bytes()[bucket.len() - 1].is_ascii_alphanumeric();
        if !bucket_ok {
            return Err(bad(
                "the bucket name must be 3-63 lowercase letters, digits, '.' or '-'",
            ));
        }
        let path = path.strip_suffix('/').unwrap_or(path);
        let mut segments: Vec<&str> = if path.is_empty() {
            Vec::new()
        } else {
            path.split('/').collect()
        };
        for s in &segments {
            let safe = |b: u8| b.is_ascii_alphanumeric() || b"!-_.*'()".contains(&b);
            if s.is_empty() || *s == "." || *s == ".." || !s.bytes().all(safe) {
                return Err(bad(&format!(
                    "path segment {s:?}: use letters, digits and !-_.*'() only, no empty, '.' or '..' segments"
                )));
            }
        }
        let name = match segments.last() {
            Some(last) if last.ends_with(".snap") && !url.ends_with('/') => {
                let name = (*last).to_owned();
                segments.pop();
                Some(name)
            }
            _ => None,
        };
        if segments.last() == Some(&POINTER_NAME) && name.is_none() && !url.ends_with('/') {
            return Err(bad(
                "names the pointer object; give the prefix (s3://BUCKET/PREFIX/)",
            ));
        }
        Ok(Location {
            bucket: bucket.to_owned(),
            prefix: segments.join("/"),
            name,
        })
    }

    /// The key of `name` under the prefix.
    pub fn key(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{}/{name}", self.prefix)
        }
    }

    /// The pointer's key.
    pub fn pointer_key(&self) -> String {
        self.key(POINTER_NAME)
    }

    /// The prefix as a URL, `s3://BUCKET/PREFIX/`.
    pub fn prefix_url(&self) -> String {
        if self.prefix.is_empty() {
            format!("{SCHEME}{}/", self.bucket)
        } else {
            format!("{SCHEME}{}/{}/", self.bucket, self.prefix)
        }
    }

    /// The URL of an object key in this bucket.
    pub fn url_of(&self, key: &str) -> String {
        format!("{SCHEME}{}/{key}", self.bucket)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.prefix_url())?;
        if let Some(name) = &self.name {
            f.write_str(name)?;
        }
        Ok(())
    }
}

/// The pointer object: which snapshot replicas serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// The snapshot object's key in the bucket.
    pub key: String,
    /// Its content hash (the header's xxh3-128), 32 lowercase hex digits.
    pub hash: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its data date (newest price), Unix milliseconds.
    pub data_updated_ms: i64,
    /// When it was published, Unix milliseconds.
    pub published_at_ms: i64,
}

impl Pointer {
    /// The pointer's JSON.
    pub fn to_json(&self) -> Vec<u8> {
        let value = serde_json::json!({
            "format": POINTER_FORMAT,
            "key": self.key,
            "hash": self.hash,
            "bytes": self.bytes,
            "data_updated": crate::time::iso_millis(self.data_updated_ms),
            "published_at": crate::time::iso_millis(self.published_at_ms),
        });
        let mut out = serde_json::to_vec(&value).expect("a JSON value serialises");
        out.push(b'\n');
        out
    }

    /// Reads a pointer's JSON. Fields this version does not know are ignored (a newer
    /// publisher may add some); a different `format` is refused.
    pub fn parse(bytes: &[u8]) -> Result<Pointer, String> {
        #[derive(serde::Deserialize)]
        struct Raw {
            format: u64,
            key: String,
            hash: String,
            bytes: u64,
            data_updated: String,
            published_at: String,
        }
        if bytes.len() > MAX_POINTER_BYTES {
            return Err(format!("{} bytes: not a pointer", bytes.len()));
        }
        let raw: Raw = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if raw.format != POINTER_FORMAT {
            return Err(format!(
                "pointer format {}, this build reads format {POINTER_FORMAT}",
                raw.format
            ));
        }
        if raw.hash.len() != 32
            || !raw
                .hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(format!(
                "hash {:?} is not 32 lowercase hex digits",
                raw.hash
            ));
        }
        if raw.key.is_empty() || raw.key.starts_with('/') {
            return Err(format!("key {:?} is not an object key", raw.key));
        }
        let time = |field: &str, s: &str| {
            crate::time::parse_rfc3339(s)
                .ok_or_else(|| format!("{field} {s:?} is not an RFC 3339 timestamp"))
        };
        Ok(Pointer {
            data_updated_ms: time("data_updated", &raw.data_updated)?,
            published_at_ms: time("published_at", &raw.published_at)?,
            key: raw.key,
            hash: raw.hash,
            bytes: raw.bytes,
        })
    }
}

/// What went wrong with object storage.
#[derive(Debug)]
pub enum RemoteError {
    /// A malformed `s3://` URL.
    Url(String),
    /// The client could not be configured from the environment.
    Config(String),
    /// The store refused or did not answer a request.
    Store {
        /// What was being done, with the URL (`reading s3://b/p/current`).
        what: String,
        /// The client's error.
        source: object_store::Error,
    },
    /// Nothing is published under the prefix yet (no pointer object).
    NoPointer(String),
    /// The pointer object is not a pointer this build reads.
    BadPointer {
        /// The pointer's URL.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// `publish` was given bytes that are not a valid snapshot.
    NotASnapshot(String),
    /// A snapshot object of other content already has the name being published.
    NameTaken(String),
    /// The downloaded snapshot object does not match its pointer (size, hash) or failed
    /// verification; the snapshot served before keeps serving.
    Refused(String),
    /// A local file could not be written (the download, the cached copy).
    Io(String),
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteError::Url(why) => write!(f, "not an object storage location: {why}"),
            RemoteError::Config(why) => write!(f, "object storage client: {why}"),
            RemoteError::Store { what, source } => write!(f, "{what}: {source}"),
            RemoteError::NoPointer(url) => {
                write!(f, "{url} does not exist: nothing is published there yet")
            }
            RemoteError::BadPointer { url, why } => write!(f, "{url} is not a pointer: {why}"),
            RemoteError::NotASnapshot(why) => write!(f, "not published: {why}"),
            RemoteError::NameTaken(url) => write!(
                f,
                "{url} already exists with other content; snapshot objects are never \
                 replaced (a replica may be reading it): publish under another name"
            ),
            RemoteError::Refused(why) => write!(f, "snapshot refused: {why}"),
            RemoteError::Io(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for RemoteError {}

/// A pointer read ([`Remote::read_pointer`]).
#[derive(Debug)]
pub enum PointerRead {
    /// The pointer still has the ETag given: nothing changed.
    NotModified,
    /// The pointer, and its ETag for the next conditional read.
    Current {
        /// The pointer.
        pointer: Pointer,
        /// Its ETag, when the store sent one.
        etag: Option<String>,
    },
}

/// What [`Remote::publish`] did.
#[derive(Debug, Clone)]
pub struct Published {
    /// The pointer written.
    pub pointer: Pointer,
    /// False when the snapshot object was already there with the same content.
    pub uploaded: bool,
}

/// Snapshots under one prefix of one bucket.
#[derive(Debug, Clone)]
pub struct Remote {
    store: Arc<dyn ObjectStore>,
    location: Location,
}

impl Remote {
    /// An S3 client for `location`'s bucket, configured from the AWS environment
    /// variables (see the module docs). Requests time out after [`REQUEST_TIMEOUT`]
    /// (connections after 3 s) and are retried at most three times within 20 s, so a
    /// store that is down is reported within seconds, not minutes.
    pub fn from_env(location: Location) -> Result<Remote, RemoteError> {
        let options = ClientOptions::new()
            .with_connect_timeout(Duration::from_secs(3))
            .with_timeout(REQUEST_TIMEOUT);
        let retry = RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(2),
                base: 2.0,
            },
            max_retries: 3,
            retry_timeout: Duration::from_secs(20),
        };
        let mut builder = AmazonS3Builder::new()
            .with_client_options(options)
            .with_retry(retry);
        // What AmazonS3Builder::from_env does, after the defaults above, so that the
        // environment can still override them.
        for (key, value) in std::env::vars_os() {
            let (Some(key), Some(value)) = (key.to_str(), value.to_str()) else {
                continue;
            };
            if key.starts_with("AWS_")
                && let Ok(config) = key.to_ascii_lowercase().parse::<AmazonS3ConfigKey>()
            {
                builder = builder.with_config(config, value);
            }
        }
        let store = builder
            .with_bucket_name(&location.bucket)
            .build()
            .map_err(|e| RemoteError::Config(e.to_string()))?;
        Ok(Remote::with_store(Arc::new(store), location))
    }

    /// Snapshots in `store` (any `object_store` implementation; tests use the
    /// in-memory one), under `location`'s prefix.
    pub fn with_store(store: Arc<dyn ObjectStore>, location: Location) -> Remote {
        Remote { store, location }
    }

    /// The location.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Publishes the snapshot `bytes`: refuses bytes that do not open as a snapshot
    /// (the same checks as a server's), uploads the snapshot object (named after the
    /// location's `NAME.snap`, else `HASH.snap`), and only once the store acknowledged
    /// it writes the pointer. See the module docs for names already taken.
    pub async fn publish(
        &self,
        bytes: Vec<u8>,
        published_at_ms: i64,
    ) -> Result<Published, RemoteError> {
        let header = *Snapshot::from_bytes(&bytes)
            .map_err(|e| RemoteError::NotASnapshot(e.to_string()))?
            .header();
        let hash = header.hash_hex();
        let name = self
            .location
            .name
            .clone()
            .unwrap_or_else(|| format!("{hash}.snap"));
        let key = self.location.key(&name);
        let url = self.location.url_of(&key);
        let pointer = Pointer {
            key: key.clone(),
            hash: hash.clone(),
            bytes: bytes.len() as u64,
            data_updated_ms: header.data_updated_ms,
            published_at_ms,
        };

        let mut attributes = Attributes::new();
        attributes.insert(
            Attribute::Metadata(HASH_METADATA.into()),
            AttributeValue::from(hash.clone()),
        );
        attributes.insert(
            Attribute::ContentType,
            AttributeValue::from("application/octet-stream"),
        );
        let create = PutOptions {
            mode: PutMode::Create,
            attributes,
            ..PutOptions::default()
        };
        let path = ObjectPath::from(key.as_str());
        let uploaded = match self
            .store
            .put_opts(&path, PutPayload::from(Bytes::from(bytes)), create)
            .await
        {
            Ok(_) => true,
            Err(object_store::Error::AlreadyExists { .. }) => {
                // Taken: the same content (a retried publish) is fine, other content is
                // refused; read the hash the object was created with.
                let head = GetOptions {
                    head: true,
                    ..GetOptions::default()
                };
                let existing = self.store.get_opts(&path, head).await.map_err(|source| {
                    RemoteError::Store {
                        what: format!("reading {url}"),
                        source,
                    }
                })?;
                let same = existing
                    .attributes
                    .get(&Attribute::Metadata(HASH_METADATA.into()))
                    .is_some_and(|v| v.as_ref() == hash);
                if !same {
                    return Err(RemoteError::NameTaken(url));
                }
                false
            }
            Err(source) => {
                return Err(RemoteError::Store {
                    what: format!("uploading {url}"),
                    source,
                });
            }
        };

        // Last: the pointer, once the object it names is whole in the store.
        let mut attributes = Attributes::new();
        attributes.insert(
            Attribute::ContentType,
            AttributeValue::from("application/json"),
        );
        let pointer_key = self.location.pointer_key();
        self.store
            .put_opts(
                &ObjectPath::from(pointer_key.as_str()),
                PutPayload::from(pointer.to_json()),
                PutOptions::from(attributes),
            )
            .await
            .map_err(|source| RemoteError::Store {
                what: format!("writing {}", self.location.url_of(&pointer_key)),
                source,
            })?;
        Ok(Published { pointer, uploaded })
    }

    /// Reads the pointer; with `etag` (from the last read), conditionally: a pointer
    /// that still has that ETag answers [`PointerRead::NotModified`] without a body.
    pub async fn read_pointer(&self, etag: Option<&str>) -> Result<PointerRead, RemoteError> {
        let key = self.location.pointer_key();
        let url = self.location.url_of(&key);
        let options = GetOptions {
            if_none_match: etag.map(str::to_owned),
            ..GetOptions::default()
        };
        let result = match self
            .store
            .get_opts(&ObjectPath::from(key.as_str()), options)
            .await
        {
            Ok(result) => result,
            Err(object_store::Error::NotModified { .. }) => return Ok(PointerRead::NotModified),
            Err(object_store::Error::NotFound { .. }) => return Err(RemoteError::NoPointer(url)),
            Err(source) => {
                return Err(RemoteError::Store {
                    what: format!("reading {url}"),
                    source,
                });
            }
        };
        let etag = result.meta.e_tag.clone();
        if result.meta.size > MAX_POINTER_BYTES as u64 {
            return Err(RemoteError::BadPointer {
                url,
                why: format!("{} bytes", result.meta.size),
            });
        }
        let body = result.bytes().await.map_err(|source| RemoteError::Store {
            what: format!("reading {url}"),
            source,
        })?;
        let pointer = Pointer::parse(&body).map_err(|why| RemoteError::BadPointer { url, why })?;
        Ok(PointerRead::Current { pointer, etag })
    }

    /// Downloads the snapshot object `pointer` names into `into` (a file written aside,
    /// see [`Pending`]), refusing an object whose size differs from the pointer's, and
    /// syncs it. The caller verifies the file before publishing it. File writes run on
    /// a blocking thread, fed chunk by chunk and written in 2 MiB blocks, so a
    /// download never holds more than a few chunks and one block in memory.
    pub async fn download(&self, pointer: &Pointer, into: Pending) -> Result<Pending, RemoteError> {
        let url = self.location.url_of(&pointer.key);
        let store_error = |source| RemoteError::Store {
            what: format!("downloading {url}"),
            source,
        };
        let result = self
            .store
            .get_opts(
                &ObjectPath::from(pointer.key.as_str()),
                GetOptions::default(),
            )
            .await
            .map_err(store_error)?;
        if result.meta.size != pointer.bytes {
            return Err(RemoteError::Refused(format!(
                "{url} has {} bytes, the pointer says {}",
                result.meta.size, pointer.bytes
            )));
        }
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Bytes>(8);
        let writer = tokio::task::spawn_blocking(move || {
            use std::io::Write as _;
            let mut file = into;
            let mut block = Vec::with_capacity(WRITE_BLOCK);
            while let Some(chunk) = rx.blocking_recv() {
                gather(&mut block, &chunk, &mut file)?;
            }
            file.write_all(&block)?;
            file.sync()?;
            Ok::<_, std::io::Error>(file)
        });
        let mut stream = result.into_stream();
        let mut received = 0u64;
        let mut streamed = Ok(());
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(source) => {
                    streamed = Err(store_error(source));
                    break;
                }
            };
            received += chunk.len() as u64;
            if received > pointer.bytes || tx.send(chunk).await.is_err() {
                // Too long, or the writer stopped (its error is reported below).
                break;
            }
        }
        drop(tx);
        let file = writer
            .await
            .map_err(|e| RemoteError::Io(format!("writing the download of {url}: {e}")))?
            .map_err(|e| RemoteError::Io(format!("writing the download of {url}: {e}")))?;
        streamed?;
        if received != pointer.bytes {
            return Err(RemoteError::Refused(format!(
                "{url}: received {received} bytes, the pointer says {}",
                pointer.bytes
            )));
        }
        Ok(file)
    }
}

/// A download is written to its file this many bytes at a time, each write at an
/// offset that is a multiple of it (not in the HTTP body's chunks as they come): Linux
/// then keeps the file in the page cache as 2 MiB folios, which a server's mapping
/// takes a folio at a time. Mapping S (53 MB) written in 2 MiB blocks took 0.07 ms, in
/// 64 KiB or 1 MiB blocks 2.0-2.4 ms, every time it is opened while the page cache holds
/// it (measured with `examples/open_s` in `map` mode). `files::write_atomic` writes a whole snapshot
/// in one write, which does the same.
const WRITE_BLOCK: usize = 2 << 20;

/// Appends `chunk` to `block`, writing the block to `out` each time it holds
/// [`WRITE_BLOCK`] bytes (what is left stays in `block` for the next chunk or the end).
fn gather(
    block: &mut Vec<u8>,
    mut chunk: &[u8],
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    while !chunk.is_empty() {
        let take = chunk.len().min(WRITE_BLOCK - block.len());
        block.extend_from_slice(&chunk[..take]);
        chunk = &chunk[take..];
        if block.len() == WRITE_BLOCK {
            out.write_all(block)?;
            block.clear();
        }
    }
    Ok(())
}

/// Longest time one request to the store may take, download included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

#[cfg(test)]
mod tests;
