//! `hrts echo`: one ordered stamp per line of stdin, for cross-process causality
//! tests (a test writes a line, then compares the stamp it gets back with stamps
//! it took before writing and after reading).

use crate::exit::CliError;
use hrts_core::SharedBase;
use std::io::{BufRead, Write};

pub fn run(base: &SharedBase) -> Result<(), CliError> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        // Stamp as soon as the line has arrived: ordered, so the counter read
        // cannot be hoisted before the read that received the line.
        let ns = base.now_ns_ordered();
        writeln!(out, "{ns}")?;
        out.flush()?;
    }
}
