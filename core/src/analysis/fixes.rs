//! Fixes ranked from the measured causes. Each names its `PYTORCH_CUDA_ALLOC_CONF` setting (or
//! call), the numbers that motivate it, and an estimated saving where one can be computed.
//! `empty_cache()` always comes last: it only returns what is cached, at a synchronization.

use super::churn::Churn;
use super::fragmentation::DeviceFragmentation;
use super::pinning::PinningBlock;
use super::sizes::SMALL_SIZE;
use crate::snapshot::AllocatorSettings;

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Fix {
    /// What to set, e.g. `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.
    pub setting: String,
    pub title: String,
    pub evidence: Vec<String>,
    /// Reserved bytes it would save, where computable.
    pub estimated_saving: Option<u64>,
    pub cost: Option<String>,
}

pub struct Inputs<'a> {
    pub fragmentation: &'a DeviceFragmentation,
    pub churn: Option<&'a Churn>,
    pub pinning: &'a [PinningBlock],
    pub settings: Option<&'a AllocatorSettings>,
    /// Block sizes of the trace's allocations (for the max_split_size suggestion).
    pub large_request_sizes: &'a [u64],
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
}

fn setting_bool(s: Option<&AllocatorSettings>, key: &str) -> bool {
    s.and_then(|s| s.get(key))
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

fn setting_positive(s: Option<&AllocatorSettings>, key: &str) -> bool {
    s.and_then(|s| s.get(key))
        .and_then(|v| v.as_f64().or_else(|| v.as_i64().map(|i| i as f64)))
        .is_some_and(|v| v > 0.0)
}

/// Free bytes in large segments cut by smaller active blocks into holes smaller than the
/// segment's largest request: the large segment was carved up.
fn carved(f: &DeviceFragmentation) -> (usize, u64) {
    let mut n = 0;
    let mut bytes = 0;
    for s in &f.segments {
        if s.small || s.expandable || s.active_blocks == 0 || s.free == 0 {
            continue;
        }
        // Several free holes, or active blocks using under half the segment.
        if s.free_blocks >= 2 || s.active * 2 < s.reserved {
            n += 1;
            bytes += s.free;
        }
    }
    (n, bytes)
}

pub fn fixes(inp: &Inputs) -> Vec<Fix> {
    let f = inp.fragmentation;
    let mut out: Vec<Fix> = Vec::new();
    let reserved = f.reserved.max(1);
    let expandable_on = setting_bool(inp.settings, "expandable_segments")
        || f.segments.iter().any(|s| s.expandable);
    let pinned: u64 = {
        let mut segs: Vec<(u64, u64)> = inp
            .pinning
            .iter()
            .map(|p| (p.segment_address, p.pinned))
            .collect();
        segs.sort_unstable();
        segs.dedup();
        segs.iter().map(|s| s.1).sum()
    };

    // 1. Holes spread over segments: one growable segment per stream lets them join.
    if !expandable_on
        && f.segments_with_free >= 2
        && f.free * 20 >= reserved
        && f.largest_free * 2 < f.free
    {
        let mut evidence = vec![
            format!(
                "reserved − allocated = {} of {} reserved",
                mib(f.reserved_minus_allocated),
                mib(f.reserved)
            ),
            format!(
                "free {} in {} segments, but the largest hole is {} (fragmentation {:.0}%)",
                mib(f.free),
                f.segments_with_free,
                mib(f.largest_free),
                f.ratio * 100.0
            ),
        ];
        if pinned > 0 {
            evidence.push(format!(
                "{} held by {} small pinning blocks (expandable segments unmap the free pages around them)",
                mib(pinned),
                inp.pinning.len()
            ));
        }
        out.push(Fix {
            setting: "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into(),
            title: "Use expandable segments so free space in different segments can be joined"
                .into(),
            evidence,
            estimated_saving: Some(f.free - f.largest_free),
            cost: Some("page mapping on growth (cuMemMap); not usable with some IPC setups".into()),
        });
    }

    // 2. Shape churn: pad or bucket shapes so sizes repeat and holes are reused.
    if let Some(c) = inp.churn {
        if let Some(al) = &c.alternating {
            out.push(Fix {
                setting: "(code) pad or bucket tensor shapes to a few fixed sizes".into(),
                title: format!(
                    "Pad {} allocations to {} so each can reuse the other's hole",
                    mib(al.smaller),
                    mib(al.larger)
                ),
                evidence: vec![
                    c.verdict.clone(),
                    format!(
                        "{} distinct sizes, turnover {:.1}x the peak",
                        c.distinct_sizes, c.turnover
                    ),
                ],
                estimated_saving: Some(al.remainder.min(f.reserved_minus_allocated)),
                cost: Some(format!(
                    "{} more allocated per padded allocation",
                    mib(al.remainder)
                )),
            });
        } else if c.distinct_large_sizes >= 16 && c.turnover >= 10.0 {
            out.push(Fix {
                setting: "(code) pad or bucket tensor shapes to a few fixed sizes".into(),
                title: "Many distinct large sizes are allocated and freed over and over".into(),
                evidence: vec![format!(
                    "{} distinct sizes above 1 MiB, {:.1}x the peak recycled",
                    c.distinct_large_sizes, c.turnover
                )],
                estimated_saving: None,
                cost: None,
            });
        }
    }

    // 3. Large blocks carved into small remainders: stop splitting big cached blocks.
    let max_split_set = inp
        .settings
        .and_then(|s| s.get("max_split_size"))
        .and_then(|v| v.as_i64())
        .is_some_and(|v| v > 0);
    let (n_carved, carved_free) = carved(f);
    if !max_split_set && !expandable_on && n_carved > 0 && carved_free * 10 >= reserved {
        let mut large: Vec<u64> = inp
            .large_request_sizes
            .iter()
            .copied()
            .filter(|&s| s > SMALL_SIZE)
            .collect();
        // The 90th percentile by selection, not a sort: a million sizes took 3 ms sorted.
        let at = large.len() * 9 / 10;
        let p90 = if at < large.len() {
            *large.select_nth_unstable(at).1
        } else {
            0
        };
        let mb = p90.div_ceil(1 << 20).max(20);
        out.push(Fix {
            setting: format!("PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:{mb}"),
            title: "Stop large cached blocks from being split by smaller requests".into(),
            evidence: vec![
                format!(
                    "{} large segments are split into holes holding {} free ({:.0}% of reserved)",
                    n_carved,
                    mib(carved_free),
                    carved_free as f64 * 100.0 / reserved as f64
                ),
                format!("90% of large requests are at most {}", mib(p90)),
            ],
            estimated_saving: None,
            cost: Some(
                "blocks at or above the limit are never split: more cudaMalloc calls".into(),
            ),
        });
    }

    // 4. Cached but unused segments: let the allocator release them before it runs out.
    if f.releasable > 0 && f.releasable * 20 >= reserved {
        if !setting_positive(inp.settings, "garbage_collection_threshold") {
            out.push(Fix {
                setting: "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.8".into(),
                title: "Release cached, unused segments when reserved memory passes a threshold".into(),
                evidence: vec![format!(
                    "{} segments with no active block hold {}",
                    f.releasable_segments,
                    mib(f.releasable)
                )],
                estimated_saving: Some(f.releasable),
                cost: Some(
                    "acts only with torch.cuda.set_per_process_memory_fraction(); frees oldest cached blocks first"
                        .into(),
                ),
            });
        }
        out.push(Fix {
            setting: "torch.cuda.empty_cache()".into(),
            title: "Return cached, unused segments to the driver".into(),
            evidence: vec![format!(
                "{} segments with no active block hold {}",
                f.releasable_segments,
                mib(f.releasable)
            )],
            estimated_saving: Some(f.releasable),
            cost: Some(
                "synchronizes the device, and every later allocation that needs a segment pays cudaMalloc again"
                    .into(),
            ),
        });
    }

    // Most saving first; estimates beat unknowns; empty_cache last whatever it saves.
    out.sort_by_key(|x| {
        (
            x.setting.starts_with("torch.cuda.empty_cache"),
            std::cmp::Reverse(x.estimated_saving.unwrap_or(0)),
        )
    });
    out
}

const CONF_PREFIX: &str = "PYTORCH_CUDA_ALLOC_CONF=";

/// `a:1,b:[1:2,>:4]` -> `a:1`, `b:[1:2,>:4]`: commas inside brackets are a value's own.
fn top_level_items(conf: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in conf.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&conf[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&conf[start..]);
    out.retain(|s| !s.is_empty());
    out
}

/// The `PYTORCH_CUDA_ALLOC_CONF` line to try: the file's own settings (`current`, as
/// `Config::to_conf_string` writes them, "" for defaults) with every ranked fix's allocator key
/// set, except `max_split_size_mb` beside `expandable_segments` (growable segments are not
/// carved, so the limit would only cost `cudaMalloc` calls). `None` when no fix sets a key.
pub fn conf_to_try(current: &str, fixes: &[Fix]) -> Option<String> {
    let keys: Vec<(&str, &str)> = fixes
        .iter()
        .filter_map(|f| f.setting.strip_prefix(CONF_PREFIX))
        .filter_map(|kv| kv.split_once(':'))
        .collect();
    let expandable = keys.iter().any(|(k, _)| *k == "expandable_segments");
    let mut parts: Vec<(String, String)> = top_level_items(current)
        .into_iter()
        .filter_map(|kv| kv.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut changed = false;
    for (k, v) in keys {
        if expandable && k == "max_split_size_mb" {
            continue;
        }
        changed = true;
        match parts.iter_mut().find(|(pk, _)| pk == k) {
            Some(p) => p.1 = v.to_string(),
            None => parts.push((k.to_string(), v.to_string())),
        }
    }
    changed.then(|| {
        let kv: Vec<String> = parts.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        format!("{CONF_PREFIX}{}", kv.join(","))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::churn::churn;
    use crate::analysis::fragmentation::fragmentation;
    use crate::analysis::intervals::allocations;
    use crate::analysis::testutil::*;
    use crate::snapshot::BlockState::*;

    #[test]
    fn ranks_fixes_from_causes() {
        // Two 40 MiB segments each cut by a 2 MiB block into 18 + 20 MiB holes, one idle segment.
        let cut = |addr| {
            segment(
                addr,
                &[
                    (18 * MB, Inactive, 0),
                    (2 * MB, ActiveAllocated, 2 * MB),
                    (20 * MB, Inactive, 0),
                ],
            )
        };
        let segs = vec![
            cut(0x1000_0000),
            cut(0x2000_0000),
            segment(0x3000_0000, &[(20 * MB, Inactive, 0)]),
        ];
        let t = costly_alternation(5, 30 * MB, 50 * MB);
        let snap = snapshot(segs, t);
        let f = fragmentation(&snap, 0);
        let al = allocations(&snap, 0);
        let c = churn(&al, None);
        let sizes: Vec<u64> = al.list.iter().map(|a| a.size).collect();
        let fx = fixes(&Inputs {
            fragmentation: &f,
            churn: Some(&c),
            pinning: &[],
            settings: None,
            large_request_sizes: &sizes,
        });
        let names: Vec<&str> = fx.iter().map(|x| x.setting.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                "(code) pad or bucket tensor shapes to a few fixed sizes",
                "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.8",
                "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:50",
                "torch.cuda.empty_cache()",
            ]
        );
        // The file's own setting kept, expandable segments and the GC threshold added, no
        // split limit beside expandable segments.
        assert_eq!(
            conf_to_try("roundup_power2_divisions:[1:4,>:8],max_split_size_mb:200", &fx).as_deref(),
            Some("PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:[1:4,>:8],max_split_size_mb:200,expandable_segments:True,garbage_collection_threshold:0.8")
        );
        assert_eq!(
            conf_to_try("", &fx[3..]).as_deref(),
            Some("PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:50")
        );
        assert_eq!(conf_to_try("expandable_segments:True", &fx[4..]), None);
        // 96 MiB free, largest hole 20 MiB.
        assert_eq!(fx[0].estimated_saving, Some(76 * MB));
        assert_eq!(fx[1].estimated_saving, Some(20 * MB));
        assert_eq!(fx[4].estimated_saving, Some(20 * MB));
    }

    #[test]
    fn nothing_to_fix_when_tight() {
        let segs = vec![segment(0x1000_0000, &[(20 * MB, ActiveAllocated, 20 * MB)])];
        let snap = snapshot(segs, vec![]);
        let f = fragmentation(&snap, 0);
        let fx = fixes(&Inputs {
            fragmentation: &f,
            churn: None,
            pinning: &[],
            settings: None,
            large_request_sizes: &[],
        });
        assert!(fx.is_empty());
    }
}
