//! One change a fix makes, in a form the model replays and `memsnap replay` accepts: allocator
//! settings (`--set KEY=VALUE`), a memory-fraction cap (`--memory-cap-bytes`, which
//! `garbage_collection_threshold` needs to act), `empty_cache()` calls added before trace
//! entries (`--empty-cache-at`), and allocation sizes padded up (`--pad FROM=TO`).

use crate::allocator::rounding::round_size;
use crate::allocator::{Config, ConfigError};
use crate::analysis::pace::{self, Pace, CHUNK};
use crate::analysis::replay::{Request, Traced};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Change {
    /// `PYTORCH_CUDA_ALLOC_CONF` keys and values, as `--set` takes them.
    pub set: Vec<(String, String)>,
    /// `torch.cuda.set_per_process_memory_fraction` as the bytes it allows.
    pub memory_cap: Option<u64>,
    /// Trace indices before whose request an `empty_cache()` call is added.
    pub empty_cache_at: Vec<usize>,
    /// Allocations whose block size (under the file's rounding) is `.0` ask for `.1` bytes.
    pub pad: Vec<(u64, u64)>,
}

impl Change {
    pub fn setting(key: &str, value: &str) -> Change {
        Change {
            set: vec![(key.to_string(), value.to_string())],
            ..Change::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self == &Change::default()
    }

    /// `base` with the settings applied; an error where the allocator refuses them together.
    pub fn config(&self, base: &Config) -> Result<Config, ConfigError> {
        let mut c = base.clone();
        for (k, v) in &self.set {
            c.set(k, v)?;
        }
        c.check_rules()?;
        Ok(c)
    }

    /// `reqs` with the program changes made (`base`: the file's settings, whose rounding
    /// names the padded sizes).
    pub fn requests(&self, reqs: &[Traced], base: &Config) -> Vec<Traced> {
        pace::finish(self.requests_paced(reqs, base, &mut Pace::never()))
    }

    /// [`Change::requests`], giving way through `pace` (27 ms at a million entries).
    pub async fn requests_paced(
        &self,
        reqs: &[Traced],
        base: &Config,
        pace: &mut Pace<'_>,
    ) -> Vec<Traced> {
        let mut out = Vec::with_capacity(reqs.len() + self.empty_cache_at.len());
        let mut calls: Vec<usize> = self.empty_cache_at.clone();
        calls.sort_unstable();
        let mut calls = calls.into_iter().peekable();
        for chunk in reqs.chunks(CHUNK) {
            pace.check().await;
            for t in chunk {
                while calls.next_if(|&c| c <= t.entry).is_some() {
                    out.push(Traced {
                        entry: t.entry,
                        request: Request::EmptyCache,
                    });
                }
                let mut t = *t;
                if let Request::Alloc { size, .. } = &mut t.request {
                    if !self.pad.is_empty() {
                        let block = round_size(*size, base);
                        if let Some(&(_, to)) = self.pad.iter().find(|(from, _)| *from == block) {
                            *size = to;
                        }
                    }
                }
                out.push(t);
            }
        }
        out
    }

    /// Both changes at once; `None` when they set one key to two values.
    pub fn and(&self, other: &Change) -> Option<Change> {
        let mut set = self.set.clone();
        for (k, v) in &other.set {
            match set.iter().find(|(sk, _)| sk == k) {
                Some((_, sv)) if sv != v => return None,
                Some(_) => {}
                None => set.push((k.clone(), v.clone())),
            }
        }
        let memory_cap = match (self.memory_cap, other.memory_cap) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let mut empty_cache_at = self.empty_cache_at.clone();
        empty_cache_at.extend(&other.empty_cache_at);
        empty_cache_at.sort_unstable();
        empty_cache_at.dedup();
        let mut pad = self.pad.clone();
        for p in &other.pad {
            if pad.iter().any(|q| q.0 == p.0 && q.1 != p.1) {
                return None;
            }
            if !pad.contains(p) {
                pad.push(*p);
            }
        }
        Some(Change {
            set,
            memory_cap,
            empty_cache_at,
            pad,
        })
    }

    /// The `memsnap replay` arguments that replay this change.
    pub fn replay_args(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (k, v) in &self.set {
            out.push("--set".to_string());
            out.push(format!("{k}={v}"));
        }
        if let Some(c) = self.memory_cap {
            out.push("--memory-cap-bytes".to_string());
            out.push(c.to_string());
        }
        for e in &self.empty_cache_at {
            out.push("--empty-cache-at".to_string());
            out.push(e.to_string());
        }
        for (from, to) in &self.pad {
            out.push("--pad".to_string());
            out.push(format!("{from}={to}"));
        }
        out
    }

    /// Parses `--pad FROM=TO` (bytes).
    pub fn parse_pad(s: &str) -> Result<(u64, u64), String> {
        let (a, b) = s
            .split_once('=')
            .ok_or_else(|| format!("expected FROM=TO in bytes, got `{s}`"))?;
        let n = |x: &str| {
            x.trim()
                .parse::<u64>()
                .map_err(|_| format!("expected a byte count, got `{x}`"))
        };
        let (from, to) = (n(a)?, n(b)?);
        if to < from {
            return Err(format!("padding makes sizes larger: {to} < {from}"));
        }
        Ok((from, to))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alloc(entry: usize, size: u64) -> Traced {
        Traced {
            entry,
            request: Request::Alloc {
                addr: entry as u64,
                size,
                stream: 0,
                frames: None,
                pool: (0, 0),
            },
        }
    }

    #[test]
    fn program_changes_edit_the_requests() {
        let mb = 1u64 << 20;
        let reqs = vec![
            alloc(0, 18 * mb - 100),
            alloc(3, 30 * mb),
            alloc(7, 18 * mb),
        ];
        let c = Change {
            empty_cache_at: vec![3],
            pad: vec![(18 * mb, 20 * mb)],
            ..Change::default()
        };
        let out = c.requests(&reqs, &Config::default());
        let sizes: Vec<Option<u64>> = out
            .iter()
            .map(|t| match t.request {
                Request::Alloc { size, .. } => Some(size),
                _ => None,
            })
            .collect();
        assert_eq!(
            sizes,
            vec![Some(20 * mb), None, Some(30 * mb), Some(20 * mb)]
        );
        assert_eq!(out[1].entry, 3);
        assert_eq!(
            c.replay_args(),
            vec![
                "--empty-cache-at",
                "3",
                "--pad",
                &format!("{}={}", 18 * mb, 20 * mb)
            ]
        );
    }

    #[test]
    fn combining_refuses_conflicts() {
        let a = Change::setting("max_split_size_mb", "128");
        let b = Change::setting("max_split_size_mb", "512");
        assert_eq!(a.and(&b), None);
        let e = Change::setting("expandable_segments", "True");
        let both = a.and(&e).expect("compatible");
        assert_eq!(both.set.len(), 2);
        assert!(Change::parse_pad("5=3").is_err());
        assert_eq!(Change::parse_pad("3=5"), Ok((3, 5)));
    }
}
