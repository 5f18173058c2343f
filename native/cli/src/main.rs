//! `hrts`: the command-line face of the shared timeline. See `hrts --help`.

mod args;
mod commands;
mod exit;
mod help;

use std::process::ExitCode;

fn main() -> ExitCode {
    exit::finish(
        args::parse(
            std::env::args_os()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned()),
        )
        .and_then(|inv| commands::run(&inv)),
    )
}
