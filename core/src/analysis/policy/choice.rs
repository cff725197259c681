//! Which allocator's rules a device follows, and the model configuration for it.
//!
//! A file's `allocator_settings` give the settings (torch_npu writes none). The rules are those
//! the settings name (`allocator`, which `--allocator` sets), else the policy the device's sizes
//! fit: CUDA's when nothing contradicts it, else torch_npu's when nothing contradicts that.
//! Replays weigh every check ([`device_config`]); analyses that only round sizes weigh the
//! dump's blocks and new segments ([`device_config_quick`], 2 ms against 82 ms on a 1M-entry trace),
//! and the trace's neighbouring blocks only where those show nothing.
//! Where the settings do not say whether expandable segments were on, the device's own
//! segments and trace do (expandable segments are flagged, and only they map and unmap).

use crate::allocator::config::ALLOCATOR_KEY;
use crate::allocator::{Config, ConfigError, Rules};
use crate::snapshot::{Action, Snapshot};

use super::super::pace::{self, Pace};
use super::check::{check_policy_paced, check_sizes, PolicyCheck};

/// How much of the evidence a choice weighs.
#[derive(Clone, Copy)]
enum Weigh {
    Everything,
    Sizes,
}

impl Weigh {
    async fn check(
        self,
        snapshot: &Snapshot,
        device: i64,
        config: &Config,
        pace: &mut Pace<'_>,
    ) -> PolicyCheck {
        match self {
            Weigh::Everything => check_policy_paced(snapshot, device, config, pace).await,
            Weigh::Sizes => match check_sizes(snapshot, device, config) {
                pc if pc.checked == 0 => check_policy_paced(snapshot, device, config, pace).await,
                pc => pc,
            },
        }
    }
}

/// Where the choice of rules came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulesSource {
    /// The file's `allocator_settings` (or `--allocator`) name the allocator.
    Settings,
    /// Chosen by the sizes of the device's blocks and segments.
    Detected,
}

impl RulesSource {
    pub fn as_str(self) -> &'static str {
        match self {
            RulesSource::Settings => "settings",
            RulesSource::Detected => "detected",
        }
    }
}

/// The rules a device is modelled under, and the evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesChoice {
    pub rules: Rules,
    pub source: RulesSource,
    /// The check under the chosen rules: `fits()` unless no policy fits.
    pub check: PolicyCheck,
    /// CUDA's check when the device was found not to fit it.
    pub cuda: Option<PolicyCheck>,
}

impl RulesChoice {
    /// The device's sizes fit the chosen rules: its trace can be replayed under them.
    pub fn fits(&self) -> bool {
        self.check.fits()
    }

    /// One line for people: whose rules, and why.
    pub fn describe(&self) -> String {
        let who = self.rules.label();
        match (self.source, &self.cuda) {
            (RulesSource::Settings, _) => {
                format!("{who} (named by --allocator or the file's allocator_settings)")
            }
            (RulesSource::Detected, Some(c)) if self.fits() => format!(
                "{who} (detected: {} of {} sizes are impossible under CUDA's policy, none under {}'s)",
                c.impossible,
                c.checked,
                self.rules.short()
            ),
            (RulesSource::Detected, _) => format!("{who} (its sizes fit it)"),
        }
    }

    /// Why the device is not replayed: no policy fits its sizes. Rules named by the settings
    /// are replayed whatever the sizes say (see [`RulesChoice::misfit`]).
    pub fn not_replayable(&self) -> Option<String> {
        if self.source == RulesSource::Settings {
            return None;
        }
        self.misfit()
    }

    /// How the device's sizes contradict the chosen rules, when they do.
    pub fn misfit(&self) -> Option<String> {
        if self.fits() {
            return None;
        }
        let c = &self.check;
        let example = c.examples.first().cloned().unwrap_or_default();
        Some(match (self.source, &self.cuda) {
            (RulesSource::Settings, _) => format!(
                "not a trace of {}: {} of {} sizes are impossible under its policy, e.g. {example}",
                self.rules.label(),
                c.impossible,
                c.checked
            ),
            (RulesSource::Detected, Some(cuda)) => format!(
                "neither a CUDA nor a torch_npu allocator trace: {} of {} sizes are impossible under CUDA's policy ({} under torch_npu's), e.g. {}",
                cuda.impossible,
                cuda.checked,
                c.impossible,
                cuda.examples.first().cloned().unwrap_or_default()
            ),
            (RulesSource::Detected, None) => format!(
                "{} of {} sizes are impossible under {}'s policy, e.g. {example}",
                c.impossible,
                c.checked,
                self.rules.short()
            ),
        })
    }
}

/// A device's model configuration: the file's settings, the device's rules, and what was
/// inferred where the settings are silent.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceConfig {
    pub config: Config,
    pub choice: RulesChoice,
    /// `expandable_segments` was not in the settings and was read off the device's segments.
    pub expandable_inferred: bool,
}

/// The file's settings as a model configuration (defaults when the file has none).
pub fn settings_config(snapshot: &Snapshot) -> Result<Config, ConfigError> {
    match &snapshot.allocator_settings {
        Some(s) => Config::from_settings(s),
        None => Ok(Config::default()),
    }
}

/// The configuration `device` is replayed under, every check weighed.
pub fn device_config(snapshot: &Snapshot, device: i64) -> Result<DeviceConfig, ConfigError> {
    pace::finish(device_config_paced(snapshot, device, &mut Pace::never()))
}

/// [`device_config`], giving way through `pace`.
pub async fn device_config_paced(
    snapshot: &Snapshot,
    device: i64,
    pace: &mut Pace<'_>,
) -> Result<DeviceConfig, ConfigError> {
    choose(snapshot, device, Weigh::Everything, pace).await
}

/// The configuration `device`'s sizes are rounded under: as [`device_config`], weighing the
/// dump's blocks and the trace's new segments (the trace's neighbouring blocks only when those
/// show nothing).
pub fn device_config_quick(snapshot: &Snapshot, device: i64) -> Result<DeviceConfig, ConfigError> {
    pace::finish(device_config_quick_paced(
        snapshot,
        device,
        &mut Pace::never(),
    ))
}

/// [`device_config_quick`], giving way through `pace` (where the dump and the new segments
/// show nothing, it weighs the whole trace).
pub async fn device_config_quick_paced(
    snapshot: &Snapshot,
    device: i64,
    pace: &mut Pace<'_>,
) -> Result<DeviceConfig, ConfigError> {
    choose(snapshot, device, Weigh::Sizes, pace).await
}

async fn choose(
    snapshot: &Snapshot,
    device: i64,
    weigh: Weigh,
    pace: &mut Pace<'_>,
) -> Result<DeviceConfig, ConfigError> {
    let mut config = settings_config(snapshot)?;
    let says = |key: &str| {
        snapshot
            .allocator_settings
            .as_ref()
            .is_some_and(|s| s.get(key).is_some())
    };
    let expandable_inferred = !says("expandable_segments") && uses_expandable(snapshot, device);
    if expandable_inferred {
        config.expandable_segments = true;
    }
    let choice = if says(ALLOCATOR_KEY) {
        RulesChoice {
            rules: config.rules,
            source: RulesSource::Settings,
            check: weigh.check(snapshot, device, &config, pace).await,
            cuda: None,
        }
    } else {
        detect(snapshot, device, &mut config, weigh, pace).await
    };
    Ok(DeviceConfig {
        config,
        choice,
        expandable_inferred,
    })
}

/// CUDA's rules unless the sizes contradict them and fit torch_npu's; sets `config.rules`.
async fn detect(
    snapshot: &Snapshot,
    device: i64,
    config: &mut Config,
    weigh: Weigh,
    pace: &mut Pace<'_>,
) -> RulesChoice {
    config.rules = Rules::Cuda;
    let cuda = weigh.check(snapshot, device, config, pace).await;
    if cuda.fits() {
        return RulesChoice {
            rules: Rules::Cuda,
            source: RulesSource::Detected,
            check: cuda,
            cuda: None,
        };
    }
    let mut npu_config = config.clone();
    npu_config.rules = Rules::Npu;
    let npu = weigh.check(snapshot, device, &npu_config, pace).await;
    if npu.fits() {
        config.rules = Rules::Npu;
    }
    RulesChoice {
        rules: config.rules,
        source: RulesSource::Detected,
        check: if npu.fits() { npu } else { cuda.clone() },
        cuda: Some(cuda),
    }
}

/// The device's segments are expandable ones, or its trace maps and unmaps.
fn uses_expandable(snapshot: &Snapshot, device: i64) -> bool {
    (snapshot.segments.iter())
        .any(|s| s.device.unwrap_or(0) == device && s.is_expandable == Some(true))
        || snapshot
            .trace(device.max(0) as usize)
            .iter()
            .any(|e| matches!(e.action(), Action::SegmentMap | Action::SegmentUnmap))
}
