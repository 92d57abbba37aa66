//! Where a call's parallel work runs: on gatherkit's own persistent pool ([`pool`]) or on the
//! host's pool through a parallel-for it hands over ([`host`]), and how many tasks a call gets.
//!
//! Kernels describe their work as `n` independent tasks (`kernels::parallel` splits outputs into
//! them); this module only runs tasks, so its code is compiled once rather than once per kernel.

mod host;
mod placement;
mod pool;

pub(crate) use host::HostFault;
pub use host::{ParallelFor, ParallelForFn, TaskFn};

use std::ops::Range;
use std::sync::OnceLock;

/// From this many bytes moved, a call's helpers join at once when they are awake (still looking
/// for work after their last task, see `pool::IDLE_WATCH`): below it, the hand-over and the
/// chunk's cache warm-up cost more than they save (10-30 µs of copying per MiB on Zen 5). A host's pool is taken to be awake.
const OPEN_AT_ONCE_BYTES: usize = 2 << 20;

/// From this many bytes moved, sleeping helpers are woken at once. Waking costs the calling
/// thread a system call, and the woken worker starts late: on the 2-core Zen 5 virtual machines
/// here the caller began its own task 9 µs into the call and the worker 27 µs in, where an awake
/// worker started within 1 µs. From 4 MiB (ge-axis0 of 1 MiB data, 160 µs at one task) a second
/// thread pays for the wake on every machine measured; below, the pool wakes one only when the
/// call's first chunks show that the rest takes long enough (see [`Engage`]).
const WAKE_AT_ONCE_BYTES: usize = 4 << 20;

/// Work is cut into chunks of at least this many bytes moved, at most [`CHUNKS_PER_THREAD`] per
/// thread, from [`MIN_SPLIT_BYTES`] on: what a call moves per byte varies 20-fold between kernels,
/// shapes and machines (30-550 µs per counted MiB at one task on an Intel Xeon: a 3 MB Gather of
/// 1800-byte slices took 212 µs, the counted bytes of a Zen 5 copy 30 µs), so below
/// [`WAKE_AT_ONCE_BYTES`] the first chunks' time, not the byte count, decides whether helpers
/// join. The sooner the first chunk ends, the sooner that is known: on the Xeon, chunks of 128
/// KiB (8 per thread) against 256 KiB (4) took the sweep's 2-thread geo-mean over ONNX Runtime
/// from 2.25x to 2.34x (seed 128; its worst configuration 0.46x -> 0.54x) and kept seed 125's
/// (1.96x, 1.97x).
const CHUNK_BYTES: usize = 128 << 10;

/// Work under this many bytes moved stays on the calling thread, unchunked: cut into chunks, a
/// 256 KiB GatherND or Gather (12-25 µs) took 1.06-1.09x its 1-thread time at 2 threads, and a
/// GatherND of 105 slices of 6968 bytes (731 KB, 27 µs) 1.04-1.08x, while such calls are too
/// short for their first chunk's time to ever call a helper.
const MIN_SPLIT_BYTES: usize = 1 << 20;

/// Chunks per thread at most: a helper that joins late still finds work, and the calling thread
/// never waits long for the chunk a helper took last.
const CHUNKS_PER_THREAD: usize = 8;

/// The machine's available parallelism, asked once per process: the question reads the
/// scheduler affinity and cgroup limits, too slow for every call (and the answer is what the pool
/// was sized by).
pub(crate) fn machine_parallelism() -> usize {
    static PARALLELISM: OnceLock<usize> = OnceLock::new();
    *PARALLELISM.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// How a call runs its work: `num_threads` from the options and where tasks run. The number of
/// tasks offered is resolved only for work large enough to split (see [`ThreadBudget::parallel`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ThreadBudget {
    requested: usize,
    host: Option<ParallelFor>,
}

impl ThreadBudget {
    /// `requested` as in `Options::num_threads` (0 is the machine's available parallelism, or
    /// the host's concurrency when it hands over a parallel-for).
    pub(crate) fn new(requested: usize, host: Option<ParallelFor>) -> ThreadBudget {
        ThreadBudget { requested, host }
    }

    /// How to split `units` units of work moving `bytes_per_unit` bytes each: into chunks of
    /// [`CHUNK_BYTES`] or more, and when helpers join ([`Engage`]).
    ///
    /// Work that fits one task, or a budget of one thread, never asks how many cores the machine
    /// has: the first such question in a process reads the affinity mask and cgroup files, on
    /// about 10 KiB of stack, and the README promises calls that start no thread at most 4 KiB.
    ///
    /// A host's pool gets work from [`OPEN_AT_ONCE_BYTES`] on, all of it at once: gatherkit
    /// cannot see its threads, and a host that hands over its pool usually keeps it busy.
    pub(crate) fn parallel(&self, units: usize, bytes_per_unit: usize) -> Parallel {
        let bytes = units.saturating_mul(bytes_per_unit.max(1));
        let min = if self.host.is_some() {
            OPEN_AT_ONCE_BYTES
        } else {
            MIN_SPLIT_BYTES
        };
        if bytes < min || units < 2 || self.requested == 1 {
            return Parallel::inline(self.host);
        }
        let offered = match self.host {
            Some(host) => host.concurrency(),
            None => machine_parallelism(),
        };
        let max = match self.requested {
            0 => offered,
            n => n.min(offered),
        };
        if max <= 1 {
            return Parallel::inline(self.host);
        }
        let engage = if bytes >= WAKE_AT_ONCE_BYTES {
            Engage::Wake
        } else if bytes >= OPEN_AT_ONCE_BYTES {
            Engage::Open
        } else {
            Engage::Measured
        };
        Parallel {
            tasks: (bytes / CHUNK_BYTES)
                .clamp(1, units)
                .min(max.saturating_mul(CHUNKS_PER_THREAD)),
            max,
            host: self.host,
            engage,
        }
    }
}

/// The tasks a kernel's work (`Kernel::work`: units and bytes per unit) is cut into with two
/// threads offered, and when helpers join: what the kernels' split pins assert.
#[cfg(test)]
pub(crate) fn split_at_two_threads((units, bytes_per_unit): (usize, usize)) -> (usize, Engage) {
    let par = ThreadBudget::new(2, None).parallel(units, bytes_per_unit);
    (par.tasks, par.engage)
}

/// When a call's helpers join its chunks on gatherkit's own pool (a host's pool runs them all
/// as it sees fit). Whatever joins, the chunks and so the results are the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engage {
    /// Once the calling thread's first chunks show the rest will take long enough: awake helpers
    /// from [`pool::HELP_WORTH`] of predicted work left, sleeping ones woken from
    /// [`pool::WAKE_WORTH`], twice what wakes have recently taken to bring help, or what wakes
    /// that cost more than they saved refuse, whichever is longest.
    Measured,
    /// Awake helpers at once, sleeping ones woken as for `Measured`.
    Open,
    /// At once, sleeping helpers woken.
    Wake,
}

/// One call's split: how many tasks its work is cut into, and where they run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parallel {
    tasks: usize,
    /// The most tasks that run at once.
    max: usize,
    host: Option<ParallelFor>,
    engage: Engage,
}

impl Parallel {
    /// One task, on the calling thread.
    fn inline(host: Option<ParallelFor>) -> Parallel {
        Parallel {
            tasks: 1,
            max: 1,
            host,
            engage: Engage::Measured,
        }
    }

    /// The most tasks that run at once: kernels whose tasks each pay a share of the whole (a
    /// scatter's scan of every target) count what runs in parallel by it, not by the chunks.
    pub(crate) fn concurrency(&self) -> usize {
        self.max
    }

    /// The number of tasks the work should be cut into.
    pub(crate) fn tasks(&self) -> usize {
        self.tasks
    }

    /// Whether the work may run on more than one core at once: cut into several tasks, with a
    /// budget of more than one. (What decides whether an output streams on some cores:
    /// `stream::streams_output`.)
    pub(crate) fn shared(&self) -> bool {
        self.tasks > 1 && self.max > 1
    }

    /// Runs every task of `0..tasks` (any number; as many at once as the budget allows) and
    /// returns when all have finished: `task(range)` runs the tasks of `range`, each task in
    /// exactly one call, where a call may hold a run of consecutive tasks (the calling thread on
    /// gatherkit's pool claims several at once while no helper is on the job). Everything runs
    /// inline, in one call, when the budget is one thread or there is one task; a host's pool
    /// gets the tasks one per call.
    pub(crate) fn run(&self, tasks: usize, task: &(dyn Fn(Range<usize>) + Sync)) {
        if tasks <= 1 || self.max <= 1 {
            if tasks > 0 {
                task(0..tasks);
            }
            return;
        }
        match self.host {
            Some(host) => run_on_host(host, tasks, task),
            None => run_on_pool(tasks, self.max, self.engage, task),
        }
    }
}

// The two ways out of `Parallel::run` are kept out of line: inlined, the pool's frame sat in
// `run`'s below every host task (312 bytes), and a host call must keep within the README's 4 KiB
// of stack (measured by c-tests/test_small_stack.c).
#[inline(never)]
fn run_on_host(host: ParallelFor, tasks: usize, task: &(dyn Fn(Range<usize>) + Sync)) {
    host.run(tasks, task);
}

#[inline(never)]
fn run_on_pool(tasks: usize, max: usize, engage: Engage, task: &(dyn Fn(Range<usize>) + Sync)) {
    pool::Pool::get().run(tasks, max, engage, task);
}

/// A host's parallel-for that runs every task in order on the calling thread.
#[cfg(test)]
unsafe extern "C" fn serial_host(
    _: *mut std::ffi::c_void,
    n: usize,
    task: TaskFn,
    ctx: *mut std::ffi::c_void,
) {
    for i in 0..n {
        // SAFETY: the task and context come from gatherkit for this call.
        unsafe { task(ctx, i) };
    }
}

/// A budget whose host offers `concurrency` but runs every task on the calling thread: calls
/// split, and are shared (`Parallel::shared`), as if that many cores took them.
#[cfg(test)]
pub(crate) fn serial_host_budget(concurrency: usize) -> ThreadBudget {
    // SAFETY: `serial_host` runs every task once, on the calling thread, before returning.
    let host = unsafe { ParallelFor::new(serial_host, std::ptr::null_mut(), concurrency) };
    ThreadBudget::new(0, Some(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn work_is_chunked_from_1_mib_and_helpers_join_at_once_only_for_large_calls() {
        let split = |bytes: usize| split_at_two_threads((bytes / 1024, 1024));
        assert_eq!(split(MIN_SPLIT_BYTES - 1024).0, 1);
        assert_eq!(split(MIN_SPLIT_BYTES), (8, Engage::Measured));
        assert_eq!(split(2 * MIB - 1024), (15, Engage::Measured));
        assert_eq!(split(2 * MIB), (16, Engage::Open));
        assert_eq!(split(4 * MIB - 1024), (16, Engage::Open));
        assert_eq!(split(4 * MIB), (16, Engage::Wake));
        assert_eq!(split(64 * MIB), (16, Engage::Wake));
        // Never more chunks than units.
        assert_eq!(split_at_two_threads((3, 8 * MIB)), (3, Engage::Wake));
        // One thread asked for, or one unit: one task.
        let one = ThreadBudget::new(1, None);
        assert_eq!(one.parallel(64, MIB).tasks(), 1);
        assert_eq!(split_at_two_threads((1, 64 * MIB)).0, 1);
    }

    #[test]
    fn a_hosts_pool_counts_as_awake() {
        let budget = serial_host_budget(2);
        assert_eq!(budget.parallel(3 * 1024, 1024).tasks(), 16);
        assert_eq!(budget.parallel(2 * 1024 - 1, 1024).tasks(), 1);
    }
}
