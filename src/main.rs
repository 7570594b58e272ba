// mimalloc: a sweep runs every replication from empty vectors and tables, and
// spends a fifth of its instructions in the system allocator otherwise (BENCHMARKS.md,
// "Sweeps"). The binary only: tests/alloc.rs counts allocations with its own.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(resim::cli::main());
}
