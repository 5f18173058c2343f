//! Harnesses the tests of several hrts crates share, kept in one place instead
//! of a copy in each test file. A dev-dependency only (`publish = false`): no
//! library or program of hrts links it.
//!
//! | module | what |
//! | --- | --- |
//! | [`rng`] | splitmix64, the seedable generator of the randomised tests |
//! | [`chrony`] | chronyd processes in a network namespace of the test's own |
//! | [`protocol_doc`] | the `offset \| size \| field` tables of `docs/PROTOCOL.md` |
//! | [`process`] | a child process killed and reaped however the test ends |
//! | [`http`] | a plain HTTP/1.1 GET, and connections opened as an abuser would |

// chronyd and the HTTP client over Unix sockets are Linux-only harnesses.
#[cfg(not(windows))]
pub mod chrony;
#[cfg(not(windows))]
pub mod http;
pub mod process;
pub mod protocol_doc;
pub mod rng;

pub use rng::Rng;
