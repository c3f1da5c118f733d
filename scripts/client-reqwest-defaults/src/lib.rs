//! Nothing here: the test is in `tests/`.
