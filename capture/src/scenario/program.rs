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
    /// A START or END mark of a phase, written to `external_annotations`.
    Phase {
        stage: PhaseMark,
        name: Template,
    },
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

/// Which mark a `phase` / `end_phase` step writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseMark {
    Start,
    End,
}

impl PhaseMark {
    /// The `stage` PyTorch writes.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseMark::Start => "START",
            PhaseMark::End => "END",
        }
    }
}

/// The stream every scenario has: PyTorch's default stream, id 0 in snapshots.
pub const DEFAULT_STREAM: &str = "default";
