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

/// `mnemon ARGS` as a user file permissions apply to: `nobody` through `setpriv` when the
/// tests run as root (root reads everything), the current user otherwise. `None` when root has
/// no `setpriv` to drop to.
pub fn run_unprivileged(args: &[&str]) -> Option<std::process::Output> {
    let root = running_as_root();
    let mut cmd = if root {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_mnemon"));
        c
    } else {
        bin()
    };
    let out = cmd
        .env_remove("MNEMON_DIR")
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .ok()?;
    // `setpriv` missing or refused: nothing was run as another user.
    (!root || out.status.code() != Some(127)).then_some(out)
}

/// Whether the tests run as root (then [`run_unprivileged`] runs as `nobody`).
pub fn running_as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Set `path`'s permission bits to `mode`.
#[cfg(unix)]
pub fn chmod(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}
