//! Which CPU a thread runs on, as far as a worker needs to know: whether the scheduler woke it
//! onto the very CPU of the thread that opened the job it is about to help.
//!
//! A woken thread goes where the operating system puts it, and a scheduler that packs work onto
//! few CPUs (as virtual machines' guest kernels do, to leave idle virtual CPUs halted) may put it
//! on the waker's own CPU and let it preempt the waker. Measured on a 2-core Zen 4 virtual
//! machine (Linux 6.18), calls of 60-200 µs with the pool asleep: the worker woken mid-call
//! landed on the calling thread's CPU, took every task left while the caller waited inside its
//! wake call (135-230 µs), then spun there for its idle watch; the 2-thread calls took 1.4-1.6x
//! their 1-thread time. A worker in that place gives the CPU back instead ([`gives_way`]), and
//! joins once it runs anywhere else, or after a few yields wherever it is. Only where the system
//! tells a thread its CPU (Linux, Android); elsewhere workers join as before. Two builds by turns
//! in one process, each 2-thread call 3 ms after the last (the worker asleep), 2-thread over
//! 1-thread time of eleven sweep configurations of 40-300 µs: 1.23-1.61x before, 0.97-1.30x
//! giving way; in the sweep's own settled column, five of seed 187 went from 1.04-1.63x to
//! 1.05-1.25x. Calls back to back (the worker awake on its own CPU) did not change (within 2%).
//!
//! Moving the worker to another CPU instead (narrowing its affinity mask for a moment) helped
//! bursts of calls after an idle spell, but cost the single call more than yielding: the worker
//! then joined late, from a CPU whose caches held nothing of the call.

/// The CPU the calling thread runs on right now, where the system tells it (Linux's and
/// Android's `sched_getcpu`: a vDSO call on x86-64, a system call on some others, so the pool
/// asks outside its lock or only while it may give way); `None` elsewhere or when it fails. A
/// hint, stale as soon as read.
pub(super) fn current_cpu() -> Option<u32> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        extern "C" {
            fn sched_getcpu() -> std::ffi::c_int;
        }
        // SAFETY: `sched_getcpu` takes no arguments and only reads the thread's own CPU number.
        let cpu = unsafe { sched_getcpu() };
        u32::try_from(cpu).ok()
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        None
    }
}

/// How many times a worker gives way to a job's opener before it joins anyway. While the opener
/// runs on the worker's CPU, one yield hands that CPU over for the rest of the opener's time
/// slice, longer than the calls that meet this; a worker whose opener has since moved elsewhere
/// gets its CPU back at once from each yield, and so loses only a few microseconds.
pub(super) const GIVE_WAY_YIELDS: u32 = 4;

/// Whether a worker that has given way `yields` times already should yield once more rather than
/// help a job opened on CPU `opener`: when the opener's CPU is known and is the one the worker
/// runs on (`here`, asked only then: it can be a system call), up to [`GIVE_WAY_YIELDS`] times.
pub(super) fn gives_way(
    opener: Option<u32>,
    yields: u32,
    here: impl FnOnce() -> Option<u32>,
) -> bool {
    yields < GIVE_WAY_YIELDS && opener.is_some() && opener == here()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_gives_way_only_on_its_openers_cpu_and_only_a_few_times() {
        let on = |cpu: Option<u32>| move || cpu;
        assert!(gives_way(Some(1), 0, on(Some(1))));
        assert!(gives_way(Some(0), GIVE_WAY_YIELDS - 1, on(Some(0))));
        assert!(!gives_way(Some(0), GIVE_WAY_YIELDS, on(Some(0))));
        assert!(!gives_way(Some(0), 0, on(Some(1))));
        // Unknown CPUs never hold a worker back.
        assert!(!gives_way(None, 0, on(None)));
        assert!(!gives_way(Some(0), 0, on(None)));
        assert!(!gives_way(None, 0, on(Some(0))));
        // The worker's own CPU is asked only when it could matter.
        let never = || -> Option<u32> { panic!("asked") };
        assert!(!gives_way(None, 0, never));
        assert!(!gives_way(Some(0), GIVE_WAY_YIELDS, never));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn linux_tells_the_cpu_a_thread_runs_on() {
        let cpu = current_cpu().expect("sched_getcpu answers on Linux");
        // CPU numbers can exceed the parallelism (an affinity mask with gaps), never the
        // number of CPUs the system has configured; without /sys to tell, only that it answers.
        let Some(configured) = std::fs::read_to_string("/sys/devices/system/cpu/possible")
            .ok()
            .and_then(|s| {
                s.trim()
                    .rsplit(['-', ','])
                    .next()
                    .and_then(|n| n.parse::<u32>().ok())
            })
        else {
            return;
        };
        assert!(
            cpu <= configured,
            "cpu {cpu} beyond the last possible {configured}"
        );
    }
}
