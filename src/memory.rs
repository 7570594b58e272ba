//! Running out of memory ends resim with a clean error, never an abort.
//!
//! The run grows its large tables (the event queue, requests, calls, books and
//! lines) ahead, with allocations that may fail and be reported with the
//! scenario and the limit to lower (`World::reserve_ahead`, through
//! [`fallibly`]). Every other allocation goes through the binary's global
//! [`Allocator`]: one the system refuses prints one line naming the limits to
//! lower and ends the process with exit code 2, where Rust's default would
//! abort (a raised `scenario.max_in_flight` under `ulimit -v` did, as the
//! system's memory ran out). Output files are written whole or not at all
//! (`report::folder`), so an exit in the middle leaves the previous files.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Whether an allocation made now on this thread may fail back to its
    /// caller (a `try_reserve`).
    static FALLIBLE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, whose allocations may fail back to it (`try_reserve`): the
/// [`Allocator`] then returns the refusal instead of ending the process.
pub(crate) fn fallibly<T>(f: impl FnOnce() -> T) -> T {
    FALLIBLE.set(true);
    let out = f();
    FALLIBLE.set(false);
    out
}

/// Whether the allocation being made now may fail back to its caller.
fn fallible_now() -> bool {
    FALLIBLE.try_with(Cell::get).unwrap_or(false)
}

/// Prints that the system refused `size` bytes and ends the process with exit
/// code 2, allocating nothing on the way (the number is written by hand).
fn refused(size: usize) -> ! {
    use std::io::Write;
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = size;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(b"error: out of memory: the system refused ");
    let _ = err.write_all(&digits[i..]);
    let _ = err.write_all(
        b" more bytes; lower scenario.max_in_flight (the most requests, calls and held work a run keeps), run fewer compare rows or shorter runs, or give resim more memory\n",
    );
    std::process::exit(2)
}

/// The `resim` binary's global allocator: the system's, with a refused
/// allocation reported as [`refused`] says (unless its caller asked to see the
/// failure: [`fallibly`]).
pub struct Allocator;

// SAFETY: every call is passed unchanged to the system allocator, whose
// contract is the same; a null result is returned as it came or never returns.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() && !fallible_now() {
            refused(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() && !fallible_now() {
            refused(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() && !fallible_now() {
            refused(new_size);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}
