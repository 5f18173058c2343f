//! The periodic JSON dump from C: the text the library made last (every
//! `json-dump.interval`, by `hrts_stats_dump_json` requests, or at stop), and
//! why writing the `json-dump.file` target last failed.

use crate::boundary::{c_calls, required, write_text};
use crate::status::Failure;
use std::ffi::c_char;

/// Copies `text` and a NUL into `buf` (`len` bytes), writing the bytes `text`
/// needs (its NUL included) to `needed` either way.
///
/// # Safety
/// `buf` must be NULL or valid for writing `len` bytes, `needed` NULL or
/// valid for writing one `size_t`.
unsafe fn copy_out(
    function: &str,
    text: &str,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> Result<(), Failure> {
    let buf = required(buf, "buf", function)?;
    if !needed.is_null() {
        // SAFETY: non-NULL and valid for one write, by the contract.
        unsafe { needed.write(text.len() + 1) };
    }
    // SAFETY: `buf` is valid for writing `len` bytes, by the contract.
    unsafe { write_text(function, "the text", text, buf, len) }
}

c_calls! {
    /// The latest JSON dump the library made (every `json-dump.interval` while
    /// running, on request, or at stop), as handystats writes it, NUL-terminated
    /// into `buf` of `len` bytes; the empty string if none was made yet. The
    /// bytes the text needs (NUL included) go to `needed` (may be NULL), also
    /// when `buf` is too small (`HRTS_E_BUFFER_TOO_SMALL`): call again with a
    /// buffer that large. With `json-dump.file` in the configuration the library
    /// also writes each periodic dump to that file.
    ///
    /// # Safety
    /// `buf` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing `len`
    /// bytes; `needed` NULL or valid for writing one `size_t`.
    unsafe fn hrts_stats_json_last(buf: *mut c_char, len: usize, needed: *mut usize) -> () {
        let json = hrts_stats::global().last_json_dump();
        let text = json.as_deref().unwrap_or("");
        // SAFETY: the pointers are as this function's contract requires.
        unsafe { copy_out(FUNCTION, text, buf, len, needed) }
    }

    /// Why the last write of the `json-dump.file` target failed, NUL-terminated
    /// into `buf` (as `hrts_stats_json_last`); the empty string after a success
    /// or when no file is configured.
    ///
    /// # Safety
    /// As `hrts_stats_json_last`.
    unsafe fn hrts_stats_json_file_error(buf: *mut c_char, len: usize, needed: *mut usize) -> () {
        let text = hrts_stats::json_file::last_error().unwrap_or_default();
        // SAFETY: the pointers are as this function's contract requires.
        unsafe { copy_out(FUNCTION, &text, buf, len, needed) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_copied_or_its_size_reported() {
        let mut buf = [0 as c_char; 8];
        let mut need = 0usize;
        // SAFETY: valid pointers to locals.
        unsafe {
            copy_out("f", "{\"a\":1}", buf.as_mut_ptr(), buf.len(), &mut need).unwrap();
            assert_eq!(need, 8);
            let s = std::ffi::CStr::from_ptr(buf.as_ptr());
            assert_eq!(s.to_str().unwrap(), "{\"a\":1}");
            let e =
                copy_out("f", "{\"ab\":1}", buf.as_mut_ptr(), buf.len(), &mut need).unwrap_err();
            assert_eq!(need, 9);
            assert!(e.message.contains("needs 9"), "{}", e.message);
            assert!(copy_out("f", "", std::ptr::null_mut(), 0, &mut need).is_err());
        }
    }
}
