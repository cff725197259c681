//! memsnap-capture: the `capture` and `memsnap` command-line tools.
//!
//! - [`scenario`]: scenario files (built-in and user) and running them.
//! - [`capture_cli`]: the `capture` tool (scenarios and replays through the allocator model).
//! - [`cuda`]: the CUDA backing for `capture --cuda`.

pub mod capture_cli;
pub mod cuda;
pub mod memsnap_cli;
pub mod scenario;
