//! `hrts info`: every fact the segment records, one `key: value` per line.

use crate::exit::CliError;
use hrts_core::{Opened, SharedBase};
use std::fmt::Write as _;

pub fn opened_name(opened: Opened) -> &'static str {
    match opened {
        Opened::Created => "created",
        Opened::Attached => "attached",
        Opened::TookOver => "took-over",
    }
}

pub fn run(base: &SharedBase) -> Result<(), CliError> {
    let mut s = String::new();
    // `opened` is this process's own story, not a fact of the segment.
    let mut fields = base.info().fields();
    fields.insert(2, ("opened", opened_name(base.opened()).to_string()));
    for (key, value) in fields {
        // Writing to a String cannot fail.
        let _ = writeln!(s, "{key}: {value}");
    }
    s.push_str(&super::os_frequency::lines(base.source(), base.frequency()));
    super::print(&s)
}
