//! The wire level, for tools that handle the service's HTTP themselves (a
//! proxy, a log reader, a fuzzer): how the client encodes paths, decodes
//! envelopes and timestamps, and which headers and limits it uses.
//!
//! An application does not need any of this: [`Client`](crate::Client)
//! does it all.

pub use crate::calls::{MAX_EXTRA_PROPERTIES, encode_path_segment};
pub use crate::client::DEFAULT_USER_AGENT;
pub use crate::decode::{BODY_PREFIX_LEN, decode_response};
pub use crate::model::wire::parse_timestamp;
pub use crate::transport::REQUEST_ID_HEADER;
