//! The `Host` rule's unit tests.

use axum::http::{Request, Version, header::HOST};

use super::host::host_refused;

fn request(version: Version, hosts: &[&str]) -> Request<()> {
    let mut builder = Request::builder()
        .uri("/api/payments/x/status")
        .version(version);
    for host in hosts {
        builder = builder.header(HOST, *host);
    }
    builder.body(()).expect("request")
}

#[test]
fn one_host_of_host_and_port_characters_passes() {
    for host in [
        "127.0.0.1:8080",
        "shop.example",
        "[::1]:80",
        "xn--bcher-kva.example",
        "",
        "shop.example:",
        "shop.example:65535",
        "[fe80::1%25eth0]:8080",
        "[::ffff:127.0.0.1]",
        "a;b=c",
    ] {
        assert_eq!(
            host_refused(&request(Version::HTTP_11, &[host])),
            None,
            "{host:?}"
        );
    }
    // HTTP/1.0 had no Host header.
    assert_eq!(host_refused(&request(Version::HTTP_10, &[])), None);
}

#[test]
fn a_missing_a_second_or_a_malformed_host_is_refused() {
    assert_eq!(
        host_refused(&request(Version::HTTP_11, &[])),
        Some("an HTTP/1.1 request needs a Host header")
    );
    for version in [Version::HTTP_10, Version::HTTP_11] {
        assert_eq!(
            host_refused(&request(version, &["a.example", "b.example"])),
            Some("the request carries more than one Host header")
        );
    }
    for host in [
        "a b",
        "user@shop.example",
        "shop.example/x",
        "shop?x",
        "a\"b",
        "é",
        "x:abc",
        "x:80:90",
        "[::1",
        "::1",
        "x,y",
        "x:99999999",
        "x:65536",
        "x:123456",
        "[]:80",
        "[::1]x",
        "[::1]:8a",
        "[1.2.3.4]",
        "[::1]]",
    ] {
        assert_eq!(
            host_refused(&request(Version::HTTP_11, &[host])),
            Some("the Host header is not a host and an optional port"),
            "{host:?}"
        );
    }
}
