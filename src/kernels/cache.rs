//! The per-core L2 size, read once from the CPU: kernels that decide by "does this fit a core's
//! cache" ask here instead of assuming one machine's size (the Zen 3 this was tuned on has 512
//! KiB, the Zen 5 also seen has 1 MiB); and the share of the L3 a call keeps, with what a call
//! moves through the cache ([`Footprint`]).

use std::sync::atomic::{AtomicUsize, Ordering};

/// A cache line's bytes on every x86-64 and AArch64 core this runs on: what a read that misses
/// moves, what a non-temporal store writes whole, what a target read back touches at least.
pub(crate) const LINE: usize = 64;

/// What is assumed where the CPU does not say: the smallest L2 of the machines measured.
const FALLBACK_L2_BYTES: usize = 512 << 10;

/// Sizes outside this range are taken as a misreport (a hypervisor's zeroed leaf) and replaced
/// by the fallback.
const PLAUSIBLE_L2_BYTES: std::ops::RangeInclusive<usize> = (64 << 10)..=(64 << 20);

/// The L2 cache of one core, in bytes. One CPUID instruction on the first call (no file reads,
/// no allocation: it runs inside calls that promise a small stack), a load after.
pub(crate) fn l2_bytes() -> usize {
    #[cfg(test)]
    if let Some(size) = L2_FOR_TESTS.with(|size| size.get()) {
        return size;
    }
    static L2: AtomicUsize = AtomicUsize::new(0);
    match L2.load(Ordering::Relaxed) {
        0 => {
            let size = Some(read_l2_bytes())
                .filter(|size| PLAUSIBLE_L2_BYTES.contains(size))
                .unwrap_or(FALLBACK_L2_BYTES);
            L2.store(size, Ordering::Relaxed);
            size
        }
        size => size,
    }
}

#[cfg(test)]
thread_local! {
    /// The L2 size that [`l2_bytes`] reports on this test thread, when set.
    static L2_FOR_TESTS: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with [`l2_bytes`] reporting `bytes` on this thread: for tests that pin a kernel's
/// choice as measured on a machine with that L2, whatever the machine running them has (their
/// pins failed on a 2 MiB-L2 Xeon, where more data counts as staying in cache).
#[cfg(test)]
pub(crate) fn with_l2_bytes<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    let before = L2_FOR_TESTS.with(|size| size.replace(Some(bytes)));
    let result = f();
    L2_FOR_TESTS.with(|size| size.set(before));
    result
}

/// Whether `bytes` of data fit one core's L2: the question behind every "stays in cache" rule
/// of the kernels (what a read counts when choosing threads, what to prefetch).
pub(crate) fn fits_l2(bytes: usize) -> bool {
    bytes <= l2_bytes()
}

/// What stays in the last-level cache beside a call's other traffic: half the 32 MiB of L3 per
/// core complex that every machine kind measured here has (Zen 3, Zen 4, Zen 5). The L3's size is
/// not read from the CPU: it is shared, and its share that a call keeps is what was measured.
/// Outputs this large are streamed past the cache (`stream::STREAM_MIN_BYTES`; a scatter's copy
/// below twice that may not be, see `scatter::apply::copy_streams`), and long slices from data
/// no larger prefetch only their head (on Intel's cores, from any data: see
/// `prefetch::SliceHintCores`).
pub(crate) const L3_RESIDENT_BYTES: usize = 16 << 20;

/// Whether `bytes` of data stay in the L3 from call to call ([`L3_RESIDENT_BYTES`]).
pub(crate) fn stays_in_l3(bytes: usize) -> bool {
    bytes <= L3_RESIDENT_BYTES
}

/// The sizes that say which cache a call's reads of its data come from, for the rules that drop
/// or keep read hints: the slice loops' (`slices::prefetch_ahead_tuples`) and GatherElements'
/// (`gather_elements::lanes::DataTraffic`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Footprint {
    /// Bytes of the data the call reads from.
    ///
    /// All of them, not only the lines a call of few reads can touch: those are still cached
    /// when the next call reads the same ones, but not when it reads others, as a model's
    /// lookups into a table with new indices do. On a Zen 4 (one build, toggled between
    /// alternating calls), no slice hints where the touched lines fit the L2 took 0.66-0.85x the
    /// time for calls repeated with the same indices (45 slices of 1 KiB from 119 MB 0.66x, 6790
    /// of 24 bytes from 52 MB 0.78-0.85x), but 1.71-2.45x with new indices each call (300 rows of
    /// 3 KiB from 153 MB 1.71x, 6790 of 24 bytes from 52 MB 2.45x).
    pub(crate) data: usize,
    /// Bytes the call moves through the cache: the data, the index values and the output unless
    /// it is streamed past the cache. Data that stays in the L3 by its own size may not when the
    /// call's other traffic passes through too: W9 (16 MiB of data beside 16 MiB of index
    /// values) took 1.54x as long without its hints on a Zen 4.
    ///
    /// Only the rules that drop the hints count this; which level the slices' hints go to and how
    /// much of a slice they ask for are decided by the data alone (and the kind of core), as
    /// measured (`HintLevel::for_slices_from`, `slices::slice_prefetch_len`). Decided by this
    /// instead, the level took 0.83-0.96x the time for data of 15-16 MiB beside 11-16 MiB of
    /// indices or output, but 1.05-1.08x for 6.5-6.9 MB of data beside 10-21 MB of indices.
    pub(crate) cached: usize,
}

impl Footprint {
    /// A call's: `data_bytes` of data read, `index_bytes` of index values, and `out_bytes` of
    /// output written through the cache unless `streamed`.
    pub(crate) fn of_call(
        data_bytes: usize,
        index_bytes: usize,
        out_bytes: usize,
        streamed: bool,
    ) -> Self {
        let written = if streamed { 0 } else { out_bytes };
        Footprint {
            data: data_bytes,
            cached: data_bytes
                .saturating_add(index_bytes)
                .saturating_add(written),
        }
    }

    /// Whether the call's reads come from the L3: all it moves through the cache stays there.
    pub(crate) fn stays_in_l3(self) -> bool {
        stays_in_l3(self.cached)
    }
}

/// CPUID leaf 0x8000_0006, ECX bits 31-16: the L2 size in KiB (AMD and Intel both report it);
/// 0 when the CPU has no such leaf.
#[cfg(target_arch = "x86_64")]
fn read_l2_bytes() -> usize {
    use std::arch::x86_64::{__cpuid, __get_cpuid_max};
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86-64 CPU; the extended leaf is read only when the CPU
    // reports it (its maximum extended leaf is at least 0x8000_0006).
    unsafe {
        if __get_cpuid_max(0x8000_0000).0 < 0x8000_0006 {
            return 0;
        }
        ((__cpuid(0x8000_0006).ecx >> 16) as usize) << 10
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn read_l2_bytes() -> usize {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_l2_size_is_plausible_and_stable() {
        let size = l2_bytes();
        assert!(PLAUSIBLE_L2_BYTES.contains(&size), "{size}");
        assert_eq!(l2_bytes(), size);
        // Where Linux says too, it agrees (the first CPU's level-2 cache).
        let sysfs = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cache/index2/size");
        if let Ok(text) = sysfs {
            let kib: Option<usize> = text.trim().strip_suffix('K').and_then(|n| n.parse().ok());
            if let Some(kib) = kib {
                assert_eq!(size, kib << 10, "CPUID and sysfs disagree");
            }
        }
    }
}
