//! The trace-entry keys the pickle machine fills itself.

/// The keys the machine writes into an entry itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Action,
    Addr,
    Size,
    Stream,
    TimeUs,
    DeviceFree,
    Frames,
    CompileContext,
    UserMetadata,
    Other,
}
