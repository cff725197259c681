//! Running a scenario: walks the steps, evaluates sizes and names with the seeded generator,
//! and hands each action to a [`Target`] (the allocator executor, or a counter for the
//! progress bar's length).

use super::error::ScenarioError;
use super::expr::Expr;
use super::program::{PhaseMark, Scenario, Step, StepKind};
use super::rng::Rng;
use super::size;
use super::template::Template;

/// Steps run in one scenario at most: a runaway loop is an error, not a hang.
pub const MAX_ACTIONS: u64 = 50_000_000;

/// Loop counts above this are typos.
pub const MAX_REPEAT: f64 = 10_000_000.0;

/// What a running scenario does. Errors are plain messages; the runner adds the line.
pub trait Target {
    fn alloc(&mut self, step: &Step, tensor: String, size: u64, stream: &str)
        -> Result<(), String>;
    fn free(&mut self, step: &Step, tensor: String) -> Result<(), String>;
    fn record_stream(&mut self, step: &Step, tensor: String, stream: &str) -> Result<(), String>;
    fn empty_cache(&mut self, step: &Step) -> Result<(), String>;
    fn sync(&mut self, step: &Step) -> Result<(), String>;
    /// A phase mark; not an action (the progress bar does not count it).
    fn phase(&mut self, step: &Step, stage: PhaseMark, name: String) -> Result<(), String>;
}

/// Counts actions; running it first gives the progress bar its length (same seed, same count).
#[derive(Default)]
pub struct Counter(pub u64);

impl Target for Counter {
    fn alloc(&mut self, _: &Step, _: String, _: u64, _: &str) -> Result<(), String> {
        self.0 += 1;
        Ok(())
    }
    fn free(&mut self, _: &Step, _: String) -> Result<(), String> {
        self.0 += 1;
        Ok(())
    }
    fn record_stream(&mut self, _: &Step, _: String, _: &str) -> Result<(), String> {
        self.0 += 1;
        Ok(())
    }
    fn empty_cache(&mut self, _: &Step) -> Result<(), String> {
        self.0 += 1;
        Ok(())
    }
    fn sync(&mut self, _: &Step) -> Result<(), String> {
        self.0 += 1;
        Ok(())
    }
    fn phase(&mut self, _: &Step, _: PhaseMark, _: String) -> Result<(), String> {
        Ok(())
    }
}

pub fn run(scenario: &Scenario, seed: u64, target: &mut dyn Target) -> Result<u64, ScenarioError> {
    let mut r = Runner {
        scenario,
        rng: Rng::new(seed),
        vars: Vec::new(),
        actions: 0,
        target,
    };
    r.block(&scenario.steps)?;
    Ok(r.actions)
}

struct Runner<'a> {
    scenario: &'a Scenario,
    rng: Rng,
    /// Variables in scope, innermost last (shadowing by search from the end).
    vars: Vec<(String, f64)>,
    actions: u64,
    target: &'a mut dyn Target,
}

impl Runner<'_> {
    fn err(&self, step: &Step, message: String) -> ScenarioError {
        ScenarioError {
            file: self.scenario.file.clone(),
            line: step.line,
            column: 1,
            message,
        }
    }

    fn block(&mut self, steps: &[Step]) -> Result<(), ScenarioError> {
        let scope_start = self.vars.len();
        for step in steps {
            self.step(step)?;
        }
        self.vars.truncate(scope_start);
        Ok(())
    }

    fn eval(&mut self, e: &Expr) -> Result<f64, String> {
        let vars = &self.vars;
        let lookup = |name: &str| vars.iter().rev().find(|(n, _)| n == name).map(|(_, v)| *v);
        e.eval(&lookup, &mut self.rng)
    }

    fn render(&mut self, t: &Template) -> Result<String, String> {
        let vars = &self.vars;
        let lookup = |name: &str| vars.iter().rev().find(|(n, _)| n == name).map(|(_, v)| *v);
        t.render(&lookup, &mut self.rng)
    }

    fn step(&mut self, step: &Step) -> Result<(), ScenarioError> {
        let res = match &step.kind {
            StepKind::Repeat { times, var, body } => {
                let n = self.eval(times).map_err(|m| self.err(step, m))?;
                if !(0.0..=MAX_REPEAT).contains(&n) || n.fract() != 0.0 {
                    return Err(self.err(
                        step,
                        format!("`repeat` must be a whole number from 0 to {MAX_REPEAT}, got {n}"),
                    ));
                }
                for i in 0..n as u64 {
                    let mark = self.vars.len();
                    if let Some(v) = var {
                        self.vars.push((v.clone(), i as f64));
                    }
                    self.block(body)?;
                    self.vars.truncate(mark);
                }
                return Ok(());
            }
            StepKind::Phase { stage, name } => {
                let name = self.render(name).map_err(|m| self.err(step, m))?;
                return self
                    .target
                    .phase(step, *stage, name)
                    .map_err(|m| self.err(step, m));
            }
            StepKind::Let { var, value } => {
                // Lives until the enclosing block ends (`block` truncates).
                let v = self.eval(value).map_err(|m| self.err(step, m))?;
                self.vars.push((var.clone(), v));
                return Ok(());
            }
            StepKind::Alloc {
                tensor,
                size: s,
                stream,
            } => {
                let name = self.render(tensor).map_err(|m| self.err(step, m))?;
                let v = self.eval(s).map_err(|m| self.err(step, m))?;
                let bytes = size::to_bytes(v)
                    .map_err(|m| self.err(step, format!("alloc `{name}`: {m}")))?;
                self.target.alloc(step, name, bytes, stream)
            }
            StepKind::Free { tensor } => {
                let name = self.render(tensor).map_err(|m| self.err(step, m))?;
                self.target.free(step, name)
            }
            StepKind::RecordStream { tensor, stream } => {
                let name = self.render(tensor).map_err(|m| self.err(step, m))?;
                self.target.record_stream(step, name, stream)
            }
            StepKind::EmptyCache => self.target.empty_cache(step),
            StepKind::Sync => self.target.sync(step),
        };
        res.map_err(|m| self.err(step, m))?;
        self.actions += 1;
        if self.actions > MAX_ACTIONS {
            return Err(self.err(
                step,
                format!(
                    "the scenario runs more than {MAX_ACTIONS} actions; is a `repeat` too large?"
                ),
            ));
        }
        Ok(())
    }
}
