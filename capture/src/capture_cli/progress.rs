//! The progress bar of long runs: on stderr, and only when stderr is a terminal.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress(ProgressBar);

/// Runs shorter than this finish before a bar would be worth drawing.
const MIN_ACTIONS: u64 = 2000;

impl Progress {
    pub fn new(total: u64, label: &str, quiet: bool) -> Progress {
        if quiet || total < MIN_ACTIONS || !std::io::stderr().is_terminal() {
            return Progress(ProgressBar::hidden());
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} steps ({eta} left)")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(label.to_string());
        Progress(bar)
    }

    pub fn inc(&self) {
        self.0.inc(1);
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}
