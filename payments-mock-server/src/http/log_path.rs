//! How a request's path is written to the log: the request line's
//! (`middleware`) and that of a request never answered (`guard`).

use payments_serve::RequestLine;

/// A logged path (after its sandbox's prefix `/sandboxes/{id}`, or none)
/// and what follows it (`[redacted]` for a payment page's token, `…` for
/// a cut, or nothing), written as plain strings:
/// `format_args!("{path}{cut}")` went through the formatting machinery
/// and padding checks for each.
pub(crate) struct ShownPath<'a>(Option<&'a str>, &'a str, &'static str);

/// How a request's `path` is logged: after `/sandboxes/{sandbox}` when it
/// was asked in one, as [`RequestLine::shown_path`] shows it (shared with
/// the contract proxy's exchange line): a payment page's token, the
/// payer's capability, never shown, a long path cut at
/// [`RequestLine::MAX_PATH`] bytes on a character.
pub(crate) fn shown_path<'a>(sandbox: Option<&'a str>, path: &'a str) -> ShownPath<'a> {
    let (shown, after) = RequestLine::shown_path(path);
    ShownPath(sandbox, shown, after)
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
        let long = format!("/api/payments/{}/status", "A".repeat(60_000));
        assert_eq!(
            shown_path(None, &long).to_string(),
            format!("{}…", &long[..256])
        );
    }

    /// The payer page's token is the payer's capability: whoever reads the
    /// log could pay, decline or cancel with it.
    #[test]
    fn a_payment_pages_token_is_never_logged() {
        let token = "Da6vPJYwBvZFHi471juYGLIVrenoMSk5";
        let id = "01a2269a-4271-7261-9406-1a90300163bd";
        assert_eq!(
            shown_path(None, &format!("/pay/{token}")).to_string(),
            "/pay/[redacted]"
        );
        assert_eq!(
            shown_path(Some(id), &format!("/pay/{token}")).to_string(),
            format!("/sandboxes/{id}/pay/[redacted]")
        );
        assert_eq!(
            shown_path(None, "/api/payments/pay/status").to_string(),
            "/api/payments/pay/status"
        );
    }
}
