//! The `pipeline` binary: parses arguments, calls the library, prints. Exit codes: 0 ok,
//! 1 some inputs failed, 2 usage or configuration error.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
