//! One component per file. Each reads `AppState` from context and shows one view model.

pub mod analysis_state;
mod anomalies;
mod before_after;
mod devices;
mod diagnostics;
mod flamegraph;
mod fleet;
mod fleet_strip;
mod fleet_timelines;
mod insights;
mod load_warnings;
mod no_trace;
mod oom;
mod open;
mod phases;
pub mod pools;
mod rank_compare;
mod segments;
mod size;
mod stack;
mod state_slider;
mod timeline;
mod view_address;
mod view_link;
mod view_panel;
mod whatif;

pub use devices::DevicePicker;
pub use diagnostics::Diagnostics;
pub use fleet::FleetOverview;
pub use fleet_timelines::FleetTimelines;
pub use open::OpenPanel;
pub use phases::PhaseBand;
pub use pools::PoolDiagnostics;
pub use rank_compare::RankCompare;
pub use segments::SegmentView;
pub use stack::StackPanel;
pub use view_link::ViewLink;
// The analysis views.
pub use anomalies::Anomalies;
pub use before_after::BeforeAfter;
pub use flamegraph::FlameGraph;
pub use insights::Insights;
pub use oom::OomPanel;
pub use state_slider::StateSlider;
pub use timeline::Timeline;
pub use whatif::WhatIf;
