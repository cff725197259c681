//! The allocator configuration of a run: a base (defaults for scenarios, the file's
//! `allocator_settings` for replays), replaced by --alloc-conf, then each --set applied.

use memsnap_core::allocator::Config;

pub fn build(base: Config, alloc_conf: Option<&str>, sets: &[String]) -> Result<Config, String> {
    let mut config = match alloc_conf {
        Some(conf) => Config::parse(conf).map_err(|e| format!("--alloc-conf: {e}"))?,
        None => base,
    };
    for kv in sets {
        let (k, v) = kv.split_once('=').ok_or_else(|| {
            format!("--set `{kv}`: expected KEY=VALUE, e.g. expandable_segments=true")
        })?;
        config.set(k, v).map_err(|e| format!("--set `{kv}`: {e}"))?;
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conf_then_sets() {
        let c = build(
            Config::default(),
            Some("max_split_size_mb:128"),
            &["expandable_segments=true".into()],
        )
        .unwrap();
        assert!(c.expandable_segments);
        assert_eq!(c.max_split_size, 128 << 20);
        assert!(
            build(Config::default(), None, &["expandable_segments".into()])
                .unwrap_err()
                .contains("KEY=VALUE")
        );
        assert!(build(Config::default(), None, &["bogus=1".into()])
            .unwrap_err()
            .contains("bogus"));
    }
}
