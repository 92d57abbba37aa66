//! A Rust static library with a counting `#[global_allocator]`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made through this library's allocator so far.
#[no_mangle]
pub extern "C" fn other_allocations() -> usize {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Allocates (through this library's allocator) and returns a length.
#[no_mangle]
pub extern "C" fn other_work() -> usize {
    let v: Vec<u64> = (0..100).collect();
    std::hint::black_box(v).len()
}
