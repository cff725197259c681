//! A scenario as checked data: steps with parsed expressions, each knowing its line, ready to run.

use super::expr::Expr;
use super::template::Template;

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// The file name frames carry (`scenarios/churn.toml` for built-ins, the path for files).
    pub file: String,
    /// Device capacity the scenario was written for; `--capacity` overrides it.
    pub capacity: Option<u64>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone)]
pub struct Step {
    /// Unique in the scenario: the runner interns one stack per step.
    pub id: usize,
    pub line: usize,
    /// The frame name: the step's `name`, or one made from what it does (`alloc act{i}`).
    pub name: String,
    pub kind: StepKind,
}

#[derive(Debug, Clone)]
pub enum StepKind {
    Alloc {
        tensor: Template,
        size: Expr,
        stream: String,
    },
    Free {
        tensor: Template,
    },
    RecordStream {
        tensor: Template,
        stream: String,
    },
    EmptyCache,
    Sync,
    Let {
        var: String,
        value: Expr,
    },
    Repeat {
        times: Expr,
        var: Option<String>,
        body: Vec<Step>,
    },
}

/// The stream every scenario has: PyTorch's default stream, id 0 in snapshots.
pub const DEFAULT_STREAM: &str = "default";
