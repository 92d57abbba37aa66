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
//! Moving the worker to another CPU once it ran there (narrowing its own affinity mask for a
//! moment) helped bursts of calls after an idle spell, but cost the single call more than
//! yielding: the worker then joined late, from a CPU whose caches held nothing of the call. What
//! keeps it off the caller's CPU now is the caller: before it wakes a sleeping worker, it takes
//! its own CPU out of that worker's mask ([`Steered`]), so the system wakes the worker on an idle
//! CPU at once, and the worker puts its mask back as it wakes. After the process idled 10 ms or
//! more, a worker woken onto the caller's CPU joined 250-750 µs late, so calls of up to a
//! millisecond gained nothing from it (see `Pool::choose_sleepers`). Giving way stays for the
//! systems where a mask cannot be read or set.

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

/// A thread as the system's affinity calls name it: Linux's thread id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ThreadId(i32);

impl ThreadId {
    /// The calling thread's, where the system names threads to these calls (Linux on x86-64 and
    /// AArch64); `None` elsewhere.
    pub(super) fn current() -> Option<ThreadId> {
        #[cfg(all(
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        {
            extern "C" {
                fn syscall(number: std::ffi::c_long, ...) -> std::ffi::c_long;
            }
            #[cfg(target_arch = "x86_64")]
            const SYS_GETTID: std::ffi::c_long = 186;
            #[cfg(target_arch = "aarch64")]
            const SYS_GETTID: std::ffi::c_long = 178;
            // SAFETY: gettid takes no arguments, cannot fail, and only returns the caller's id.
            let id = unsafe { syscall(SYS_GETTID) };
            i32::try_from(id).ok().filter(|&id| id > 0).map(ThreadId)
        }
        #[cfg(not(all(
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        {
            None
        }
    }
}

/// An affinity mask in the layout of glibc's `cpu_set_t`: 1024 CPUs, a bit each.
type CpuMask = [u64; 16];

/// Where CPU `cpu`'s bit lies in a [`CpuMask`]: its word, and the bit within it; `None` for a CPU
/// past the mask.
fn cpu_bit(cpu: u32) -> Option<(usize, u64)> {
    let word = usize::try_from(cpu / 64).ok().filter(|&word| word < 16)?;
    Some((word, 1 << (cpu % 64)))
}

/// A sleeping worker kept off one CPU (the waking caller's) until it wakes: its affinity mask as
/// it was before, and the CPU taken out of it. The worker undoes it as it wakes
/// ([`Steered::undo`]); only the caller's own CPU is ever taken out, and only from a mask that
/// holds another.
///
/// What this cannot promise: a mask is read, then set, and nothing makes the two one step, so an
/// affinity change the host makes to a worker in between (at its wake) can be lost. And the mask
/// read back holds only the CPUs online then: on Linux 6.2 and later, setting it also records
/// it as the thread's own choice, so a worker once steered keeps that set when a cpuset later
/// grows (a container resized), where an untouched thread would follow it.
#[derive(Debug)]
pub(super) struct Steered {
    thread: ThreadId,
    before: CpuMask,
    /// The CPU taken out, as [`cpu_bit`] places it.
    word: usize,
    bit: u64,
}

impl Steered {
    /// Takes `cpu` out of `thread`'s affinity mask, where the mask holds it and another CPU too
    /// and the system lets the mask be read and set; `None` otherwise (nothing changed).
    pub(super) fn off(thread: ThreadId, cpu: u32) -> Option<Steered> {
        let (word, bit) = cpu_bit(cpu)?;
        let before = get_mask(thread)?;
        if before[word] & bit == 0 {
            return None;
        }
        let mut after = before;
        after[word] &= !bit;
        if after.iter().all(|&w| w == 0) {
            return None;
        }
        set_mask(thread, &after).then_some(Steered {
            thread,
            before,
            word,
            bit,
        })
    }

    /// Gives the thread its mask back, unless the mask changed since [`Steered::off`] (the host's
    /// change is kept then).
    pub(super) fn undo(self) {
        let mut steered = self.before;
        steered[self.word] &= !self.bit;
        if get_mask(self.thread) == Some(steered) {
            set_mask(self.thread, &self.before);
        }
    }
}

/// `thread`'s affinity mask; `None` where the system does not say (or has more CPUs than the
/// mask holds).
fn get_mask(thread: ThreadId) -> Option<CpuMask> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // Declared here, not at the module's level, where the header's generator would see it.
        extern "C" {
            fn sched_getaffinity(
                pid: std::ffi::c_int,
                size: usize,
                mask: *mut u64,
            ) -> std::ffi::c_int;
        }
        let mut mask: CpuMask = [0; 16];
        // SAFETY: `mask` is writable for its full size, which is the size passed.
        let status =
            unsafe { sched_getaffinity(thread.0, std::mem::size_of_val(&mask), mask.as_mut_ptr()) };
        (status == 0).then_some(mask)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = thread;
        None
    }
}

/// Sets `thread`'s affinity mask; whether the system did.
fn set_mask(thread: ThreadId, mask: &CpuMask) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        extern "C" {
            fn sched_setaffinity(
                pid: std::ffi::c_int,
                size: usize,
                mask: *const u64,
            ) -> std::ffi::c_int;
        }
        // SAFETY: `mask` is readable for its full size, which is the size passed.
        unsafe { sched_setaffinity(thread.0, std::mem::size_of_val(mask), mask.as_ptr()) == 0 }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (thread, mask);
        false
    }
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

    /// A thread parked until the test is done with it, and its id.
    #[cfg(target_os = "linux")]
    fn parked_thread() -> (std::thread::JoinHandle<()>, ThreadId) {
        let (send, receive) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            send.send(ThreadId::current()).unwrap();
            std::thread::park();
        });
        let id = receive.recv().unwrap().expect("Linux names its threads");
        (handle, id)
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_steered_thread_is_kept_off_one_cpu_until_undone_and_a_mask_changed_since_is_kept() {
        let (handle, thread) = parked_thread();
        let mask = get_mask(thread).expect("Linux tells a thread's mask");
        let bit =
            |m: &CpuMask, cpu: u32| cpu_bit(cpu).is_some_and(|(word, bit)| m[word] & bit != 0);
        let allowed: Vec<u32> = (0..1024u32).filter(|&cpu| bit(&mask, cpu)).collect();
        if let [only] = allowed[..] {
            // One CPU: nothing to steer to, and nothing changes.
            assert!(Steered::off(thread, only).is_none());
            assert_eq!(get_mask(thread), Some(mask));
        } else {
            let cpu = allowed[0];
            let steered = Steered::off(thread, cpu).expect("a mask of two or more CPUs");
            let during = get_mask(thread).unwrap();
            assert!(!bit(&during, cpu));
            assert!(allowed[1..].iter().all(|&other| bit(&during, other)));
            steered.undo();
            assert_eq!(get_mask(thread), Some(mask), "undone");
            // A mask someone else set meanwhile is theirs: undo leaves it.
            let steered = Steered::off(thread, cpu).unwrap();
            let mut theirs = [0; 16];
            let (word, only) = cpu_bit(cpu).unwrap();
            theirs[word] = only;
            assert!(set_mask(thread, &theirs));
            steered.undo();
            assert_eq!(get_mask(thread), Some(theirs), "kept");
            assert!(set_mask(thread, &mask));
        }
        // A CPU the mask does not hold is not steered off.
        let outside = (0..1024u32).find(|&cpu| !bit(&mask, cpu)).unwrap();
        assert!(Steered::off(thread, outside).is_none());
        assert!(Steered::off(thread, 5000).is_none());
        handle.thread().unpark();
        handle.join().unwrap();
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
