//! Replay: the token that pins down one execution, and the command line that re-runs it.
//!
//! This module owns the token format (see [`token`]) and how a token becomes a command the user
//! can paste. It does not run anything: the runner turns a decoded token into a
//! `schedulers::Replay` strategy for one execution.

pub mod token;

pub use token::{decode, encode, ReplayToken, TokenError, ENV_VAR};

/// The line that re-runs exactly the execution `token` describes, for a test named `test`
/// (a full path such as `my_crate::tests::lost_update`; the crate segment is dropped because
/// cargo's test filter does not include it).
pub fn command_line(token: &str, test: Option<&str>) -> String {
    match test {
        Some(name) => {
            let path = name.split_once("::").map_or(name, |(_, rest)| rest);
            format!("{ENV_VAR}={token} cargo test -- --exact {path}")
        }
        None => format!("{ENV_VAR}={token} (or Config::replay(\"{token}\") in code)"),
    }
}
