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

/// Below this many bytes moved per task, handing work to a thread that is awake costs more than
/// it saves (the hand-over and the chunk's cache warm-up against 10-30 µs of copying on Zen 5).
const MIN_BYTES_PER_TASK: usize = 1 << 20;

/// The same for a task that needs a sleeping worker woken: twice as much. Waking costs the
/// calling thread a system call, and the woken worker starts late: on the 2-core Zen 5 virtual
/// machines here the caller began its own task 9 µs into the call and the worker 27 µs in, where
/// an awake worker started within 1 µs. A call of 2-3 MiB moved (35-100 µs at one task) split
/// across a woken worker took 1.1-1.35x its one-task time; from 4 MiB (ge-axis0 of 1 MiB data,
/// 160 µs at one task) a second task pays for the wake.
const MIN_BYTES_PER_WOKEN_TASK: usize = 2 << 20;

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
    ///
    /// Work goes to gatherkit's own pool in tasks of [`MIN_BYTES_PER_TASK`] when a worker is
    /// awake, of [`MIN_BYTES_PER_WOKEN_TASK`] when one would have to be woken. A host's pool is
    /// taken to be awake: gatherkit cannot see its threads, and a host that hands over its pool
    /// usually keeps it busy.
    pub(crate) fn parallel(&self, units: usize, bytes_per_unit: usize) -> Parallel {
        let bytes = units.saturating_mul(bytes_per_unit.max(1));
        let worth_splitting = bytes / MIN_BYTES_PER_TASK >= 2;
        let helpers_awake = worth_splitting
            && self.requested != 1
            && (self.host.is_some() || pool::Pool::has_awake_worker());
        self.split(units, bytes, helpers_awake)
    }

    /// [`ThreadBudget::parallel`] as if a helper were awake (or not), for tests that pin a
    /// kernel's split whatever the pool is doing.
    #[cfg(test)]
    pub(crate) fn parallel_with_helpers(
        &self,
        units: usize,
        bytes_per_unit: usize,
        helpers_awake: bool,
    ) -> Parallel {
        self.split(
            units,
            units.saturating_mul(bytes_per_unit.max(1)),
            helpers_awake,
        )
    }

    /// [`ThreadBudget::parallel`] with the helpers' state given: `helpers_awake` is whether a
    /// helper can start without being woken.
    fn split(&self, units: usize, bytes: usize, helpers_awake: bool) -> Parallel {
        let per_task = if helpers_awake {
            MIN_BYTES_PER_TASK
        } else {
            MIN_BYTES_PER_WOKEN_TASK
        };
        let wanted = (bytes / per_task).clamp(1, units.max(1));
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

/// The tasks a kernel's work (`Kernel::work`: units and bytes per unit) is cut into with two
/// threads offered and a helper awake or asleep: what the kernels' split pins assert.
#[cfg(test)]
pub(crate) fn tasks_at_two_threads(
    (units, bytes_per_unit): (usize, usize),
    helpers_awake: bool,
) -> usize {
    ThreadBudget::new(2, None)
        .parallel_with_helpers(units, bytes_per_unit, helpers_awake)
        .tasks()
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::c_void;

    const MIB: usize = 1 << 20;

    #[test]
    fn a_sleeping_worker_is_woken_only_for_twice_the_work_of_an_awake_one() {
        let budget = ThreadBudget::new(2, None);
        let tasks = |bytes: usize, awake: bool| {
            budget
                .parallel_with_helpers(bytes / 1024, 1024, awake)
                .tasks()
        };
        assert_eq!(tasks(2 * MIB - 1024, true), 1);
        assert_eq!(tasks(2 * MIB, true), 2);
        assert_eq!(tasks(3 * MIB, true), 2);
        assert_eq!(tasks(3 * MIB, false), 1);
        assert_eq!(tasks(4 * MIB - 1024, false), 1);
        assert_eq!(tasks(4 * MIB, false), 2);
        // One thread asked for, or one unit: one task, whatever the helpers do.
        let one = ThreadBudget::new(1, None);
        assert_eq!(one.parallel_with_helpers(64, MIB, true).tasks(), 1);
        assert_eq!(budget.parallel_with_helpers(1, 64 * MIB, true).tasks(), 1);
    }

    unsafe extern "C" fn inline_host(_: *mut c_void, n: usize, task: TaskFn, ctx: *mut c_void) {
        for i in 0..n {
            // SAFETY: the task and context come from gatherkit for this call.
            unsafe { task(ctx, i) };
        }
    }

    #[test]
    fn a_hosts_pool_counts_as_awake() {
        // SAFETY: `inline_host` runs every task once, on the calling thread, before returning.
        let host = unsafe { ParallelFor::new(inline_host, std::ptr::null_mut(), 2) };
        let budget = ThreadBudget::new(0, Some(host));
        assert_eq!(budget.parallel(3 * 1024, 1024).tasks(), 2);
    }
}
