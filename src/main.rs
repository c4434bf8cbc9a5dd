//! The `mnemon` command line: a thin layer over [`mnemon::Memory`].

mod cli;

fn main() {
    std::process::exit(cli::run());
}
