//! Placeholder until the writer lands.
use super::model::Snapshot;

pub fn write(_s: &Snapshot) -> Vec<u8> {
    Vec::new()
}
