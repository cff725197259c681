//! Allocator configuration: `PYTORCH_CUDA_ALLOC_CONF` strings, a snapshot's `allocator_settings`,
//! and single `KEY=VALUE` overrides (CUDAAllocatorConfig / c10 AllocatorConfig semantics).

use std::fmt;

use crate::snapshot::{AllocatorSettings, Value};

use super::rules::Rules;
use super::sizes::{LARGE_BUFFER, SMALL_BUFFER};

/// Number of power-of-two intervals `roundup_power2_divisions` has: [1 MiB, 2 MiB), ... [32 GiB, inf).
pub const ROUNDUP_INTERVALS: usize = 16;
const MB: u64 = 1 << 20;
/// torch_npu's default `base_addr_aligned_kb` (`kAlignRoundLarge`, 16 KiB), also its maximum.
pub const NPU_BASE_ADDR_ALIGNED: u64 = 16 << 10;
/// The `allocator_settings` key naming whose allocator wrote the file (`cuda` or `npu`).
pub const ALLOCATOR_KEY: &str = "allocator";
/// torch_npu's `page_size:1g` granule (`kExtraLargeBuffer`).
pub const NPU_1G_PAGE: u64 = 1 << 30;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Whose allocator: CUDA's or torch_npu's (not a `PYTORCH_CUDA_ALLOC_CONF` key: the file or
    /// `--allocator` says).
    pub rules: Rules,
    /// torch_npu's `base_addr_aligned_kb` in bytes (0 = off): where expandable blocks of 2 MiB
    /// or more start. CUDA's rules ignore it.
    pub base_addr_aligned: u64,
    /// Page size of large-pool expandable segments: 20 MiB, or torch_npu's `segment_size_mb` /
    /// `large_segment_size_mb`.
    pub large_page: u64,
    /// torch_npu's `large_segment_size_mb` (v2.12 on): the segment of a 1-10 MiB request, and
    /// the large expandable page when set.
    pub large_segment: u64,
    /// torch_npu's `page_size:1g`: large-pool segments and pages are whole GiB.
    pub page_1g: bool,
    /// Blocks at or above this are never split; `u64::MAX` = unlimited (the default).
    pub max_split_size: u64,
    /// An oversize request may take a cached block smaller than request + this.
    pub max_non_split_rounding_size: u64,
    /// Fraction of the allowed memory above which cached blocks are freed (0 = off).
    pub garbage_collection_threshold: f64,
    pub expandable_segments: bool,
    /// Divisions per interval (0 or 1 = plain 512 B rounding).
    pub roundup_power2_divisions: [u64; ROUNDUP_INTERVALS],
    pub release_lock_on_cudamalloc: bool,
    pub pinned_use_cuda_host_register: bool,
    pub pinned_num_register_threads: u64,
    /// Options that change nothing in the model but were given (kept for `to_conf_string`).
    pub passthrough: Vec<(String, String)>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            rules: Rules::Cuda,
            base_addr_aligned: NPU_BASE_ADDR_ALIGNED,
            large_page: LARGE_BUFFER,
            large_segment: LARGE_BUFFER,
            page_1g: false,
            max_split_size: u64::MAX,
            max_non_split_rounding_size: LARGE_BUFFER,
            garbage_collection_threshold: 0.0,
            expandable_segments: false,
            roundup_power2_divisions: [0; ROUNDUP_INTERVALS],
            release_lock_on_cudamalloc: false,
            pinned_use_cuda_host_register: false,
            pinned_num_register_threads: 1,
            passthrough: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "allocator setting `{}`: {}", self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}

fn err(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.to_string(),
        message: message.into(),
    }
}

fn parse_bool(key: &str, v: &str) -> Result<bool, ConfigError> {
    match v {
        "True" | "true" | "1" => Ok(true),
        "False" | "false" | "0" => Ok(false),
        _ => Err(err(key, format!("expected True or False, got `{v}`"))),
    }
}

fn parse_u64(key: &str, v: &str) -> Result<u64, ConfigError> {
    v.parse::<u64>()
        .map_err(|_| err(key, format!("expected a non-negative integer, got `{v}`")))
}

impl Config {
    /// Parses a `PYTORCH_CUDA_ALLOC_CONF` value, e.g.
    /// `expandable_segments:True,max_split_size_mb:512,roundup_power2_divisions:[64:8,>:1]`.
    pub fn parse(conf: &str) -> Result<Config, ConfigError> {
        let mut c = Config::default();
        for (key, value) in split_options(conf)? {
            c.set(&key, &value)?;
        }
        Ok(c)
    }

    /// Sets one option (the `--set KEY=VALUE` override; same keys and values as the env var).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let value = value.trim();
        match key.trim() {
            "max_split_size_mb" => {
                let mb = parse_u64(key, value)?;
                if mb < LARGE_BUFFER / MB {
                    return Err(err(
                        key,
                        format!("must be >= {} (MB), got {mb}", LARGE_BUFFER / MB),
                    ));
                }
                // torch_npu's own parser (to v2.9) asks for more than 20.
                if self.rules == Rules::Npu && mb == LARGE_BUFFER / MB {
                    return Err(err(key, "torch_npu requires more than 20 (MB)"));
                }
                self.max_split_size = mb.saturating_mul(MB);
            }
            "max_non_split_rounding_mb" => {
                let mb = parse_u64(key, value)?;
                if mb < LARGE_BUFFER / MB {
                    return Err(err(
                        key,
                        format!("must be >= {} (MB), got {mb}", LARGE_BUFFER / MB),
                    ));
                }
                self.max_non_split_rounding_size = mb.saturating_mul(MB);
            }
            "garbage_collection_threshold" => {
                let t: f64 = value
                    .parse()
                    .map_err(|_| err(key, format!("expected a number in (0, 1), got `{value}`")))?;
                if !(t > 0.0 && t < 1.0) {
                    return Err(err(key, format!("must be in (0, 1), got {value}")));
                }
                self.garbage_collection_threshold = t;
            }
            "expandable_segments" => self.expandable_segments = parse_bool(key, value)?,
            "base_addr_aligned_kb" => {
                let kb = parse_u64(key, value)?;
                if kb > NPU_BASE_ADDR_ALIGNED >> 10 {
                    return Err(err(key, format!("must be 0 to 16 (KB), got {kb}")));
                }
                self.base_addr_aligned = kb << 10;
            }
            k @ ("segment_size_mb" | "large_segment_size_mb") => {
                let mb = parse_u64(key, value)?;
                if !(20..=512).contains(&mb) {
                    return Err(err(key, format!("must be 20 to 512 (MB), got {mb}")));
                }
                if k == "segment_size_mb" {
                    self.large_page = mb * MB;
                } else {
                    self.large_segment = mb * MB;
                }
            }
            "page_size" => {
                if !value.eq_ignore_ascii_case("1g") {
                    return Err(err(key, format!("only `1g` is supported, got `{value}`")));
                }
                self.page_1g = true;
            }
            "release_lock_on_cudamalloc" | "release_lock_on_hipmalloc" => {
                self.release_lock_on_cudamalloc = parse_bool(key, value)?
            }
            "pinned_use_cuda_host_register" | "pinned_use_hip_host_register" => {
                self.pinned_use_cuda_host_register = parse_bool(key, value)?
            }
            "pinned_num_register_threads" => {
                let n = parse_u64(key, value)?;
                if !n.is_power_of_two() {
                    return Err(err(key, format!("must be a power of 2, got {n}")));
                }
                self.pinned_num_register_threads = n;
            }
            "roundup_power2_divisions" => {
                let after_last_key = self.rules == Rules::Npu;
                self.roundup_power2_divisions = parse_divisions(key, value, after_last_key)?
            }
            "backend" => {
                if value != "native" {
                    return Err(err(
                        key,
                        format!("only the native caching allocator is modelled, got `{value}`"),
                    ));
                }
            }
            k @ ("graph_capture_record_stream_reuse"
            | "multi_stream_lazy_reclaim"
            | "release_lock_on_npumalloc"
            | "pinned_mem_register"
            | "pin_memory_expandable_segments"
            | "pinned_use_background_threads"
            | "pinned_reserve_segment_size_mb"
            | "per_process_memory_fraction"
            | "pinned_max_register_threads") => {
                self.passthrough.retain(|(pk, _)| pk != k);
                self.passthrough.push((k.to_string(), value.to_string()));
            }
            other => return Err(err(other, "unknown allocator option")),
        }
        Ok(())
    }

    /// The model configuration a snapshot's `allocator_settings` describes.
    pub fn from_settings(s: &AllocatorSettings) -> Result<Config, ConfigError> {
        let mut c = Config::default();
        // Not PyTorch's: memsnap writes it (`--allocator`) so a file can say whose it is.
        if let Some(v) = s.get(ALLOCATOR_KEY) {
            let name = v
                .as_str()
                .ok_or_else(|| err(ALLOCATOR_KEY, "expected a string (cuda or npu)"))?;
            c.rules = Rules::parse(name).map_err(|m| err(ALLOCATOR_KEY, m))?;
        }
        if let Some(v) = s.get("base_addr_aligned_kb") {
            let kb = int_of("base_addr_aligned_kb", v)?;
            c.set("base_addr_aligned_kb", &kb.to_string())?;
        }
        if let Some(v) = s.get("max_split_size") {
            let n = int_of("max_split_size", v)?;
            // SIZE_MAX is written as int64 -1.
            c.max_split_size = if n < 0 { u64::MAX } else { n as u64 };
        }
        if let Some(v) = s.get("max_non_split_rounding_size") {
            let n = int_of("max_non_split_rounding_size", v)?;
            if n > 0 {
                c.max_non_split_rounding_size = n as u64;
            }
        }
        if let Some(v) = s.get("garbage_collection_threshold") {
            c.garbage_collection_threshold = v
                .as_f64()
                .ok_or_else(|| err("garbage_collection_threshold", "expected a number"))?;
        }
        if let Some(v) = s.get("expandable_segments") {
            c.expandable_segments = v
                .as_bool()
                .or_else(|| v.as_i64().map(|i| i != 0))
                .ok_or_else(|| err("expandable_segments", "expected a bool"))?;
        }
        if let Some(v) = s.get("release_lock_on_cudamalloc") {
            c.release_lock_on_cudamalloc = v.as_bool().unwrap_or(false);
        }
        if let Some(v) = s.get("pinned_use_cuda_host_register") {
            c.pinned_use_cuda_host_register = v.as_bool().unwrap_or(false);
        }
        if let Some(v) = s.get("pinned_num_register_threads") {
            c.pinned_num_register_threads = int_of("pinned_num_register_threads", v)?.max(1) as u64;
        }
        if let Some(v) = s.get("roundup_power2_divisions") {
            c.roundup_power2_divisions = divisions_of(v)?;
        }
        Ok(c)
    }

    /// Whether these settings exist for the allocator `self.rules` names: torch_npu's options on
    /// CUDA are unknown to it, and torch_npu refuses expandable segments together with
    /// `max_split_size_mb` or `garbage_collection_threshold` (NPUAllocatorConfig::parseArgs).
    pub fn check_rules(&self) -> Result<(), ConfigError> {
        let d = Config::default();
        match self.rules {
            Rules::Cuda => {
                let npu_only = [
                    (
                        "base_addr_aligned_kb",
                        self.base_addr_aligned != d.base_addr_aligned,
                    ),
                    ("segment_size_mb", self.large_page != d.large_page),
                    (
                        "large_segment_size_mb",
                        self.large_segment != d.large_segment,
                    ),
                    ("page_size", self.page_1g),
                ];
                match npu_only.iter().find(|(_, set)| *set) {
                    Some((key, _)) => Err(err(
                        key,
                        "a torch_npu option: CUDA's allocator has no such setting",
                    )),
                    None => Ok(()),
                }
            }
            Rules::Npu if self.expandable_segments => {
                if self.max_split_size_limited() {
                    Err(err(
                        "max_split_size_mb",
                        "torch_npu refuses it with expandable_segments:True",
                    ))
                } else if self.garbage_collection_threshold > 0.0 {
                    Err(err(
                        "garbage_collection_threshold",
                        "torch_npu refuses it with expandable_segments:True",
                    ))
                } else {
                    Ok(())
                }
            }
            Rules::Npu => Ok(()),
        }
    }

    /// Page size of an expandable segment of the small or large pool
    /// (`get_custom_expandable_segment_size` on torch_npu).
    pub fn expandable_page(&self, small: bool) -> u64 {
        match self.rules {
            _ if small => SMALL_BUFFER,
            Rules::Cuda => LARGE_BUFFER,
            Rules::Npu if self.page_1g => NPU_1G_PAGE,
            Rules::Npu if self.large_segment != LARGE_BUFFER => self.large_segment,
            Rules::Npu => self.large_page,
        }
    }

    /// Divisions for a size (its power-of-two interval, clamped to [1 MiB, 32 GiB+]).
    pub fn roundup_power2_divisions_for(&self, size: u64) -> u64 {
        let log = 63 - size.max(1).leading_zeros() as usize;
        let idx = log.saturating_sub(20).min(ROUNDUP_INTERVALS - 1);
        self.roundup_power2_divisions[idx]
    }

    pub fn max_split_size_limited(&self) -> bool {
        self.max_split_size != u64::MAX
    }

    /// The `PYTORCH_CUDA_ALLOC_CONF` value that reproduces this configuration ("" for defaults).
    pub fn to_conf_string(&self) -> String {
        let d = Config::default();
        let mut parts: Vec<String> = Vec::new();
        if self.expandable_segments != d.expandable_segments {
            parts.push(format!(
                "expandable_segments:{}",
                py_bool(self.expandable_segments)
            ));
        }
        if self.max_split_size != d.max_split_size {
            parts.push(format!("max_split_size_mb:{}", self.max_split_size / MB));
        }
        if self.max_non_split_rounding_size != d.max_non_split_rounding_size {
            parts.push(format!(
                "max_non_split_rounding_mb:{}",
                self.max_non_split_rounding_size / MB
            ));
        }
        if self.roundup_power2_divisions != d.roundup_power2_divisions {
            parts.push(format!(
                "roundup_power2_divisions:{}",
                divisions_string(&self.roundup_power2_divisions)
            ));
        }
        if self.garbage_collection_threshold != d.garbage_collection_threshold {
            parts.push(format!(
                "garbage_collection_threshold:{}",
                self.garbage_collection_threshold
            ));
        }
        if self.release_lock_on_cudamalloc {
            parts.push("release_lock_on_cudamalloc:True".into());
        }
        if self.pinned_use_cuda_host_register {
            parts.push("pinned_use_cuda_host_register:True".into());
        }
        if self.pinned_num_register_threads != d.pinned_num_register_threads {
            parts.push(format!(
                "pinned_num_register_threads:{}",
                self.pinned_num_register_threads
            ));
        }
        if self.base_addr_aligned != d.base_addr_aligned {
            parts.push(format!(
                "base_addr_aligned_kb:{}",
                self.base_addr_aligned >> 10
            ));
        }
        if self.large_page != d.large_page {
            parts.push(format!("segment_size_mb:{}", self.large_page / MB));
        }
        if self.large_segment != d.large_segment {
            parts.push(format!("large_segment_size_mb:{}", self.large_segment / MB));
        }
        if self.page_1g {
            parts.push("page_size:1g".into());
        }
        for (k, v) in &self.passthrough {
            parts.push(format!("{k}:{v}"));
        }
        parts.join(",")
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// Shortest form: one number when every interval agrees, else the list form `[1:2,...,>:v]`.
fn divisions_string(d: &[u64; ROUNDUP_INTERVALS]) -> String {
    if d.iter().all(|v| *v == d[0]) {
        return d[0].to_string();
    }
    // The first key also fills the intervals below it and `>` those after the last key.
    let n = ROUNDUP_INTERVALS;
    let lead_end = (0..n).take_while(|i| d[*i] == d[0]).last().unwrap_or(0);
    let tail_start = (0..n)
        .rev()
        .take_while(|i| d[*i] == d[n - 1])
        .last()
        .unwrap_or(n - 1);
    let mut items = vec![format!("{}:{}", 1u64 << lead_end, d[lead_end])];
    // `>` refills the last key's interval, so the last key is the tail's first interval.
    for (i, v) in d.iter().enumerate().take(tail_start + 1).skip(lead_end + 1) {
        items.push(format!("{}:{}", 1u64 << i, v));
    }
    if tail_start + 1 < n {
        items.push(format!(">:{}", d[n - 1]));
    }
    format!("[{}]", items.join(","))
}

fn int_of(key: &str, v: &Value) -> Result<i64, ConfigError> {
    v.as_i64().ok_or_else(|| err(key, "expected an integer"))
}

/// The settings dict form: `{"1": 0, "2": 0, ... "32768": 0}` keyed by interval start in MB.
fn divisions_of(v: &Value) -> Result<[u64; ROUNDUP_INTERVALS], ConfigError> {
    let key = "roundup_power2_divisions";
    let mut out = [0u64; ROUNDUP_INTERVALS];
    match v {
        Value::Dict(items) => {
            for (k, val) in items.iter() {
                let mb: u64 = match k {
                    Value::Str(s) => s
                        .parse()
                        .map_err(|_| err(key, format!("bad interval key `{s}`")))?,
                    Value::Int(i) if *i > 0 => *i as u64,
                    _ => return Err(err(key, "interval keys must be MB values")),
                };
                if !mb.is_power_of_two() {
                    return Err(err(key, format!("interval {mb} is not a power of 2")));
                }
                let idx = (63 - mb.leading_zeros() as usize).min(ROUNDUP_INTERVALS - 1);
                out[idx] = val
                    .as_i64()
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| err(key, "divisions must be non-negative integers"))?
                    as u64;
            }
            Ok(out)
        }
        Value::List(items) | Value::Tuple(items) => {
            for (i, val) in items.iter().take(ROUNDUP_INTERVALS).enumerate() {
                out[i] = val
                    .as_i64()
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| err(key, "expected integers"))? as u64;
            }
            Ok(out)
        }
        Value::Int(n) if *n >= 0 => Ok([*n as u64; ROUNDUP_INTERVALS]),
        _ => Err(err(key, "expected a dict of interval -> divisions")),
    }
}

fn check_divisions(key: &str, v: u64) -> Result<u64, ConfigError> {
    if v != 0 && !v.is_power_of_two() {
        return Err(err(
            key,
            format!("divisions must be 0 or a power of 2, got {v}"),
        ));
    }
    Ok(v)
}

/// `4` (all intervals) or `[64:8,128:2,256:4,>:1]` (keys: interval start in MB, a power of 2;
/// the first key also fills the intervals below it; `>` fills from the last key's interval on,
/// overwriting that one too, as PyTorch's parser does, or from the interval after it,
/// `after_last_key`, as torch_npu's `parseRoundUpPower2Divisions` does).
fn parse_divisions(
    key: &str,
    value: &str,
    after_last_key: bool,
) -> Result<[u64; ROUNDUP_INTERVALS], ConfigError> {
    let value = value.trim();
    if let Some(inner) = value.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| err(key, format!("missing `]` in `{value}`")))?;
        let mut out = [0u64; ROUNDUP_INTERVALS];
        let mut first = true;
        let mut last_index = 0usize;
        for item in inner.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item
                .split_once(':')
                .ok_or_else(|| err(key, format!("expected `interval:divisions`, got `{item}`")))?;
            let v = check_divisions(key, parse_u64(key, v.trim())?)?;
            if k.trim() == ">" {
                // PyTorch: from the last key's interval on, that interval included.
                let from = (last_index + after_last_key as usize).min(ROUNDUP_INTERVALS);
                out[from..].fill(v);
                continue;
            }
            let mb = parse_u64(key, k.trim())?;
            if !mb.is_power_of_two() {
                return Err(err(key, format!("interval {mb} is not a power of 2")));
            }
            let idx = (63 - mb.leading_zeros() as usize).min(ROUNDUP_INTERVALS - 1);
            if first {
                out[..idx].fill(v);
                first = false;
            }
            out[idx] = v;
            last_index = idx;
        }
        Ok(out)
    } else {
        let v = check_divisions(key, parse_u64(key, value)?)?;
        Ok([v; ROUNDUP_INTERVALS])
    }
}

/// Splits `a:1,b:[x:1,y:2],c:True` into (key, value) pairs; brackets keep their commas.
fn split_options(conf: &str) -> Result<Vec<(String, String)>, ConfigError> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0usize;
    let bytes: Vec<char> = conf.chars().filter(|c| !c.is_whitespace()).collect();
    let s: String = bytes.iter().collect();
    let mut pieces = Vec::new();
    for (i, ch) in s.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                pieces.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(&s[start..]);
    for p in pieces.into_iter().filter(|p| !p.is_empty()) {
        let (k, v) = p
            .split_once(':')
            .ok_or_else(|| err(p, "expected `key:value`"))?;
        if v.is_empty() {
            return Err(err(k, "missing value"));
        }
        out.push((k.to_string(), v.to_string()));
    }
    if depth != 0 {
        return Err(err("PYTORCH_CUDA_ALLOC_CONF", "unbalanced brackets"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn parses_the_common_options() {
        let c = Config::parse(
            "expandable_segments:True,max_split_size_mb:512,roundup_power2_divisions:4,garbage_collection_threshold:0.8",
        )
        .unwrap();
        assert!(c.expandable_segments);
        assert_eq!(c.max_split_size, 512 << 20);
        assert_eq!(c.roundup_power2_divisions, [4; 16]);
        assert_eq!(c.garbage_collection_threshold, 0.8);
        let again = Config::parse(&c.to_conf_string()).unwrap();
        assert_eq!(again, c);
    }

    #[test]
    fn per_interval_divisions_and_round_trip() {
        let c = Config::parse(
            "roundup_power2_divisions:[64:8,128:2,256:4,>:1],release_lock_on_cudamalloc:True",
        )
        .unwrap();
        let d = c.roundup_power2_divisions;
        assert_eq!(&d[..7], &[8; 7], "first key fills everything up to 64 MB");
        assert_eq!(d[7], 2);
        // `>` starts at the last key's interval (256 MB), overwriting its 4: PyTorch's parser.
        assert_eq!(&d[8..], &[1; 8]);
        let c2 = Config::parse("roundup_power2_divisions:[1:4,2:2,4:8,16:2]").unwrap();
        assert_eq!(&c2.roundup_power2_divisions[..5], &[4, 2, 8, 0, 2]);
        assert_eq!(Config::parse(&c2.to_conf_string()).unwrap(), c2);
        assert!(c.release_lock_on_cudamalloc);
        assert_eq!(Config::parse(&c.to_conf_string()).unwrap(), c);
        assert_eq!(Config::default().to_conf_string(), "");
    }

    #[test]
    fn errors_name_the_key() {
        let e = Config::parse("max_split_size_mb:abc").unwrap_err();
        assert_eq!(e.key, "max_split_size_mb");
        let e = Config::parse("max_split_size_mb:10").unwrap_err();
        assert!(e.message.contains(">= 20"), "{e}");
        let e = Config::parse("bogus_key:1").unwrap_err();
        assert_eq!(e.key, "bogus_key");
        let e = Config::parse("expandable_segments:maybe").unwrap_err();
        assert_eq!(e.key, "expandable_segments");
        let e = Config::parse("roundup_power2_divisions:[64:3]").unwrap_err();
        assert!(e.message.contains("power of 2"), "{e}");
        let e = Config::parse("garbage_collection_threshold:1.5").unwrap_err();
        assert_eq!(e.key, "garbage_collection_threshold");
        assert!(Config::parse("expandable_segments").is_err());
        let mut c = Config::default();
        assert!(c.set("max_non_split_rounding_mb", "64").is_ok());
        assert_eq!(c.max_non_split_rounding_size, 64 << 20);
    }

    #[test]
    fn the_allocator_key_names_known_rules_or_is_an_error() {
        let with = |v: Value| {
            let mut s = AllocatorSettings::default();
            s.entries.push((Arc::from(ALLOCATOR_KEY), v));
            Config::from_settings(&s)
        };
        assert_eq!(
            with(Value::Str(Arc::from("npu"))).unwrap().rules,
            Rules::Npu
        );
        assert_eq!(
            with(Value::Str(Arc::from("CUDA"))).unwrap().rules,
            Rules::Cuda
        );
        let e = with(Value::Str(Arc::from("tpu"))).unwrap_err();
        assert_eq!(e.key, ALLOCATOR_KEY);
        assert!(e.message.contains("unknown allocator `tpu`"), "{e}");
        let e = with(Value::Int(3)).unwrap_err();
        assert_eq!(e.key, ALLOCATOR_KEY);
        assert!(e.message.contains("expected a string"), "{e}");
    }

    #[test]
    fn from_snapshot_settings() {
        let mut s = AllocatorSettings::default();
        s.entries
            .push((Arc::from("max_split_size"), Value::Int(-1)));
        s.entries
            .push((Arc::from("expandable_segments"), Value::Bool(true)));
        let div: Vec<(Value, Value)> = (0..16)
            .map(|i| {
                (
                    Value::Str(Arc::from((1u64 << i).to_string().as_str())),
                    Value::Int(if i == 3 { 4 } else { 0 }),
                )
            })
            .collect();
        s.entries.push((
            Arc::from("roundup_power2_divisions"),
            Value::Dict(Arc::new(div)),
        ));
        let c = Config::from_settings(&s).unwrap();
        assert_eq!(c.max_split_size, u64::MAX);
        assert!(c.expandable_segments);
        assert_eq!(c.roundup_power2_divisions[3], 4);
        assert_eq!(c.roundup_power2_divisions_for(9 << 20), 4);
        assert_eq!(c.roundup_power2_divisions_for(17 << 20), 0);
        s.entries[0].1 = Value::Int(512 << 20);
        assert_eq!(Config::from_settings(&s).unwrap().max_split_size, 512 << 20);
    }
}
