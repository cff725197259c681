//! memsnap-capture: the `capture` and `memsnap` command-line tools.
//!
//! - [`scenario`]: scenario files (built-in and user) and running them.

pub mod scenario;
