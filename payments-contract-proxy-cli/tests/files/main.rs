//! The files the binary writes and its standard output and error
//! (docs/contract-proxy.md): a link names the file it links to, also one
//! not there yet; a FIFO is never waited for; a line of the recording
//! that could not be written is counted and fails the run, and a torn one
//! never swallows the next; a stdout or stderr that cannot be written
//! never panics, and the files are written all the same; a stream
//! (`/dev/null`, a piped `/dev/stdout`) may be named by several outputs;
//! a wait for `--tls-self-signed DIR`'s lock is said, and a `.lock` that
//! is no file ends the start.

mod common;
mod fifo;
mod lines;
mod links;
mod output;
mod shared;
mod tls_lock;
