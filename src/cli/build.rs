//! `tldsnap build` (being written).
use super::CliError;

/// Arguments of `tldsnap build`.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<(), CliError> {
    Err("not written yet".into())
}
