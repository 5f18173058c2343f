//! The host page `hrts daemon` keeps is Linux only (a file in `/run/hrts`
//! that every user maps read-only): on Windows there is none, readers never
//! find one, and the writer's functions say so.

use super::{Page, Spec};
use crate::error::{Error, Result};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The names the Linux room uses, kept so configuration reads the same.
pub const DEFAULT_DIR: &str = "/run/hrts";
pub const PAGE_FILE: &str = "time";
pub const LOCK_FILE: &str = "daemon.lock";
pub const DEFAULT_USER: &str = "hrts";

pub fn page_path(dir: &Path) -> PathBuf {
    dir.join(PAGE_FILE)
}

/// No user is trusted to keep a host page on Windows.
pub fn trusted_uids(_user: &str) -> Vec<u32> {
    Vec::new()
}

/// A host page file, open and mapped (never made on Windows).
pub struct HostPage {
    pub file: File,
    pub page: Page,
}

/// There is never a host page on Windows.
pub fn open_reader(_dir: &Path, _trusted: &[u32], _spec: &Spec) -> Result<Option<HostPage>> {
    Ok(None)
}

/// The daemon's lock: no value exists on Windows.
pub enum DaemonLock {}

impl DaemonLock {
    pub fn role_fd<T>(&self) -> Result<Option<T>> {
        match *self {}
    }
}

fn lacks() -> Error {
    Error::windows_lacks("the host daemon's page (`hrts daemon`)")
}

pub fn lock_daemon(_dir: &Path) -> Result<DaemonLock> {
    Err(lacks())
}

pub fn open_writer(_dir: &Path, _spec: &Spec) -> Result<std::result::Result<HostPage, String>> {
    Err(lacks())
}

pub fn create(_dir: &Path, _spec: &Spec, _init: &dyn Fn(&Page) -> Result<()>) -> Result<HostPage> {
    Err(lacks())
}
