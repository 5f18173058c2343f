//! Child processes of a test.

use std::process::Child;

/// A child killed (and reaped) however the test ends, an assertion's panic
/// included: no test leaves a server or a writer running.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
