//! `hrts reset`: IBMTS setBaseInfo for every process on the segment.

use crate::exit::CliError;
use hrts_core::SharedBase;

pub fn run(base: &SharedBase) -> Result<(), CliError> {
    let b = base.set_base_info()?;
    super::print(&format!(
        "frequency: {}\nbase counter: {}\nseconds: {}\nmicroseconds: {}\nbase ns: {}\ngeneration: {}\n",
        b.frequency, b.counter, b.seconds, b.microseconds, b.nanoseconds, b.generation
    ))
}
