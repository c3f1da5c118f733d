//! `--host`: a name or an address to listen on, an IPv6 address also in
//! brackets (`[::1]`), as the banners write it and the mock's `--host`
//! takes it.

use std::net::Ipv6Addr;

/// `--host` as the listener binds it: `[::1]` is the address `::1`; a
/// bracket left open (`[::1`, `::1]`), or brackets around something other
/// than an IPv6 address (`[localhost]`), is refused with the reason.
pub(crate) fn parse_host(text: &str) -> Result<String, String> {
    let opens = text.starts_with('[');
    let closes = text.ends_with(']');
    if !opens && !closes && !text.contains(['[', ']']) {
        return Ok(text.to_owned());
    }
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .filter(|inner| !inner.contains(['[', ']']));
    let Some(inner) = inner else {
        return Err(
            "a bracket left open, or not around the whole host: an IPv6 address is written [::1] or ::1 (the port goes in --port)"
                .to_owned(),
        );
    };
    // An address with a zone (`fe80::1%eth0`) is the system's to resolve.
    let address = inner.split_once('%').map_or(inner, |(address, _)| address);
    if address.parse::<Ipv6Addr>().is_err() {
        return Err(
            "brackets hold an IPv6 address ([::1]); a name or IPv4 address goes without them"
                .to_owned(),
        );
    }
    Ok(inner.to_owned())
}

#[cfg(test)]
mod tests {
    use super::parse_host;

    #[test]
    fn an_ipv6_address_in_brackets_is_the_address() {
        assert_eq!(parse_host("[::1]").as_deref(), Ok("::1"));
        assert_eq!(parse_host("[::]").as_deref(), Ok("::"));
        assert_eq!(parse_host("[fe80::1%lo]").as_deref(), Ok("fe80::1%lo"));
        for kept in ["::1", "127.0.0.1", "0.0.0.0", "localhost", "proxy.example"] {
            assert_eq!(parse_host(kept).as_deref(), Ok(kept));
        }
    }

    #[test]
    fn a_bracket_left_open_or_around_a_name_is_refused() {
        for open in ["[::1", "::1]", "[", "]", "[[::1]]", "[::1]:8080"] {
            let reason = parse_host(open).expect_err(open);
            assert!(reason.contains("left open"), "{open}: {reason}");
        }
        for name in ["[localhost]", "[127.0.0.1]", "[]"] {
            let reason = parse_host(name).expect_err(name);
            assert!(
                reason.contains("brackets hold an IPv6 address"),
                "{name}: {reason}"
            );
        }
    }
}
