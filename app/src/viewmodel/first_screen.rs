//! The first screen of a file just opened, answered with the open (`Response::Opened`): the
//! same segments and timeline the page would ask for next, without the two round trips.

use memsnap_core::snapshot::Snapshot;

use super::cache::Analyses;
use super::segments::segments_view;
use super::timeline::timeline_view;
use crate::protocol::analysis::{EntryRange, TimelineRequest};
use crate::protocol::{FileSummary, FirstScreen, PlotSize};

/// The opening device's segments, and its whole trace's timeline at `plot` pixels (the
/// request the page's timeline sends for a file it has just opened); `None` for a file with
/// no device.
pub fn first_screen(
    snapshot: &Snapshot,
    cache: &mut Analyses,
    summary: &FileSummary,
    plot: PlotSize,
) -> Option<FirstScreen> {
    let device = summary.opening_device()?;
    let entries = summary
        .devices
        .iter()
        .find(|d| d.device == device)
        .map_or(0, |d| d.timeline_entries());
    let timeline = (entries > 0).then(|| {
        let request = whole_timeline(device, entries, plot);
        (request, timeline_view(snapshot, cache, &request))
    });
    Some(FirstScreen {
        segments: segments_view(snapshot, device),
        timeline,
    })
}

/// The timeline of `device`'s first `entries` entries (its whole trace) at `plot` pixels.
pub fn whole_timeline(device: i64, entries: u64, plot: PlotSize) -> TimelineRequest {
    TimelineRequest {
        device,
        range: EntryRange {
            start: 0,
            end: entries,
        },
        width: plot.width,
        height: plot.height,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Request, Response};
    use crate::viewmodel::{answer, file_summary};

    fn open(bytes: &[u8]) -> (Snapshot, Analyses, FileSummary) {
        let mut snap = memsnap_core::snapshot::read(bytes).unwrap();
        let mut cache = Analyses::for_open(&mut snap);
        let summary = file_summary(&snap, &mut cache, "f", bytes.len() as u64, 0.0);
        (snap, cache, summary)
    }

    #[test]
    fn is_what_the_page_would_ask_for_next() {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/example.pickle"
        ))
        .unwrap();
        let (snap, mut cache, summary) = open(&bytes);
        let plot = PlotSize {
            width: 613,
            height: 226,
        };
        let screen = first_screen(&snap, &mut cache, &summary, plot).unwrap();
        let device = summary.opening_device().unwrap();
        let Response::Segments(segments) = answer(&snap, &mut cache, &Request::Segments { device })
        else {
            panic!("no segments")
        };
        assert_eq!(screen.segments, segments);
        let (request, timeline) = screen.timeline.expect("the example has a trace");
        assert_eq!(
            (request.device, request.width, request.height),
            (device, 613, 226)
        );
        let d = summary.devices.iter().find(|d| d.device == device).unwrap();
        assert_eq!(
            request.range,
            EntryRange {
                start: 0,
                end: d.trace_entries
            }
        );
        assert!(d.trace_entries > 0);
        assert_eq!(
            answer(&snap, &mut cache, &Request::Timeline(request)),
            Response::Timeline(timeline)
        );
    }

    #[test]
    fn has_no_timeline_without_a_trace() {
        // A segment list (`torch.cuda.memory_snapshot()`): segments, no trace.
        let mut snap = memsnap_core::snapshot::Snapshot::default();
        snap.segments.push(memsnap_core::snapshot::Segment {
            device: Some(0),
            total_size: 2 << 20,
            ..Default::default()
        });
        let bytes = memsnap_core::snapshot::write(&snap);
        let (snap, mut cache, summary) = open(&bytes);
        let plot = PlotSize {
            width: 100,
            height: 50,
        };
        let screen = first_screen(&snap, &mut cache, &summary, plot).unwrap();
        assert_eq!(screen.segments.segments.len(), 1);
        assert_eq!(screen.timeline, None);
    }
}
