/// Out of memory is an error message, not an abort (see `resim::memory`).
#[global_allocator]
static GLOBAL: resim::memory::Allocator = resim::memory::Allocator;

fn main() {
    std::process::exit(resim::cli::main());
}
