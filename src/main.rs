fn main() {
    std::process::exit(baton::run(std::env::args_os()));
}
