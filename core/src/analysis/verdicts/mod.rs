//! The verdict engine: every fix memsnap recommends is replayed through the allocator model,
//! and ranked by what the replay changes, never by a figure of the dump.
//!
//! For each candidate ([`candidates()`], plus an `empty_cache()` before the request that made
//! the reserved peak and `garbage_collection_threshold` under the smallest memory cap that
//! still serves every request) the device's requests are replayed under the file's settings
//! and under the fix, and the fix "saves" the difference in the figure that matters:
//! - the peak reserved, for a run that did not fail;
//! - for a run that ran out of memory, whether the failing request is served on a device of
//!   the memory the process had then (reserved + the driver's free bytes), and with how much
//!   to spare; the peak reserved up to it beside.
//!
//! A trace that begins after segments existed is replayed from two starts (see
//! [`Start`]): the reconstructed state, where the segments made before recording stay as the
//! run made them whatever the setting, and a cold start, where the blocks live at the first
//! entry are allocated first under the setting tried. A setting is put in force at launch, so
//! it shapes those early segments too: the cold start ranks, except after an OOM, where the
//! reconstructed start is the one that reproduces the failure exactly. Both are reported.
//!
//! A fix that saves nothing or costs memory is reported as such and not ranked; the two best
//! fixes are also replayed together, and `try` is the best replayed change.

pub mod candidates;
pub mod change;
pub mod measure;

use crate::allocator::{Config, Rules};
use crate::analysis::churn::Churn;
use crate::analysis::fragmentation::DeviceFragmentation;
use crate::analysis::frames::label;
use crate::analysis::pace::{self, Pace};
use crate::analysis::pinning::PinningBlock;
use crate::analysis::policy::device_config_paced;
use crate::analysis::replay::{
    empty_cache_calls_paced, pool_of, requests_of_paced, DeviceConfig, Request, Start, Traced,
};
use crate::analysis::state_at::{start_state_paced, state_before_paced};
use crate::snapshot::{Action, Segment, Snapshot};

use candidates::{candidates, mib, Candidate, Causes};
pub use change::Change;
pub use measure::{measure, measure_paced, measure_seeded, Device, Outcome};

/// The threshold tried for `garbage_collection_threshold` (PyTorch's documented example).
pub const GC_THRESHOLD: &str = "0.8";
/// Memory-cap search: stop when the bracket is this narrow (or after [`CAP_STEPS`] replays).
const CAP_RESOLUTION: u64 = 2 << 20;
const CAP_STEPS: u32 = 8;

/// Whether and how a run's failing request is served (OOM files only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Served {
    /// Every request up to and including the one that failed in the run is served.
    pub served: bool,
    /// Device memory left at the replay's reserved peak.
    pub spare: u64,
}

/// One fix, replayed.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Fix {
    /// What to do: `PYTORCH_CUDA_ALLOC_CONF=…`, a call, or a code change.
    pub setting: String,
    pub title: String,
    /// What in the file led to trying it.
    pub evidence: Vec<String>,
    pub change: Change,
    /// `memsnap replay FILE <these>` replays it (add `--cold` for the cold start).
    pub replay_args: Vec<String>,
    /// Replayed from the start that ranks (see [`Verdicts::ranked_on`]).
    pub with: Outcome,
    /// Replayed from the other start; `None` when the trace is the whole history (one start).
    pub other_start: Option<Outcome>,
    /// Peak reserved under the file's settings minus under this fix, replayed from the ranking
    /// start, in bytes: negative when it costs memory.
    pub saves: i64,
    /// The same from the other start.
    pub saves_other_start: Option<i64>,
    /// After an OOM: the failing request under this fix.
    pub oom: Option<Served>,
    /// Ranked as a fix: it saves reserved memory (or serves the failing request) and makes
    /// no request fail that the file's settings serve.
    pub helps: bool,
    /// Allocations that landed in another segment than under the file's settings.
    pub moved_allocations: u64,
    /// The costs, measured (segment creations, bytes mapped and unmapped, allocations moved)
    /// and any the model cannot measure.
    pub cost: String,
}

/// Every fix tried for one device.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Verdicts {
    /// Why nothing was replayed (no trace, another allocator's trace, unreadable settings).
    pub not_replayed: Option<String>,
    /// Whose allocator's rules the replays follow, and why (empty when nothing was replayed).
    pub allocator: String,
    pub ranked_on: Start,
    /// Why that start ranks.
    pub why_start: String,
    /// The figure fixes are ranked by, in words.
    pub figure: String,
    /// The simulated device's memory (an OOM file's: reserved + the driver's free bytes).
    pub capacity: Option<u64>,
    /// The file's own settings replayed from the ranking start, and from the other one.
    pub base: Outcome,
    pub base_other_start: Option<Outcome>,
    /// Fixes that help, best first.
    pub fixes: Vec<Fix>,
    /// Fixes tried that save nothing, cost memory or fail requests.
    pub no_saving: Vec<Fix>,
    /// The best replayed change, as the file's settings with it applied.
    pub try_line: Option<String>,
    /// The two best fixes replayed together, when that did no better than the best alone.
    pub combined: Option<String>,
    /// Replays run.
    pub replays: u32,
}

impl Verdicts {
    /// The `memsnap replay` flags that replay from `start` as these verdicts did (before a
    /// fix's `replay_args`).
    pub fn start_args(&self, start: Start) -> Vec<&'static str> {
        let mut a = Vec::new();
        match start {
            Start::Cold => a.push("--cold"),
            Start::Clean => a.push("--clean"),
            Start::Reconstructed => {}
        }
        if self.capacity.is_some() {
            a.push("--to-oom");
        }
        a
    }

    fn none(why: String) -> Verdicts {
        Verdicts {
            not_replayed: Some(why),
            allocator: String::new(),
            ranked_on: Start::Reconstructed,
            why_start: String::new(),
            figure: String::new(),
            capacity: None,
            base: Outcome::default(),
            base_other_start: None,
            fixes: Vec::new(),
            no_saving: Vec::new(),
            try_line: None,
            combined: None,
            replays: 0,
        }
    }
}

/// What the verdicts are weighed from (the diagnosis's own analyses of the device).
pub struct Inputs<'a> {
    pub fragmentation: &'a DeviceFragmentation,
    pub churn: Option<&'a Churn>,
    pub pinning: &'a [PinningBlock],
    /// Block sizes of the trace's allocations.
    pub request_sizes: &'a [u64],
}

pub fn verdicts(snap: &Snapshot, device: usize, inp: &Inputs) -> Verdicts {
    pace::finish(verdicts_paced(snap, device, inp, &mut Pace::never()))
}

/// The requests to replay and the device to replay them on: the whole trace, or after an OOM
/// the requests up to the failure plus the failing request itself.
#[derive(Debug, Clone)]
pub struct Plan {
    pub reqs: Vec<Traced>,
    /// The simulated device's memory (None = unlimited).
    pub capacity: Option<u64>,
    /// The trace index of the OOM replayed to.
    pub oom_entry: Option<usize>,
}

impl Plan {
    /// Every request of the device's trace, on an unlimited device; `dc`: the configuration
    /// the device is modelled under ([`device_config`](crate::analysis::replay::device_config)),
    /// which the fidelity replay that finds the empty_cache calls runs under.
    pub fn whole(snap: &Snapshot, device: i64, dc: &DeviceConfig) -> Plan {
        pace::finish(Plan::whole_paced(snap, device, dc, &mut Pace::never()))
    }

    /// [`Plan::whole`], giving way through `pace` (finding the empty_cache calls is a
    /// fidelity replay).
    pub async fn whole_paced(
        snap: &Snapshot,
        device: i64,
        dc: &DeviceConfig,
        pace: &mut Pace<'_>,
    ) -> Plan {
        let calls = empty_cache_calls_paced(snap, device, dc.clone(), pace).await;
        Plan::whole_with_paced(snap, device, &calls, pace).await
    }

    /// [`Plan::whole`] with the empty_cache calls already found (`calls`, ascending trace
    /// indices: [`empty_cache_calls_of`](crate::analysis::replay::empty_cache_calls_of) a
    /// fidelity replay the caller ran).
    pub fn whole_with(snap: &Snapshot, device: i64, calls: &[usize]) -> Plan {
        pace::finish(Plan::whole_with_paced(
            snap,
            device,
            calls,
            &mut Pace::never(),
        ))
    }

    async fn whole_with_paced(
        snap: &Snapshot,
        device: i64,
        calls: &[usize],
        pace: &mut Pace<'_>,
    ) -> Plan {
        let trace = snap.trace(device.max(0) as usize);
        Plan {
            reqs: requests_of_paced(trace, calls, pace).await,
            capacity: None,
            oom_entry: None,
        }
    }

    /// With an OOM that records the driver's free bytes: the requests before it and the failing
    /// one, on a device of the memory the process had then (reserved + free). Otherwise
    /// [`Plan::whole`].
    pub fn to_oom(snap: &Snapshot, device: i64, dc: &DeviceConfig) -> Plan {
        pace::finish(Plan::to_oom_paced(snap, device, dc, &mut Pace::never()))
    }

    /// [`Plan::to_oom`], giving way through `pace`.
    pub async fn to_oom_paced(
        snap: &Snapshot,
        device: i64,
        dc: &DeviceConfig,
        pace: &mut Pace<'_>,
    ) -> Plan {
        let calls = empty_cache_calls_paced(snap, device, dc.clone(), pace).await;
        Plan::to_oom_with_paced(snap, device, &dc.config, &calls, pace).await
    }

    /// [`Plan::to_oom`] with the empty_cache calls already found (as [`Plan::whole_with`]);
    /// `config`: the configuration the device is modelled under.
    pub fn to_oom_with(snap: &Snapshot, device: i64, config: &Config, calls: &[usize]) -> Plan {
        pace::finish(Plan::to_oom_with_paced(
            snap,
            device,
            config,
            calls,
            &mut Pace::never(),
        ))
    }

    async fn to_oom_with_paced(
        snap: &Snapshot,
        device: i64,
        config: &Config,
        calls: &[usize],
        pace: &mut Pace<'_>,
    ) -> Plan {
        let mut p = Plan::whole_with_paced(snap, device, calls, pace).await;
        let trace = snap.trace(device.max(0) as usize);
        let oom = trace
            .iter()
            .position(|e| e.is(&Action::Oom))
            .and_then(|i| trace[i].device_free().map(|f| (i, f)));
        let Some((entry, free)) = oom else {
            return p;
        };
        let state = state_before_paced(snap, device, config, entry, pace).await;
        let reserved: u64 = state.iter().map(|s| s.total_size).sum();
        let e = &trace[entry];
        p.reqs.retain(|t| t.entry < entry);
        p.reqs.push(Traced {
            entry,
            request: Request::Alloc {
                // No real address: a key no free uses.
                addr: u64::MAX,
                size: e.size().unwrap_or(0),
                stream: e.stream().unwrap_or(0),
                frames: e.frames(),
                pool: pool_of(e),
            },
        });
        p.capacity = Some(reserved + free);
        p.oom_entry = Some(entry);
        p
    }
}

/// The ranking key of a replayed fix: serves the failing request, then saves the most.
fn key(f: &Fix) -> (bool, i64) {
    (f.oom.is_some_and(|o| o.served), f.saves)
}

/// Replays one device's requests under changes, counting the replays.
struct Runner<'a> {
    snap: &'a Snapshot,
    base: &'a Config,
    plan: &'a Plan,
    device: i64,
    /// The state before the first entry, walked back to once for every replay.
    seed: &'a [Segment],
    replays: u32,
}

impl Runner<'_> {
    async fn run(
        &mut self,
        start: Start,
        change: &Change,
        pace: &mut Pace<'_>,
    ) -> Result<Outcome, String> {
        self.replays += 1;
        let on = Device {
            device: self.device,
            start,
            capacity: self.plan.capacity,
        };
        measure_seeded(
            self.snap,
            on,
            self.base,
            &self.plan.reqs,
            change,
            Some(self.seed),
            pace,
        )
        .await
        .map_err(|e| e.to_string())
    }
}

/// The two starts a fix is replayed from, with the file's settings replayed from each.
struct Bases {
    ranked_on: Start,
    base: Outcome,
    other: Option<(Start, Outcome)>,
}

fn saves(base: &Outcome, with: &Outcome) -> i64 {
    base.peak_reserved as i64 - with.peak_reserved as i64
}

fn served(plan: &Plan, o: &Outcome) -> Option<Served> {
    plan.capacity
        .filter(|_| plan.oom_entry.is_some())
        .map(|c| Served {
            served: o.failed_requests == 0,
            spare: c.saturating_sub(o.peak_reserved),
        })
}

/// What to do, in words: the settings, the cap, the calls and the padding.
fn describe(change: &Change, total: Option<u64>, rules: Rules) -> String {
    let (var, module) = (rules.conf_var(), rules.module());
    let mut parts = Vec::new();
    if !change.set.is_empty() {
        let kv: Vec<String> = change.set.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        parts.push(format!("{var}={}", kv.join(",")));
    }
    if let Some(cap) = change.memory_cap {
        parts.push(match total {
            Some(t) if t > 0 => format!(
                "{module}.set_per_process_memory_fraction({:.3})",
                cap as f64 / t as f64
            ),
            _ => format!(
                "{module}.set_per_process_memory_fraction({} / the device's memory)",
                mib(cap)
            ),
        });
    }
    for at in &change.empty_cache_at {
        parts.push(format!("{module}.empty_cache() before entry {at}"));
    }
    for (from, to) in &change.pad {
        parts.push(format!(
            "(code) pad {} allocations to {}",
            mib(*from),
            mib(*to)
        ));
    }
    parts.join(" + ")
}

fn measured_cost(base: &Outcome, with: &Outcome, moved: u64, caveat: Option<&str>) -> String {
    let mut s = format!(
        "replayed: {} segment creations ({} under the file's settings), {} mapped and {} \
         unmapped ({} and {}), {} allocations in another segment",
        with.segment_creations,
        base.segment_creations,
        mib(with.bytes_mapped),
        mib(with.bytes_unmapped),
        mib(base.bytes_mapped),
        mib(base.bytes_unmapped),
        moved
    );
    if with.failed_requests > base.failed_requests {
        s.push_str(&format!(
            "; {} requests fail that the file's settings serve",
            with.failed_requests - base.failed_requests
        ));
    }
    if let Some(c) = caveat {
        s.push_str("; ");
        s.push_str(c);
    }
    s
}

async fn replay_fix(
    r: &mut Runner<'_>,
    c: &Candidate,
    b: &Bases,
    pace: &mut Pace<'_>,
) -> Option<Fix> {
    let with = r.run(b.ranked_on, &c.change, pace).await.ok()?;
    let other_start = match &b.other {
        Some((s, _)) => r.run(*s, &c.change, pace).await.ok(),
        None => None,
    };
    let saves_other_start = match (&b.other, &other_start) {
        (Some((_, ob)), Some(o)) => Some(saves(ob, o)),
        _ => None,
    };
    let s = saves(&b.base, &with);
    let oom = served(r.plan, &with);
    let base_served = served(r.plan, &b.base).is_some_and(|o| o.served);
    let no_new_failures = with.failed_requests <= b.base.failed_requests;
    let helps = match oom {
        Some(o) => o.served && (!base_served || s > 0),
        None => s > 0 && no_new_failures,
    };
    let moved = with.moved_from(&b.base);
    Some(Fix {
        setting: describe(&c.change, r.plan.capacity, r.base.rules),
        title: c.title.clone(),
        evidence: c.evidence.clone(),
        replay_args: c.change.replay_args(),
        change: c.change.clone(),
        cost: measured_cost(&b.base, &with, moved, c.caveat.as_deref()),
        with,
        other_start,
        saves: s,
        saves_other_start,
        oom,
        helps,
        moved_allocations: moved,
    })
}

/// The smallest memory cap under which `gc` (a garbage-collection threshold) still serves
/// every request the file's settings serve, by bisection between the peak allocated and the
/// peak reserved.
async fn smallest_cap(
    r: &mut Runner<'_>,
    b: &Bases,
    gc: &Change,
    pace: &mut Pace<'_>,
) -> Option<u64> {
    let (mut lo, mut hi) = (b.base.peak_allocated, b.base.peak_reserved);
    let mut best = None;
    for _ in 0..CAP_STEPS {
        if hi <= lo + CAP_RESOLUTION {
            break;
        }
        let mid = lo + (hi - lo) / 2;
        let c = Change {
            memory_cap: Some(mid),
            ..gc.clone()
        };
        match r.run(b.ranked_on, &c, pace).await {
            Ok(o) if o.failed_requests <= b.base.failed_requests => {
                best = Some(mid);
                hi = mid;
            }
            _ => lo = mid,
        }
    }
    best
}

/// [`verdicts`], giving way through `pace` between and inside the replays.
pub async fn verdicts_paced(
    snap: &Snapshot,
    device: usize,
    inp: &Inputs<'_>,
    pace: &mut Pace<'_>,
) -> Verdicts {
    if !snap.has_trace(device) {
        return Verdicts::none(
            "no trace: a fix is weighed by replaying the trace, and this device has none".into(),
        );
    }
    let dev = device as i64;
    let dc = match device_config_paced(snap, dev, pace).await {
        Ok(c) => c,
        Err(e) => return Verdicts::none(format!("the file's settings cannot be read: {e}")),
    };
    if let Some(why) = dc.choice.not_replayable() {
        return Verdicts::none(format!(
            "{why}: fixes are not replayed under rules the file's allocator does not follow"
        ));
    }
    pace.check().await;
    // The rules are weighed once: the plan's fidelity replay runs under the same choice.
    let plan = Plan::to_oom_paced(snap, dev, &dc, pace).await;
    let DeviceConfig {
        config: base,
        choice,
        ..
    } = dc;
    pace.check().await;
    let seed = start_state_paced(snap, dev, &base, pace).await.0;
    let complete = seed.is_empty();
    let (ranked_on, why_start) = if complete {
        (
            Start::Cold,
            "the trace is the whole history (no segment before its first entry): both starts \
             are the same"
                .to_string(),
        )
    } else if plan.oom_entry.is_some() {
        (
            Start::Reconstructed,
            "after an OOM the reconstructed start ranks: it reproduces the failing moment as \
             the run reached it; the cold start is shown beside it"
                .to_string(),
        )
    } else {
        (
            Start::Cold,
            "the trace starts after segments existed; a setting in force from launch shapes \
             those segments too, which the reconstructed start keeps as the run made them, so \
             the cold start (the live blocks allocated first under each setting) ranks; the \
             reconstructed start is shown beside it"
                .to_string(),
        )
    };
    let other = (!complete).then_some(match ranked_on {
        Start::Cold => Start::Reconstructed,
        _ => Start::Cold,
    });
    let mut r = Runner {
        snap,
        base: &base,
        plan: &plan,
        device: dev,
        seed: &seed,
        replays: 0,
    };
    let base_run = match r.run(ranked_on, &Change::default(), pace).await {
        Ok(o) => o,
        Err(e) => return Verdicts::none(format!("the replay failed: {e}")),
    };
    let base_other = match other {
        Some(s) => r
            .run(s, &Change::default(), pace)
            .await
            .ok()
            .map(|o| (s, o)),
        None => None,
    };
    let b = Bases {
        ranked_on,
        base: base_run,
        other: base_other,
    };

    let mut tried = candidates(&Causes {
        base: &base,
        fragmentation: inp.fragmentation,
        churn: inp.churn,
        pinning: inp.pinning,
        request_sizes: inp.request_sizes,
    });
    if let Some(at) = b.base.peak_at {
        let frames = snap.trace(device).get(at).and_then(|e| e.frames());
        tried.push(Candidate {
            change: Change {
                empty_cache_at: vec![at],
                ..Change::default()
            },
            title: format!(
                "Call {}.empty_cache() before the request that made the reserved peak \
                 (entry {at}, {})",
                base.rules.module(),
                label(&snap.stacks, frames)
            ),
            evidence: vec![format!(
                "replayed: reserved memory last rose to its peak of {} at entry {at}",
                mib(b.base.peak_reserved)
            )],
            caveat: Some("synchronizes the device there".into()),
        });
    }
    if base.garbage_collection_threshold <= 0.0 {
        let gc = Change::setting("garbage_collection_threshold", GC_THRESHOLD);
        let cap = match plan.capacity {
            // The memory the process had at the failure, as the cap.
            Some(c) => Some(c),
            None => smallest_cap(&mut r, &b, &gc, pace).await,
        };
        if let Some(cap) = cap {
            tried.push(Candidate {
                change: Change {
                    memory_cap: Some(cap),
                    ..gc
                },
                title: format!(
                    "Cap the process's memory and free cached segments once reserved memory \
                     passes {GC_THRESHOLD} of the cap"
                ),
                evidence: vec![if plan.capacity.is_some() {
                    format!(
                        "the cap is the memory the process had at the failure ({})",
                        mib(cap)
                    )
                } else {
                    format!(
                        "replayed: {} is the smallest cap (to within {}) under which every \
                         request is still served",
                        mib(cap),
                        mib(CAP_RESOLUTION)
                    )
                }],
                caveat: Some(format!(
                    "the threshold acts only under {}.set_per_process_memory_fraction()",
                    base.rules.module()
                )),
            });
        }
    }

    let mut fixes: Vec<Fix> = Vec::new();
    let mut no_saving: Vec<Fix> = Vec::new();
    for c in &tried {
        if let Some(f) = replay_fix(&mut r, c, &b, pace).await {
            if f.helps {
                fixes.push(f);
            } else {
                no_saving.push(f);
            }
        }
    }
    fixes.sort_by_key(|f| std::cmp::Reverse(key(f)));
    // The two best together, ranked when they do better than either.
    let mut combined = None;
    if fixes.len() >= 2 {
        if let Some(both) = fixes[0].change.and(&fixes[1].change) {
            let c = Candidate {
                change: both,
                title: format!("Both: {} and {}", fixes[0].title, fixes[1].title),
                evidence: vec!["replayed: the two best fixes together".into()],
                caveat: None,
            };
            if let Some(f) = replay_fix(&mut r, &c, &b, pace).await {
                if f.helps && key(&f) > key(&fixes[0]) {
                    fixes.insert(0, f);
                } else {
                    combined = Some(format!(
                        "{} together with {}: {} of peak reserved, no better than the first alone",
                        fixes[0].setting,
                        fixes[1].setting,
                        if f.saves >= 0 {
                            format!("saves {}", mib(f.saves as u64))
                        } else {
                            format!("costs {}", mib(f.saves.unsigned_abs()))
                        }
                    ));
                }
            }
        }
    }
    no_saving.sort_by_key(|f| std::cmp::Reverse(f.saves));
    let try_line = fixes
        .first()
        .map(|f| try_line(&base, &f.change, plan.capacity));
    Verdicts {
        not_replayed: None,
        allocator: choice.describe(),
        ranked_on,
        why_start,
        figure: match plan.oom_entry {
            Some(e) => format!(
                "whether the request that failed at entry {e} is served, then the peak reserved up to it"
            ),
            None => "the peak reserved".to_string(),
        },
        capacity: plan.capacity,
        base: b.base,
        base_other_start: b.other.map(|o| o.1),
        fixes,
        no_saving,
        try_line,
        combined,
        replays: r.replays,
    }
}

/// The file's settings with `change` applied, as the line to try.
fn try_line(base: &Config, change: &Change, total: Option<u64>) -> String {
    let conf = change
        .config(base)
        .map(|c| c.to_conf_string())
        .unwrap_or_default();
    let program = Change {
        set: Vec::new(),
        ..change.clone()
    };
    let mut parts = Vec::new();
    if !change.set.is_empty() {
        parts.push(format!("{}={conf}", base.rules.conf_var()));
    }
    if !program.is_empty() {
        parts.push(describe(&program, total, base.rules));
    }
    parts.join(" + ")
}
