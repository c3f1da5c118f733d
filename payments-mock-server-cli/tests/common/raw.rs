//! One HTTP/1.1 connection over a raw socket, for the tests of what the
//! server does with a connection (an answer made before the body was
//! read, the next request on the same connection).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// A connection and what was read off it past the answers taken.
pub struct Conn {
    stream: TcpStream,
    got: Vec<u8>,
}

impl Conn {
    /// A fresh connection to `addr`.
    pub async fn open(addr: SocketAddr) -> Self {
        Self {
            stream: TcpStream::connect(addr).await.expect("connect"),
            got: Vec::new(),
        }
    }

    /// Writes `bytes` as they are.
    pub async fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes).await
    }

    /// One answer: its head (lower case) and its body, by its
    /// `Content-Length`; `None` at EOF (or a reset) before a whole answer.
    /// It waits as long as it takes: callers bound it.
    pub async fn answer(&mut self) -> Option<(String, Vec<u8>)> {
        let mut buf = [0u8; 4096];
        let end = loop {
            if let Some(at) = self.got.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            match self.stream.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.got.extend_from_slice(&buf[..n]),
            }
        };
        let head = String::from_utf8_lossy(&self.got[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while self.got.len() < end + length {
            match self.stream.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.got.extend_from_slice(&buf[..n]),
            }
        }
        let body = self.got[end..end + length].to_vec();
        self.got.drain(..end + length);
        Some((head, body))
    }

    /// Whether the server closes the connection (EOF or a reset) within
    /// 10 s, with nothing more sent.
    pub async fn closed(&mut self) -> bool {
        let mut buf = [0u8; 64];
        let read = tokio::time::timeout(Duration::from_secs(10), self.stream.read(&mut buf));
        matches!(read.await, Ok(Ok(0) | Err(_)))
    }
}

/// Whether an answer's head (lower case) says `Connection: close`.
pub fn closes(head: &str) -> bool {
    head.lines().any(|l| l.trim_end() == "connection: close")
}
