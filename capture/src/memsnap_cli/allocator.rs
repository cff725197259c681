//! `--allocator cuda|npu`: whose caching allocator the model follows for a file, where detection
//! (the sizes the file holds) is not wanted. Recorded as the `allocator` key of the snapshot's
//! `allocator_settings`, the one place every core analysis reads a file's settings from.

use std::borrow::Cow;
use std::sync::Arc;

use memsnap_core::allocator::config::ALLOCATOR_KEY;
use memsnap_core::allocator::Rules;
use memsnap_core::snapshot::{AllocatorSettings, Snapshot, Value};

/// `snapshot` as modelled under `rules` (itself, borrowed, when `None`).
pub fn under(snapshot: &Snapshot, rules: Option<Rules>) -> Cow<'_, Snapshot> {
    let Some(rules) = rules else {
        return Cow::Borrowed(snapshot);
    };
    let mut s = snapshot.clone();
    let settings = s
        .allocator_settings
        .get_or_insert_with(AllocatorSettings::default);
    settings.entries.retain(|(k, _)| &**k != ALLOCATOR_KEY);
    settings.entries.push((
        Arc::from(ALLOCATOR_KEY),
        Value::Str(Arc::from(rules.name())),
    ));
    Cow::Owned(s)
}
