//! The mock's port taken at once, listened on only when it can answer.
//!
//! The address is bound first (a `--port` taken or not allowed is said
//! at once, and `--port 0`'s port is known for the replica's name and the
//! payment pages' URL), but the socket listens only once the store is
//! open and `--seed-from` placed: a connection before then is refused, so
//! a readiness probe that only connects (`nc -z`, `wait-for-it`, a
//! container's TCP probe) does not say "ready" while the mock cannot
//! answer yet (with a large `--seed-from`, seconds).

use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};

/// The backlog Tokio's own `TcpListener::bind` asks for.
const BACKLOG: u32 = 1024;

/// A socket bound to `host:port` (each address `host` resolves to, in
/// turn, as `TcpListener::bind` tries them), not yet listening.
pub(crate) async fn bind(host: &str, port: u16) -> io::Result<TcpSocket> {
    let mut last = None;
    for addr in tokio::net::lookup_host((host, port)).await? {
        match bound(addr) {
            Ok(socket) => return Ok(socket),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the host resolves to no address",
        )
    }))
}

/// One address bound, with `SO_REUSEADDR` as `TcpListener::bind` sets it
/// (a restart reuses a port whose last connections are in `TIME_WAIT`).
fn bound(addr: SocketAddr) -> io::Result<TcpSocket> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    Ok(socket)
}

/// The bound socket listening.
pub(crate) fn listen(socket: TcpSocket) -> io::Result<TcpListener> {
    socket.listen(BACKLOG)
}
