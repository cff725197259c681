//! The `capture` tool: arguments, devices, running scenarios and replays, the summary.

pub mod args;
pub mod device;
pub mod exec;
pub mod outcome;
pub mod progress;
pub mod replay;
pub mod run;
pub mod settings;
pub mod stacks;
pub mod summary;

pub use args::Args;
pub use outcome::Outcome;
pub use run::run;
