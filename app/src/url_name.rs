//! The file name a URL ends in: what a file opened from an address is called, on both sides
//! of the worker, and what the page's address is matched against.

/// The last path segment ("example.pickle" for ".../example.pickle?x=1"), or the URL itself.
pub fn file_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    match path.rsplit('/').next() {
        Some(last) if !last.is_empty() => last.to_string(),
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn the_last_segment_without_query_or_fragment() {
        assert_eq!(file_name("data/run.pickle?x=1#y"), "run.pickle");
        assert_eq!(file_name("https://h/a/rank3.pickle"), "rank3.pickle");
        assert_eq!(file_name("https://h/a/"), "https://h/a/");
    }
}
