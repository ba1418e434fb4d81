//! `tldsnap query` (being written).
use super::CliError;

/// Query commands.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Cheapest.
    Cheapest,
}

pub fn run(_cmd: Command) -> Result<(), CliError> {
    Err("not written yet".into())
}
