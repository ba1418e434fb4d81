//! `tldsnap publish FILE s3://BUCKET/PREFIX/`: a snapshot built elsewhere -> object
//! storage, then the pointer replicas follow (see `tldsnap::remote`).

use std::path::PathBuf;

use super::CliError;
use tldsnap::remote::{self, Location, Remote};

/// Arguments of `tldsnap publish`.
#[derive(clap::Args)]
pub struct Args {
    /// Snapshot file (from `tldsnap build`). Refused unless it opens and verifies as a
    /// server would open it.
    file: PathBuf,
    /// Where to publish: `s3://BUCKET/PREFIX/` (the object is named after its content
    /// hash, HASH.snap) or `s3://BUCKET/PREFIX/NAME.snap`. Credentials, region and
    /// endpoint come from the AWS environment variables (AWS_ACCESS_KEY_ID,
    /// AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP...).
    #[arg(value_name = "s3://BUCKET/PREFIX/")]
    to: String,
}

/// Runs `tldsnap publish`.
pub fn run(args: Args) -> Result<(), CliError> {
    let location = Location::parse(&args.to)?;
    let bytes = std::fs::read(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    publish(location, bytes)
}

/// Uploads verified-to-be snapshot `bytes` to `location` and moves its pointer (shared
/// with `tldsnap build --output s3://…`). Prints what was done.
pub(super) fn publish(location: Location, bytes: Vec<u8>) -> Result<(), CliError> {
    remote::install_tls_provider();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let remote = Remote::from_env(location)?;
    runtime.block_on(publish_to(&remote, bytes))
}

/// [`publish`] to an opened store, from async code (`tldsnap refresh` keeps one store
/// across its rounds). Prints what was done.
pub(super) async fn publish_to(remote: &Remote, bytes: Vec<u8>) -> Result<(), CliError> {
    let published = remote.publish(bytes, tldsnap::time::now_ms()).await?;
    let p = &published.pointer;
    let location = remote.location();
    println!(
        "{} {} ({} bytes, hash {}, data as of {}); {} now names it",
        if published.uploaded {
            "published"
        } else {
            "already there:"
        },
        location.url_of(&p.key),
        p.bytes,
        p.hash,
        tldsnap::time::iso_millis(p.data_updated_ms),
        location.url_of(&location.pointer_key()),
    );
    Ok(())
}
