use super::*;

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_few_names_are_listed_whole() {
    assert_eq!(quoted_names(&names(&["a"])), "a");
    assert_eq!(quoted_names(&names(&["a", "b", "c"])), "a, b, c");
}

#[test]
fn many_names_stop_at_200_bytes_and_say_how_many_more() {
    let long: Vec<String> = (0..10).map(|n| format!("{n}{}", "x".repeat(63))).collect();
    let shown = quoted_names(&long);
    assert!(shown.ends_with(" and 7 more"), "{shown}");
    assert!(shown.len() <= NAMES_SHOWN + " and 7 more".len(), "{shown}");
}

#[test]
fn one_name_over_the_bound_is_cut_at_a_character() {
    // Replica names are at most 64 characters, so up to 256 bytes.
    let wide = "𝄞".repeat(64);
    let shown = quoted_names(&[wide.clone(), "b".to_owned()]);
    assert!(shown.starts_with(&"𝄞".repeat(50)), "{shown}");
    assert!(shown.ends_with("… and 1 more"), "{shown}");
    assert!(!shown.contains(&wide), "{shown}");
}

#[test]
fn counts_are_said_in_words() {
    assert_eq!(counted(0, "transaction"), "0 transactions");
    assert_eq!(counted(1, "sandbox"), "1 sandbox");
    assert_eq!(counted(2, "sandbox"), "2 sandboxes");
    assert_eq!(counted(3, "journal entry"), "3 journal entries");
}
