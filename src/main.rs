//! The `tldsnap` command line: parses arguments and calls one room of the library.
//!
//! Exit codes: 0 success, 1 a failure the user can act on (bad input, bad
//! snapshot), 2 bad usage (clap's own exit code for usage errors).

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(1)
        }
    }
}
