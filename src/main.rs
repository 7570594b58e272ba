fn main() {
    std::process::exit(resim::cli::main());
}
