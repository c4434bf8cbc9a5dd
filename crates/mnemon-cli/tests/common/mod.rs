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

/// The inodes of the folders this process's inotify instances watch (Linux: `/proc/self/fdinfo`).
pub fn inotify_watched_inodes() -> Vec<u64> {
    let mut inodes = Vec::new();
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return inodes;
    };
    for fd in fds.flatten() {
        let is_inotify = std::fs::read_link(fd.path())
            .is_ok_and(|t| t.to_string_lossy() == "anon_inode:inotify");
        if !is_inotify {
            continue;
        }
        let info = std::path::Path::new("/proc/self/fdinfo").join(fd.file_name());
        let Ok(text) = std::fs::read_to_string(info) else {
            continue;
        };
        for line in text.lines().filter(|l| l.starts_with("inotify wd:")) {
            let ino = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("ino:"))
                .and_then(|h| u64::from_str_radix(h, 16).ok());
            inodes.extend(ino);
        }
    }
    inodes
}
