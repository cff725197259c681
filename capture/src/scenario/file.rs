//! Reading a scenario file (TOML) into a checked [`Scenario`].
//!
//! ```toml
//! [scenario]
//! name = "example"
//! description = "what it shows"
//! capacity = "80GB"            # optional: the device it was written for
//!
//! [[step]]
//! alloc = "weights"            # a tensor name; `{expr}` parts make families: "act{i}"
//! size = "1.5GiB"              # bytes, or an expression: "seq * 4KiB", "rand(1, 8) * 1MB"
//! stream = "side"              # optional; "default" is stream 0, others are created
//! name = "load weights"        # optional frame name; default "alloc weights"
//!
//! [[step]]
//! repeat = 10                  # the steps up to the matching `end` run 10 times
//! var = "i"                    # optional loop variable, 0..9
//! [[step]]
//! let = "seq"                  # binds a variable for the rest of the enclosing block
//! value = "rand(128, 2048)"
//! [[step]]
//! free = "act{i}"
//! [[step]]
//! record_stream = "act{i}"     # the tensor is used on `stream` too
//! stream = "side"
//! [[step]]
//! sync = true                  # wait for every stream (pending frees complete)
//! [[step]]
//! empty_cache = true           # torch.cuda.empty_cache()
//! [[step]]
//! phase = "forward{i}"         # a START mark in external_annotations, as record_function writes
//! [[step]]
//! end_phase = "forward{i}"     # its END mark (an END with no START, or a START never ended,
//!                              # is written as it stands: the viewer shows and counts it)
//! [[step]]
//! end = true
//! ```
//! Every problem is reported with its line and column.

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::error::{line_col, ScenarioError};
use super::expr::{self, Expr};
use super::program::{PhaseMark, Scenario, Step, StepKind, DEFAULT_STREAM};
use super::rng::Rng;
use super::size;
use super::template::Template;

type V = Option<Spanned<toml::Value>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    scenario: Option<RawMeta>,
    #[serde(default)]
    step: Vec<Spanned<RawStep>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeta {
    name: Option<String>,
    description: Option<String>,
    capacity: V,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    alloc: V,
    free: V,
    record_stream: V,
    empty_cache: V,
    sync: V,
    #[serde(rename = "let")]
    let_: V,
    repeat: V,
    end: V,
    phase: V,
    end_phase: V,
    size: V,
    stream: V,
    name: V,
    value: V,
    var: V,
}

const ACTIONS: [&str; 10] = [
    "alloc",
    "free",
    "record_stream",
    "empty_cache",
    "sync",
    "let",
    "repeat",
    "end",
    "phase",
    "end_phase",
];

/// Parses `src` (the text of `file`) into a scenario named `default_name` unless it names itself.
pub fn parse(src: &str, file: &str, default_name: &str) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx { src, file };
    let raw: RawFile = toml::from_str(src).map_err(|e| {
        let at = e.span().map(|s| s.start).unwrap_or(0);
        ctx.err(at, e.message().to_string())
    })?;
    let (name, description, capacity) = match raw.scenario {
        Some(m) => {
            let capacity = match &m.capacity {
                Some(c) => Some(ctx.const_size(c, "capacity")?),
                None => None,
            };
            (m.name, m.description, capacity)
        }
        None => (None, None, None),
    };
    if raw.step.is_empty() {
        return Err(ctx.err(0, "the file has no [[step]]".into()));
    }
    // Flat steps with `repeat`/`end` markers become a tree.
    let mut stack: Vec<(Step, usize)> = Vec::new();
    let mut top: Vec<Step> = Vec::new();
    let mut scope: Vec<Vec<String>> = vec![Vec::new()];
    for (id, raw_step) in raw.step.iter().enumerate() {
        let at = raw_step.span().start;
        let step = ctx.step(raw_step.get_ref(), at, id, &mut scope)?;
        match step {
            Parsed::Open(s) => {
                scope.push(match &s.kind {
                    StepKind::Repeat { var: Some(v), .. } => vec![v.clone()],
                    _ => Vec::new(),
                });
                stack.push((s, at));
            }
            Parsed::Close => {
                let (done, _) = stack
                    .pop()
                    .ok_or_else(|| ctx.err(at, "`end` without a `repeat` to close".into()))?;
                scope.pop();
                push(&mut stack, &mut top, done);
            }
            Parsed::Step(s) => push(&mut stack, &mut top, s),
        }
    }
    if let Some((open, at)) = stack.pop() {
        return Err(ctx.err(
            at,
            format!("`repeat` (line {}) has no matching `end`", open.line),
        ));
    }
    Ok(Scenario {
        name: name.unwrap_or_else(|| default_name.to_string()),
        description: description.unwrap_or_default(),
        file: file.to_string(),
        capacity,
        steps: top,
    })
}

fn push(stack: &mut [(Step, usize)], top: &mut Vec<Step>, s: Step) {
    match stack.last_mut() {
        Some((
            Step {
                kind: StepKind::Repeat { body, .. },
                ..
            },
            _,
        )) => body.push(s),
        _ => top.push(s),
    }
}

enum Parsed {
    Step(Step),
    Open(Step),
    Close,
}

struct Ctx<'a> {
    src: &'a str,
    file: &'a str,
}

impl Ctx<'_> {
    fn err(&self, offset: usize, message: String) -> ScenarioError {
        let (line, column) = line_col(self.src, offset);
        ScenarioError {
            file: self.file.to_string(),
            line,
            column,
            message,
        }
    }

    fn line(&self, offset: usize) -> usize {
        line_col(self.src, offset).0
    }

    fn step(
        &self,
        r: &RawStep,
        at: usize,
        id: usize,
        scope: &mut [Vec<String>],
    ) -> Result<Parsed, ScenarioError> {
        let fields: [(&str, &V); 15] = [
            ("alloc", &r.alloc),
            ("free", &r.free),
            ("record_stream", &r.record_stream),
            ("empty_cache", &r.empty_cache),
            ("sync", &r.sync),
            ("let", &r.let_),
            ("repeat", &r.repeat),
            ("end", &r.end),
            ("phase", &r.phase),
            ("end_phase", &r.end_phase),
            ("size", &r.size),
            ("stream", &r.stream),
            ("name", &r.name),
            ("value", &r.value),
            ("var", &r.var),
        ];
        let actions: Vec<&str> = fields
            .iter()
            .filter(|(k, v)| ACTIONS.contains(k) && v.is_some())
            .map(|(k, _)| *k)
            .collect();
        let action = match actions.as_slice() {
            [one] => *one,
            [] => return Err(self.err(at, format!("a step needs one of {}", ACTIONS.join(", ")))),
            many => {
                return Err(self.err(
                    at,
                    format!("a step does one thing; this one has {}", many.join(" and ")),
                ))
            }
        };
        let allowed: &[&str] = match action {
            "alloc" => &["size", "stream", "name"],
            "record_stream" => &["stream", "name"],
            "repeat" => &["name", "var"],
            "free" | "empty_cache" | "sync" => &["name"],
            "let" => &["value"],
            _ => &[],
        };
        for (k, v) in &fields[ACTIONS.len()..] {
            if let Some(v) = v {
                if !allowed.contains(k) {
                    return Err(self.err(
                        v.span().start,
                        format!("`{k}` does not belong on a `{action}` step"),
                    ));
                }
            }
        }
        let line = self.line(at);
        let name_override = match &r.name {
            Some(n) => Some(self.string(n, "name")?),
            None => None,
        };
        let visible =
            |scope: &[Vec<String>]| -> Vec<String> { scope.iter().flatten().cloned().collect() };
        let kind = match action {
            "alloc" => {
                let tensor = self.template(r.alloc.as_ref(), "alloc", &visible(scope))?;
                let size_v = r
                    .size
                    .as_ref()
                    .ok_or_else(|| self.err(at, "an `alloc` step needs a `size`".into()))?;
                let size = self.expr(size_v, "size", &visible(scope))?;
                if size.is_constant() {
                    let v = size
                        .eval(&|_| None, &mut Rng::new(0))
                        .map_err(|m| self.err(size_v.span().start, m))?;
                    size::to_bytes(v).map_err(|m| self.err(size_v.span().start, m))?;
                }
                StepKind::Alloc {
                    tensor,
                    size,
                    stream: self.stream(r.stream.as_ref())?,
                }
            }
            "free" => StepKind::Free {
                tensor: self.template(r.free.as_ref(), "free", &visible(scope))?,
            },
            "phase" => StepKind::Phase {
                stage: PhaseMark::Start,
                name: self.template(r.phase.as_ref(), "phase", &visible(scope))?,
            },
            "end_phase" => StepKind::Phase {
                stage: PhaseMark::End,
                name: self.template(r.end_phase.as_ref(), "end_phase", &visible(scope))?,
            },
            "record_stream" => {
                let tensor =
                    self.template(r.record_stream.as_ref(), "record_stream", &visible(scope))?;
                if r.stream.is_none() {
                    return Err(self.err(at, "a `record_stream` step needs a `stream`".into()));
                }
                StepKind::RecordStream {
                    tensor,
                    stream: self.stream(r.stream.as_ref())?,
                }
            }
            "empty_cache" => {
                self.must_be_true(r.empty_cache.as_ref(), "empty_cache")?;
                StepKind::EmptyCache
            }
            "sync" => {
                self.must_be_true(r.sync.as_ref(), "sync")?;
                StepKind::Sync
            }
            "end" => {
                self.must_be_true(r.end.as_ref(), "end")?;
                return Ok(Parsed::Close);
            }
            "let" => {
                let var = self.ident(r.let_.as_ref(), "let")?;
                let value_v = r
                    .value
                    .as_ref()
                    .ok_or_else(|| self.err(at, "a `let` step needs a `value`".into()))?;
                let value = self.expr(value_v, "value", &visible(scope))?;
                if let Some(innermost) = scope.last_mut() {
                    innermost.push(var.clone());
                }
                StepKind::Let { var, value }
            }
            "repeat" => {
                let times = match &r.repeat {
                    Some(v) => self.expr(v, "repeat", &visible(scope))?,
                    None => unreachable!("action `repeat` means the key is present"),
                };
                let var = match &r.var {
                    Some(v) => Some(self.ident(Some(v), "var")?),
                    None => None,
                };
                let kind = StepKind::Repeat {
                    times,
                    var,
                    body: Vec::new(),
                };
                let name = name_override.unwrap_or_else(|| default_name(&kind));
                return Ok(Parsed::Open(Step {
                    id,
                    line,
                    name,
                    kind,
                }));
            }
            _ => unreachable!("action list and match agree"),
        };
        let name = name_override.unwrap_or_else(|| default_name(&kind));
        Ok(Parsed::Step(Step {
            id,
            line,
            name,
            kind,
        }))
    }

    fn string(&self, v: &Spanned<toml::Value>, key: &str) -> Result<String, ScenarioError> {
        match v.get_ref() {
            toml::Value::String(s) => Ok(s.clone()),
            other => Err(self.err(
                v.span().start,
                format!("`{key}` must be a string, not {}", other.type_str()),
            )),
        }
    }

    fn ident(&self, v: Option<&Spanned<toml::Value>>, key: &str) -> Result<String, ScenarioError> {
        let v = v.ok_or_else(|| self.err(0, format!("missing `{key}`")))?;
        let s = self.string(v, key)?;
        let ok = s
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(self.err(
                v.span().start,
                format!("`{key}` must be a variable name (letters, digits, _), not `{s}`"),
            ));
        }
        Ok(s)
    }

    fn stream(&self, v: Option<&Spanned<toml::Value>>) -> Result<String, ScenarioError> {
        match v {
            None => Ok(DEFAULT_STREAM.to_string()),
            Some(v) => {
                let s = self.string(v, "stream")?;
                if s.is_empty() {
                    return Err(self.err(v.span().start, "`stream` is empty".into()));
                }
                Ok(s)
            }
        }
    }

    fn must_be_true(
        &self,
        v: Option<&Spanned<toml::Value>>,
        key: &str,
    ) -> Result<(), ScenarioError> {
        match v {
            Some(v) if v.get_ref().as_bool() == Some(true) => Ok(()),
            Some(v) => Err(self.err(v.span().start, format!("`{key}` takes `true`"))),
            None => Ok(()),
        }
    }

    /// Offset of a string value's text in the file (after the opening quote).
    fn text_offset(v: &Spanned<toml::Value>) -> usize {
        v.span().start + 1
    }

    fn template(
        &self,
        v: Option<&Spanned<toml::Value>>,
        key: &str,
        visible: &[String],
    ) -> Result<Template, ScenarioError> {
        let v = v.ok_or_else(|| self.err(0, format!("missing `{key}`")))?;
        let s = self.string(v, key)?;
        let t = Template::parse(&s)
            .map_err(|e| self.err(Self::text_offset(v) + e.offset, e.message))?;
        let mut vars = Vec::new();
        t.vars(&mut vars);
        self.check_vars(&vars, visible, v.span())?;
        Ok(t)
    }

    fn expr(
        &self,
        v: &Spanned<toml::Value>,
        key: &str,
        visible: &[String],
    ) -> Result<Expr, ScenarioError> {
        let e = match v.get_ref() {
            toml::Value::Integer(i) => Expr::Num(*i as f64),
            toml::Value::Float(f) => Expr::Num(*f),
            toml::Value::String(s) => {
                expr::parse(s).map_err(|e| self.err(Self::text_offset(v) + e.offset, e.message))?
            }
            other => {
                return Err(self.err(
                    v.span().start,
                    format!(
                        "`{key}` must be a number or a string like \"1.5GiB\", not {}",
                        other.type_str()
                    ),
                ))
            }
        };
        let mut vars = Vec::new();
        e.vars(&mut vars);
        self.check_vars(&vars, visible, v.span())?;
        Ok(e)
    }

    fn check_vars(
        &self,
        vars: &[String],
        visible: &[String],
        span: Range<usize>,
    ) -> Result<(), ScenarioError> {
        for name in vars {
            if !visible.contains(name) {
                let offset = find_word(&self.src[span.clone()], name)
                    .map(|o| span.start + o)
                    .unwrap_or(span.start);
                let known = if visible.is_empty() {
                    "none is defined here".to_string()
                } else {
                    format!("defined here: {}", visible.join(", "))
                };
                return Err(self.err(offset, format!("unknown variable `{name}` ({known})")));
            }
        }
        Ok(())
    }

    fn const_size(&self, v: &Spanned<toml::Value>, key: &str) -> Result<u64, ScenarioError> {
        let e = self.expr(v, key, &[])?;
        let x = e
            .eval(&|_| None, &mut Rng::new(0))
            .map_err(|m| self.err(v.span().start, m))?;
        size::to_bytes(x).map_err(|m| self.err(v.span().start, format!("`{key}`: {m}")))
    }
}

/// Offset of `word` in `text` as a whole identifier (not inside a longer name).
fn find_word(text: &str, word: &str) -> Option<usize> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

fn default_name(kind: &StepKind) -> String {
    match kind {
        StepKind::Alloc { tensor, .. } => format!("alloc {}", tensor.source),
        StepKind::Free { tensor } => format!("free {}", tensor.source),
        StepKind::RecordStream { tensor, stream } => {
            format!("record_stream {} on {stream}", tensor.source)
        }
        StepKind::EmptyCache => "empty_cache".into(),
        StepKind::Sync => "synchronize".into(),
        StepKind::Phase { stage, name } => format!("{} {}", stage.as_str(), name.source),
        StepKind::Let { var, .. } => format!("let {var}"),
        StepKind::Repeat { var: Some(v), .. } => format!("repeat over {v}"),
        StepKind::Repeat { var: None, .. } => "repeat".into(),
    }
}
