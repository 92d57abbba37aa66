//! gatherkit's own worker pool: persistent threads, started lazily, shared by every call.
//!
//! Why hand-written rather than rayon-core or crossbeam: the rules a library that runtimes embed
//! must follow are about *when threads exist and what they do*, and those are exactly what a
//! general-purpose pool decides for itself. Here:
//! - no thread exists until a call needs one, and never more than `available_parallelism - 1`
//!   (the calling thread is the other), whatever `num_threads` says;
//! - an idle worker spins for at most [`SPIN`] after its last task, then sleeps on a condition
//!   variable: an idle process burns no CPU;
//! - a call never waits for a worker to become free: the calling thread claims tasks of its own
//!   job until none is left, so calls from many host threads at once share the workers without
//!   deadlock, and a call only waits for tasks a worker has already started;
//! - after `fork()`, the child (whose copy of the pool has no threads) starts a fresh pool on its
//!   first threaded call: the pool records the process id it was made in;
//! - a worker that cannot be started (thread limit, `pthread_create` failing) only means the
//!   calling thread does more of the work.
//!
//! rayon-core's global pool starts all its threads at once, keeps them for the process's life
//! with its own sleep policy, and has no notion of a fork; crossbeam offers parts (deques,
//! scoped threads) rather than a pool. What is needed here is ~200 lines.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a worker keeps looking for work after its last task before it sleeps: long enough
/// that a caller issuing calls back to back finds it awake (waking a sleeping thread costs tens
/// of microseconds), short enough to be nothing for an idle process.
const SPIN: Duration = Duration::from_micros(50);

/// A worker's stack: the kernels keep their buffers small (a few KiB) and allocate tiles on the
/// heap, so the default 2 MiB would only be address space.
const WORKER_STACK: usize = 256 << 10;

/// A task body with its lifetime erased. Valid while the job that holds it is running: the
/// caller does not return from [`Pool::run`] until no worker can reach it.
#[derive(Clone, Copy)]
struct TaskRef(*const (dyn Fn(usize) + Sync));

// SAFETY: the pointee is `Sync` (shared calls from several threads are allowed) and outlives
// every use (see `TaskRef`).
unsafe impl Send for TaskRef {}
// SAFETY: as above.
unsafe impl Sync for TaskRef {}

/// One call's tasks.
struct Job {
    task: TaskRef,
    tasks: usize,
    /// The next task index to claim.
    next: AtomicUsize,
    /// Workers that may still join (the call's concurrency minus the caller); changed under the
    /// queue lock.
    seats: AtomicUsize,
    /// Workers that joined and have not finished; changed under the queue lock, read by the
    /// waiting caller also without it.
    active: AtomicUsize,
    panicked: AtomicBool,
}

impl Job {
    /// Claims and runs tasks until none is left; a panicking task is recorded, not propagated
    /// (it must not unwind through a worker, nor skip the caller's wait).
    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.tasks {
                return;
            }
            // SAFETY: the job is running (see `TaskRef`).
            let task = unsafe { &*self.task.0 };
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task(i))).is_err() {
                self.panicked.store(true, Ordering::Relaxed);
            }
        }
    }

    fn wants_helpers(&self) -> bool {
        self.seats.load(Ordering::Relaxed) > 0 && self.next.load(Ordering::Relaxed) < self.tasks
    }
}

struct Queue {
    jobs: Vec<Arc<Job>>,
}

pub(crate) struct Pool {
    /// The process the pool (and its threads) belongs to.
    pid: u32,
    /// Workers this pool may start: available parallelism minus the calling thread.
    capacity: usize,
    /// Workers started so far (or being started).
    started: AtomicUsize,
    queue: Mutex<Queue>,
    work_available: Condvar,
    helper_finished: Condvar,
    /// Jobs in the queue that want helpers: what spinning workers watch without the lock.
    wanted: AtomicUsize,
    /// Workers waiting on `work_available`; changed under the queue lock, read also without it
    /// (then a hint: it may change right after).
    sleeping: AtomicUsize,
}

static POOL: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());

impl Pool {
    /// This process's pool, made on first use (and again in a forked child).
    pub(crate) fn get() -> &'static Pool {
        let pid = std::process::id();
        let current = POOL.load(Ordering::Acquire);
        // SAFETY: pools are leaked, never freed, so a non-null pointer stays valid.
        if let Some(pool) = unsafe { current.as_ref() } {
            if pool.pid == pid {
                return pool;
            }
        }
        // No pool yet, or one made by the parent before a fork (its threads do not exist here,
        // and its lock may be held forever): start afresh. The old one is left as it is.
        let fresh = Box::into_raw(Box::new(Pool {
            pid,
            capacity: super::machine_parallelism() - 1,
            started: AtomicUsize::new(0),
            queue: Mutex::new(Queue { jobs: Vec::new() }),
            work_available: Condvar::new(),
            helper_finished: Condvar::new(),
            wanted: AtomicUsize::new(0),
            sleeping: AtomicUsize::new(0),
        }));
        match POOL.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
            // SAFETY: just leaked; never freed.
            Ok(_) => unsafe { &*fresh },
            Err(winner) => {
                // Another thread made one first: use it, drop ours (no thread has seen it).
                // SAFETY: `fresh` came from Box::into_raw above and was never shared.
                drop(unsafe { Box::from_raw(fresh) });
                // SAFETY: as above for pools in POOL; `winner` is the current process's pool
                // unless a fork happened in between, which the next call corrects.
                unsafe { &*winner }
            }
        }
    }

    /// Whether this process's pool has a worker that is not asleep (spinning after its last
    /// task, or busy), so that a job handed over now costs no wake-up. Makes no pool.
    pub(crate) fn has_awake_worker() -> bool {
        // SAFETY: as in `get`: pools are never freed.
        match unsafe { POOL.load(Ordering::Acquire).as_ref() } {
            Some(pool) if pool.pid == std::process::id() => {
                pool.started.load(Ordering::Relaxed) > pool.sleeping.load(Ordering::Relaxed)
            }
            _ => false,
        }
    }

    /// Runs `task(i)` for every `i` in `0..tasks`, at most `concurrency` at once (the calling
    /// thread included), and returns when all have finished. A panic in any task is re-raised
    /// here, on the calling thread, after every task has finished.
    pub(crate) fn run(
        &'static self,
        tasks: usize,
        concurrency: usize,
        task: &(dyn Fn(usize) + Sync),
    ) {
        let helpers = concurrency.min(tasks).saturating_sub(1).min(self.capacity);
        if helpers == 0 {
            for i in 0..tasks {
                task(i);
            }
            return;
        }
        self.start_workers(helpers);
        let erased: *const (dyn Fn(usize) + Sync + '_) = task;
        // SAFETY: erasing the lifetime is sound because this function does not return before
        // the job has left the queue and no worker is active in it, so no use of the pointer
        // outlives `task`.
        let task_ref = TaskRef(unsafe {
            std::mem::transmute::<
                *const (dyn Fn(usize) + Sync + '_),
                *const (dyn Fn(usize) + Sync + 'static),
            >(erased)
        });
        let job = Arc::new(Job {
            task: task_ref,
            tasks,
            next: AtomicUsize::new(0),
            seats: AtomicUsize::new(helpers),
            active: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
        });
        let to_wake = {
            let mut queue = self.lock();
            queue.jobs.push(Arc::clone(&job));
            self.wanted.fetch_add(1, Ordering::Release);
            helpers.min(self.sleeping.load(Ordering::Relaxed))
        };
        // Woken after the lock is released: a worker woken while the caller still holds it
        // finds the lock taken and sleeps again on it, and the caller's unlock must then wake
        // it a second time. Each wake is a system call that, in a virtual machine, sends an
        // interrupt to a halted virtual CPU: measured with a pthread pair on a 2-core Zen 4 VM,
        // signalling inside the lock gave the caller back after 11 us and started the worker
        // after 9.5; outside, 5.5-7.8 and 3.5-5.5 us. Nothing is lost: a worker counted as
        // sleeping above is already waiting (it counts itself under the lock and waits from
        // there), and a wake that reaches it later still finds the job.
        for _ in 0..to_wake {
            self.work_available.notify_one();
        }
        job.work();
        let mut queue = self.lock();
        if let Some(at) = queue.jobs.iter().position(|j| Arc::ptr_eq(j, &job)) {
            queue.jobs.swap_remove(at);
            self.wanted.fetch_sub(1, Ordering::Release);
        }
        // No worker joins now (the job left the queue); the ones in it finish their tasks, most
        // often within microseconds of the caller on an even split. Sleeping on the condition
        // variable right away cost a wake-up of the caller (about 10 us on these machines: a
        // 2-thread GatherND of 1 MiB took 31 us where half its 1-thread time is 19 us), so the
        // caller first watches the count for a bounded time, as idle workers do.
        if job.active.load(Ordering::Acquire) > 0 {
            drop(queue);
            spin_while(Instant::now() + SPIN, || {
                job.active.load(Ordering::Acquire) > 0
            });
            queue = self.lock();
        }
        while job.active.load(Ordering::Acquire) > 0 {
            queue = self
                .helper_finished
                .wait(queue)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        drop(queue);
        if job.panicked.load(Ordering::Relaxed) {
            panic!("a gatherkit task panicked on a worker thread");
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        // No code panics while holding the lock; recover anyway rather than cascade.
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts workers until `wanted` exist (or the capacity is reached, or starting fails).
    fn start_workers(&'static self, wanted: usize) {
        let mut started = self.started.load(Ordering::Relaxed);
        while started < wanted.min(self.capacity) {
            if let Err(now) = self.started.compare_exchange(
                started,
                started + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                started = now;
                continue;
            }
            let spawned = std::thread::Builder::new()
                .name(format!("gatherkit-{started}"))
                .stack_size(WORKER_STACK)
                .spawn(move || self.worker());
            if spawned.is_err() {
                // Not now: the caller does the work; a later call may try again.
                self.started.fetch_sub(1, Ordering::Relaxed);
                return;
            }
            started += 1;
        }
    }

    fn worker(&self) {
        loop {
            let job = self.next_job();
            job.work();
            // Counted down under the lock (a caller that saw helpers active under it is then
            // already waiting), woken outside it, as in `run`. Release: the caller may see the
            // count fall to 0 without taking the lock, and the task's writes must be visible to
            // it then.
            let last = {
                let _queue = self.lock();
                job.active.fetch_sub(1, Ordering::Release) == 1
            };
            if last {
                self.helper_finished.notify_all();
            }
        }
    }

    /// Waits for a job with a free seat and takes the seat.
    fn next_job(&self) -> Arc<Job> {
        let mut spin_until = Some(Instant::now() + SPIN);
        let mut queue = self.lock();
        loop {
            if let Some(job) = queue.jobs.iter().find(|j| j.wants_helpers()) {
                job.seats.fetch_sub(1, Ordering::Relaxed);
                job.active.fetch_add(1, Ordering::Relaxed);
                return Arc::clone(job);
            }
            if let Some(until) = spin_until.take() {
                drop(queue);
                spin_while(until, || self.wanted.load(Ordering::Acquire) == 0);
                queue = self.lock();
                continue;
            }
            self.sleeping.fetch_add(1, Ordering::Relaxed);
            queue = self
                .work_available
                .wait(queue)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            self.sleeping.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Spins while `busy()` holds, until `until` at the latest: the bounded wait of an idle worker
/// watching for work and of a caller watching its helpers finish.
fn spin_while(until: Instant, busy: impl Fn() -> bool) {
    while busy() && Instant::now() < until {
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    }
}
