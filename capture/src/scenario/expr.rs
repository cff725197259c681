//! The small expression language of sizes, counts and names in scenario files:
//! numbers with optional units (`1.5GiB`), variables (loop variables and `let`s), `+ - * / %`,
//! parentheses, and the functions `rand(lo, hi)` (a seeded integer in [lo, hi]), `min`, `max`,
//! `floor`, `ceil`.

use super::rng::Rng;
use super::size::unit_bytes;

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    Var(String),
    Neg(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
    Call(Func, Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Func {
    Rand,
    Min,
    Max,
    Floor,
    Ceil,
}

impl Func {
    fn parse(name: &str) -> Option<Func> {
        Some(match name {
            "rand" => Func::Rand,
            "min" => Func::Min,
            "max" => Func::Max,
            "floor" => Func::Floor,
            "ceil" => Func::Ceil,
            _ => return None,
        })
    }

    fn arity(self) -> usize {
        match self {
            Func::Rand | Func::Min | Func::Max => 2,
            Func::Floor | Func::Ceil => 1,
        }
    }
}

/// A syntax error at a byte offset of the expression text.
#[derive(Debug, Clone, PartialEq)]
pub struct ExprError {
    pub offset: usize,
    pub message: String,
}

pub fn parse(text: &str) -> Result<Expr, ExprError> {
    let mut p = Parser { s: text, pos: 0 };
    p.skip_ws();
    if p.pos == text.len() {
        return Err(p.err("empty expression"));
    }
    let e = p.sum()?;
    p.skip_ws();
    if p.pos != text.len() {
        return Err(p.err(&format!("unexpected `{}`", p.rest_token())));
    }
    Ok(e)
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, m: &str) -> ExprError {
        ExprError {
            offset: self.pos,
            message: m.to_string(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.s[self.pos..].chars().next()
    }

    fn rest_token(&self) -> String {
        self.s[self.pos..]
            .chars()
            .take_while(|c| !c.is_whitespace())
            .collect()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if !c.is_whitespace() {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Result<Expr, ExprError> {
        let mut e = self.product()?;
        loop {
            let op = if self.eat('+') {
                Op::Add
            } else if self.eat('-') {
                Op::Sub
            } else {
                return Ok(e);
            };
            e = Expr::Bin(op, Box::new(e), Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<Expr, ExprError> {
        let mut e = self.unary()?;
        loop {
            let op = if self.eat('*') {
                Op::Mul
            } else if self.eat('/') {
                Op::Div
            } else if self.eat('%') {
                Op::Rem
            } else {
                return Ok(e);
            };
            e = Expr::Bin(op, Box::new(e), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        if self.eat('-') {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, ExprError> {
        self.skip_ws();
        match self.peek() {
            None => Err(self.err("expression ends too early")),
            Some('(') => {
                self.pos += 1;
                let e = self.sum()?;
                if !self.eat(')') {
                    return Err(self.err("missing `)`"));
                }
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => self.name(),
            Some(c) => Err(self.err(&format!("unexpected `{c}`"))),
        }
    }

    fn number(&mut self) -> Result<Expr, ExprError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || c == '.' || c == '_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        let digits: String = self.s[start..self.pos]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        let v: f64 = digits.parse().map_err(|_| ExprError {
            offset: start,
            message: format!("bad number `{}`", &self.s[start..self.pos]),
        })?;
        let unit_start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphabetic() {
                self.pos += 1;
            } else {
                break;
            }
        }
        let unit = &self.s[unit_start..self.pos];
        if unit.is_empty() {
            return Ok(Expr::Num(v));
        }
        match unit_bytes(unit) {
            Some(b) => Ok(Expr::Num(v * b)),
            None => Err(ExprError {
                offset: unit_start,
                message: format!(
                    "unknown size unit `{unit}` (use B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB or PiB)"
                ),
            }),
        }
    }

    fn name(&mut self) -> Result<Expr, ExprError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        let name = &self.s[start..self.pos];
        self.skip_ws();
        if self.peek() != Some('(') {
            return Ok(Expr::Var(name.to_string()));
        }
        let func = Func::parse(name).ok_or_else(|| ExprError {
            offset: start,
            message: format!("unknown function `{name}` (known: rand, min, max, floor, ceil)"),
        })?;
        self.pos += 1;
        let mut args = Vec::new();
        if !self.eat(')') {
            loop {
                args.push(self.sum()?);
                if self.eat(')') {
                    break;
                }
                if !self.eat(',') {
                    return Err(self.err("expected `,` or `)`"));
                }
            }
        }
        if args.len() != func.arity() {
            return Err(ExprError {
                offset: start,
                message: format!(
                    "`{name}` takes {} argument(s), got {}",
                    func.arity(),
                    args.len()
                ),
            });
        }
        Ok(Expr::Call(func, args))
    }
}

impl Expr {
    /// Every variable the expression reads, for checking names before running.
    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            Expr::Num(_) => {}
            Expr::Var(v) => out.push(v.clone()),
            Expr::Neg(e) => e.vars(out),
            Expr::Bin(_, a, b) => {
                a.vars(out);
                b.vars(out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.vars(out)),
        }
    }

    pub fn is_constant(&self) -> bool {
        match self {
            Expr::Num(_) => true,
            Expr::Var(_) => false,
            Expr::Neg(e) => e.is_constant(),
            Expr::Bin(_, a, b) => a.is_constant() && b.is_constant(),
            Expr::Call(Func::Rand, _) => false,
            Expr::Call(_, args) => args.iter().all(|a| a.is_constant()),
        }
    }

    /// Evaluates with `lookup` for variables (names were checked when the file was read).
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<f64>, rng: &mut Rng) -> Result<f64, String> {
        Ok(match self {
            Expr::Num(v) => *v,
            Expr::Var(name) => lookup(name).ok_or_else(|| format!("unknown variable `{name}`"))?,
            Expr::Neg(e) => -e.eval(lookup, rng)?,
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(lookup, rng)?, b.eval(lookup, rng)?);
                match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                    Op::Div | Op::Rem if b == 0.0 => return Err("division by zero".into()),
                    Op::Div => a / b,
                    Op::Rem => a % b,
                }
            }
            Expr::Call(f, args) => {
                let mut v = Vec::with_capacity(args.len());
                for a in args {
                    v.push(a.eval(lookup, rng)?);
                }
                match f {
                    Func::Rand => {
                        let (lo, hi) = (v[0].ceil(), v[1].floor());
                        if !(lo.is_finite() && hi.is_finite()) || lo > hi {
                            return Err(format!("rand({}, {}): empty range", v[0], v[1]));
                        }
                        if hi - lo > 1e15 {
                            return Err(format!("rand({}, {}): range too wide", v[0], v[1]));
                        }
                        lo + rng.below((hi - lo) as u64 + 1) as f64
                    }
                    Func::Min => v[0].min(v[1]),
                    Func::Max => v[0].max(v[1]),
                    Func::Floor => v[0].floor(),
                    Func::Ceil => v[0].ceil(),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> f64 {
        let mut rng = Rng::new(1);
        parse(s)
            .unwrap()
            .eval(&|n| (n == "i").then_some(3.0), &mut rng)
            .unwrap()
    }

    #[test]
    fn arithmetic_and_units() {
        assert_eq!(ev("1.5GiB"), 1610612736.0);
        assert_eq!(ev("2 * (i + 1) * 1MiB"), 8.0 * 1048576.0);
        assert_eq!(ev("-i + 10 % 4"), -1.0);
        assert_eq!(ev("max(i, 7) - min(1, 2)"), 6.0);
        assert_eq!(ev("1_000KB"), 1e6);
    }

    #[test]
    fn rand_is_seeded_and_in_range() {
        let e = parse("rand(128, 2048)").unwrap();
        let draw = |seed| {
            let mut rng = Rng::new(seed);
            (0..50)
                .map(|_| e.eval(&|_| None, &mut rng).unwrap())
                .collect::<Vec<_>>()
        };
        let a = draw(7);
        assert_eq!(a, draw(7));
        assert_ne!(a, draw(8));
        assert!(a
            .iter()
            .all(|v| (128.0..=2048.0).contains(v) && v.fract() == 0.0));
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = parse("3 gigs").unwrap_err();
        assert_eq!(e.offset, 2);
        let e = parse("3gigs").unwrap_err();
        assert!(e.message.contains("unknown size unit `gigs`"), "{e:?}");
        assert_eq!(e.offset, 1);
        assert!(parse("(1 + 2").unwrap_err().message.contains("`)`"));
        assert!(parse("rand(1)").unwrap_err().message.contains("2 argument"));
        assert!(parse("").unwrap_err().message.contains("empty"));
        assert!(parse("sqrt(4)")
            .unwrap_err()
            .message
            .contains("unknown function"));
    }
}
