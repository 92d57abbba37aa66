//! Host thread pools for the parallel-for tests: a serial one that runs tasks in reverse order,
//! and one that runs each task on a thread of its own (any order, concurrently).

#![allow(dead_code)]

use gatherkit::{Options, ParallelFor, TaskFn};
use std::ffi::c_void;

/// Runs the tasks one after another, last first, on the calling thread.
unsafe extern "C" fn serial_reverse(_host: *mut c_void, n: usize, task: TaskFn, ctx: *mut c_void) {
    for i in (0..n).rev() {
        // SAFETY: the parallel-for contract: call each task once with its context.
        unsafe { task(ctx, i) };
    }
}

/// Runs every task on a thread of its own and returns when all have finished.
unsafe extern "C" fn thread_per_task(_host: *mut c_void, n: usize, task: TaskFn, ctx: *mut c_void) {
    let ctx = ctx as usize;
    std::thread::scope(|scope| {
        for i in 0..n {
            // SAFETY: as above; the context is valid until this function returns.
            scope.spawn(move || unsafe { task(ctx as *mut c_void, i) });
        }
    });
}

/// The executors a result must not depend on: gatherkit's own pool at each of `counts` threads,
/// and the two host pools above. Each with a label for messages.
pub fn executors(counts: &[usize]) -> Vec<(String, Options)> {
    let mut all: Vec<(String, Options)> = counts
        .iter()
        .map(|&n| (format!("{n} threads"), Options::default().with_threads(n)))
        .collect();
    // SAFETY: both functions run every task exactly once and return after all have finished,
    // from any thread; they use no context.
    let hosts = unsafe {
        [
            (
                "host serial reverse",
                ParallelFor::new(serial_reverse, std::ptr::null_mut(), 3),
            ),
            (
                "host thread per task",
                ParallelFor::new(thread_per_task, std::ptr::null_mut(), 4),
            ),
        ]
    };
    for (name, host) in hosts {
        all.push((name.to_string(), Options::default().with_parallel_for(host)));
    }
    all
}
