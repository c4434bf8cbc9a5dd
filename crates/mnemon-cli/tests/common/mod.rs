//! Helpers shared by the command-line tests: the test kit's, and the binary under test.
#![allow(dead_code, unused_imports)]

pub mod mcp;

pub use mnemon_testkit::events;
pub use mnemon_testkit::fixtures::{copy_into, fresh, loopal_fixtures, siblings, write_note};

/// The `mnemon` binary built for these tests.
pub fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_mnemon"))
}

/// Sends `signal` (a name `kill` knows: `TERM`, `INT`) to the process `pid`.
pub fn send_signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid}");
}

/// Runs `cmd` with `stdin` on its standard input and waits for it. A command may refuse its
/// arguments and exit before reading its input; the broken pipe that leaves is not a failure.
pub fn output_with_stdin(
    cmd: &mut std::process::Command,
    stdin: &[u8],
) -> std::io::Result<std::process::Output> {
    use std::io::Write as _;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    if let Some(mut pipe) = child.stdin.take() {
        match pipe.write_all(stdin) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e),
            _ => {}
        }
    }
    child.wait_with_output()
}
