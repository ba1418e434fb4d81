//! `tldsnap keys` (being written).
use super::CliError;

/// Key management commands.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Add a key.
    Add,
}

pub fn run(_cmd: Command) -> Result<(), CliError> {
    Err("not written yet".into())
}
