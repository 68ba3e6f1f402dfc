//! Why a run could not test: the errors that are not bugs.
//!
//! A run ends in one of three ways: it passed, it found a bug (a [`Failure`](crate::Failure):
//! a panic, a deadlock, a limit exceeded, or a replay that reproduced one), or pctvb could not
//! test the program at all: the configuration is invalid, the replay token is unreadable or
//! belongs to another program, the strategy could not continue, or pctvb itself failed. The
//! last is an [`Error`], kept apart from failures by type so that a tool (or a person) never
//! mistakes "the test could not run" for "the test found a bug", as proptest keeps
//! `TestCaseError::Reject` apart from `Fail`.
//!
//! ```
//! let report = pctvb::Config::new().replay("not a token").run(|| {});
//! assert!(report.failure().is_none());
//! match report.error() {
//!     Some(pctvb::Error::Token { .. }) => {} // could not test: fix the token
//!     other => panic!("expected a token error, got {other:?}"),
//! }
//! ```

use std::fmt;

/// Why pctvb could not test a program (as opposed to a bug it found, a
/// [`Failure`](crate::Failure)). Each variant's message names what was wrong and what to do.
///
/// A run reports it in [`Report::error`](crate::Report::error);
/// [`Config::try_run`](crate::Config::try_run) returns it as the `Err` case.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value is invalid: a `PCTVB_*` environment variable, a bound the
    /// strategy does not take or one out of range, a confidence no number of executions
    /// reaches, an unreadable regression file, or a `stack_size` the system could not allocate
    /// for a thread.
    Config {
        /// What was wrong, e.g. `PCTVB_SEED`, `strategy`, `confidence` or `regression file`.
        what: String,
        /// What is wrong with it and what to do.
        message: String,
    },
    /// A replay token could not be used: it does not decode, or it names an
    /// `#[pctvb::instrument]` tracking session this program does not have.
    Token {
        /// Where the token came from: `PCTVB_REPLAY`, `Config::replay`, or the regression
        /// file and line.
        origin: String,
        /// What is wrong with it and what to do.
        message: String,
    },
    /// A replayed execution did not follow its token: the program no longer behaves as when
    /// the token was recorded (its code changed, or it depends on nondeterminism pctvb does not
    /// control). The token tells nothing about the current program.
    ReplayDiverged {
        /// The index of the execution the token recorded.
        execution: u64,
        /// Where the replay diverged and what to do.
        message: String,
    },
    /// The strategy could not continue, e.g. the systematic search's replay of a recorded
    /// prefix diverged.
    Strategy {
        /// The strategy, with parameters, as reports name it.
        strategy: String,
        /// The index of the execution it failed in.
        execution: u64,
        /// Why it could not continue and what to do.
        message: String,
    },
    /// pctvb was used in a way it does not support, e.g. a run started inside another run's
    /// execution.
    Unsupported {
        /// What is not supported and what to do instead.
        message: String,
    },
    /// pctvb itself could not continue, e.g. a strategy chose a thread that cannot run. (A
    /// thread's stack that could not be allocated is an [`Error::Config`] naming
    /// `stack_size`: the size is the run's setting.)
    Internal {
        /// What failed.
        message: String,
    },
}

impl Error {
    /// The message: what was wrong and what to do (the [`Display`](fmt::Display) form).
    pub fn message(&self) -> &str {
        match self {
            Error::Config { message, .. }
            | Error::Token { message, .. }
            | Error::ReplayDiverged { message, .. }
            | Error::Strategy { message, .. }
            | Error::Unsupported { message }
            | Error::Internal { message } => message,
        }
    }

    pub(crate) fn config(what: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Config { what: what.into(), message: message.into() }
    }

    pub(crate) fn token(origin: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Token { origin: origin.into(), message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Internal { message } => write!(
                f,
                "pctvb internal error: {message}. This says nothing about the test; please \
                 report it to pctvb with the test"
            ),
            Error::Strategy { strategy, execution, message } => {
                write!(f, "{message} (strategy {strategy}, execution {execution})")
            }
            other => f.write_str(other.message()),
        }
    }
}

impl std::error::Error for Error {}
