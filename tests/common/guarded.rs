//! Memory flush against inaccessible pages (mmap + mprotect): a single byte read or written
//! outside the usable part kills the process.

#![allow(dead_code)]

pub const PAGE: usize = 4096;

/// `len` bytes with an inaccessible page right before and right after the mapping's usable part;
/// the bytes sit flush against the front guard (`Side::Front`) or the back guard (`Side::Back`).
pub struct Guarded {
    base: *mut u8,
    total: usize,
    start: *mut u8,
    len: usize,
}

#[derive(Clone, Copy, Debug)]
pub enum Side {
    Front,
    Back,
}

impl Guarded {
    pub fn new(len: usize, side: Side) -> Guarded {
        let body = len.div_ceil(PAGE).max(1) * PAGE;
        let total = body + 2 * PAGE;
        // SAFETY: anonymous private mapping; checked for failure below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED, "mmap");
        let base = base.cast::<u8>();
        // SAFETY: both guard pages lie inside the mapping.
        unsafe {
            assert_eq!(libc::mprotect(base.cast(), PAGE, libc::PROT_NONE), 0);
            assert_eq!(
                libc::mprotect(base.add(PAGE + body).cast(), PAGE, libc::PROT_NONE),
                0
            );
        }
        // SAFETY: within the mapping's usable part.
        let start = unsafe {
            match side {
                Side::Front => base.add(PAGE),
                Side::Back => base.add(PAGE + body - len),
            }
        };
        Guarded {
            base,
            total,
            start,
            len,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `start`, alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.start, self.len) }
    }

    /// The first usable byte (for raw-pointer callers).
    pub fn start(&self) -> *mut u8 {
        self.start
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, writable, and borrowed mutably from `self`.
        unsafe { std::slice::from_raw_parts_mut(self.start, self.len) }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping made in `new`.
        unsafe { libc::munmap(self.base.cast(), self.total) };
    }
}
