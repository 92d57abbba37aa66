//! Where calls run: gatherkit's persistent pool (its threads, after `fork()`, when idle, under a
//! huge `num_threads`), the host's parallel-for through the C ABI, and the extensible
//! `gk_options` that selects them.
//!
//! Tests that count the process's threads or CPU time, or fork, run in a child process of their
//! own (this test binary started again with an environment variable), so that the other tests'
//! threads cannot disturb them.

#![cfg(target_os = "linux")]

#[path = "common/child.rs"]
mod child;

use child::in_child;
use gatherkit::ffi::*;
use gatherkit::{gather_nd_to_vec, Options, TensorRef};
use std::ffi::{c_void, CStr};
use std::time::Duration;

/// A GatherND lookup big enough to be split across threads (32 MiB of output): rows of 1 KiB
/// gathered in reverse order. Checks the result; returns nothing.
fn threaded_call(options: &Options) {
    let (rows, len, tuples) = (1024usize, 256usize, 32 << 10);
    let data: Vec<f32> = (0..rows * len).map(|v| v as f32).collect();
    let indices: Vec<i64> = (0..tuples as i64).map(|t| -1 - t % rows as i64).collect();
    let (_, out) = gather_nd_to_vec(
        TensorRef::new(&[rows, len], &data),
        TensorRef::new(&[tuples, 1], &indices),
        0,
        options,
    )
    .expect("the call succeeds");
    for (t, slice) in out.chunks_exact(len).enumerate() {
        let row = rows - 1 - t % rows;
        assert_eq!(slice[0], (row * len) as f32, "tuple {t}");
        assert_eq!(slice[len - 1], (row * len + len - 1) as f32, "tuple {t}");
    }
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[test]
fn num_threads_caps_tasks_and_never_starts_more_threads_than_the_pool_has() {
    in_child(
        "num_threads_caps_tasks_and_never_starts_more_threads_than_the_pool_has",
        || {
            let before = thread_count();
            for _ in 0..3 {
                threaded_call(&Options::default().with_threads(usize::MAX));
            }
            let after = thread_count();
            // The pool has at most cores - 1 workers; the calling thread is the other.
            assert!(
                after < before + cores(),
                "{before} threads before, {after} after, on {} cores",
                cores()
            );
            // And it keeps them: a second round starts none.
            threaded_call(&Options::default());
            assert_eq!(thread_count(), after);
        },
    );
}

fn cpu_time() -> Duration {
    // SAFETY: getrusage writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

#[test]
fn an_idle_process_burns_no_cpu_after_threaded_calls() {
    in_child("an_idle_process_burns_no_cpu_after_threaded_calls", || {
        threaded_call(&Options::default().with_threads(2));
        let before = cpu_time();
        std::thread::sleep(Duration::from_secs(1));
        let burnt = cpu_time() - before;
        assert!(
            burnt < Duration::from_millis(10),
            "{burnt:?} of CPU time over one idle second"
        );
    });
}

#[test]
fn a_forked_child_computes_with_a_fresh_pool() {
    in_child("a_forked_child_computes_with_a_fresh_pool", || {
        // The parent's pool exists and has workers.
        threaded_call(&Options::default().with_threads(2));
        // SAFETY: fork in a process whose other threads are gatherkit's idle workers; the child
        // only calls gatherkit and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork");
        if pid == 0 {
            // A deadlock would hang: let the alarm end the child instead.
            // SAFETY: plain system calls.
            unsafe { libc::alarm(30) };
            let ok = std::panic::catch_unwind(|| {
                threaded_call(&Options::default().with_threads(2));
                threaded_call(&Options::default());
            })
            .is_ok();
            // SAFETY: leaving the forked child without running the test harness's exit path.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the forked child failed: wait status {status:#x}"
        );
        // The parent's pool still works.
        threaded_call(&Options::default().with_threads(2));
    });
}

#[test]
fn calls_from_many_threads_at_once_share_the_pool() {
    std::thread::scope(|scope| {
        for _ in 0..6 {
            scope.spawn(|| {
                for _ in 0..4 {
                    threaded_call(&Options::default());
                }
            });
        }
    });
}

// ---- The host's parallel-for through the C ABI ----

/// A host that runs only the first task: it breaks the contract, and the call must say so.
unsafe extern "C" fn first_task_only(_: *mut c_void, n: usize, task: gk_task_fn, ctx: *mut c_void) {
    if n > 0 {
        // SAFETY: a valid task and context from gatherkit.
        unsafe { task(ctx, 0) };
    }
}

/// A host that counts the tasks it ran into `*host_ctx` (an AtomicUsize), serially.
unsafe extern "C" fn counting(host: *mut c_void, n: usize, task: gk_task_fn, ctx: *mut c_void) {
    // SAFETY: the test passes a pointer to a live AtomicUsize.
    let count = unsafe { &*host.cast::<std::sync::atomic::AtomicUsize>() };
    for i in 0..n {
        // SAFETY: as above.
        unsafe { task(ctx, i) };
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A descriptor of `values` with `shape` (both borrowed: they must outlive its use).
fn descriptor<T>(dtype: i32, shape: &[i64], values: &[T]) -> gk_tensor {
    gk_tensor {
        dtype,
        rank: shape.len(),
        shape: shape.as_ptr(),
        data: values.as_ptr().cast(),
    }
}

/// An output descriptor of `values` with `shape` (both borrowed, as for [`descriptor`]).
fn output_descriptor<T>(dtype: i32, shape: &[i64], values: &mut [T]) -> gk_tensor_mut {
    gk_tensor_mut {
        dtype,
        rank: shape.len(),
        shape: shape.as_ptr(),
        data: values.as_mut_ptr().cast(),
    }
}

/// GatherND of 32 MiB through the C ABI with `options`; returns the status and message.
fn c_call(options: *const gk_options) -> (i32, String) {
    let (rows, len, tuples) = (1024usize, 256usize, 32usize << 10);
    let data = vec![1.5f32; rows * len];
    let indices: Vec<i64> = (0..tuples as i64).map(|t| t % rows as i64).collect();
    let mut out = vec![0f32; tuples * len];
    let (ds, is, os) = (
        [rows as i64, len as i64],
        [tuples as i64, 1],
        [tuples as i64, len as i64],
    );
    let d = descriptor(GK_DTYPE_FLOAT, &ds, &data);
    let i = descriptor(GK_DTYPE_INT64, &is, &indices);
    let o = output_descriptor(GK_DTYPE_FLOAT, &os, &mut out);
    // SAFETY: valid descriptors of live buffers.
    let status = unsafe { gk_gather_nd(&d, &i, 0, &o, options) };
    // SAFETY: a NUL-terminated string owned by the library.
    let message = unsafe { CStr::from_ptr(gk_last_error_message()) };
    if status == GK_STATUS_OK {
        assert!(out.iter().all(|&v| v == 1.5));
    }
    (status, message.to_string_lossy().into_owned())
}

#[test]
fn the_host_parallel_for_runs_every_task_and_a_broken_host_is_reported() {
    let count = std::sync::atomic::AtomicUsize::new(0);
    let options = gk_options {
        parallel_for: Some(counting),
        parallel_for_ctx: std::ptr::addr_of!(count).cast_mut().cast(),
        parallel_for_concurrency: 3,
        ..Default::default()
    };
    assert_eq!(c_call(&options), (GK_STATUS_OK, String::new()));
    let ran = count.load(std::sync::atomic::Ordering::Relaxed);
    // Chunks of at least 128 KiB, at most 8 per thread the host offers.
    assert_eq!(ran, 24, "{ran} tasks for a 32 MiB call and concurrency 3");
    // num_threads still caps the tasks.
    count.store(0, std::sync::atomic::Ordering::Relaxed);
    let capped = gk_options {
        num_threads: 1,
        ..options
    };
    assert_eq!(c_call(&capped).0, GK_STATUS_OK);
    assert_eq!(
        count.load(std::sync::atomic::Ordering::Relaxed),
        0,
        "1 task runs inline"
    );

    let broken = gk_options {
        parallel_for: Some(first_task_only),
        parallel_for_concurrency: 4,
        ..Default::default()
    };
    // The caller's mistake is reported through the status and message only: the panic hook
    // (which prints to stderr, and with RUST_BACKTRACE takes 24 KiB of stack) must not run.
    // Counted on this thread, where the call unwinds, so other tests' panics cannot count.
    thread_local!(static HOOK_RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| HOOK_RUNS.with(|n| n.set(n.get() + 1))));
    let (status, message) = c_call(&broken);
    drop(std::panic::take_hook());
    std::panic::set_hook(previous);
    assert_eq!(status, GK_STATUS_INVALID_ARGUMENT, "{message}");
    assert!(
        message.contains("parallel_for returned after running 1 of the"),
        "{message}"
    );
    assert_eq!(HOOK_RUNS.with(|n| n.get()), 0, "the panic hook ran");
}

#[test]
fn a_host_may_offer_any_concurrency() {
    // GatherElements along the last axis of two 4 MiB rows: more tasks than rows, so the rows
    // kernel weighs the rows against the host's concurrency, which the header lets be any
    // size_t. 2^62 overflowed that product (a panic with overflow checks, a wrong split without).
    let (rows, len) = (2usize, 1usize << 20);
    let data: Vec<f32> = (0..rows * len).map(|v| v as f32).collect();
    let indices: Vec<i64> = (0..rows * len).map(|v| ((v * 7919) % len) as i64).collect();
    let mut out = vec![0f32; rows * len];
    let shape = [rows as i64, len as i64];
    let d = descriptor(GK_DTYPE_FLOAT, &shape, &data);
    let i = descriptor(GK_DTYPE_INT64, &shape, &indices);
    let count = std::sync::atomic::AtomicUsize::new(0);
    for concurrency in [1usize << 62, usize::MAX] {
        out.fill(-1.0);
        let o = output_descriptor(GK_DTYPE_FLOAT, &shape, &mut out);
        let options = gk_options {
            parallel_for: Some(counting),
            parallel_for_ctx: std::ptr::addr_of!(count).cast_mut().cast(),
            parallel_for_concurrency: concurrency,
            ..Default::default()
        };
        // SAFETY: valid descriptors of live buffers; the host runs every task once.
        let status = unsafe { gk_gather_elements(&d, &i, 1, &o, &options) };
        // SAFETY: a NUL-terminated string owned by the library.
        let message = unsafe { CStr::from_ptr(gk_last_error_message()) }.to_string_lossy();
        assert_eq!(status, GK_STATUS_OK, "concurrency {concurrency}: {message}");
        let wrong = (0..rows * len)
            .filter(|&v| out[v] != data[(v / len) * len + indices[v] as usize])
            .count();
        assert_eq!(wrong, 0, "concurrency {concurrency}");
    }
    assert!(
        count.load(std::sync::atomic::Ordering::Relaxed) > 2,
        "the host ran the tasks"
    );
}

#[test]
fn options_struct_size_says_which_fields_the_caller_has() {
    let size = std::mem::size_of::<gk_options>();
    for bad in [0, 8, size - 1, size + 1, size + 8, usize::MAX] {
        let options = gk_options {
            struct_size: bad,
            ..Default::default()
        };
        let (status, message) = c_call(&options);
        assert_eq!(status, GK_STATUS_INVALID_ARGUMENT, "struct_size {bad}");
        assert!(
            message.contains(&format!(
                "options->struct_size is {bad}; allowed are {size}"
            )),
            "{message}"
        );
    }
    // A context or concurrency without a parallel-for is a mistake, not silently ignored.
    let stray = gk_options {
        parallel_for_concurrency: 2,
        ..Default::default()
    };
    let (status, message) = c_call(&stray);
    assert_eq!(status, GK_STATUS_INVALID_ARGUMENT);
    assert!(
        message.contains("options->parallel_for is NULL"),
        "{message}"
    );

    // gk_options_init writes the defaults, and only the bytes it is told it has.
    let mut words = [0xA5A5_A5A5_A5A5_A5A5usize; 8];
    // SAFETY: 64 writable bytes, more than gk_options.
    let status = unsafe { gk_options_init(words.as_mut_ptr().cast(), size) };
    assert_eq!(status, GK_STATUS_OK);
    assert_eq!(words[0], size);
    assert_eq!(&words[1..size / 8], &[0; 5][..size / 8 - 1]);
    assert!(words[size / 8..]
        .iter()
        .all(|&w| w == 0xA5A5_A5A5_A5A5_A5A5));
    // SAFETY: as above; a wrong size writes nothing.
    let status = unsafe { gk_options_init(words.as_mut_ptr().cast(), size - 8) };
    assert_eq!(status, GK_STATUS_INVALID_ARGUMENT);
    // SAFETY: NULL is reported.
    let status = unsafe { gk_options_init(std::ptr::null_mut(), size) };
    assert_eq!(status, GK_STATUS_NULL_POINTER);
}
