//! Colour for terminal output: on only when stdout is a terminal and `NO_COLOR` is unset or
//! empty (no-color.org), so piped output and files stay plain text.

use std::io::IsTerminal;

#[derive(Debug, Clone, Copy)]
pub struct Style {
    on: bool,
}

impl Style {
    /// Colour when stdout is a terminal and `NO_COLOR` does not ask for none.
    pub fn for_stdout() -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            on: !no_color && std::io::stdout().is_terminal(),
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Headings.
    pub fn head(&self, text: &str) -> String {
        self.paint("1", text)
    }

    /// Failures and growth.
    pub fn bad(&self, text: &str) -> String {
        self.paint("31", text)
    }

    /// Shrinkage and passes.
    pub fn good(&self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Settings to try.
    pub fn accent(&self, text: &str) -> String {
        self.paint("36", text)
    }

    /// Secondary detail (stacks, evidence).
    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
}

#[cfg(test)]
mod tests {
    use super::Style;

    #[test]
    fn plain_when_off() {
        let off = Style { on: false };
        assert_eq!(off.bad("x"), "x");
        let on = Style { on: true };
        assert_eq!(on.bad("x"), "\x1b[31mx\x1b[0m");
    }
}
