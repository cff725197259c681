//! `memsnap`: see `memsnap_capture::memsnap_cli`.

fn main() -> std::process::ExitCode {
    memsnap_capture::memsnap_cli::main()
}
