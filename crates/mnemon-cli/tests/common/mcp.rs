//! A JSON-RPC client of `mnemon serve --no-watch` over the child's stdin/stdout, for tests that
//! drive the MCP server as an agent does.

use serde_json::Value;
use std::io::Read;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

/// `mnemon serve --no-watch` on the memory folder `root`, its stdin and stdout piped.
pub fn spawn_serve(root: &Path, stderr: Stdio) -> Child {
    spawn_serve_with(root, stderr, &["serve", "--no-watch"])
}

/// `mnemon ARGS` (`serve` and its options) on the memory folder `root`, its stdin and stdout
/// piped.
fn spawn_serve_with(root: &Path, stderr: Stdio, args: &[&str]) -> Child {
    super::bin()
        .arg("--dir")
        .arg(root)
        .args(args)
        .env_remove("MNEMON_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn mnemon serve")
}

/// A running server and the pipes to talk to it.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Start `mnemon serve --no-watch` on the memory folder `root` and initialize the session.
    pub fn start(root: &Path) -> Server {
        Server::spawn(root, Stdio::null())
    }

    /// [`Server::start`], keeping the server's log (stderr) for [`Server::finish_with_log`].
    pub fn start_logged(root: &Path) -> Server {
        Server::spawn(root, Stdio::piped())
    }

    /// [`Server::start`] as a user without root's rights (`nobody`, through `setpriv`, when the
    /// tests run as root): `None` when that cannot be done here.
    #[allow(dead_code)]
    pub fn start_unprivileged(root: &Path) -> Option<Server> {
        let mut cmd = if super::running_as_root() {
            let setpriv = std::process::Command::new("setpriv")
                .arg("--version")
                .output();
            if !setpriv.is_ok_and(|o| o.status.success()) {
                return None;
            }
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
                .arg(env!("CARGO_BIN_EXE_mnemon"));
            c
        } else {
            super::bin()
        };
        let child = cmd
            .arg("--dir")
            .arg(root)
            .args(["serve", "--no-watch"])
            .env_remove("MNEMON_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        Some(Server::from_child(child))
    }

    /// [`Server::start_logged`] with the watcher on (`mnemon serve`): notes changed in
    /// `memory/` are indexed as they change.
    pub fn start_watching_logged(root: &Path) -> Server {
        Server::from_child(spawn_serve_with(root, Stdio::piped(), &["serve"]))
    }

    fn spawn(root: &Path, stderr: Stdio) -> Server {
        Server::from_child(spawn_serve(root, stderr))
    }

    fn from_child(mut child: Child) -> Server {
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut server = Server {
            child,
            stdin,
            stdout,
        };
        server.rpc(
            1,
            "initialize",
            serde_json::json!({"protocolVersion": "2024-11-05", "capabilities": {},
                               "clientInfo": {"name": "test", "version": "0"}}),
        );
        server
    }

    /// Send one request and return the reply with its id (other lines are skipped).
    pub fn rpc(&mut self, id: u64, method: &str, params: Value) -> Value {
        let msg =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().expect("server stdin open");
        writeln!(stdin, "{msg}").expect("write request");
        stdin.flush().expect("flush");
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).expect("read reply") > 0,
                "server closed"
            );
            let v: Value = serde_json::from_str(&line).expect("reply is JSON");
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Send one line as it is (no reply is awaited).
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("server stdin open");
        writeln!(stdin, "{line}").expect("write a line");
        stdin.flush().expect("flush");
    }

    /// Close the server's stdin and wait for it: whether it exited successfully.
    pub fn finish(self) -> bool {
        self.finish_with_log().0
    }

    /// [`Server::finish`], with what the server logged (empty unless started logged).
    pub fn finish_with_log(mut self) -> (bool, String) {
        drop(self.stdin.take());
        let mut log = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            stderr
                .read_to_string(&mut log)
                .expect("read the server's log");
        }
        (self.child.wait().is_ok_and(|s| s.success()), log)
    }

    /// Send the server SIGTERM with its stdin still open (as `kill`, systemd or a container
    /// runtime stops it) and wait: whether it exited successfully, and its log.
    pub fn terminate_with_log(mut self) -> (bool, String) {
        super::send_signal(self.child.id(), "TERM");
        let mut log = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            stderr
                .read_to_string(&mut log)
                .expect("read the server's log");
        }
        let ok = self.child.wait().is_ok_and(|s| s.success());
        drop(self.stdin.take());
        (ok, log)
    }
}
