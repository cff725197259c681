//! A size shown as text: as people say it ("16.0 MiB", core's `analysis::units::bytes`), the
//! exact byte count on hover (`title`) and in `data-bytes`. Every panel shows sizes through
//! this one helper, so they all read alike and a script can check any of them.

use leptos::prelude::*;

use crate::format;

/// "1.50 GiB", with "1610612736 bytes" on hover.
pub fn size(bytes: u64) -> impl IntoView {
    view! {
        <span class="size" title=format!("{bytes} bytes") data-bytes=bytes.to_string()>
            {format::bytes(bytes)}
        </span>
    }
}
