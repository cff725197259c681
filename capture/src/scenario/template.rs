//! Tensor names with expressions in braces, `act{i}.{layers - 1 - l}`, so that a loop can
//! allocate and free a family of tensors by name.

use super::expr::{self, Expr, ExprError};
use super::rng::Rng;

#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Lit(String),
    Expr(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    pub parts: Vec<Part>,
    /// The text as written, for messages and default frame names.
    pub source: String,
}

impl Template {
    pub fn parse(text: &str) -> Result<Template, ExprError> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(open) = rest.find(['{', '}']) {
            if rest.as_bytes()[open] == b'}' {
                return Err(ExprError {
                    offset: offset + open,
                    message: "`}` without `{`".into(),
                });
            }
            lit.push_str(&rest[..open]);
            let inner_start = open + 1;
            let close = rest[inner_start..].find('}').ok_or_else(|| ExprError {
                offset: offset + open,
                message: "`{` without `}`".into(),
            })?;
            let inner = &rest[inner_start..inner_start + close];
            let e = expr::parse(inner).map_err(|e| ExprError {
                offset: offset + inner_start + e.offset,
                message: e.message,
            })?;
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(&mut lit)));
            }
            parts.push(Part::Expr(e));
            let consumed = inner_start + close + 1;
            offset += consumed;
            rest = &rest[consumed..];
        }
        lit.push_str(rest);
        if !lit.is_empty() {
            parts.push(Part::Lit(lit));
        }
        if parts.is_empty() {
            return Err(ExprError {
                offset: 0,
                message: "empty name".into(),
            });
        }
        Ok(Template {
            parts,
            source: text.to_string(),
        })
    }

    pub fn vars(&self, out: &mut Vec<String>) {
        for p in &self.parts {
            if let Part::Expr(e) = p {
                e.vars(out);
            }
        }
    }

    pub fn render(
        &self,
        lookup: &dyn Fn(&str) -> Option<f64>,
        rng: &mut Rng,
    ) -> Result<String, String> {
        let mut s = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(l) => s.push_str(l),
                Part::Expr(e) => {
                    let v = e.eval(lookup, rng)?;
                    if v.fract() != 0.0 || !v.is_finite() {
                        return Err(format!(
                            "name `{}`: `{{...}}` gave {v}, not a whole number",
                            self.source
                        ));
                    }
                    s.push_str(&format!("{}", v as i64));
                }
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_loop_names() {
        let t = Template::parse("act{i}.{n - 1 - i}").unwrap();
        let look = |v: &str| match v {
            "i" => Some(2.0),
            "n" => Some(10.0),
            _ => None,
        };
        assert_eq!(t.render(&look, &mut Rng::new(0)).unwrap(), "act2.7");
        assert_eq!(
            Template::parse("weights")
                .unwrap()
                .render(&look, &mut Rng::new(0))
                .unwrap(),
            "weights"
        );
    }

    #[test]
    fn bad_braces() {
        assert_eq!(Template::parse("a{i").unwrap_err().offset, 1);
        assert_eq!(Template::parse("a}").unwrap_err().offset, 1);
        assert_eq!(Template::parse("ab{1 +}").unwrap_err().offset, 6);
    }
}
