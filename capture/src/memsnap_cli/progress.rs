//! The reading bar every command shows on a terminal for a file that takes more than a moment
//! to read: on stderr, drawn only after [`DELAY`], never when stderr is not a terminal.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Reads shorter than this finish before a bar is worth drawing.
const DELAY: Duration = Duration::from_millis(300);

pub struct Reading {
    total: u64,
    label: String,
    started: Instant,
    bar: Option<ProgressBar>,
    enabled: bool,
}

impl Reading {
    /// A bar for reading `total` bytes of the file `path` (named by its last component, so the
    /// bar fits a line).
    pub fn new(total: u64, path: &str) -> Reading {
        let name = std::path::Path::new(path)
            .file_name()
            .map_or(path.into(), |n| n.to_string_lossy());
        Reading {
            total,
            label: name.into_owned(),
            started: Instant::now(),
            bar: None,
            enabled: std::io::stderr().is_terminal(),
        }
    }

    /// `done` of the total bytes consumed.
    pub fn set(&mut self, done: u64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() >= DELAY {
            let bar = ProgressBar::with_draw_target(Some(self.total), ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("{msg} [{bar:40}] {bytes}/{total_bytes} ({eta} left)")
            {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(format!("reading {}", self.label));
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
