//! hrts C ABI.
