//! The C trace writer, called as C calls it, in a process of its own (it opens
//! the process's segment, which the unit tests leave to one test).

use ::hrts_trace::EventKind;
use hrts::*;
use std::ffi::{c_int, CStr, CString};
use std::ptr;

fn last_error() -> String {
    // SAFETY: hrts_last_error returns this thread's NUL-terminated message.
    unsafe { CStr::from_ptr(hrts_last_error()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_c_trace_is_written_and_read_back() {
    let seg = format!("/hrts-capi-trace-{}", std::process::id());
    std::env::set_var("HRTS_SEGMENT", &seg);
    let dir = std::env::temp_dir().join(format!("hrts-capi-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("c.htr");
    let path = CString::new(file.to_str().unwrap()).unwrap();
    let result = std::panic::catch_unwind(|| {
        let mut t: *mut hrts_trace = ptr::null_mut();
        // SAFETY: valid strings and out pointers; the handle is closed once.
        unsafe {
            let rc = hrts_trace_open(path.as_ptr(), c"node-c".as_ptr(), ptr::null(), &mut t);
            assert_eq!(rc, 0, "{}", last_error());
            let (mut s1, mut s2) = (0, 0);
            let send = hrts_trace_event(
                t,
                HRTS_TRACE_SEND,
                c"send".as_ptr(),
                7,
                b"hi".as_ptr(),
                2,
                &mut s1,
            );
            let recv = hrts_trace_event(
                t,
                HRTS_TRACE_RECV,
                c"recv".as_ptr(),
                7,
                ptr::null(),
                0,
                &mut s2,
            );
            assert_eq!((send, recv), (0, 0), "{}", last_error());
            assert!(s2 > s1);
            let bad = hrts_trace_event(t, 9, c"x".as_ptr(), 0, ptr::null(), 0, ptr::null_mut());
            assert_eq!(bad, HrtsStatus::E_INVALID_ARGUMENT as c_int);
            assert!(last_error().contains("kind 9"), "{}", last_error());
            let no_name = hrts_trace_event(t, 0, ptr::null(), 0, ptr::null(), 0, ptr::null_mut());
            assert_eq!(no_name, HrtsStatus::E_NULL_POINTER as c_int);
            let no_data = hrts_trace_event(t, 0, c"x".as_ptr(), 0, ptr::null(), 5, ptr::null_mut());
            assert_eq!(no_data, HrtsStatus::E_NULL_POINTER as c_int);
            let (mut off, mut bound) = (0.0, 0.0);
            let sync = hrts_trace_sync(
                t,
                c"not an address".as_ptr(),
                HRTS_SYNC_START,
                1,
                &mut off,
                &mut bound,
            );
            assert_eq!(sync, HrtsStatus::E_INVALID_ARGUMENT as c_int);
            assert!(last_error().contains("HOST:PORT"), "{}", last_error());
            assert_eq!(hrts_trace_close(t), 0);
            assert_eq!(hrts_trace_close(ptr::null_mut()), 0);
            let closed = hrts_trace_event(
                ptr::null_mut(),
                0,
                c"x".as_ptr(),
                0,
                ptr::null(),
                0,
                ptr::null_mut(),
            );
            assert_eq!(closed, HrtsStatus::E_NULL_POINTER as c_int);
        }
        let f = ::hrts_trace::read_file(&file, ::hrts_trace::ReadOptions::default()).unwrap();
        assert_eq!(f.header.clock.host, "node-c");
        assert_eq!(f.header.clock.segment, seg);
        assert_eq!(f.events.len(), 2);
        assert_eq!(f.events[0].payload, b"hi");
        assert_eq!(f.events[1].kind, EventKind::Receive);
    });
    let _ = hrts_core::SharedBase::unlink(&seg);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}
