//! What every replay of a recorded failure must show: one execution, replayed, failing again
//! exactly as recorded.

use pctvb::report::{Failure, FailureKind, Report};

/// Checks that `replay`, a run of `original`'s token, reproduced `original`: one execution,
/// the same panic, at the same execution index, along a schedule of the same length.
pub fn assert_reproduces(replay: &Report, original: &Failure) {
    assert!(replay.replayed);
    assert_eq!(replay.executions, 1, "a replay runs exactly one execution");
    let again = replay.failure().expect("the replay fails again");
    assert_eq!(again.kind, FailureKind::Panic);
    assert_eq!(again.message, original.message);
    assert_eq!(again.execution, original.execution);
    assert_eq!(again.schedule.len(), original.schedule.len());
}

/// Replays `failure`'s token twice, each time with the configuration `config` builds (the
/// test's strategy under another seed: a replay must not depend on it), and checks that each
/// replay reproduced it.
#[allow(dead_code)] // not every test file that includes this module uses it
pub fn assert_token_replays(config: impl Fn() -> pctvb::Config, body: fn(), failure: &Failure) {
    let token = failure.token.clone().expect("a token");
    for _ in 0..2 {
        let replay = config().replay(token.clone()).run(body);
        assert_reproduces(&replay, failure);
    }
}
