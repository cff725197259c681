//! Rank numbers of files opened together: the one rule in core, so the page, `memsnap fleet`
//! and `memsnap export` number ranks alike.

pub use memsnap_core::rank_name::{rank_in_name, rank_numbers};
