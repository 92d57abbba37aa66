//! gatherkit's own worker pool: persistent threads, started lazily, shared by every call.
//!
//! Why hand-written rather than rayon-core or crossbeam: the rules a library that runtimes embed
//! must follow are about *when threads exist and what they do*, and those are exactly what a
//! general-purpose pool decides for itself. Here:
//! - no thread exists until a call needs one, and never more than `available_parallelism - 1`
//!   (the calling thread is the other), whatever `num_threads` says;
//! - an idle worker spins for at most [`SPIN`] after its last task, then watches for work while
//!   yielding its core to any thread that wants it, until [`IDLE_WATCH`] after its last task
//!   (or after it last gave way, below), then sleeps on a condition variable of its own: an
//!   idle process burns no CPU;
//! - a call never waits for a worker to become free: the calling thread claims tasks of its own
//!   job until none is left, so calls from many host threads at once share the workers without
//!   deadlock, and a call only waits for tasks a worker has already started;
//! - a job is opened to workers, and a sleeping one woken, only when the call is worth it: at
//!   once for large calls, otherwise once the caller's first tasks predict enough work left
//!   ([`Engage`]), and a sleeping one not for a job smaller than twice one whose wake cost more
//!   than it saved ([`wake_failed`]), unless calls come in a stream, which share one wake
//!   ([`STREAM_GAP`]);
//! - a caller wakes the sleeping workers it chooses, each kept off the caller's CPU until it
//!   wakes, where the system allows ([`Pool::choose_sleepers`]); a worker that still finds
//!   itself on the very CPU its job was opened from gives that CPU back rather than preempt the
//!   caller, a few times at most ([`placement`](super::placement));
//! - after `fork()`, the child (whose copy of the pool has no threads) starts a fresh pool on its
//!   first threaded call: the pool records the process id it was made in;
//! - a worker that cannot be started (thread limit, `pthread_create` failing) only means the
//!   calling thread does more of the work.
//!
//! rayon-core's global pool starts all its threads at once, keeps them for the process's life
//! with its own sleep policy, and has no notion of a fork; crossbeam offers parts (deques,
//! scoped threads) rather than a pool. What is needed here is about 500 lines of code.

use super::placement::{current_cpu, gives_way, Steered, ThreadId};
use super::Engage;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How long a worker spins, looking for work, after its last task: long enough that a caller
/// issuing calls back to back finds it awake at once.
const SPIN: Duration = Duration::from_micros(50);

/// How long after its last task a worker keeps looking for work before it sleeps; past [`SPIN`]
/// it yields its core between looks, so that any other thread that wants the core gets it.
///
/// A sleeping worker is costly to wake where idle cores halt, as virtual CPUs do: on the 2-core
/// Intel Xeon VMs here (no halt-polling in the guest) the wake took the calling thread 18 µs in
/// the system call and the worker began 35-60 µs later, against 2 µs for a worker still
/// looking. Calls that a host issues between operations of its own, a few hundred µs apart,
/// found the worker asleep every time and so split their work late: in the sweep (seed 171,
/// each call between two of ONNX Runtime's), a Gather of 1448 slices of 1128 bytes took 109 µs
/// at 2 threads against 68 µs with the worker looking, a GatherND of 3227 slices of 512 bytes
/// 158 against 103 µs, and over the 38 configurations of 20 µs or more the 2-thread calls took
/// 0.95x as long (geometric mean; none more than 1.07x, calls too small to split, within
/// their noise). ONNX Runtime's own 2-thread calls beside them took 0.97x as long: a thread it
/// woke found the core awake. A host's own operations between two calls often take longer than
/// 500 µs, the window first chosen: with it, 10 configurations of sweep seed 176 of 50-1200 µs at
/// 2 threads (each call between two of ONNX Runtime's, one build, the window toggled between
/// rounds) took 0.90x the time with 2 ms (geometric mean; 0.72-0.75x for GatherNDs of 128- and
/// 256-byte slices, ONNX Runtime's beside them 0.99x), and 5 ms did no better; 24 configurations
/// of seed 177 that split less often, 1.02x (within their noise). A worker uses at most this much
/// CPU after its last task, and none once asleep.
const IDLE_WATCH: Duration = Duration::from_millis(2);

/// What an idle worker does `idle` after its last task: spin, yield its core between looks for
/// work, or sleep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Idle {
    Spin,
    Yield,
    Sleep,
}

fn idle_watch(idle: Duration) -> Idle {
    if idle < SPIN {
        Idle::Spin
    } else if idle < IDLE_WATCH {
        Idle::Yield
    } else {
        Idle::Sleep
    }
}

/// A worker's stack: the kernels keep their buffers small (a few KiB) and allocate tiles on the
/// heap, so the default 2 MiB would only be address space.
const WORKER_STACK: usize = 256 << 10;

/// Predicted work left from which a job of [`Engage::Measured`] is opened to helpers that are
/// awake: what the chunks handed over must outweigh (their hand-over and cache warm-up; on Zen
/// 5, handing an awake worker less than 10-30 µs of copying cost more than it saved).
pub(super) const HELP_WORTH: Duration = Duration::from_micros(40);

/// Predicted work left from which sleeping helpers are woken, at least: twice the latest start of
/// a woken worker measured (27 µs on the 2-core Zen 5 virtual machines; the wake also costs the
/// calling thread 4-8 µs), so that the worker finds at least as much to do as it was late. Where
/// wakes take longer to bring help, the pool learns it ([`Pool::wake_worth`]).
pub(super) const WAKE_WORTH: Duration = Duration::from_micros(60);

/// How long a wake is taken to bring a helper to work before the pool has seen any: half of
/// [`WAKE_WORTH`], so that a new pool wakes from there.
const WAKE_TO_HELP_FIRST_GUESS: Duration = Duration::from_micros(30);

/// The longest a single wake counts as having taken: a worker that slept through a host's
/// busy spell must not stop the pool from waking anyone for a long while after.
const WAKE_TO_HELP_MAX: Duration = Duration::from_millis(1);

/// How fast an estimate above [`WAKE_TO_HELP_FIRST_GUESS`] falls back to it while no wake tells
/// otherwise: its excess halves every this long. Wakes stop once they are learnt to be slow, so
/// nothing else would ever bring a high estimate down; this way a pool that learnt slow wakes
/// tries one again a few hundred milliseconds later, a cost of a few microseconds.
const WAKE_TO_HELP_HALF_LIFE: Duration = Duration::from_millis(100);

/// `estimate`, learnt `since` ago, as it stands now: its excess over the first guess halved
/// for every [`WAKE_TO_HELP_HALF_LIFE`] since.
fn decayed_wake_to_help(estimate: Duration, since: Duration) -> Duration {
    let Some(excess) = estimate.checked_sub(WAKE_TO_HELP_FIRST_GUESS) else {
        return estimate;
    };
    let halvings = since.as_nanos() / WAKE_TO_HELP_HALF_LIFE.as_nanos();
    match u32::try_from(halvings) {
        Ok(h) if h < 32 => WAKE_TO_HELP_FIRST_GUESS + excess / (1u32 << h),
        _ => WAKE_TO_HELP_FIRST_GUESS,
    }
}

/// The running estimate of what a wake takes to bring help, after a wake that took `sample`
/// (at most [`WAKE_TO_HELP_MAX`]): a quarter of the way from `estimate` to it, so that one slow
/// wake does not move it far, and a machine whose wakes are slow is learnt within a few.
fn next_wake_to_help(estimate: Duration, sample: Duration) -> Duration {
    let sample = sample.min(WAKE_TO_HELP_MAX);
    if sample >= estimate {
        estimate + (sample - estimate) / 4
    } else {
        estimate - (estimate - sample) / 4
    }
}

/// The longest work left a failed wake keeps later jobs from waking for (see
/// [`next_wake_refusal`]): jobs with more left than this always may, whatever wakes did before.
/// The most a wake was seen to cost a call here, about 185 µs (a ScatterND of 141 µs not woken,
/// up to 325 µs woken), is well below half of this, what a helper saves on a 2-core machine, so
/// longer jobs need no refusal. With a cap of 2 ms, a sweep run had a GatherElements of 1 ms at
/// one thread take as long at two (0.43 ms at two on its own, with or without the refusal);
/// whether a refusal did that was not established, but a cap above what needs one risks it.
const WAKE_REFUSAL_MAX: Duration = Duration::from_micros(500);

/// How fast a refusal to wake ([`next_wake_refusal`]) wears off while no wake fails again: it
/// halves every this long, so that a pool that saw a wake cost more than it saved tries one again
/// after half a second for jobs of that size, after a second for jobs half as large (each such
/// try costs one call what that wake did).
const WAKE_REFUSAL_HALF_LIFE: Duration = Duration::from_millis(500);

/// Whether a job that woke a helper and took `took` gained nothing from its helpers: `alone` is
/// what its calling thread would have taken for every task at the pace it ran its own
/// ([`alone_time`]). With one worker (2 cores) that is what the wake gained; with more, an awake
/// helper's gain can hide a wake that did not pay, and only the job as a whole is judged.
///
/// The time a wake takes to bring a worker to its seat ([`next_wake_to_help`]) is not all that a
/// wake costs. Where the system places the woken worker on the caller's CPU, or halts a waiting
/// thread's virtual CPU, the caller can also lose its CPU to the worker, spend tens of
/// microseconds inside the wake's system call, or wait at the end for a late worker's last task
/// and be woken in turn. On the 2-core Intel Xeon VMs here, calls of 40-300 µs each made after a
/// pause of 3 ms (the worker asleep), by whether they woke it: GatherElements of 118363 f64
/// values (1 thread 135 µs) 134 µs not woken, 142-149 µs woken and not helped, 205 µs helped; a
/// GatherElements of 53410 u64 values (44 µs) 43 µs not woken, 88 µs woken; a ScatterND (125 µs)
/// 141 µs not woken, 240-325 µs woken. The worker's seat came 35-60 µs after the wake all the
/// while, so the pool kept waking for up to half of such calls.
fn wake_failed(alone: Duration, took: Duration) -> bool {
    took >= alone
}

/// What `busy`, the calling thread's time in the `done` tasks it ran itself, says it would have
/// taken for all `tasks` alone. The pace of its first tasks alone, which decides the wake
/// ([`predicted_left`]), overstates it: those run with cold caches, and after a pause of 3 ms the
/// wakes that did not pay took less than that predicted.
fn alone_time(busy: Duration, done: u32, tasks: u32) -> Duration {
    (busy / done.max(1)).saturating_mul(tasks)
}

/// The work left below which jobs do not wake a helper, after a wake for a job that predicted
/// `predicted_left` when it woke failed ([`wake_failed`]), where the refusal stood at `refusal`
/// (as it stands now, [`decayed_wake_refusal`]): twice that job's, at most
/// [`WAKE_REFUSAL_MAX`]. Twice, because a job's work left is predicted from its first tasks and
/// the next job of that size may predict somewhat more: the refusal must still cover it one
/// half-life later, when it has halved to the failed job's own.
fn next_wake_refusal(refusal: Duration, predicted_left: Duration) -> Duration {
    refusal.max(predicted_left.saturating_mul(2).min(WAKE_REFUSAL_MAX))
}

/// `refusal`, learnt `since` ago, as it stands now: halved for every [`WAKE_REFUSAL_HALF_LIFE`].
fn decayed_wake_refusal(refusal: Duration, since: Duration) -> Duration {
    let halvings = since.as_nanos() / WAKE_REFUSAL_HALF_LIFE.as_nanos();
    match u32::try_from(halvings) {
        Ok(h) if h < 32 => refusal / (1u32 << h),
        _ => Duration::ZERO,
    }
}

/// The longest pause between the end of one job and the start of the next for both to count as
/// calls of one stream: half of [`IDLE_WATCH`], so that a worker that helped the job before, or
/// was woken for it, is still looking for work when the next starts (its last task ends at most
/// one chunk before the job does).
///
/// A wake for a call of a stream is shared by the calls that follow: the worker it brings stays
/// awake while they come, and each of them gets its help at once. So within a stream, from its
/// [`STREAM_CALLS`]-th call on, a job wakes a sleeping worker by [`WAKE_WORTH`] alone, whatever
/// one wake took or cost a single call ([`Pool::wake_worth_at`]): without it, one failed wake
/// kept the worker asleep through every later call of its size (it wakes only when a job wakes
/// it), for up to a second or two. On the 2-core Intel Xeon VMs here, a Gather of 290 slices of
/// 6525 bytes (1.9 MB; 150-180 µs at one thread), called 40 times in a row after each of several
/// other calls (ONNX Runtime's at 1 or 2 threads, a 150 µs wait, a 4 MiB copy, or none; three
/// rounds, 15 runs in one process), took 0.90-1.06x its 1-thread time at 2 threads in 13 of the
/// 15 runs once a wake had failed (the refusal at its 500 µs cap), and 0.45-0.63x with the
/// stream's wake (one build, the rule toggled); the build with it, 0.37-0.61x, and 1.26-1.28x
/// ONNX Runtime's 2-thread time, where sweep seed 312 had measured 0.82x (its one 2-thread
/// configuration slower than ONNX Runtime).
const STREAM_GAP: Duration = Duration::from_millis(1);

/// The calls of a stream ([`STREAM_GAP`]) before one that wakes by [`WAKE_WORTH`] alone: two,
/// so that one call right after another, as a caller makes who warms a call up before timing
/// it after a pause, pays no wake that the pool's learning refuses.
const STREAM_CALLS: u32 = 2;

/// How many calls of a stream ([`STREAM_GAP`]) came before a job that starts `gap` after the
/// latest job ended (`None`: no job has), when `before` came before that one.
fn next_stream_length(before: u32, gap: Option<Duration>) -> u32 {
    match gap {
        Some(gap) if gap < STREAM_GAP => before.saturating_add(1),
        _ => 0,
    }
}

/// How far helpers have joined a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Joined {
    /// Not at all: the job is not queued.
    No,
    /// Open to awake helpers.
    Open,
    /// Open, and sleeping helpers woken.
    Woken,
}

/// How far helpers should have joined a job whose work left is `predicted` at the calling
/// thread's own pace ([`predicted_left`]).
fn helpers_worth(predicted: Duration, wake_worth: Duration) -> Joined {
    if predicted >= wake_worth {
        Joined::Woken
    } else if predicted >= HELP_WORTH {
        Joined::Open
    } else {
        Joined::No
    }
}

/// The time `left` tasks take at the pace of `done` tasks in `elapsed` (nothing when none is
/// done yet).
fn predicted_left(elapsed: Duration, done: u32, left: usize) -> Duration {
    let left = u32::try_from(left).unwrap_or(u32::MAX);
    (elapsed / done.max(1)).saturating_mul(left)
}

/// How many tasks the calling thread claims next, after a claim that left helpers `joined` to the
/// job as they now are, with a worker `awake` or not (looking for work, not asleep): all that are
/// left while the job is not open to helpers (none was called for yet, by its engagement or by the
/// caller's pace), or is open to awake ones only and none is awake; otherwise one, so that helpers
/// find work and the ends meet evenly. Its first claim is one task, whose pace decides whether
/// helpers are called for ([`helpers_worth`]).
///
/// Why not one at a time throughout: the caller runs the tasks' body once per claim, and each
/// call pays the body's start again (its prefetches and streams restart cold, its buffers are set
/// up anew). On a Zen 4, a Gather along the last axis (18600 int16 slices from 8.5 MB, whose 1.2
/// MB counted make 9 tasks of 2 us) whose first task's pace predicted too little for a helper
/// took 1.10-1.18x its 1-thread time at 2 threads claimed one by one, 1.06-1.09x in claims of
/// doubling size (1, 2, 4, 2), 1.06-1.10x growing fourfold, and 1.02x with all the rest in the
/// second claim. The first task's pace is the one that counts: the first chunk, its code and
/// lines cold, is rarely the fastest.
///
/// Why not also once a job is open but no one has taken a seat yet: a worker that gives way to
/// the caller first, or is between yields, comes a few microseconds late, and with short chunks
/// the caller would have claimed its share. Claiming the rest then, jobs opened just now lost
/// their helper (Gathers and GatherNDs of 50-180 us at 1 thread, called back to back, took
/// 1.01-1.04x their 1-thread time at 2 threads, against 0.48-0.70x with the helper), and so did a
/// 2.6 MB GatherND opened at once whose worker came after the first chunk (1.49x the time at 2
/// threads).
///
/// But a job open only to awake helpers while every worker sleeps gets none (a sleeping worker
/// wakes only when a job wakes it): claimed one at a time, it paid the body's restarts for nothing.
/// On the 2-core Intel Xeon VMs, five sweep configurations of 45-130 µs, each call after a pause
/// of 3 ms (the worker asleep, and not woken for such calls: [`wake_failed`]), took 0-4% less
/// time at 2 threads with the rest in one claim (mean over 8 alternating rounds in one process;
/// 2-thread over 1-thread median 1.023 -> 1.006 for the one that was above 1).
fn next_claim(joined: Joined, awake: bool) -> u32 {
    if joined == Joined::No || (joined == Joined::Open && !awake) {
        u32::MAX
    } else {
        1
    }
}

/// A task body with its lifetime erased. Valid while the job that holds it is running: the
/// caller does not return from [`Pool::run`] until no worker can reach it.
#[derive(Clone, Copy)]
struct TaskRef(*const (dyn Fn(Range<usize>) + Sync));

// SAFETY: the pointee is `Sync` (shared calls from several threads are allowed) and outlives
// every use (see `TaskRef`).
unsafe impl Send for TaskRef {}
// SAFETY: as above.
unsafe impl Sync for TaskRef {}

/// One call's tasks.
struct Job {
    task: TaskRef,
    /// The tasks not claimed yet, `front..back`, packed as `front << 32 | back`: the calling
    /// thread claims from the front, helpers from the back, so that a call repeated on the same
    /// data gives each thread about the same part as the time before, whose lines its cache may
    /// still hold (tasks claimed from one counter moved between the cores from call to call, and
    /// calls of 4-16 chunks per thread took 1.13-1.25x the time of one task per thread).
    unclaimed: AtomicU64,
    /// Workers that may still join (the call's concurrency minus the caller, from when the job
    /// is opened); changed under the queue lock.
    seats: AtomicUsize,
    /// Workers that joined and have not finished; changed under the queue lock, read by the
    /// waiting caller also without it.
    active: AtomicUsize,
    panicked: AtomicBool,
    /// The CPU the calling thread ran on when it opened the job ([`UNKNOWN_CPU`] if not told):
    /// a worker woken onto it gives way rather than preempt the caller
    /// ([`placement`](super::placement)).
    opener_cpu: AtomicU32,
    /// When a sleeping worker was woken for the job, in nanoseconds since the pool's epoch plus
    /// one (0: none was); taken (swapped to 0) by whoever first tells the pool what the wake
    /// took: the woken worker as it joins, or the caller at the end if no woken worker joined.
    woken_at: AtomicU64,
}

/// [`Job::opener_cpu`] when the system does not tell.
const UNKNOWN_CPU: u32 = u32::MAX;

impl Job {
    /// A helper's part: claims tasks one by one from the back and runs them until none is left.
    fn work(&self) {
        while let Some(claimed) = self.claim(End::Back, 1) {
            self.run_tasks(claimed);
        }
    }

    /// Runs the claimed tasks `claimed` (one call of the task body); a panicking task is
    /// recorded, not propagated (it must not unwind through a worker, nor skip the caller's
    /// wait).
    fn run_tasks(&self, claimed: Range<usize>) {
        // SAFETY: the job is running (see `TaskRef`).
        let task = unsafe { &*self.task.0 };
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task(claimed))).is_err() {
            self.panicked.store(true, Ordering::Relaxed);
        }
    }

    /// Claims up to `count` (at least 1) of the unclaimed tasks at `end`; `None` when none was
    /// left.
    fn claim(&self, end: End, count: u32) -> Option<Range<usize>> {
        let count = count.max(1);
        let mut packed = self.unclaimed.load(Ordering::Relaxed);
        loop {
            let (front, back) = unpack(packed);
            if front >= back {
                return None;
            }
            let take = count.min(back - front);
            let (claimed, rest) = match end {
                End::Front => (front..front + take, pack(front + take, back)),
                End::Back => (back - take..back, pack(front, back - take)),
            };
            match self.unclaimed.compare_exchange_weak(
                packed,
                rest,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(claimed.start as usize..claimed.end as usize),
                Err(now) => packed = now,
            }
        }
    }

    /// Tasks not claimed yet.
    fn left(&self) -> usize {
        let (front, back) = unpack(self.unclaimed.load(Ordering::Relaxed));
        back.saturating_sub(front) as usize
    }

    fn wants_helpers(&self) -> bool {
        self.seats.load(Ordering::Relaxed) > 0 && self.left() > 0
    }

    fn opener_cpu(&self) -> Option<u32> {
        Some(self.opener_cpu.load(Ordering::Relaxed)).filter(|&cpu| cpu != UNKNOWN_CPU)
    }
}

/// Which end of a job's unclaimed tasks a thread takes from.
#[derive(Clone, Copy)]
enum End {
    Front,
    Back,
}

fn pack(front: u32, back: u32) -> u64 {
    (u64::from(front) << 32) | u64::from(back)
}

fn unpack(packed: u64) -> (u32, u32) {
    ((packed >> 32) as u32, packed as u32)
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
    /// One per worker that may be started (each worker holds one): how it is woken.
    slots: Box<[Slot]>,
    helper_finished: Condvar,
    /// Jobs queued so far, ever (bumped under the queue lock): what idle workers watch without
    /// the lock, for a job opened after they last found nothing to do.
    opened: AtomicU64,
    /// Workers asleep (waiting on their slot's condition variable, not yet chosen to wake);
    /// changed under the queue lock, read also without it (then a hint: it may change right
    /// after).
    sleeping: AtomicUsize,
    /// What waking a sleeping worker has recently taken to bring it to work, in nanoseconds
    /// ([`next_wake_to_help`]); a wake whose worker never joined counts until its caller ran out
    /// of tasks.
    wake_to_help_ns: AtomicU64,
    /// When `wake_to_help_ns` was last learnt, in nanoseconds since `epoch`.
    wake_learnt_at: AtomicU64,
    /// Work left below which jobs do not wake helpers, after wakes that cost more than they
    /// saved ([`next_wake_refusal`]), in nanoseconds; 0 until one does.
    wake_refusal_ns: AtomicU64,
    /// When `wake_refusal_ns` was last set, in nanoseconds since `epoch`.
    wake_refused_at: AtomicU64,
    /// When the latest job ended on its calling thread, in nanoseconds since `epoch` plus one
    /// (0: none has, or it called for no helper, see [`Pool::ended_at`]).
    last_end: AtomicU64,
    /// How many calls of a stream came before the latest job ([`next_stream_length`]).
    stream_length: AtomicU32,
    /// The origin of the jobs' `woken_at` times.
    epoch: Instant,
}

static POOL: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());

/// A worker's place in the pool: how a caller wakes that worker, and keeps it off the caller's
/// CPU while it wakes ([`Steered`]).
#[derive(Default)]
struct Slot {
    /// Whether a worker holds this slot (or is being started for it).
    taken: AtomicBool,
    /// Set by the worker as it goes to sleep, cleared by the caller that chooses to wake it;
    /// both under the queue lock.
    asleep: AtomicBool,
    wake: Condvar,
    /// The worker's thread, once it runs (where the system names threads).
    thread: OnceLock<ThreadId>,
    /// Where a caller kept the sleeping worker it chose from waking, to be undone as it wakes.
    steered: Mutex<Option<Steered>>,
}

impl Pool {
    fn new(pid: u32, capacity: usize) -> Pool {
        Pool {
            pid,
            capacity,
            started: AtomicUsize::new(0),
            queue: Mutex::new(Queue { jobs: Vec::new() }),
            slots: (0..capacity).map(|_| Slot::default()).collect(),
            helper_finished: Condvar::new(),
            opened: AtomicU64::new(0),
            sleeping: AtomicUsize::new(0),
            wake_to_help_ns: AtomicU64::new(WAKE_TO_HELP_FIRST_GUESS.as_nanos() as u64),
            wake_learnt_at: AtomicU64::new(0),
            wake_refusal_ns: AtomicU64::new(0),
            wake_refused_at: AtomicU64::new(0),
            last_end: AtomicU64::new(0),
            stream_length: AtomicU32::new(0),
            epoch: Instant::now(),
        }
    }

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
        let fresh = Box::into_raw(Box::new(Pool::new(pid, super::machine_parallelism() - 1)));
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

    /// Runs every task of `0..tasks`, at most `concurrency` at once (the calling thread
    /// included), and returns when all have finished: `task(range)` runs the tasks of `range`,
    /// each task in exactly one call (a run of consecutive tasks may come in one call, see
    /// [`next_claim`]). Helpers join as `engage` says. A panic in any task is re-raised here, on
    /// the calling thread, once every call of `task` has returned (a call that panicked leaves the
    /// rest of its range undone; the panic reports the whole job as failed).
    pub(crate) fn run(
        &'static self,
        tasks: usize,
        concurrency: usize,
        engage: Engage,
        task: &(dyn Fn(Range<usize>) + Sync),
    ) {
        let helpers = concurrency.min(tasks).saturating_sub(1).min(self.capacity);
        // (More tasks than a u32 counts never come: calls cut work into a few per thread.)
        if helpers == 0 || u32::try_from(tasks).is_err() {
            if tasks > 0 {
                task(0..tasks);
            }
            return;
        }
        let erased: *const (dyn Fn(Range<usize>) + Sync + '_) = task;
        // SAFETY: erasing the lifetime is sound because this function does not return before
        // the job has left the queue and no worker is active in it, so no use of the pointer
        // outlives `task`.
        let task_ref = TaskRef(unsafe {
            std::mem::transmute::<
                *const (dyn Fn(Range<usize>) + Sync + '_),
                *const (dyn Fn(Range<usize>) + Sync + 'static),
            >(erased)
        });
        // Not queued yet: the job is opened (queued with its seats, counted in `opened`) when
        // `engage` says, at once or after some of the caller's own tasks; a job never opened
        // costs no lock.
        let job = Arc::new(Job {
            task: task_ref,
            // Cannot truncate: `run` takes at most u32::MAX tasks (checked there).
            unclaimed: AtomicU64::new(pack(0, tasks as u32)),
            seats: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            opener_cpu: AtomicU32::new(UNKNOWN_CPU),
            woken_at: AtomicU64::new(0),
        });
        let mut joined = match engage {
            Engage::Wake => self.open(&job, helpers, Joined::No, true).0,
            Engage::Open => self.open(&job, helpers, Joined::No, false).0,
            Engage::Measured => Joined::No,
        };
        let start = Instant::now();
        // Read once per call: it moves only as wakes are learnt, or as what was learnt wears off
        // (over 100 or 500 ms).
        let now = self.since_epoch_ns();
        let wake_worth = self.wake_worth_at(now, self.starts_in_stream_at(now));
        // The work left that this job predicted when it woke a sleeping helper, if it did.
        let mut woke_for = None;
        // The calling thread's time in its tasks: its pace, which says how long it would have
        // taken alone ([`wake_failed`]). Until a wake, the caller does nothing else (but open
        // the job), so that is all its time so far; after it, each claim is timed, and only in a
        // job that woke a helper: the others never ask.
        let mut busy = Duration::ZERO;
        let mut done = 0u32;
        let mut claim = 1;
        while let Some(claimed) = job.claim(End::Front, claim) {
            let count = claimed.len() as u32; // at most `tasks`, which fits (checked above)
            let began = woke_for.is_some().then(Instant::now);
            job.run_tasks(claimed);
            if let Some(began) = began {
                busy += began.elapsed();
            }
            done = done.saturating_add(count);
            if joined != Joined::Woken {
                let elapsed = start.elapsed();
                busy = elapsed;
                let predicted = predicted_left(elapsed, done, job.left());
                match (joined, helpers_worth(predicted, wake_worth)) {
                    (Joined::No, Joined::Open) => {
                        joined = self.open(&job, helpers, joined, false).0;
                    }
                    (_, Joined::Woken) => {
                        let woke;
                        (joined, woke) = self.open(&job, helpers, joined, true);
                        if woke {
                            woke_for = Some(predicted);
                        }
                    }
                    _ => {}
                }
            }
            claim = next_claim(joined, self.a_worker_is_awake());
        }
        if joined == Joined::No {
            // Never queued: no worker saw it, and the caller ran every task.
            self.ended_at(self.since_epoch_ns(), Joined::No);
            if job.panicked.load(Ordering::Relaxed) {
                panic!("a gatherkit task panicked");
            }
            return;
        }
        // A worker woken for the job that has not joined by now brought no help: the wake took
        // at least this long.
        self.learn_wake(&job);
        let mut queue = self.lock();
        if let Some(at) = queue.jobs.iter().position(|j| Arc::ptr_eq(j, &job)) {
            queue.jobs.swap_remove(at);
        }
        // No worker joins now (the job left the queue); the ones in it finish their tasks, most
        // often within microseconds of the caller on an even split. Sleeping on the condition
        // variable right away cost a wake-up of the caller (about 10 us on these machines: a
        // 2-thread GatherND of 1 MiB took 31 us where half its 1-thread time is 19 us), so the
        // caller first spins on the count for a bounded time ([`SPIN`]).
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
        self.ended_at(self.since_epoch_ns(), joined);
        if let Some(predicted_left) = woke_for {
            // Cannot truncate: `run` takes at most u32::MAX tasks (checked above).
            let alone = alone_time(busy, done, tasks as u32);
            if wake_failed(alone, start.elapsed()) {
                self.refuse_wakes_below_at(predicted_left, self.since_epoch_ns());
            }
        }
        if job.panicked.load(Ordering::Relaxed) {
            panic!("a gatherkit task panicked on a worker thread");
        }
    }

    /// Opens `job` to `helpers` workers (queues it, when helpers have not `joined` it yet) and,
    /// with `wake`, wakes as many sleeping ones. Returns how far helpers have now joined.
    fn open(
        &'static self,
        job: &Arc<Job>,
        helpers: usize,
        joined: Joined,
        wake: bool,
    ) -> (Joined, bool) {
        self.start_workers(helpers);
        // Asked before the lock is taken (on some systems it is a system call), and again when
        // the job wakes workers after it was opened: the caller may have moved meanwhile.
        if joined == Joined::No || wake {
            job.opener_cpu
                .store(current_cpu().unwrap_or(UNKNOWN_CPU), Ordering::Relaxed);
        }
        let to_wake = {
            let mut queue = self.lock();
            if joined == Joined::No {
                job.seats.store(helpers, Ordering::Relaxed);
                queue.jobs.push(Arc::clone(job));
                self.opened.fetch_add(1, Ordering::Release);
            }
            // Only as many as there are seats left: awake workers may have taken some since the
            // job was opened, and a worker woken for no seat would count as a wake that never
            // helped.
            let to_wake = if wake {
                job.seats
                    .load(Ordering::Relaxed)
                    .min(self.sleeping.load(Ordering::Relaxed))
            } else {
                0
            };
            let chosen = self.choose_sleepers(to_wake);
            // Stamped under the lock, before any woken worker can take the lock and a seat.
            if !chosen.is_empty() {
                job.woken_at
                    .store(self.since_epoch_ns().saturating_add(1), Ordering::Relaxed);
            }
            chosen
        };
        // Steered and woken after the lock is released. Steering takes two system calls per
        // worker ([`Steered`]), which other workers' seats need not wait for. And a worker woken
        // while the caller still holds the lock finds it taken and sleeps again on it, and the
        // caller's unlock must then wake it a second time. Each wake is a system call that, in a
        // virtual machine, sends an interrupt to a halted virtual CPU: measured with a pthread
        // pair on a 2-core Zen 4 VM, signalling inside the lock gave the caller back after 11 us
        // and started the worker after 9.5; outside, 5.5-7.8 and 3.5-5.5 us. Nothing is lost: a
        // chosen worker leaves its wait only once the lock shows it chosen, whenever the
        // notification reaches it, and the job is still there then.
        let woke = !to_wake.is_empty();
        let caller_cpu = job.opener_cpu();
        for slot in to_wake {
            let slot = &self.slots[slot];
            if let (Some(cpu), Some(thread)) = (caller_cpu, slot.thread.get()) {
                let mut steered = lock_ignoring_poison(&slot.steered);
                // One pending at a time: undoing the first gives back the mask from before both.
                if steered.is_none() {
                    *steered = Steered::off(*thread, cpu);
                }
            }
            slot.wake.notify_one();
        }
        if wake {
            (Joined::Woken, woke)
        } else {
            (Joined::Open, false)
        }
    }

    /// Chooses `count` sleeping workers to wake (fewer if fewer sleep), under the queue lock:
    /// each is marked chosen (counted out of `sleeping`). Returns their slots, to be kept off the
    /// caller's CPU where the system allows ([`Steered`]) and notified once the lock is
    /// released.
    ///
    /// A guest kernel in a virtual machine packs a woken thread onto the waker's own CPU to leave
    /// the idle virtual CPU halted, and does not let it preempt the waker: the worker then waits
    /// for the caller's time slice to end, or for the load balancer, before it runs at all. On a
    /// 2-core Zen 4 virtual machine, a worker woken after the process had idled 10 ms or more
    /// took its seat 250-750 µs after the wake (a futex wake between two plain threads there:
    /// 15 µs), so calls of up to a millisecond gained nothing from it: GatherElements of [64, 64,
    /// 64] f32 along axis 0 took 0.97-1.07x its 1-thread time at 2 threads after 10 ms of idling
    /// and 0.99-1.06x after 100 ms (0.41x back to back, 0.56-1.02x after 3 ms). Kept off the
    /// caller's CPU it wakes on the idle one: 0.69-0.78x after 10 ms, 0.72-0.88x after 100 ms,
    /// 0.60-0.71x after 3 ms.
    fn choose_sleepers(&self, count: usize) -> Vec<usize> {
        let mut chosen = Vec::new();
        if count == 0 {
            return chosen;
        }
        for (index, slot) in self.slots.iter().enumerate() {
            if chosen.len() == count {
                break;
            }
            if !slot.asleep.load(Ordering::Relaxed) {
                continue;
            }
            slot.asleep.store(false, Ordering::Relaxed);
            self.sleeping.fetch_sub(1, Ordering::Relaxed);
            chosen.push(index);
        }
        chosen
    }

    /// Predicted work left from which a job wakes sleeping helpers at `now` (nanoseconds since
    /// the epoch): [`WAKE_WORTH`], twice what wakes have recently taken to bring help, or what
    /// failed wakes refuse ([`next_wake_refusal`]), whichever is longest; but [`WAKE_WORTH`] for
    /// a job `in_stream`, whose wake the calls after it share ([`STREAM_GAP`]).
    fn wake_worth_at(&self, now: u64, in_stream: bool) -> Duration {
        if in_stream {
            return WAKE_WORTH;
        }
        WAKE_WORTH
            .max(self.wake_to_help_at(now).saturating_mul(2))
            .max(self.wake_refusal_at(now))
    }

    /// Counts a job that starts at `now` (nanoseconds since the epoch) into the stream of calls
    /// it comes in, and says whether [`STREAM_CALLS`] or more came before it
    /// ([`next_stream_length`]). Callers on several threads share the counts: a hint.
    fn starts_in_stream_at(&self, now: u64) -> bool {
        let gap = match self.last_end.load(Ordering::Relaxed) {
            0 => None,
            end => Some(Duration::from_nanos(now.saturating_sub(end - 1))),
        };
        let before = next_stream_length(self.stream_length.load(Ordering::Relaxed), gap);
        self.stream_length.store(before, Ordering::Relaxed);
        before >= STREAM_CALLS
    }

    /// Notes that a job that helpers `joined` ended at `now` (nanoseconds since the epoch) on
    /// its calling thread. One that called for no helper ends the stream it came in: the worker
    /// a wake brought may be asleep again by the next call that wants one, and a stream's wake
    /// pays only where the calls after it find the worker awake.
    fn ended_at(&self, now: u64, joined: Joined) {
        let end = if joined == Joined::No {
            0
        } else {
            now.saturating_add(1)
        };
        self.last_end.store(end, Ordering::Relaxed);
    }

    /// The work left below which jobs do not wake helpers at `now` (nanoseconds since the
    /// epoch): what failed wakes taught ([`next_wake_refusal`]), worn off since
    /// ([`decayed_wake_refusal`]).
    fn wake_refusal_at(&self, now: u64) -> Duration {
        let refusal = Duration::from_nanos(self.wake_refusal_ns.load(Ordering::Relaxed));
        let since = now.saturating_sub(self.wake_refused_at.load(Ordering::Relaxed));
        decayed_wake_refusal(refusal, Duration::from_nanos(since))
    }

    /// Whether some worker is not asleep: looking for work, or busy with another call's job
    /// (a hint: either may change right after; a worker that failed to start counts as
    /// neither).
    fn a_worker_is_awake(&self) -> bool {
        self.sleeping.load(Ordering::Relaxed) < self.started.load(Ordering::Relaxed)
    }

    /// Tells the pool that a wake for a job with `predicted_left` of work left cost more than it
    /// saved ([`wake_failed`]), at `now` (nanoseconds since the epoch).
    fn refuse_wakes_below_at(&self, predicted_left: Duration, now: u64) {
        let next = next_wake_refusal(self.wake_refusal_at(now), predicted_left);
        // A race with another job's update loses one of them: a hint either way.
        self.wake_refusal_ns.store(
            u64::try_from(next.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        self.wake_refused_at.store(now, Ordering::Relaxed);
    }

    /// What a wake is taken to bring help in at `now` (nanoseconds since the epoch;
    /// [`decayed_wake_to_help`]).
    fn wake_to_help_at(&self, now: u64) -> Duration {
        let estimate = Duration::from_nanos(self.wake_to_help_ns.load(Ordering::Relaxed));
        let learnt_at = self.wake_learnt_at.load(Ordering::Relaxed);
        decayed_wake_to_help(
            estimate,
            Duration::from_nanos(now.saturating_sub(learnt_at)),
        )
    }

    /// Tells the pool what the wake for `job` took, once per wake: from the wake until now.
    fn learn_wake(&self, job: &Job) {
        let woken_at = job.woken_at.swap(0, Ordering::Relaxed);
        if woken_at == 0 {
            return;
        }
        let now = self.since_epoch_ns();
        let took = Duration::from_nanos(now.saturating_sub(woken_at - 1));
        let next = next_wake_to_help(self.wake_to_help_at(now), took);
        // A race with another job's update loses one of them: a hint either way.
        self.wake_to_help_ns.store(
            u64::try_from(next.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        self.wake_learnt_at.store(now, Ordering::Relaxed);
    }

    fn since_epoch_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        lock_ignoring_poison(&self.queue)
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
            // A free slot exists: each started worker holds one, each failed start gave its own
            // back, and fewer than `capacity` were counted before this one. Not the count itself
            // as an index: a start that fails after a later one succeeded gives back a number
            // that the next start would then share with a running worker.
            let Some(index) = self.slots.iter().position(|slot| {
                slot.taken
                    .compare_exchange(false, true, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            }) else {
                self.started.fetch_sub(1, Ordering::Relaxed);
                return;
            };
            let spawned = std::thread::Builder::new()
                .name(format!("gatherkit-{index}"))
                .stack_size(WORKER_STACK)
                .spawn(move || self.worker(index));
            if spawned.is_err() {
                // Not now: the caller does the work; a later call may try again.
                self.slots[index].taken.store(false, Ordering::Relaxed);
                self.started.fetch_sub(1, Ordering::Relaxed);
                return;
            }
            started += 1;
        }
    }

    /// The loop of the worker that holds slot `index`.
    fn worker(&self, index: usize) {
        // Cannot panic: `index` is a slot's (`start_workers`).
        let slot = &self.slots[index];
        if let Some(thread) = ThreadId::current() {
            // The only set: each worker has a slot of its own.
            let _ = slot.thread.set(thread);
        }
        loop {
            let (job, slept) = self.next_job(slot);
            if slept {
                self.learn_wake(&job);
            }
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

    /// Waits for a job with a free seat and takes the seat; but first gives way to the job's
    /// calling thread if the scheduler put this worker on its CPU ([`gives_way`]). Also says
    /// whether the worker slept meanwhile.
    fn next_job(&self, slot: &Slot) -> (Arc<Job>, bool) {
        let mut idle_since = Instant::now();
        let mut yields = 0;
        let mut slept = false;
        let mut queue = self.lock();
        loop {
            if let Some(job) = queue.jobs.iter().find(|j| j.wants_helpers()) {
                if gives_way(job.opener_cpu(), yields, current_cpu) {
                    yields += 1;
                    drop(queue);
                    std::thread::yield_now();
                    // Then it watches for the next job for a whole window, without spinning:
                    // back asleep, it would be woken onto the caller's CPU again by the next
                    // call, while watching it stays runnable where the system can move it.
                    idle_since = Instant::now().checked_sub(SPIN).unwrap_or(idle_since);
                    queue = self.lock();
                    continue;
                }
                job.seats.fetch_sub(1, Ordering::Relaxed);
                job.active.fetch_add(1, Ordering::Relaxed);
                return (Arc::clone(job), slept);
            }
            // Nothing here for this worker; a job opened from now on bumps `opened` (under the
            // lock held here). The job just finished may still be queued, its caller running
            // its last task: watching for a change of the count, not for an empty queue, keeps
            // the worker looking for the next call rather than asleep at once.
            let seen = self.opened.load(Ordering::Relaxed);
            if idle_watch(idle_since.elapsed()) != Idle::Sleep {
                drop(queue);
                self.watch_for_work(idle_since, seen);
                queue = self.lock();
                continue;
            }
            self.sleeping.fetch_add(1, Ordering::Relaxed);
            slot.asleep.store(true, Ordering::Relaxed);
            slept = true;
            // Until a caller chooses this worker (it counts it out of `sleeping` then), not on a
            // spurious wake-up.
            while slot.asleep.load(Ordering::Relaxed) {
                queue = slot
                    .wake
                    .wait(queue)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            // Undone outside the lock (two system calls), before the worker looks for its seat:
            // it must not go back to sleep with a steer pending, or the next one would take the
            // narrowed mask for the one to give back.
            let steered = lock_ignoring_poison(&slot.steered).take();
            if let Some(steered) = steered {
                drop(queue);
                steered.undo();
                queue = self.lock();
            }
        }
    }

    /// Watches, without the lock, for a job opened after the `seen`-th, as [`idle_watch`] says
    /// for the time since `idle_since`; returns when one is or when it is time to sleep.
    fn watch_for_work(&self, idle_since: Instant, seen: u64) {
        while self.opened.load(Ordering::Acquire) == seen {
            match idle_watch(idle_since.elapsed()) {
                Idle::Spin => spin_a_little(),
                Idle::Yield => std::thread::yield_now(),
                Idle::Sleep => return,
            }
        }
    }
}

/// Locks `mutex`, whose data stays consistent even if a holder panicked (no code panics while
/// holding the pool's locks; recover anyway rather than cascade).
fn lock_ignoring_poison<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Spins while `busy()` holds, until `until` at the latest: the bounded wait of a caller
/// watching its helpers finish.
fn spin_while(until: Instant, busy: impl Fn() -> bool) {
    while busy() && Instant::now() < until {
        spin_a_little();
    }
}

/// A few spin-loop hints between two looks at the clock and the watched state.
fn spin_a_little() {
    for _ in 0..64 {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job of `tasks` tasks that do nothing, not opened.
    fn job_of(tasks: u32) -> Job {
        Job {
            task: TaskRef(&|_: Range<usize>| {}),
            unclaimed: AtomicU64::new(pack(0, tasks)),
            seats: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            opener_cpu: AtomicU32::new(UNKNOWN_CPU),
            woken_at: AtomicU64::new(0),
        }
    }

    #[test]
    fn helpers_join_when_the_callers_pace_predicts_enough_work_left() {
        let us = Duration::from_micros;
        // 10 us per task so far: 3 tasks left are 30 us (alone), 4 are 40 (open to an awake
        // helper), 6 are 60 (wake one).
        let worth =
            |elapsed, done, left| helpers_worth(predicted_left(elapsed, done, left), WAKE_WORTH);
        assert_eq!(worth(us(10), 1, 3), Joined::No);
        assert_eq!(worth(us(10), 1, 4), Joined::Open);
        assert_eq!(worth(us(20), 2, 5), Joined::Open);
        assert_eq!(worth(us(20), 2, 6), Joined::Woken);
        // Where wakes were learnt to take 100 us, 6 tasks of 10 us only open the job.
        assert_eq!(
            helpers_worth(predicted_left(us(20), 2, 6), us(200)),
            Joined::Open
        );
        assert_eq!(
            helpers_worth(predicted_left(us(20), 2, 20), us(200)),
            Joined::Woken
        );
        // Nothing left, or nothing done yet, predicts nothing; huge counts saturate.
        assert_eq!(worth(us(1000), 3, 0), Joined::No);
        assert_eq!(worth(us(0), 0, 100), Joined::No);
        assert_eq!(worth(us(1), 1, usize::MAX), Joined::Woken);
    }

    #[test]
    fn the_pool_learns_what_wakes_take_and_wakes_only_for_twice_that() {
        let us = Duration::from_micros;
        // A quarter of the way to each wake's time, either way; one wake counts 1 ms at most.
        assert_eq!(next_wake_to_help(us(30), us(130)), us(55));
        assert_eq!(next_wake_to_help(us(130), us(30)), us(105));
        assert_eq!(
            next_wake_to_help(us(30), Duration::MAX),
            us(30) + us(970) / 4
        );
        // Wakes that kept taking 150 us: within a dozen, the estimate is near them.
        let mut estimate = WAKE_TO_HELP_FIRST_GUESS;
        for _ in 0..12 {
            estimate = next_wake_to_help(estimate, us(150));
        }
        assert!(estimate > us(145) && estimate <= us(150), "{estimate:?}");

        let pool = Pool::new(0, 1);
        assert_eq!(pool.wake_worth_at(pool.since_epoch_ns(), false), WAKE_WORTH);
        // A job woken 400 us ago whose worker never joined: the pool learns the wake took that
        // long (at least), once.
        let job = job_of(0);
        std::thread::sleep(us(400));
        job.woken_at
            .store(pool.since_epoch_ns() - 399_999, Ordering::Relaxed);
        pool.learn_wake(&job);
        let learnt = pool.wake_worth_at(pool.since_epoch_ns(), false);
        // 30 + (>= 400 - 30) / 4 >= 122.5 us, twice that >= 245 us.
        assert!(learnt >= us(245), "{learnt:?}");
        let raw = pool.wake_to_help_ns.load(Ordering::Relaxed);
        pool.learn_wake(&job);
        assert_eq!(
            pool.wake_to_help_ns.load(Ordering::Relaxed),
            raw,
            "one wake, learnt once"
        );
    }

    #[test]
    fn a_wake_fails_when_the_job_took_as_long_as_its_caller_alone_would_have() {
        let us = Duration::from_micros;
        assert!(wake_failed(us(135), us(205)));
        assert!(wake_failed(us(135), us(135)));
        assert!(!wake_failed(us(135), us(90)));
        // The caller ran 4 of 16 tasks in 40 us: alone, all 16 would have taken 160 us.
        assert_eq!(alone_time(us(40), 4, 16), us(160));
        assert_eq!(alone_time(us(40), 16, 16), us(40));
        assert_eq!(alone_time(us(40), 0, 16), us(640), "no division by zero");
        assert_eq!(alone_time(Duration::MAX, 1, 2), Duration::MAX, "saturates");
    }

    #[test]
    fn a_failed_wake_refuses_wakes_for_twice_its_work_left_and_wears_off() {
        let us = Duration::from_micros;
        // Twice the failed job's work left, never below what already stands, at most the cap.
        assert_eq!(next_wake_refusal(Duration::ZERO, us(128)), us(256));
        assert_eq!(next_wake_refusal(us(400), us(128)), us(400));
        assert_eq!(next_wake_refusal(us(200), us(120)), us(240));
        assert_eq!(next_wake_refusal(us(256), us(256)), WAKE_REFUSAL_MAX);
        assert_eq!(
            next_wake_refusal(Duration::ZERO, Duration::MAX),
            WAKE_REFUSAL_MAX
        );
        // Halved every half-life; nothing left after 32 of them.
        let half_life = WAKE_REFUSAL_HALF_LIFE;
        assert_eq!(decayed_wake_refusal(us(512), Duration::ZERO), us(512));
        assert_eq!(decayed_wake_refusal(us(512), half_life - us(1)), us(512));
        assert_eq!(decayed_wake_refusal(us(512), half_life), us(256));
        assert_eq!(decayed_wake_refusal(us(512), half_life * 3), us(64));
        assert_eq!(
            decayed_wake_refusal(us(512), half_life * 32),
            Duration::ZERO
        );
        assert_eq!(decayed_wake_refusal(us(512), Duration::MAX), Duration::ZERO);
    }

    #[test]
    fn after_a_wake_that_cost_more_than_it_saved_jobs_of_its_size_only_open() {
        let us = Duration::from_micros;
        let ms = |n: u64| n * 1_000_000;
        let pool = Pool::new(0, 1);
        let worth_at = |now| pool.wake_worth_at(now, false);
        assert_eq!(worth_at(ms(1)), WAKE_WORTH);
        // 16 tasks of 8 us: 120 us left after the first wakes a helper on a new pool.
        let left_after_one = predicted_left(us(8), 1, 15);
        assert_eq!(
            helpers_worth(left_after_one, worth_at(ms(1))),
            Joined::Woken
        );
        // That wake cost more than it saved: such a job now only opens to awake helpers, while
        // one with twice as much left still wakes them.
        pool.refuse_wakes_below_at(left_after_one, ms(1));
        assert_eq!(worth_at(ms(1)), us(240));
        assert_eq!(helpers_worth(left_after_one, worth_at(ms(1))), Joined::Open);
        let twice_as_much = predicted_left(us(8), 1, 30);
        assert_eq!(helpers_worth(twice_as_much, worth_at(ms(1))), Joined::Woken);
        // Half a second later the refusal has halved, and such a job wakes helpers again.
        assert_eq!(worth_at(ms(501)), us(120));
        assert_eq!(
            helpers_worth(left_after_one, worth_at(ms(501))),
            Joined::Woken
        );
        // A failure for a larger job sets a larger refusal, from its own time on.
        pool.refuse_wakes_below_at(us(248), ms(2));
        assert_eq!(worth_at(ms(2)), us(496));
        assert_eq!(worth_at(ms(502)), us(248));
    }

    #[test]
    fn calls_within_a_stream_gap_of_the_one_before_make_a_stream() {
        let us = Duration::from_micros;
        assert_eq!(next_stream_length(0, None), 0, "the first job of a pool");
        assert_eq!(next_stream_length(0, Some(us(10))), 1);
        assert_eq!(next_stream_length(1, Some(STREAM_GAP - us(1))), 2);
        assert_eq!(
            next_stream_length(7, Some(STREAM_GAP)),
            0,
            "a pause ends it"
        );
        assert_eq!(next_stream_length(u32::MAX, Some(us(1))), u32::MAX);
    }

    #[test]
    fn from_the_third_call_of_a_stream_a_job_wakes_helpers_whatever_failed_wakes_refused() {
        let us = Duration::from_micros;
        // Times since the pool's epoch, in nanoseconds, written in microseconds.
        let at = |micros: u64| micros * 1_000;
        let pool = Pool::new(0, 1);
        // A failed wake for a job with 250 us left: wakes are refused below 500 us.
        pool.refuse_wakes_below_at(us(250), at(1_000));
        let refused = WAKE_REFUSAL_MAX;
        let starts = |micros| {
            let now = at(micros);
            let in_stream = pool.starts_in_stream_at(now);
            (in_stream, pool.wake_worth_at(now, in_stream))
        };
        // After a pause, a call and the one right after it (a warm-up and its timed twin) go
        // by what the pool learnt; the third in a row wakes by the base rule.
        assert_eq!(starts(10_000), (false, refused));
        pool.ended_at(at(10_200), Joined::Open);
        assert_eq!(starts(10_300), (false, refused));
        pool.ended_at(at(10_500), Joined::Open);
        assert_eq!(starts(11_400), (true, WAKE_WORTH));
        pool.ended_at(at(11_600), Joined::Woken);
        assert_eq!(starts(12_500), (true, WAKE_WORTH));
        pool.ended_at(at(12_700), Joined::Open);
        // A pause as long as the gap ends the stream: the refusal holds again.
        let gap = u64::try_from(STREAM_GAP.as_micros()).unwrap();
        let after_pause = 12_700 + gap;
        assert_eq!(starts(after_pause), (false, refused));
        pool.ended_at(at(after_pause + 100), Joined::Woken);
        assert_eq!(starts(after_pause + 200), (false, refused));
        pool.ended_at(at(after_pause + 300), Joined::Open);
        assert_eq!(starts(after_pause + 400), (true, WAKE_WORTH));
        // So does a job that called for no helper, however soon the next comes.
        pool.ended_at(at(after_pause + 420), Joined::No);
        assert_eq!(starts(after_pause + 430), (false, refused));
        pool.ended_at(at(after_pause + 500), Joined::Open);
        assert_eq!(starts(after_pause + 510), (false, refused));
        // A 150 us job that predicts 140 us left after its first task wakes in a stream only.
        let left = predicted_left(us(10), 1, 14);
        assert_eq!(helpers_worth(left, refused), Joined::Open);
        assert_eq!(helpers_worth(left, WAKE_WORTH), Joined::Woken);
    }

    #[test]
    fn a_job_wakes_workers_only_for_the_seats_left() {
        // A pool of its own whose one worker counts as started and asleep: `open` starts no
        // thread, and its wake reaches no one.
        let pool: &'static Pool = Box::leak(Box::new(Pool::new(0, 1)));
        pool.started.store(1, Ordering::Relaxed);
        pool.sleeping.store(1, Ordering::Relaxed);
        pool.slots[0].asleep.store(true, Ordering::Relaxed);
        let job = Arc::new(job_of(4));
        // Opened before; an awake worker has since taken its one seat. Waking the sleeper would
        // wake it for nothing, and count as a wake that never helped.
        job.seats.store(0, Ordering::Relaxed);
        assert_eq!(
            pool.open(&job, 1, Joined::Open, true),
            (Joined::Woken, false),
            "no wake for no seat"
        );
        assert_eq!(job.woken_at.load(Ordering::Relaxed), 0);
        job.seats.store(1, Ordering::Relaxed);
        assert_eq!(
            pool.open(&job, 1, Joined::Open, true),
            (Joined::Woken, true)
        );
        assert_ne!(
            job.woken_at.load(Ordering::Relaxed),
            0,
            "a wake for the seat left"
        );
        // The sleeper was chosen: counted out of `sleeping` by the caller, so that no other
        // call chooses it again before it wakes.
        assert!(!pool.slots[0].asleep.load(Ordering::Relaxed));
        assert_eq!(pool.sleeping.load(Ordering::Relaxed), 0);
        let other = Arc::new(job_of(4));
        assert_eq!(
            pool.open(&other, 1, Joined::No, true),
            (Joined::Woken, false),
            "no sleeper left to wake"
        );
    }

    #[test]
    fn a_learnt_slow_wake_falls_back_to_the_first_guess_while_no_wake_tells_otherwise() {
        let ms = Duration::from_millis;
        let first = WAKE_TO_HELP_FIRST_GUESS;
        let high = first + Duration::from_micros(400);
        assert_eq!(decayed_wake_to_help(high, ms(0)), high);
        assert_eq!(decayed_wake_to_help(high, ms(99)), high);
        assert_eq!(
            decayed_wake_to_help(high, ms(100)),
            first + Duration::from_micros(200)
        );
        assert_eq!(
            decayed_wake_to_help(high, ms(250)),
            first + Duration::from_micros(100)
        );
        assert_eq!(decayed_wake_to_help(high, ms(100 * 40)), first);
        assert_eq!(decayed_wake_to_help(high, Duration::MAX), first);
        // Estimates at or below the first guess stay as they are.
        assert_eq!(decayed_wake_to_help(first, ms(500)), first);
        let low = Duration::from_micros(10);
        assert_eq!(decayed_wake_to_help(low, ms(500)), low);
    }

    #[test]
    fn an_idle_worker_spins_then_yields_its_core_then_sleeps() {
        let us = Duration::from_micros;
        assert_eq!(idle_watch(us(0)), Idle::Spin);
        assert_eq!(idle_watch(us(49)), Idle::Spin);
        assert_eq!(idle_watch(us(50)), Idle::Yield);
        assert_eq!(idle_watch(us(1999)), Idle::Yield);
        assert_eq!(idle_watch(us(2000)), Idle::Sleep);
        assert_eq!(idle_watch(Duration::MAX), Idle::Sleep);
    }

    /// A worker that finds nothing to do while the job it helped is still queued (its caller
    /// running the last task) keeps watching for the next job for the whole window; it used to
    /// stop watching at once because a job was queued, and so slept through the next call.
    #[test]
    fn an_idle_worker_watches_for_a_new_job_not_for_an_empty_queue() {
        let pool = Pool::new(0, 1);
        pool.opened.store(1, Ordering::Relaxed);
        let idle_since = Instant::now();
        pool.watch_for_work(idle_since, 1);
        assert!(idle_since.elapsed() >= IDLE_WATCH);
    }

    #[test]
    fn a_measured_job_of_long_tasks_gets_a_helper_and_runs_every_task_once() {
        // 40 tasks of 2 ms: after the first, 78 ms are predicted, so a worker is woken (or
        // started) and takes some of them.
        let caller = std::thread::current().id();
        let ran: Vec<Mutex<Option<std::thread::ThreadId>>> =
            (0..40).map(|_| Mutex::new(None)).collect();
        Pool::get().run(40, 2, Engage::Measured, &|claimed| {
            for i in claimed {
                std::thread::sleep(Duration::from_millis(2));
                let mut slot = ran[i].lock().unwrap();
                assert!(slot.is_none(), "task {i} ran twice");
                *slot = Some(std::thread::current().id());
            }
        });
        let ids: Vec<_> = ran
            .iter()
            .map(|r| r.lock().unwrap().expect("ran"))
            .collect();
        if Pool::get().capacity > 0 {
            assert!(ids.iter().any(|&id| id != caller), "no helper joined");
        }
        assert_eq!(ids[0], caller, "the caller takes the first task");
    }

    #[test]
    fn the_caller_claims_from_the_front_and_helpers_from_the_back() {
        let job = job_of(5);
        assert_eq!(job.claim(End::Front, 1), Some(0..1));
        assert_eq!(job.claim(End::Back, 1), Some(4..5));
        assert_eq!(job.claim(End::Back, 1), Some(3..4));
        assert_eq!(job.left(), 2);
        assert_eq!(job.claim(End::Front, 1), Some(1..2));
        assert_eq!(job.claim(End::Front, 1), Some(2..3));
        assert_eq!(
            (job.claim(End::Front, 1), job.claim(End::Back, 1)),
            (None, None)
        );
        assert_eq!(job.left(), 0);
    }

    #[test]
    fn a_claim_of_several_tasks_takes_at_most_what_is_left() {
        let job = job_of(7);
        assert_eq!(job.claim(End::Front, 2), Some(0..2));
        assert_eq!(job.claim(End::Back, 1), Some(6..7));
        assert_eq!(
            job.claim(End::Front, 0),
            Some(2..3),
            "a claim takes at least one"
        );
        assert_eq!(job.claim(End::Front, 8), Some(3..6));
        assert_eq!(job.claim(End::Front, 8), None);
    }

    #[test]
    fn the_caller_claims_the_rest_at_once_only_while_no_helper_can_join() {
        for awake in [true, false] {
            let job = job_of(9);
            assert_eq!(job.claim(End::Front, 1), Some(0..1));
            assert_eq!(
                job.claim(End::Front, next_claim(Joined::Woken, awake)),
                Some(1..2)
            );
            assert_eq!(job.claim(End::Back, 1), Some(8..9));
            assert_eq!(
                job.claim(End::Front, next_claim(Joined::No, awake)),
                Some(2..8)
            );
            assert_eq!(job.left(), 0);
        }
        // Open to awake helpers: one at a time while one is awake, the rest when none is.
        let job = job_of(9);
        assert_eq!(
            job.claim(End::Front, next_claim(Joined::Open, true)),
            Some(0..1)
        );
        assert_eq!(
            job.claim(End::Front, next_claim(Joined::Open, false)),
            Some(1..9)
        );
    }

    #[test]
    fn a_worker_is_awake_while_fewer_sleep_than_were_started() {
        let pool = Pool::new(0, 2);
        assert!(!pool.a_worker_is_awake(), "none started");
        pool.started.store(2, Ordering::Relaxed);
        pool.sleeping.store(1, Ordering::Relaxed);
        assert!(pool.a_worker_is_awake());
        pool.sleeping.store(2, Ordering::Relaxed);
        assert!(!pool.a_worker_is_awake());
    }
}
