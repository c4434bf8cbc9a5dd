//! A JSON-RPC client of `mnemon serve --no-watch` over the child's stdin/stdout, for tests that
//! drive the MCP server as an agent does.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

/// A running server and the pipes to talk to it.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Start `mnemon serve --no-watch` on the memory folder `root` and initialize the session.
    pub fn start(root: &Path) -> Server {
        let mut child = super::bin()
            .arg("--dir")
            .arg(root)
            .args(["serve", "--no-watch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn serve");
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

    /// Close the server's stdin and wait for it: whether it exited successfully.
    pub fn finish(mut self) -> bool {
        drop(self.stdin.take());
        self.child.wait().is_ok_and(|s| s.success())
    }
}
