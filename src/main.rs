//! The `coherence` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    let exit = coherence::main_with_args(std::env::args().collect());
    std::process::ExitCode::from(exit.code())
}
