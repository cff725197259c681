//! The OOM panel's answer: core's explanation of the device's first out-of-memory error, as
//! `memsnap oom` prints it.

use memsnap_core::analysis::oom::explain_oom;
use memsnap_core::snapshot::Snapshot;

use crate::protocol::Response;

pub fn oom_response(snapshot: &Snapshot, device: i64) -> Response {
    match explain_oom(snapshot, device) {
        Ok(oom) => Response::Oom {
            device,
            oom: oom.map(Box::new),
        },
        Err(e) => Response::Failed {
            message: format!("explaining the OOM on device {device}: {e}"),
        },
    }
}
