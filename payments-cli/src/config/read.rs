//! Reading a config file's bytes: at most 1 MiB of them (a ledger or
//! `/dev/zero` given as `--config` by mistake is refused, not parsed for
//! minutes), UTF-8 or refused with the line of the first bad byte (never
//! the bytes: a key may be there), and who else may open it.

use std::{
    fs::File,
    io::{ErrorKind, Read as _},
    path::Path,
};

use crate::error::{ConfigError, MAX_CONFIG_BYTES};

/// A config file's text, and its permission bits when it is a regular
/// file that other users may read or change (`mode & 0o077`, Unix only).
pub(super) struct Text {
    pub text: String,
    pub open_mode: Option<u32>,
}

/// Reads the file at `path`; none when it does not exist and need not.
///
/// # Errors
///
/// It cannot be opened or read, is larger than [`MAX_CONFIG_BYTES`], or is
/// not UTF-8 (`Malformed`, with the line of the first byte that is not).
pub(super) fn read(path: &Path, must_exist: bool) -> Result<Option<Text>, ConfigError> {
    let failed = |source| ConfigError::Read {
        path: path.to_owned(),
        source,
    };
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == ErrorKind::NotFound && !must_exist => return Ok(None),
        Err(source) => return Err(failed(source)),
    };
    let metadata = file.metadata().map_err(failed)?;
    let too_large = |size| ConfigError::TooLarge {
        path: path.to_owned(),
        size,
    };
    // A regular file says its length; anything else (a device, a pipe,
    // `<(…)`) is read up to one byte past the limit.
    if metadata.is_file() && metadata.len() > MAX_CONFIG_BYTES {
        return Err(too_large(Some(metadata.len())));
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if u64::try_from(bytes.len()).map_or(true, |n| n > MAX_CONFIG_BYTES) {
        return Err(too_large(None));
    }
    let text = String::from_utf8(bytes).map_err(|err| {
        let at = err.utf8_error().valid_up_to();
        ConfigError::Malformed {
            path: path.to_owned(),
            line: line_of(err.as_bytes(), at),
            message: "not UTF-8 text (the bytes are not shown): save the file as UTF-8".to_owned(),
        }
    })?;
    Ok(Some(Text {
        text,
        open_mode: open_mode(&metadata),
    }))
}

/// A regular file's permission bits when group or others have any
/// (`mode & 0o077`); none elsewhere, and off Unix.
fn open_mode(metadata: &std::fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = metadata.permissions().mode() & 0o777;
        (metadata.is_file() && mode & 0o077 != 0).then_some(mode)
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
    }
}

/// The warning for a file holding an API key that others may open: the
/// file, its mode, and the command that closes it.
pub(super) fn open_to_others(path: &Path, mode: u32) -> String {
    let shown = crate::text::cut(&path.display().to_string());
    format!(
        "warning: config file {shown} holds an API key and other users can read or change it \
         (mode {mode:04o}): chmod 600 {}",
        super::shell::word(&shown)
    )
}

/// The line (from 1) of the byte at `byte_offset` (the end, past it).
pub(super) fn line_of(text: impl AsRef<[u8]>, byte_offset: usize) -> usize {
    let text = text.as_ref();
    let end = byte_offset.min(text.len());
    text[..end].iter().filter(|&&b| b == b'\n').count() + 1
}
