//! A snapshot cut to what a report carries: one device, and a range of that device's trace.
//! The cut is itself a snapshot PyTorch could have written: its segments are the state after
//! the range's last entry (rebuilt from the dump by `state_at`), and its trace starts
//! mid-history, as a ring buffer's (`max_entries`) does.

use super::state_at::state_at;
use crate::snapshot::Snapshot;

/// What to keep; `None` keeps all of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trim {
    pub device: Option<i64>,
    /// Trace entries `start..end` of the device.
    pub entries: Option<(usize, usize)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrimError {
    NoDevice {
        device: i64,
        have: Vec<i64>,
    },
    /// An entry range on a file tracing several devices, without saying which.
    RangeNeedsDevice {
        traced: Vec<i64>,
    },
    BadRange {
        start: usize,
        end: usize,
        len: usize,
    },
}

impl std::fmt::Display for TrimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |v: &[i64]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        match self {
            TrimError::NoDevice { device, have } => {
                write!(
                    f,
                    "no device {device} in this file (devices: {})",
                    list(have)
                )
            }
            TrimError::RangeNeedsDevice { traced } => write!(
                f,
                "an entry range needs a device: this file traces devices {}",
                list(traced)
            ),
            TrimError::BadRange { start, end, len } => write!(
                f,
                "entries {start}..{end} are not a range of the trace's {len} entries"
            ),
        }
    }
}

impl std::error::Error for TrimError {}

/// `snapshot` cut to `t`. Keeping one device drops the others' segments and traces and the
/// host's (pinned memory is not any device's); annotations stay, since phases are matched per
/// device.
pub fn trim(snapshot: &Snapshot, t: &Trim) -> Result<Snapshot, TrimError> {
    let have = snapshot.devices();
    if let Some(d) = t.device {
        if !have.contains(&d) {
            return Err(TrimError::NoDevice { device: d, have });
        }
    }
    let mut out = snapshot.clone();
    if let Some(d) = t.device {
        out.segments.retain(|s| s.device.unwrap_or(0) == d);
        if let Some(traces) = out.device_traces.as_mut() {
            for (i, trace) in traces.iter_mut().enumerate() {
                if i as i64 != d {
                    trace.clear();
                }
            }
        }
        out.host_segments = None;
        out.host_traces = None;
    }
    let Some((start, end)) = t.entries else {
        return Ok(out);
    };
    let device = match t.device {
        Some(d) => d,
        None => {
            let traced: Vec<i64> = have
                .iter()
                .copied()
                .filter(|&d| d >= 0 && snapshot.has_trace(d as usize))
                .collect();
            match traced.as_slice() {
                [one] => *one,
                [] => 0,
                _ => return Err(TrimError::RangeNeedsDevice { traced }),
            }
        }
    };
    let len = snapshot.trace(device.max(0) as usize).len();
    if start >= end || end > len {
        return Err(TrimError::BadRange { start, end, len });
    }
    if end < len {
        let state = state_at(snapshot, device, end);
        out.segments.retain(|s| s.device.unwrap_or(0) != device);
        out.segments.extend(state);
    }
    if let Some(trace) = out
        .device_traces
        .as_mut()
        .and_then(|t| t.get_mut(device as usize))
    {
        trace.truncate(end);
        trace.drain(..start);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summary::Summary;
    use crate::analysis::testutil::*;
    use crate::snapshot::{Action, BlockState};

    /// Device 0: a segment, then A and B allocated and A freed (the dump: A free, B live);
    /// device 1: one live block and no trace of its own.
    fn two_device_snapshot() -> Snapshot {
        let base = 0x7f00_0000_0000;
        let seg = 2 * MB;
        let trace = vec![
            entry(Action::SegmentAlloc, base, seg),
            entry(Action::Alloc, base, MB),
            entry(Action::Alloc, base + MB, MB),
            entry(Action::FreeRequested, base, MB),
            entry(Action::FreeCompleted, base, MB),
        ];
        let dump = segment(
            base,
            &[
                (MB, BlockState::Inactive, 0),
                (MB, BlockState::ActiveAllocated, MB),
            ],
        );
        let mut other = segment(0x6000_0000, &[(MB, BlockState::ActiveAllocated, MB)]);
        other.device = Some(1);
        let mut snap = snapshot(vec![dump, other], trace);
        snap.device_traces
            .as_mut()
            .unwrap()
            .push(vec![entry(Action::Alloc, 0x6000_0000, MB)]);
        snap
    }

    #[test]
    fn a_range_ends_at_the_state_after_its_last_entry() {
        let snap = two_device_snapshot();
        let len = snap.trace(0).len();
        assert!(len >= 4);
        let cut = trim(
            &snap,
            &Trim {
                device: Some(0),
                entries: Some((1, len - 1)),
            },
        )
        .unwrap();
        assert_eq!(cut.devices(), vec![0]);
        assert_eq!(cut.trace(0), &snap.trace(0)[1..len - 1]);
        let states = |segs: &[crate::snapshot::Segment]| -> Vec<(u64, u64, BlockState)> {
            segs.iter()
                .flat_map(|s| s.blocks.iter())
                .map(|b| (b.address.unwrap_or(0), b.size, b.state))
                .collect()
        };
        // After entry 3, A's free is requested, not completed: the cut's dump says so, where
        // the file's dump has A free.
        let expected = state_at(&snap, 0, len - 1);
        assert_eq!(states(&cut.segments), states(&expected));
        assert_ne!(states(&cut.segments), states(&snap.segments[..1]));
        assert_eq!(Summary::of(&cut).devices, vec![0]);
        // The cut's own walk back from its dump explains its trace: nothing inconsistent.
        let config = crate::allocator::Config::default();
        let history = super::super::state_at::StateHistory::new(&cut, 0, &config);
        assert!(
            history.inconsistencies().is_empty(),
            "{:?}",
            history.inconsistencies()
        );
    }

    #[test]
    fn bad_cuts_say_what_is_wrong() {
        let snap = two_device_snapshot();
        let e = trim(
            &snap,
            &Trim {
                device: Some(7),
                entries: None,
            },
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "no device 7 in this file (devices: 0, 1)");
        let e = trim(
            &snap,
            &Trim {
                device: None,
                entries: Some((0, 1)),
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("traces devices 0, 1"), "{e}");
        let e = trim(
            &snap,
            &Trim {
                device: Some(0),
                entries: Some((3, 3)),
            },
        )
        .unwrap_err();
        assert!(matches!(e, TrimError::BadRange { .. }), "{e}");
    }
}
