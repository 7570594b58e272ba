//! The `resim` binary. Its allocator: small blocks from mimalloc, large ones
//! from the system allocator (see [`SplitAlloc`]).

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks up to this size come from mimalloc, larger ones from the system.
const SMALL: usize = 16 * 1024;

/// mimalloc for small blocks: a sweep builds each replication's world and tables
/// from empty, and glibc's malloc and free took 22 % of its instructions (mimalloc
/// roughly halves that). The system allocator for large blocks: the sample vectors
/// of a long run reach megabytes, and glibc grows them by moving pages (`mremap`)
/// where mimalloc copies and keeps freed memory for a while: with mimalloc
/// everywhere, M1 at 10^7 requests peaked at 57.6 MB instead of 31.5 MB
/// (BENCHMARKS.md, "Sweeps"). `tests/alloc.rs` counts allocations with its own.
///
/// A block's allocator follows from its size alone, which `dealloc` and
/// `realloc` are given (the layout it was allocated with), so every block is
/// freed by the allocator that made it; `realloc` across the threshold moves it.
struct SplitAlloc;

fn small(size: usize) -> bool {
    size <= SMALL
}

// SAFETY: each call is passed to mimalloc or the system allocator, both sound
// `GlobalAlloc`s, chosen by the block's size; a block is always handled by the
// allocator its size picks, and a `realloc` that crosses the threshold allocates
// in the other one, copies the smaller of the two sizes, and frees the old block
// with its old layout, as `GlobalAlloc::realloc`'s contract describes.
unsafe impl GlobalAlloc for SplitAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees on `layout` are passed on unchanged.
        unsafe {
            if small(layout.size()) {
                mimalloc::MiMalloc.alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if small(layout.size()) {
                mimalloc::MiMalloc.alloc_zeroed(layout)
            } else {
                System.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated with `layout`, so by the allocator its size
        // picks.
        unsafe {
            if small(layout.size()) {
                mimalloc::MiMalloc.dealloc(ptr, layout)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` belongs to the allocator `layout.size()` picks; when the new
        // size picks the same one, it reallocates; else the block moves, and
        // `new_size` with `layout.align()` is a valid layout (the caller's promise).
        unsafe {
            match (small(layout.size()), small(new_size)) {
                (true, true) => mimalloc::MiMalloc.realloc(ptr, layout, new_size),
                (false, false) => System.realloc(ptr, layout, new_size),
                _ => {
                    let new = Layout::from_size_align_unchecked(new_size, layout.align());
                    let moved = self.alloc(new);
                    if !moved.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    moved
                }
            }
        }
    }
}

#[global_allocator]
static GLOBAL: SplitAlloc = SplitAlloc;

fn main() {
    std::process::exit(resim::cli::main());
}
