//! Host thread pools for the parallel-for tests: a serial one that runs tasks in reverse order,
//! one that runs each task on a thread of its own (any order, concurrently), and one that counts
//! the tasks of each call (to assert that a call really split its work).

#![allow(dead_code)]

use gatherkit::{Options, ParallelFor, TaskFn};
use std::ffi::c_void;
use std::sync::Mutex;

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

/// Runs the tasks in order on the calling thread and records how many tasks each call had (its
/// context is a `Mutex<Vec<usize>>`).
unsafe extern "C" fn counting(host: *mut c_void, n: usize, task: TaskFn, ctx: *mut c_void) {
    // SAFETY: `task_counts` passes a Mutex<Vec<usize>> that outlives every call made with it.
    let calls = unsafe { &*(host as *const Mutex<Vec<usize>>) };
    calls.lock().unwrap().push(n);
    for i in 0..n {
        // SAFETY: the parallel-for contract: each task once with its context.
        unsafe { task(ctx, i) };
    }
}

/// The task counts of the parallel-fors `f` made, in order, through a counting host pool that
/// offers 4 tasks at once.
pub fn task_counts(f: impl FnOnce(&Options)) -> Vec<usize> {
    let calls = Mutex::new(Vec::new());
    // SAFETY: `counting` runs every task once and returns after them; its context lives until
    // this function returns, after the last use of the options.
    let host = unsafe {
        ParallelFor::new(
            counting,
            &calls as *const Mutex<Vec<usize>> as *mut c_void,
            4,
        )
    };
    f(&Options::default().with_parallel_for(host));
    calls.into_inner().unwrap()
}
