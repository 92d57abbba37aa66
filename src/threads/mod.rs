//! Where a call's parallel work runs: on gatherkit's own persistent pool ([`pool`]) or on the
//! host's pool through a parallel-for it hands over ([`host`]), and how many tasks a call gets.
//!
//! Kernels describe their work as `n` independent tasks (`kernels::parallel` splits outputs into
//! them); this module only runs tasks, so its code is compiled once rather than once per kernel.

mod host;
mod pool;

pub(crate) use host::HostFault;
pub use host::{ParallelFor, ParallelForFn, TaskFn};

use std::sync::OnceLock;

/// Below this many bytes moved per task, handing work to another thread costs more than it
/// saves (a pool wake-up and the chunk's cache warm-up against ~100 µs of copying).
const MIN_BYTES_PER_TASK: usize = 1 << 20;

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

    /// How to split `units` units of work moving `bytes_per_unit` bytes each.
    ///
    /// Work that fits one task, or a budget of one thread, never asks how many cores the machine
    /// has: the first such question in a process reads the affinity mask and cgroup files, on
    /// about 10 KiB of stack, and the README promises calls that start no thread at most 4 KiB.
    pub(crate) fn parallel(&self, units: usize, bytes_per_unit: usize) -> Parallel {
        let bytes = units.saturating_mul(bytes_per_unit.max(1));
        let wanted = (bytes / MIN_BYTES_PER_TASK).clamp(1, units.max(1));
        if wanted == 1 || self.requested == 1 {
            return Parallel {
                tasks: 1,
                max: 1,
                host: self.host,
            };
        }
        let offered = match self.host {
            Some(host) => host.concurrency(),
            None => machine_parallelism(),
        };
        let max = match self.requested {
            0 => offered,
            n => n.min(offered),
        };
        Parallel {
            tasks: wanted.min(max),
            max,
            host: self.host,
        }
    }
}

/// One call's split: how many tasks its work is cut into, and where they run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parallel {
    tasks: usize,
    /// The most tasks that run at once.
    max: usize,
    host: Option<ParallelFor>,
}

impl Parallel {
    /// The number of tasks the work should be cut into.
    pub(crate) fn tasks(&self) -> usize {
        self.tasks
    }

    /// Runs `task(i)` for every `i` in `0..tasks` (any number; as many at once as the budget
    /// allows) and returns when all have finished. A single task runs inline, on the calling
    /// thread; so does everything when the budget is one thread.
    pub(crate) fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        if tasks <= 1 || self.max <= 1 {
            for i in 0..tasks {
                task(i);
            }
            return;
        }
        match self.host {
            Some(host) => host.run(tasks, task),
            None => pool::Pool::get().run(tasks, self.max, task),
        }
    }
}
