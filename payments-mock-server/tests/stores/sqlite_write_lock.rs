//! A SQLite file whose write lock another program holds at start (the
//! `sqlite3` shell in a transaction): the start is refused with exit 1
//! naming the file (CONTRACT section 15), instead of serving and answering
//! its first change 503 after 4 s while health said ok.

use payments_mock_server::Durability;
use payments_mock_server::store::SqliteStore;

use crate::backends::{self, REPLICA};

#[test]
fn a_write_lock_held_by_another_program_refuses_the_start() {
    let (_dir, path) = backends::sqlite_path();
    drop(SqliteStore::open(&path, Durability::Process, REPLICA).expect("a new store"));
    let other = rusqlite::Connection::open(&path).expect("another program's connection");
    other
        .execute_batch("BEGIN IMMEDIATE")
        .expect("its write lock");
    let refused = match SqliteStore::open(&path, Durability::Process, REPLICA) {
        Ok(_) => panic!("started on a file whose write lock another program holds"),
        Err(e) => e,
    };
    assert_eq!(refused.exit_code(), 1, "{refused}");
    let said = refused.to_string();
    assert!(!said.contains('\n'), "one line: {said}");
    assert!(
        said.contains(&path.display().to_string()),
        "names the file: {said}"
    );
    assert!(said.contains("write lock"), "{said}");
    // Control: released, it starts.
    other.execute_batch("ROLLBACK").expect("released");
    SqliteStore::open(&path, Durability::Process, REPLICA).expect("starts once released");
}
