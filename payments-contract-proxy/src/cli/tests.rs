//! The command line's own helpers: the console's address, the coverage
//! gate's percentage.

use super::*;

#[test]
fn the_console_is_announced_where_a_client_can_reach_it() {
    let at = |host: &str, addr: &str| announced("https", host, addr.parse().expect("an address"));
    assert_eq!(at("0.0.0.0", "0.0.0.0:8090"), "https://127.0.0.1:8090");
    assert_eq!(at("::", "[::]:8090"), "https://[::1]:8090");
    assert_eq!(at("[::]", "[::]:8090"), "https://[::1]:8090");
    assert_eq!(at("127.0.0.1", "127.0.0.1:8090"), "https://127.0.0.1:8090");
    assert_eq!(at("10.1.2.3", "10.1.2.3:8090"), "https://10.1.2.3:8090");
    assert_eq!(
        at("proxy.internal.example", "10.1.2.3:8090"),
        "https://proxy.internal.example:8090"
    );
    assert_eq!(
        at("localhost", "127.0.0.1:41000"),
        "https://localhost:41000"
    );
}

#[test]
fn a_minimum_coverage_is_a_percentage_from_0_to_100() {
    let dec = |text: &str| text.parse::<Decimal>().expect("a decimal");
    assert_eq!(parse_percent("80"), Ok(dec("80")));
    assert_eq!(parse_percent("62.5%"), Ok(dec("62.5")));
    assert_eq!(parse_percent(" 14.29 "), Ok(dec("14.29")));
    assert_eq!(parse_percent("0"), Ok(Decimal::ZERO));
    assert_eq!(parse_percent("100"), Ok(Decimal::ONE_HUNDRED));
    for bad in ["101", "-1", "NaN", "eighty", "", "inf", "1e2", "%"] {
        assert!(parse_percent(bad).is_err(), "{bad}");
    }
}

/// `--min-coverage` is compared with the share seen exactly, not with
/// the figure rounded to one decimal place the table shows: 7 of 49
/// cells (14.2857… %, shown 14.3) is below 14.29 and 14.3.
#[test]
fn a_minimum_coverage_is_compared_exactly() {
    use payments_interface::coverage::Cell;
    let none = Coverage::new();
    assert!(coverage_shortfall(&none, None).is_none());
    assert!(coverage_shortfall(&none, Some(Decimal::ZERO)).is_none());
    assert!(coverage_shortfall(&none, Some("0.1".parse().expect("0.1"))).is_some());
    let mut seven = Coverage::new();
    let cells: Vec<Cell> = seven.cells().iter().map(|&(cell, _)| cell).collect();
    assert_eq!(cells.len(), 49, "the matrix this example counts on");
    for cell in &cells[..7] {
        match *cell {
            Cell::Answer {
                endpoint,
                status,
                code,
            } => seven.answer(endpoint, status, code.map(|c| c.as_str())),
            Cell::Transition { from, to } => seven.transition(from, to),
            _ => unreachable!("a cell of this version"),
        }
    }
    assert_eq!(seven.cells().iter().filter(|(_, n)| *n > 0).count(), 7);
    let gate =
        |pct: &str| coverage_shortfall(&seven, Some(pct.parse().expect("a decimal"))).is_none();
    for below in ["14.29", "14.3", "14.2858", "14.28571428571428571428571429"] {
        assert!(!gate(below), "7 of 49 is below {below}");
    }
    for met in ["14.28", "14.2857", "14.28571428571428571428571428", "0"] {
        assert!(gate(met), "7 of 49 meets {met}");
    }
    // Every cell: 100 exactly.
    let mut all = Coverage::new();
    all.merge(&seven);
    for cell in &cells {
        if let Cell::Transition { from, to } = *cell {
            all.transition(from, to);
        } else if let Cell::Answer {
            endpoint,
            status,
            code,
        } = *cell
        {
            all.answer(endpoint, status, code.map(|c| c.as_str()));
        }
    }
    assert!(coverage_shortfall(&all, Some(Decimal::ONE_HUNDRED)).is_none());
}
