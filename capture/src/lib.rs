//! memsnap-capture: the `capture` and `memsnap` command-line tools.
//!
//! - [`scenario`]: scenario files (built-in and user) and running them.
//! - [`capture_cli`]: the `capture` tool (scenarios and replays through the allocator model).
//! - [`cuda`]: the CUDA backing for `capture --cuda`.
//! - [`export`]: one snapshot as Parquet tables (`memsnap export --parquet`).
//! - [`report`]: one self-contained HTML file of the viewer and a snapshot (`memsnap html`).

pub mod capture_cli;
pub mod cuda;
pub mod export;
pub mod memsnap_cli;
pub mod report;
pub mod scenario;
