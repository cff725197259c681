//! The frames each scenario step's allocations carry: the step itself (file, line, name),
//! then each enclosing `repeat`, then the scenario, innermost first as in PyTorch's stacks.
//! Interned once per step.

use std::collections::HashMap;
use std::sync::Arc;

use memsnap_core::snapshot::{Frame, FrameId, StackId, Stacks};

use crate::scenario::{Scenario, Step, StepKind};

/// Stack id of every step, by step id.
pub fn intern(scenario: &Scenario, stacks: &mut Stacks) -> HashMap<usize, StackId> {
    let file: Arc<str> = Arc::from(scenario.file.as_str());
    let root = stacks.push_frame(Frame {
        filename: file.clone(),
        line: 1,
        name: Arc::from(format!("scenario {}", scenario.name).as_str()),
        extra: Vec::new(),
    });
    let mut out = HashMap::new();
    walk(&scenario.steps, &file, &mut vec![root], stacks, &mut out);
    out
}

fn walk(
    steps: &[Step],
    file: &Arc<str>,
    outer: &mut Vec<FrameId>,
    stacks: &mut Stacks,
    out: &mut HashMap<usize, StackId>,
) {
    for step in steps {
        let frame = stacks.push_frame(Frame {
            filename: file.clone(),
            line: step.line as i64,
            name: Arc::from(step.name.as_str()),
            extra: Vec::new(),
        });
        let ids: Vec<FrameId> = std::iter::once(frame)
            .chain(outer.iter().rev().copied())
            .collect();
        out.insert(step.id, stacks.push_stack(ids.into_boxed_slice()));
        if let StepKind::Repeat { body, .. } = &step.kind {
            outer.push(frame);
            walk(body, file, outer, stacks, out);
            outer.pop();
        }
    }
}
