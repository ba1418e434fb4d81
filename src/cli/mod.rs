//! Subcommands. Each file holds one subcommand's arguments and its `run`.

use clap::{Parser, Subcommand};

mod audit;
mod build;
mod collect;
mod diff;
mod export;
mod import;
mod inspect;
mod keys;
mod publish;
mod query;
mod refresh;
mod serve;

/// What `main` reports: a message for the user, printed after `error: `, exit code 1.
pub type CliError = Box<dyn std::error::Error + Send + Sync>;

/// tldsnap: domain price intelligence from an in-memory snapshot.
#[derive(Parser)]
#[command(name = "tldsnap", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Real registrar feeds -> price source directory (registrars.csv, prices.csv, history.csv, tlds.csv).
    Import(import::Args),
    /// Price source directory -> snapshot file.
    Build(build::Args),
    /// Fetch the registrars' own price lists into new dated versions of their feeds.
    Collect(collect::Args),
    /// Collect, import, build and publish the market once (or every --every).
    Refresh(refresh::Args),
    /// Publish a snapshot file to object storage (s3://) for replicas that follow it.
    Publish(publish::Args),
    /// Print a snapshot's header, counts and per-registrar coverage.
    Inspect(inspect::Args),
    /// List the price-change events between two snapshots.
    Diff(diff::Args),
    /// Write the price grid as CSV, as `GET /api/v1/client/export` answers it.
    Export(export::Args),
    /// Print the body the API would serve for a query (from the built-in real data, or
    /// --snapshot FILE).
    #[command(subcommand)]
    Query(query::Command),
    /// Run the HTTP service.
    // Boxed: the serve flags (snapshot source, webhooks, live lookups) make it by far the
    // largest variant.
    Serve(Box<serve::Args>),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(keys::Command),
    /// Audit a domain portfolio (CSV or JSON): current and cheapest yearly cost, savings, flags.
    Audit(audit::Args),
}

/// Runs the chosen subcommand.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Import(args) => import::run(args),
        Command::Build(args) => build::run(args),
        Command::Collect(args) => collect::run(args),
        Command::Refresh(args) => refresh::run(args),
        Command::Publish(args) => publish::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Export(args) => export::run(args),
        Command::Query(cmd) => query::run(cmd),
        Command::Serve(args) => serve::run(*args),
        Command::Keys(cmd) => keys::run(cmd),
        Command::Audit(args) => audit::run(args),
    }
}
