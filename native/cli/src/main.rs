//! `hrts`: the command-line face of the shared timeline. See `hrts --help`.

mod cli;
mod commands;
mod exit;

use std::process::ExitCode;

fn main() -> ExitCode {
    exit::finish(cli::parse(std::env::args_os()).and_then(|cli| cli.run()))
}
