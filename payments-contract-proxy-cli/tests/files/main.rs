//! The files the binary writes and its standard output and error
//! (docs/contract-proxy.md): a link names the file it links to, also one
//! not there yet; a FIFO is never waited for.

mod common;
mod fifo;
mod links;
