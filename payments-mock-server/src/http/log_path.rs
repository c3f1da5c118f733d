//! How a request's path is written to the log: the request line's
//! (`middleware`) and that of a request never answered (`guard`).

/// Longest path written to the log.
const MAX_LOGGED_PATH: usize = 256;

/// A logged path (after its sandbox's prefix `/sandboxes/{id}`, or none)
/// and what marks it cut (`…`, or nothing), written as plain strings:
/// `format_args!("{path}{cut}")` went through the formatting machinery
/// and padding checks for each.
pub(crate) struct ShownPath<'a>(Option<&'a str>, &'a str, &'static str);

/// How a request's `path` is logged: after `/sandboxes/{sandbox}` when it
/// was asked in one, cut at [`MAX_LOGGED_PATH`] bytes on a character.
pub(crate) fn shown_path<'a>(sandbox: Option<&'a str>, path: &'a str) -> ShownPath<'a> {
    if path.len() > MAX_LOGGED_PATH {
        let mut end = MAX_LOGGED_PATH;
        while !path.is_char_boundary(end) {
            end -= 1;
        }
        ShownPath(sandbox, &path[..end], "…")
    } else {
        ShownPath(sandbox, path, "")
    }
}

impl std::fmt::Display for ShownPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(sandbox) = self.0 {
            f.write_str("/sandboxes/")?;
            f.write_str(sandbox)?;
        }
        f.write_str(self.1)?;
        f.write_str(self.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_logged_path_carries_its_sandbox_and_its_cut() {
        let id = "01a2269a-4271-7261-9406-1a90300163bd";
        assert_eq!(
            ShownPath(Some(id), "/api/payments/x/status", "").to_string(),
            format!("/sandboxes/{id}/api/payments/x/status")
        );
        assert_eq!(ShownPath(None, "/api/a", "…").to_string(), "/api/a…");
    }
}
