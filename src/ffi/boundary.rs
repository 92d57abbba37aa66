//! The panic boundary every exported function body runs in, and the per-thread last error.

use crate::error::{Error, Result, Status};
use crate::threads::HostFault;
use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// This thread's detail on its last failed call; `None` after a success.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
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
    let (code, message) = match result {
        Ok(()) => (Status::Ok.code(), None),
        Err(e) => {
            // Messages are built by gatherkit and never contain NUL; fall back to the status text.
            let text =
                CString::new(e.message()).unwrap_or_else(|_| e.status().c_description().to_owned());
            (e.status().code(), Some(text))
        }
    };
    // A thread that is exiting has no slot left; the status code still reaches the caller.
    let _ = LAST_ERROR.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = message;
        }
    });
    code
}

/// Runs a body that reports no status (the text functions): a panic gives `fallback` and leaves
/// the last error as it was.
pub(crate) fn guard<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// This thread's last error message, or `""`; valid until this thread's next gatherkit call.
pub(crate) fn last_error_message() -> *const c_char {
    LAST_ERROR
        .try_with(|slot| match &*slot.borrow() {
            Some(message) => message.as_ptr(),
            None => c"".as_ptr(),
        })
        .unwrap_or(c"".as_ptr())
}
