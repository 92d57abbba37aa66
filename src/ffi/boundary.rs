//! The panic boundary every exported function body runs in, and the per-thread last error.

use crate::error::{Error, Result, Status};
use crate::threads::HostFault;
use std::cell::UnsafeCell;
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The longest message kept, in bytes without the NUL; a longer one is cut at a character
/// boundary and ends in "...". (gatherkit's messages are far shorter except for shapes of
/// dozens of dimensions.)
const MESSAGE_CAPACITY: usize = 1023;

thread_local! {
    /// This thread's detail on its last failed call, NUL-terminated; "" after a success.
    ///
    /// A fixed buffer rather than a heap string: a thread-local with nothing to drop registers
    /// no destructor, so it stays usable while the thread exits (a call from a pthread key
    /// destructor still gets its message) and there is no allocation for a thread's exit to
    /// leak (a heap message set during thread teardown was never freed).
    static LAST_ERROR: UnsafeCell<[u8; MESSAGE_CAPACITY + 1]> =
        const { UnsafeCell::new([0; MESSAGE_CAPACITY + 1]) };
}

/// Stores `message` (cut to the capacity) as this thread's last error; `None` clears it.
fn set_last_error(message: Option<&str>) {
    let message = message.unwrap_or("");
    // Up to the first NUL (gatherkit's messages have none), then cut to fit.
    let message = message.split('\0').next().unwrap_or("");
    let (text, ellipsis) = if message.len() <= MESSAGE_CAPACITY {
        (message, "")
    } else {
        let mut end = MESSAGE_CAPACITY - 3;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        (&message[..end], "...")
    };
    LAST_ERROR.with(|cell| {
        // SAFETY: only this thread reaches its buffer, and no reference into it is alive here
        // (`last_error_message` hands out a raw pointer, valid until this thread's next call).
        let buffer = unsafe { &mut *cell.get() };
        let n = text.len();
        buffer[..n].copy_from_slice(text.as_bytes());
        buffer[n..n + ellipsis.len()].copy_from_slice(ellipsis.as_bytes());
        buffer[n + ellipsis.len()] = 0;
    });
}

/// Runs `body`, turns its result (or a panic) into a status code, and records the message.
pub(crate) fn boundary(body: impl FnOnce() -> Result<()>) -> i32 {
    let result = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        if let Some(HostFault(message)) = payload.downcast_ref::<HostFault>() {
            return Err(Error::new(Status::InvalidArgument, message.clone()));
        }
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown payload".to_string());
        Err(Error::new(
            Status::Panic,
            format!("internal panic (a gatherkit bug, please report it): {what}"),
        ))
    });
    match result {
        Ok(()) => {
            set_last_error(None);
            Status::Ok.code()
        }
        Err(e) => {
            set_last_error(Some(e.message()));
            e.status().code()
        }
    }
}

/// Runs a body that reports no status (the text functions): a panic gives `fallback` and leaves
/// the last error as it was.
pub(crate) fn guard<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// This thread's last error message, or `""`; valid until this thread's next gatherkit call.
pub(crate) fn last_error_message() -> *const c_char {
    LAST_ERROR.with(|cell| cell.get().cast::<c_char>().cast_const())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last_error() -> String {
        // SAFETY: the pointer is this thread's NUL-terminated buffer, valid until its next call.
        unsafe { CStr::from_ptr(last_error_message()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_inside_the_boundary_becomes_the_panic_status_with_a_message() {
        let status = boundary(|| panic!("probe {}", 42));
        assert_eq!(status, Status::Panic.code());
        let message = last_error();
        assert!(
            message.contains("internal panic") && message.contains("probe 42"),
            "{message}"
        );
        // The next successful call clears it.
        assert_eq!(boundary(|| Ok(())), Status::Ok.code());
        assert_eq!(last_error(), "");
    }

    #[test]
    fn messages_longer_than_the_buffer_are_cut_at_a_character_boundary() {
        let long = "é".repeat(MESSAGE_CAPACITY);
        boundary(|| Err(Error::new(Status::InvalidArgument, long.clone())));
        let message = last_error();
        assert!(
            message.len() <= MESSAGE_CAPACITY && message.ends_with("..."),
            "{}",
            message.len()
        );
        assert!(long.starts_with(message.trim_end_matches("...")));
    }
}
