//! Procedural macros of pctvb. `#[pctvb::test]` turns a function into a `#[test]` that runs its
//! body under pctvb's scheduler; see the `pctvb` crate for the user documentation.
//!
//! This crate only parses and rewrites syntax. It must not depend on the runtime: everything it
//! emits goes through `::pctvb::Config` and `::pctvb::__private`.

use proc_macro::TokenStream;

mod instrument;
mod test_attr;

/// Runs the function as a pctvb test: a `#[test]` whose body runs many times under controlled
/// schedules, failing with the original panic, the failing schedule and a replay line.
///
/// Arguments (all optional): `iterations = N`, `seed = N`, `strategy = "surw"` (the
/// default without a target; the names are those of `pctvb::StrategyKind::name`, and pctvb
/// checks them at compile time: an unknown one is an error that lists the others),
/// `max_steps = N`,
/// `max_threads = N`, `stack_size = N`, and for the guarantee `confidence = 0.99` (computes the iterations; not
/// with `iterations`), `depth = D`, `vars = V`, `threads = T`, `profile_runs = M`. Giving
/// `depth`, `vars`, `threads` or `confidence` without `strategy` selects the combined strategy,
/// with the explorer (race reversal then schedule fuzzing, `"revfuzz"`) in profiling and in one
/// search execution in two, most of its own first, for bugs outside the guarantee's class
/// (`explore_every = M`: one in `M`; `0`: never; `walk_every`, its former name, is still accepted). `explorer =
/// "uniform"` names another explorer (a strategy without a guarantee), which is then also the
/// default without a target.
/// Unknown or ill-typed arguments are compile errors pointing at them, as is an integer that
/// does not fit its `Config` parameter's type (`depth`, `vars`, `threads`: u32;
/// `max_threads`, `stack_size`: usize; the others u64) or its range (`depth` at most 100,
/// pctvb's largest; `stack_size` from 64 KiB to `isize::MAX`).
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    match test_attr::expand(args.into(), item.into()) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// Instruments a module, impl block or function of the code under test (see
/// `pctvb::instrument` for the user documentation): rewrites std concurrency paths to pctvb's,
/// runs the static alias pass, and hooks every access site that may touch a variable. Under
/// `cfg(not(pctvb))` the item is emitted unchanged; `#[pctvb::instrument(force)]` instruments
/// regardless of the cfg.
#[proc_macro_attribute]
pub fn instrument(args: TokenStream, item: TokenStream) -> TokenStream {
    match instrument::expand(args.into(), item.into()) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}
