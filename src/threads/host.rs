//! Running a call's tasks on the host's own thread pool, through a parallel-for it hands over.
//!
//! The task type is `void (*)(void *task_ctx, size_t i)`: the type of ONNX Runtime's custom-op
//! `KernelContext_ParallelFor` callback and of pthreadpool's `pthreadpool_task_1d_t` (XNNPACK,
//! ExecuTorch), so those hosts connect with a one-line shim.

use std::ffi::c_void;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// One task: `task(task_ctx, i)`.
pub type TaskFn = unsafe extern "C" fn(task_ctx: *mut c_void, i: usize);

/// The host's parallel-for: runs `task(task_ctx, i)` for every `i` in `0..n` and returns when
/// all have finished.
pub type ParallelForFn =
    unsafe extern "C" fn(host_ctx: *mut c_void, n: usize, task: TaskFn, task_ctx: *mut c_void);

/// A host's parallel-for, with its context and the most tasks it runs at once.
///
/// gatherkit then starts no thread of its own for a call: it splits work of 2 MiB or more into
/// chunks of at least 128 KiB, at most 8 per task that runs at once (`concurrency`, capped by
/// `num_threads`), and hands them to `run` in one call. The host
/// may run them in any order, on any threads, inline or serially; results and errors are the same
/// whatever it does. A task never unwinds into the host's code.
#[derive(Clone, Copy, Debug)]
pub struct ParallelFor {
    run: ParallelForFn,
    context: *mut c_void,
    concurrency: usize,
}

/// Two are equal when they are the same function with the same context and concurrency (by
/// address: the same function may have several addresses, so equal hosts may compare unequal).
impl PartialEq for ParallelFor {
    fn eq(&self, other: &ParallelFor) -> bool {
        self.key() == other.key()
    }
}

impl Eq for ParallelFor {}

impl std::hash::Hash for ParallelFor {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

// SAFETY: the constructor's contract makes `run` callable with `context` from any thread.
unsafe impl Send for ParallelFor {}
// SAFETY: as above.
unsafe impl Sync for ParallelFor {}

impl ParallelFor {
    /// A parallel-for from its parts. `concurrency` 0 means the machine's available parallelism.
    ///
    /// # Safety
    /// While any [`Options`](crate::Options) holding it is used, `run` may be called with
    /// `context` from any thread, and each call runs every task exactly once and returns only
    /// after all of them have finished.
    ///
    /// A `run` that returns without having run every task is caught once it returns (a task
    /// run again, or an index outside `0..n`, is ignored): through the C ABI the call is
    /// `GK_STATUS_INVALID_ARGUMENT` with a message; from Rust the call unwinds, as a panic that
    /// runs no panic hook (nothing is printed) and whose payload is not a public type. Returning
    /// before the tasks have finished cannot be caught.
    pub const unsafe fn new(run: ParallelForFn, context: *mut c_void, concurrency: usize) -> Self {
        ParallelFor {
            run,
            context,
            concurrency,
        }
    }

    fn key(&self) -> (usize, usize, usize) {
        (self.run as usize, self.context as usize, self.concurrency)
    }

    /// The most tasks the host runs at once (at least 1).
    pub fn concurrency(&self) -> usize {
        match self.concurrency {
            0 => super::machine_parallelism(),
            n => n,
        }
    }

    /// Runs `task(i..i + 1)` for `i` in `0..tasks` through the host. A panic in a task is caught
    /// in the task and re-raised here, on the calling thread, once the host has returned; so is
    /// a host that returned without running every task once (the output would be incomplete).
    pub(crate) fn run(&self, tasks: usize, task: &(dyn Fn(Range<usize>) + Sync)) {
        if tasks == 0 {
            return;
        }
        // On the heap, with the claims: on the stack it sat below every task, which a host call
        // runs within the README's 4 KiB (c-tests/test_small_stack.c).
        let context = Box::new(TaskContext {
            task,
            claimed: (0..tasks).map(|_| AtomicBool::new(false)).collect(),
            ran: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
        });
        // SAFETY: by the constructor's contract; `trampoline` gets a pointer to `context`,
        // which lives until the host returns (after every task has finished).
        unsafe {
            (self.run)(
                self.context,
                tasks,
                trampoline,
                std::ptr::addr_of!(*context).cast_mut().cast(),
            )
        };
        if context.panicked.load(Ordering::Relaxed) {
            panic!("a gatherkit task panicked on a host thread");
        }
        let ran = context.ran.load(Ordering::Acquire);
        if ran != tasks {
            host_fault(ran, tasks);
        }
    }
}

/// Unwinds to the C boundary with a [`HostFault`] for a host that ran `ran` of `tasks` tasks.
/// Without the panic hook (`resume_unwind`): a caller's mistake is reported through the status
/// and message alone, not also printed to its stderr, and the hook's backtrace (with
/// `RUST_BACKTRACE` set) took 24 KiB of stack, past the 4 KiB a call may use. Out of line, so
/// that the message's formatting adds nothing to `run`'s frame under every task.
#[cold]
#[inline(never)]
fn host_fault(ran: usize, tasks: usize) -> ! {
    std::panic::resume_unwind(Box::new(HostFault(format!(
        "options.parallel_for returned after running {ran} of the {tasks} tasks it was given \
         (each task must run exactly once before it returns); the output is incomplete"
    ))))
}

/// A panic payload for a host that broke the parallel-for contract: the C boundary reports it
/// as `GK_STATUS_INVALID_ARGUMENT` with this message, not as a gatherkit bug.
pub(crate) struct HostFault(pub(crate) String);

struct TaskContext<'a> {
    task: &'a (dyn Fn(Range<usize>) + Sync),
    claimed: Box<[AtomicBool]>,
    ran: AtomicUsize,
    panicked: AtomicBool,
}

/// What the host calls for each task. Never unwinds: a panic is caught and recorded.
unsafe extern "C" fn trampoline(task_ctx: *mut c_void, i: usize) {
    // SAFETY: `run` passes a pointer to a live `TaskContext` (the host calls this only during
    // `run`'s call to it, by contract).
    let context = unsafe { &*task_ctx.cast::<TaskContext<'_>>() };
    // A task index out of range, or one already run, is the host's mistake: skip it (the count
    // of tasks run then tells).
    let Some(claim) = context.claimed.get(i) else {
        return;
    };
    if claim.swap(true, Ordering::Relaxed) {
        return;
    }
    let task = context.task;
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task(i..i + 1))).is_err() {
        context.panicked.store(true, Ordering::Relaxed);
    }
    context.ran.fetch_add(1, Ordering::Release);
}
