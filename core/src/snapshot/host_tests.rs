//! Pinned host memory (`host_segments`, `host_traces`): read into the model, written back,
//! shown as one more device, and bad shapes refused by name.

use super::{read, write, Action};

const HOST: &str = r#"{"segments": [{"device": 1, "address": 4096, "total_size": 2097152,
    "stream": 0, "segment_type": "large",
    "blocks": [{"address": 4096, "size": 2097152, "requested_size": 0, "state": "inactive"}]}],
  "device_traces": [[], [{"action": "alloc", "addr": 4096, "size": 512, "stream": 0}]],
  "host_segments": [{"device": 0, "address": 140000000000000, "total_size": 1048576,
    "stream": 0, "segment_type": "large",
    "blocks": [{"address": 140000000000000, "size": 524288, "requested_size": 500000,
      "state": "active_allocated", "frames": [{"filename": "pin.py", "line": 7, "name": "f"}]},
      {"address": 140000000524288, "size": 524288, "requested_size": 0, "state": "inactive"}]}],
  "host_traces": [{"action": "segment_alloc", "addr": 140000000000000, "size": 1048576,
      "stream": 0},
    {"action": "alloc", "addr": 140000000000000, "size": 500000, "stream": 0}]}"#;

#[test]
fn host_memory_has_its_own_place_and_survives_a_round_trip() {
    let s = read(HOST.as_bytes()).unwrap();
    assert!(s.extra.is_empty(), "host keys are not unknown keys");
    let hs = s.host_segments.as_ref().unwrap();
    assert_eq!(hs.len(), 1);
    assert_eq!(hs[0].blocks.len(), 2);
    let ht = s.host_traces.as_ref().unwrap();
    assert_eq!(
        ht.iter().map(|e| e.action()).collect::<Vec<_>>(),
        vec![Action::SegmentAlloc, Action::Alloc]
    );
    // Device totals do not see host memory.
    assert_eq!(s.devices(), vec![1]);

    let again = read(&write(&s)).unwrap();
    let again_hs = again.host_segments.as_ref().unwrap();
    assert_eq!(again_hs[0].address, hs[0].address);
    assert_eq!(again_hs[0].total_size, hs[0].total_size);
    assert_eq!(again_hs[0].blocks.len(), 2);
    let frames = again
        .stacks
        .frames_of(again_hs[0].blocks[0].frames.unwrap());
    assert_eq!(
        frames.map(|f| f.filename.to_string()).collect::<Vec<_>>(),
        vec!["pin.py"]
    );
    assert_eq!(again.host_traces.as_ref().unwrap().len(), 2);
    assert_eq!(write(&again), write(&s));
}

#[test]
fn host_as_device_numbers_it_after_every_cuda_device() {
    let mut s = read(HOST.as_bytes()).unwrap();
    let host = s.host_as_device().unwrap();
    assert_eq!(host, 2);
    assert_eq!(s.devices(), vec![1, 2]);
    assert_eq!(s.trace(2).len(), 2);
    assert!(s.segments.iter().filter(|g| g.device == Some(2)).count() == 1);
    assert!(s.host_segments.is_none() && s.host_traces.is_none());

    let mut none = read(br#"{"segments": []}"#).unwrap();
    assert_eq!(none.host_as_device(), None);
}

#[test]
fn bad_host_shapes_are_refused_by_name() {
    for (text, want) in [
        (r#"{"segments": [], "host_segments": 3}"#, "host_segments"),
        (
            r#"{"segments": [], "host_segments": [{"address": 1}]}"#,
            "host_segments[0]",
        ),
        (
            r#"{"segments": [], "host_traces": {"a": 1}}"#,
            "host_traces",
        ),
        (
            r#"{"segments": [], "host_traces": [[]]}"#,
            "not one list per device",
        ),
        (
            r#"{"segments": [], "host_traces": [{"addr": 1}]}"#,
            "host_traces[0]",
        ),
    ] {
        let e = read(text.as_bytes()).unwrap_err();
        assert!(e.to_string().contains(want), "{text}: {e}");
    }
}
