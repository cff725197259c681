//! Any text -> the scenario parser must return Ok or a located error, never panic or hang.
//! Parsed scenarios are also run (against a counter capped at a few thousand actions), since
//! sizes, names and loops are evaluated only then.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memsnap_capture::scenario::{file, run, Step, Target};

/// Counts actions and stops the run after `CAP`, so a scenario's loops cannot make a slow unit.
struct Capped(u64);

const CAP: u64 = 4096;

impl Capped {
    fn tick(&mut self) -> Result<(), String> {
        self.0 += 1;
        if self.0 > CAP {
            Err("fuzz cap reached".into())
        } else {
            Ok(())
        }
    }
}

impl Target for Capped {
    fn alloc(&mut self, _: &Step, _: String, _: u64, _: &str) -> Result<(), String> {
        self.tick()
    }
    fn free(&mut self, _: &Step, _: String) -> Result<(), String> {
        self.tick()
    }
    fn record_stream(&mut self, _: &Step, _: String, _: &str) -> Result<(), String> {
        self.tick()
    }
    fn empty_cache(&mut self, _: &Step) -> Result<(), String> {
        self.tick()
    }
    fn sync(&mut self, _: &Step) -> Result<(), String> {
        self.tick()
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(scenario) = file::parse(src, "fuzz.toml", "fuzz") else {
        return;
    };
    let _ = run(&scenario, 0, &mut Capped(0));
});
