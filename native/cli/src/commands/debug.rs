//! `hrts debug hold-writer` (hidden): takes the base's writer role and never
//! releases it, as a writer killed mid-move would; a test then SIGKILLs this
//! process and checks that other processes recover.

use crate::exit::CliError;
use hrts_core::SharedBase;

pub fn hold_writer(base: &SharedBase) -> Result<(), CliError> {
    base.hold_writer_role_for_test()?;
    super::print("holding\n")?;
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}
