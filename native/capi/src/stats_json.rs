//! The periodic JSON dump from C: the text the library made last (every
//! `json-dump.interval`, by `hrts_stats_dump_json` requests, or at stop), and
//! why writing the `json-dump.file` target last failed.

use crate::boundary::status_call;
use crate::common::required;
use crate::status::{Failure, HrtsStatus};
use std::ffi::{c_char, c_int};

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
    let need = text.len() + 1;
    if !needed.is_null() {
        // SAFETY: non-NULL and valid for one write, by the contract.
        unsafe { needed.write(need) };
    }
    if len < need {
        return Err(Failure::new(
            HrtsStatus::E_BUFFER_TOO_SMALL,
            format!("{function}: the buffer holds {len} bytes, the text needs {need}"),
        ));
    }
    let dst = buf.as_ptr().cast::<u8>();
    // SAFETY: `buf` is valid for `len` bytes and len >= need; the text is our
    // own String, which cannot overlap caller memory.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), dst, text.len());
        dst.add(text.len()).write(0);
    }
    Ok(())
}

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
#[no_mangle]
pub unsafe extern "C" fn hrts_stats_json_last(
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> c_int {
    status_call(|| {
        let json = hrts_stats::global().last_json_dump();
        let text = json.as_deref().unwrap_or("");
        // SAFETY: the pointers are as this function's contract requires.
        unsafe { copy_out("hrts_stats_json_last", text, buf, len, needed) }
    })
}

/// Why the last write of the `json-dump.file` target failed, NUL-terminated
/// into `buf` (as `hrts_stats_json_last`); the empty string after a success
/// or when no file is configured.
///
/// # Safety
/// As `hrts_stats_json_last`.
#[no_mangle]
pub unsafe extern "C" fn hrts_stats_json_file_error(
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> c_int {
    status_call(|| {
        let text = hrts_stats::json_file::last_error().unwrap_or_default();
        // SAFETY: the pointers are as this function's contract requires.
        unsafe { copy_out("hrts_stats_json_file_error", &text, buf, len, needed) }
    })
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
