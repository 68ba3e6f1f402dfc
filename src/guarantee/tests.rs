use super::*;

/// Relative closeness of two positive numbers.
fn close(a: f64, b: f64, relative: f64) -> bool {
    (a - b).abs() <= relative * a.abs().max(b.abs())
}

// -- Deterministic randomness for the simulations ------------------------

/// splitmix64: tiny, seedable, and good enough for these simulations.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (multiply-shift; the bias is negligible here).
    fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// A uniform permutation of `1..=len`.
    fn permutation(&mut self, len: usize) -> Vec<u64> {
        let mut values: Vec<u64> = (1..=len as u64).collect();
        self.shuffle(&mut values);
        values
    }
}

// -- A toy priority scheduler ---------------------------------------------

/// Where a change point fires: after the `j`-th global step, or after the
/// `j`-th access of variable `q` (both 1-based).
#[derive(Clone, Copy)]
enum Trigger {
    Step(u64),
    Access(usize, u64),
}

/// Runs threads whose steps each access one variable under strict
/// priority scheduling (higher number = higher priority). After each
/// step, every change point whose trigger matches gives the running
/// thread its new priority. Returns the trace as (thread, step index).
fn run(
    program: &[Vec<usize>],
    mut priority: Vec<u64>,
    changes: &[(Trigger, u64)],
) -> Vec<(usize, usize)> {
    let mut next = vec![0; program.len()];
    let mut accesses = [0u64; 8];
    let mut trace = Vec::new();
    while let Some(thread) =
        (0..program.len()).filter(|&i| next[i] < program[i].len()).max_by_key(|&i| priority[i])
    {
        let variable = program[thread][next[thread]];
        trace.push((thread, next[thread]));
        next[thread] += 1;
        accesses[variable] += 1;
        let step = trace.len() as u64;
        for &(trigger, new_priority) in changes {
            let fires = match trigger {
                Trigger::Step(j) => j == step,
                Trigger::Access(q, j) => q == variable && j == accesses[variable],
            };
            if fires {
                priority[thread] = new_priority;
            }
        }
    }
    trace
}

/// Whether the events appear in the trace in the given order.
fn in_order(trace: &[(usize, usize)], events: &[(usize, usize)]) -> bool {
    let positions: Vec<usize> = events
        .iter()
        .map(|event| trace.iter().position(|e| e == event).expect("event ran"))
        .collect();
    positions.windows(2).all(|pair| pair[0] < pair[1])
}

fn pct_execution(
    rng: &mut SplitMix64,
    program: &[Vec<usize>],
    k: u64,
    d: u32,
) -> Vec<(usize, usize)> {
    let n = program.len();
    let priority: Vec<u64> = rng.permutation(n).iter().map(|p| p + u64::from(d) - 1).collect();
    let changes: Vec<(Trigger, u64)> =
        (1..u64::from(d)).map(|i| (Trigger::Step(1 + rng.below(k)), i)).collect();
    run(program, priority, &changes)
}

fn thread_bound_execution(
    rng: &mut SplitMix64,
    program: &[Vec<usize>],
    k: u64,
    d: u32,
) -> Vec<(usize, usize)> {
    let n = program.len();
    let c = d as usize - 1;
    let p = rng.permutation(n + c);
    let changes: Vec<(Trigger, u64)> =
        (0..c).map(|i| (Trigger::Step(1 + rng.below(k)), p[n + i])).collect();
    run(program, p[..n].to_vec(), &changes)
}

/// PCTVB (`thread_bound_priorities = false`) or Combined (`true`) with
/// `v = 1`: choose one variable, draw change points among its accesses.
fn variable_execution(
    rng: &mut SplitMix64,
    program: &[Vec<usize>],
    kq: &[u64],
    d: u32,
    thread_bound_priorities: bool,
) -> Vec<(usize, usize)> {
    let n = program.len();
    let c = d as usize - 1;
    let q = rng.below(kq.len() as u64) as usize;
    let draw = |rng: &mut SplitMix64| Trigger::Access(q, 1 + rng.below(kq[q]));
    if thread_bound_priorities {
        let p = rng.permutation(n + c);
        let changes: Vec<_> = (0..c).map(|i| (draw(rng), p[n + i])).collect();
        run(program, p[..n].to_vec(), &changes)
    } else {
        let priority: Vec<u64> = rng.permutation(n).iter().map(|p| p + u64::from(d) - 1).collect();
        let changes: Vec<_> = (1..u64::from(d)).map(|i| (draw(rng), i)).collect();
        run(program, priority, &changes)
    }
}

/// Runs `trials` executions and counts those in which `bug` holds.
fn hits(
    trials: u64,
    mut execution: impl FnMut() -> Vec<(usize, usize)>,
    bug: &[(usize, usize)],
) -> u64 {
    (0..trials).filter(|_| in_order(&execution(), bug)).count() as u64
}

fn z999() -> f64 {
    z_for_confidence(0.999).unwrap()
}

// -- Known values ---------------------------------------------------------

#[test]
fn pct_bound_known_values() {
    let bound = pct_bound(2, 23, 2).unwrap();
    assert!(close(bound.p(), 1.0 / 46.0, 1e-14));
    assert!(close(pct_bound(5, 100, 1).unwrap().p(), 0.2, 1e-14));
    assert!(close(pct_bound(3, 10, 3).unwrap().p(), 1.0 / 300.0, 1e-14));
    assert_eq!(pct_bound(1, 1, 1).unwrap().ln_p(), 0.0);
}

#[test]
fn pctvb_bound_has_variable_choice_and_worst_case_counts() {
    // C(4,2) = 6, n = 3, two largest counts 40 + 30 = 70.
    let bound = pctvb_bound(3, &[10, 40, 20, 30], 2, 2).unwrap();
    assert!(close(bound.p(), 1.0 / (6.0 * 3.0 * 70.0), 1e-14));
    let names: Vec<&str> = bound.factors.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "1/C(Q=4, v=2) = 1/6 variable choice",
            "1/n = 1/3 initial priority order",
            "1/(sum k_q = 70)^(d-1=1) change points",
        ]
    );
    // d = 1: no change points, so the variables do not matter.
    assert!(close(pctvb_bound(3, &[10, 40, 20, 30], 2, 1).unwrap().p(), 1.0 / 3.0, 1e-14));
}

#[test]
fn thread_and_combined_bounds_known_values() {
    assert!(close(thread_bound(6, 2, 2).unwrap().p(), 1.0 / 36.0, 1e-14));
    assert!(close(thread_bound(4, 3, 2).unwrap().p(), 1.0 / (24.0 * 16.0), 1e-14));
    let kq = [5, 40, 7, 1, 2, 3, 4];
    let combined = combined_bound(&kq, 1, 2, 2).unwrap();
    assert!(close(combined.p(), 1.0 / (7.0 * 40.0 * 6.0), 1e-14));
    assert!(combined.factors.iter().any(|f| f.name == "1/(t+c)! = 1/(2+1)! = 1/6 priority order"));
    // d = 1: only the order of the t threads matters.
    assert!(close(combined_bound(&kq, 3, 1, 3).unwrap().p(), 1.0 / 6.0, 1e-14));
    assert!(close(combined_bound(&kq, 0, 1, 2).unwrap().p(), 0.5, 1e-14));
}

#[test]
fn bound_for_dispatches_and_random_has_none() {
    let kq = [3, 9, 4];
    let params = BoundParams { n: 4, k: 30, kq: &kq, v: 2, d: 3, t: 2 };
    assert_eq!(bound_for(BoundKind::Random, &params).unwrap(), None);
    assert_eq!(bound_for(BoundKind::Pct, &params).unwrap(), Some(pct_bound(4, 30, 3).unwrap()));
    assert_eq!(
        bound_for(BoundKind::Pctvb, &params).unwrap(),
        Some(pctvb_bound(4, &kq, 2, 3).unwrap())
    );
    assert_eq!(
        bound_for(BoundKind::ThreadBound, &params).unwrap(),
        Some(thread_bound(30, 3, 2).unwrap())
    );
    assert_eq!(
        bound_for(BoundKind::Combined, &params).unwrap(),
        Some(combined_bound(&kq, 2, 3, 2).unwrap())
    );
}

#[test]
fn invalid_parameters_are_rejected() {
    let invalid_name = |result: Result<BoundFactors, GuaranteeError>| match result {
        Err(GuaranteeError::InvalidParameter { name, .. }) => name,
        other => panic!("expected InvalidParameter, got {other:?}"),
    };
    assert_eq!(invalid_name(pct_bound(0, 10, 2)), "n");
    assert_eq!(invalid_name(pct_bound(2, 10, 0)), "d");
    assert_eq!(invalid_name(pct_bound(2, 0, 2)), "k");
    assert_eq!(invalid_name(pctvb_bound(2, &[1, 2], 3, 2)), "v");
    assert_eq!(invalid_name(pctvb_bound(2, &[1, 2], 0, 2)), "v");
    assert_eq!(invalid_name(pctvb_bound(2, &[0, 0, 0], 2, 2)), "kq");
    assert_eq!(invalid_name(thread_bound(10, 2, 0)), "t");
    assert_eq!(invalid_name(combined_bound(&[1, 2], 3, 1, 2)), "v");
    // Depth 1 needs no scheduling points or variables.
    assert!(pct_bound(2, 0, 1).is_ok());
    assert!(pctvb_bound(2, &[], 0, 1).is_ok());
}

// -- Executions and confidence --------------------------------------------

#[test]
fn executions_for_one_in_46_at_99_percent_is_210() {
    // ln(0.01) / ln(45/46) = 209.5..., so 210.
    let ln_p = -(46f64).ln();
    assert_eq!(executions_for_confidence(ln_p, 0.99).unwrap(), 210);
    assert!((45f64 / 46.0).powi(209) > 0.01);
    assert!((45f64 / 46.0).powi(210) <= 0.01);
    assert_eq!(pct_bound(2, 23, 2).unwrap().executions_for_confidence(0.99).unwrap(), 210);
}

#[test]
fn executions_when_the_quotient_is_an_integer() {
    let half = 0.5f64.ln();
    assert_eq!(executions_for_confidence(half, 0.75).unwrap(), 2);
    assert_eq!(executions_for_confidence(half, 0.875).unwrap(), 3);
    assert_eq!(executions_for_confidence(half, 0.5).unwrap(), 1);
}

#[test]
fn certain_bound_needs_one_execution_and_bad_confidence_is_rejected() {
    assert_eq!(executions_for_confidence(0.0, 0.999_999).unwrap(), 1);
    assert_eq!(BoundFactors::new().executions_for_confidence(0.5).unwrap(), 1);
    for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
        assert!(matches!(
            executions_for_confidence(-1.0, bad),
            Err(GuaranteeError::OutOfRange { name: "confidence", .. })
        ));
    }
    assert!(executions_for_confidence(f64::NAN, 0.9).is_err());
}

#[test]
fn tiny_p_exceeds_the_cap_and_names_the_largest_factor() {
    let mut bound = BoundFactors::new();
    bound.push("1/C(Q=1,414, v=2) = 1/998,991 variable choice", -(1e6f64).ln());
    bound.push("1/(sum k_q = 1,000)^(d-1=1) change points", -(1e3f64).ln());
    assert!(close(bound.p(), 1e-9, 1e-12));
    let error = bound.executions_for_confidence(0.99).unwrap_err();
    let GuaranteeError::TooManyExecutions { needed, cap, driver, .. } = &error else {
        panic!("expected TooManyExecutions, got {error:?}");
    };
    // -ln(0.01) / 1e-9 = 4.605e9.
    assert!(close(*needed, 4.605_170_186e9, 1e-6));
    assert_eq!(*cap, MAX_EXECUTIONS);
    assert!(driver.as_ref().unwrap().name.contains("variable choice"));
    let message = error.to_string();
    assert!(message.contains("4,605,170,18"), "{message}");
    assert!(message.contains("10,000,000"), "{message}");
    assert!(message.contains("variable choice"), "{message}");
    // Without factors the error still says what is needed.
    assert!(matches!(
        executions_for_confidence(bound.ln_p(), 0.99),
        Err(GuaranteeError::TooManyExecutions { driver: None, .. })
    ));
}

#[test]
fn realistic_combined_bound_over_the_cap_blames_the_variable_choice() {
    // C(1000, 2) = 499,500 dominates 1/2000 and 1/3!.
    let kq = vec![1_000; 1_000];
    let error = combined_bound(&kq, 2, 2, 2).unwrap().executions_for_confidence(0.9).unwrap_err();
    assert!(error.to_string().contains("1/C(Q=1,000, v=2) = 1/499,500 variable choice"), "{error}");
}

#[test]
fn confidence_after_is_accurate_and_monotone() {
    let ln_p = -(46f64).ln();
    assert!(confidence_after(ln_p, 210) >= 0.99);
    assert!(confidence_after(ln_p, 209) < 0.99);
    assert_eq!(confidence_after(ln_p, 0), 0.0);
    assert_eq!(confidence_after(0.0, 1), 1.0);
    let mut previous = 0.0;
    for executions in [1, 2, 10, 100, 1_000, 10_000] {
        let confidence = confidence_after(ln_p, executions);
        assert!(confidence > previous);
        previous = confidence;
    }
    // p = 1e-12, N = 1e6: 1-(1-p)^N = 1e-6 - 5e-13 + ..., which naive
    // floating point (1 - 1e-12 rounds) would get wrong in the 4th digit.
    let tiny = confidence_after((1e-12f64).ln(), 1_000_000);
    assert!(close(tiny, 1e-6 - 0.5e-12, 1e-9), "{tiny}");
}

#[test]
fn larger_counts_give_smaller_bounds() {
    assert!(pct_bound(3, 200, 3).unwrap().ln_p() < pct_bound(3, 100, 3).unwrap().ln_p());
    assert!(pct_bound(4, 100, 3).unwrap().ln_p() < pct_bound(3, 100, 3).unwrap().ln_p());
    assert!(thread_bound(200, 3, 2).unwrap().ln_p() < thread_bound(100, 3, 2).unwrap().ln_p());
    assert!(thread_bound(100, 3, 3).unwrap().ln_p() < thread_bound(100, 3, 2).unwrap().ln_p());
    let small = [10, 20, 30];
    let large = [10, 20, 60];
    assert!(
        pctvb_bound(2, &large, 1, 2).unwrap().ln_p() < pctvb_bound(2, &small, 1, 2).unwrap().ln_p()
    );
    assert!(
        combined_bound(&large, 2, 3, 2).unwrap().ln_p()
            < combined_bound(&small, 2, 3, 2).unwrap().ln_p()
    );
    // More variables to choose from: a smaller bound.
    let more = [10, 20, 30, 5];
    assert!(
        combined_bound(&more, 1, 2, 2).unwrap().ln_p()
            < combined_bound(&small, 1, 2, 2).unwrap().ln_p()
    );
}

#[test]
fn huge_parameters_do_not_overflow() {
    // Q = 10^6 variables of 10^9 accesses each, v = t = d = 10.
    let kq = vec![1_000_000_000; 1_000_000];
    let bound = combined_bound(&kq, 10, 10, 10).unwrap();
    let expected = -(ln_choose(1_000_000, 10) + 9.0 * (1e10f64).ln() + ln_factorial(19));
    assert!(bound.ln_p().is_finite() && bound.ln_p() < -300.0);
    assert!(close(bound.ln_p(), expected, 1e-12));
    assert!(matches!(
        bound.executions_for_confidence(0.99),
        Err(GuaranteeError::TooManyExecutions { .. })
    ));
    assert!(pctvb_bound(64, &kq, 10, 10).unwrap().ln_p().is_finite());
    assert!(pct_bound(u64::MAX, u64::MAX, 10).unwrap().ln_p().is_finite());
    // Counts near u64::MAX: their sum needs more than 64 bits.
    let bound = pctvb_bound(2, &[u64::MAX; 3], 3, 2).unwrap();
    assert!(close(bound.ln_p(), -(2f64.ln() + (3.0 * u64::MAX as f64).ln()), 1e-12));
    // Even p = exp(-10^4), far below f64's range, gives a finite report.
    let error = executions_for_confidence(-1e4, 0.99).unwrap_err();
    assert!(error.to_string().contains("more than 1e308"), "{error}");
    assert_eq!(confidence_after(-1e4, u64::MAX), 0.0);
}

#[test]
fn ln_choose_is_precise_for_large_q() {
    // C(10^6, 2) = 499,999,500,000.
    assert!(close(ln_choose(1_000_000, 2), (499_999_500_000f64).ln(), 1e-15));
    assert_eq!(exact_choose(1_000_000, 2), Some(499_999_500_000));
    assert_eq!(exact_choose(40, 2), Some(780));
    assert_eq!(exact_choose(10_000, 5_000), None);
    // Symmetric and consistent with statrs where both apply.
    assert!(close(ln_choose(300_000, 299_990), ln_choose(300_000, 10), 1e-15));
    let statrs_ln_binomial = statrs::function::factorial::ln_binomial(400_000, 200_000);
    assert!(close(ln_choose(400_000, 200_000), statrs_ln_binomial, 1e-12));
    assert_eq!(ln_choose(3, 4), f64::NEG_INFINITY);
}

#[test]
fn the_elementary_functions_agree_with_std_and_statrs() {
    // src/guarantee/math.rs computes them in Rust (no system libm): within a few ulps of
    // f64's methods and statrs on the ranges the bounds use.
    for &x in &[1e-300, 1e-17, 1e-9, 0.5, 1.0, 2.0, 10.0, 1e6, 1e300] {
        assert!(close(ln(x), x.ln(), 4e-16) || ln(x) == x.ln(), "ln({x})");
    }
    for &x in &[-700.0, -50.0, -1.0, -1e-12, 0.0, 1e-12, 1.0, 50.0, 700.0] {
        assert!(close(exp(x), x.exp(), 4e-16), "exp({x})");
    }
    for &x in &[-0.999_999, -0.5, -1e-18, 1e-18, 0.5, 1e10] {
        assert!(close(ln_1p(x), x.ln_1p(), 4e-16), "ln_1p({x})");
    }
    for &x in &[-700.0, -1.0, -1e-18, 1e-18, 1.0, 700.0] {
        assert!(close(exp_m1(x), x.exp_m1(), 4e-16), "exp_m1({x})");
    }
    use statrs::function::{erf, factorial};
    for n in [0u64, 1, 2, 5, 20, 100, 170, 171, 1_000, 1_000_000, 1_000_000_000] {
        let ours = ln_factorial(n);
        let theirs = factorial::ln_factorial(n);
        assert!(ours == theirs || close(ours, theirs, 1e-14), "ln {n}!: {ours} vs {theirs}");
    }
    assert_eq!(ln_binomial(3, 4), f64::NEG_INFINITY);
    for &y in &[-0.999, -0.5, 1e-12, 0.5, 0.9, 0.95, 0.99, 0.999, 0.999_999] {
        // Near 1 the inverse is ill-conditioned (one ulp of `y` moves it by ~1e-11), so the
        // two agree to 1e-10; `erf` of ours gives `y` back to 1e-15.
        let (ours, theirs) = (erf_inv(y), erf::erf_inv(y));
        assert!(close(ours, theirs, 1e-10), "erf_inv({y}): {ours} vs {theirs}");
        assert!(close(libm::erf(ours), y, 1e-15), "erf(erf_inv({y}))");
    }
    assert!(erf_inv(1.5).is_nan());
    assert_eq!(erf_inv(1.0), f64::INFINITY);
    // The two-sided z values the tests quote.
    assert!(close(z_for_confidence(0.95).unwrap(), 1.959_963_984_540_054, 1e-12));
    assert!(close(z_for_confidence(0.999).unwrap(), 3.290_526_731_491_926, 1e-12));
}

// -- Lemma 4.1 --------------------------------------------------------------

#[test]
fn lemma_4_1_exact_known_value_and_edges() {
    // 2! * C(5,2) * (1/2)^P <= 0.1  <=>  P >= log2(200) = 7.64.
    assert_eq!(lemma_4_1_executions(5, 2, 0.1).unwrap(), 8);
    // 3! * C(5,3) * (5/6)^P <= 0.1  <=>  P >= ln(600)/ln(1.2) = 35.09.
    assert_eq!(lemma_4_1_executions(5, 3, 0.1).unwrap(), 36);
    assert_eq!(lemma_4_1_executions(5, 0, 0.1).unwrap(), 0);
    assert_eq!(lemma_4_1_executions(5, 6, 0.1).unwrap(), 0);
    assert_eq!(lemma_4_1_executions(5, 1, 0.1).unwrap(), 1);
    assert!(lemma_4_1_executions(5, 2, 1.0).is_err());
    assert!(lemma_4_1_paper(5, 2, 0.0).is_err());
}

#[test]
fn lemma_4_1_exact_never_exceeds_the_paper() {
    for fragments in [2, 5, 10, 50, 1_000, 1_000_000] {
        for m in 1..=12u32 {
            for eps in [0.5, 0.1, 1e-3, 1e-9] {
                let exact = lemma_4_1_executions(fragments, m, eps).unwrap();
                let paper = lemma_4_1_paper(fragments, m, eps).unwrap();
                assert!(exact <= paper, "N={fragments} m={m} eps={eps}: {exact} > {paper}");
            }
        }
    }
    // The paper's closed form for N=5, m=2, eps=0.1: 3! * (ln 10 + ln 10) = 27.6.
    assert_eq!(lemma_4_1_paper(5, 2, 0.1).unwrap(), 28);
}

/// Whether `p` permutations of `1..=fragments` show every relative order
/// of every `m`-subset (checked on the positions of the subset's items).
fn all_orders_seen(rng: &mut SplitMix64, fragments: usize, m: usize, p: u64) -> bool {
    let mut seen = std::collections::HashSet::new();
    for _ in 0..p {
        let permutation = rng.permutation(fragments);
        for subset in subsets(fragments, m) {
            let order: Vec<u64> = subset.iter().map(|&i| permutation[i]).collect();
            let mut ranks: Vec<usize> = (0..m).collect();
            ranks.sort_by_key(|&j| order[j]);
            seen.insert((subset, ranks));
        }
    }
    let orders: usize = (1..=m).product();
    seen.len() == subsets(fragments, m).len() * orders
}

fn subsets(n: usize, m: usize) -> Vec<Vec<usize>> {
    (0u32..1 << n)
        .filter(|mask| mask.count_ones() as usize == m)
        .map(|mask| (0..n).filter(|i| mask & (1 << i) != 0).collect())
        .collect()
}

#[test]
fn lemma_4_1_exact_count_covers_everything_empirically() {
    let mut rng = SplitMix64(0x5EED_0401);
    let eps = 0.1;
    for m in [2u32, 3] {
        let p = lemma_4_1_executions(5, m, eps).unwrap();
        let trials = 2_000;
        let failures =
            (0..trials).filter(|_| !all_orders_seen(&mut rng, 5, m as usize, p)).count() as u64;
        let (_, high) = wilson_interval(failures, trials, z999());
        assert!(high <= eps, "m={m}: {failures}/{trials} failed to cover (upper {high})");
    }
}

// -- Wilson interval ----------------------------------------------------------

#[test]
fn z_values_match_the_normal_quantiles() {
    assert!(close(z_for_confidence(0.95).unwrap(), 1.959_963_985, 1e-8));
    assert!(close(z_for_confidence(0.999).unwrap(), 3.290_526_731, 1e-8));
    assert!(z_for_confidence(1.0).is_err());
}

#[test]
fn wilson_interval_contains_the_mean_and_shrinks() {
    let z = z999();
    let mut previous_width = f64::INFINITY;
    for trials in [10u64, 100, 1_000, 10_000, 100_000] {
        let successes = trials / 10;
        let (low, high) = wilson_interval(successes, trials, z);
        assert!(low < 0.1 && 0.1 < high, "{low} {high}");
        assert!(high - low < previous_width);
        previous_width = high - low;
    }
    assert_eq!(wilson_interval(0, 0, z), (0.0, 1.0));
    let (low, high) = wilson_interval(0, 100, z);
    assert_eq!(low, 0.0);
    assert!(high > 0.0 && high < 0.2);
    assert_eq!(wilson_interval(100, 100, z).1, 1.0);
    assert!(bound_is_plausible((0.05f64).ln(), 0, 100, z));
    assert!(!bound_is_plausible((0.5f64).ln(), 0, 100, z));
}

// -- The bounds hold on simulated schedulers ----------------------------------

const TRIALS: u64 = 100_000;

#[test]
fn pct_bound_holds_in_simulation() {
    // Thread 0 runs a1, a2; thread 1 runs b1; the bug is a1 < b1 < a2.
    // Exactly 1/6: thread 0 first (1/2), change point after step 1 (1/3).
    let program = [vec![0, 0], vec![0]];
    let bug = [(0, 0), (1, 0), (0, 1)];
    let mut rng = SplitMix64(1);
    let found = hits(TRIALS, || pct_execution(&mut rng, &program, 3, 2), &bug);
    let bound = pct_bound(2, 3, 2).unwrap();
    assert!(bound_is_plausible(bound.ln_p(), found, TRIALS, z999()));
    let (low, _) = wilson_interval(found, TRIALS, z999());
    assert!(low <= bound.p(), "the bound is exact here");
    // A third, unrelated thread.
    let program = [vec![0, 0], vec![0], vec![1, 1]];
    let found = hits(TRIALS, || pct_execution(&mut rng, &program, 5, 2), &bug);
    assert!(bound_is_plausible(pct_bound(3, 5, 2).unwrap().ln_p(), found, TRIALS, z999()));
}

#[test]
fn thread_bound_holds_in_simulation() {
    let mut rng = SplitMix64(2);
    // Depth 2: exactly 1/(3! * 3) = 1/18.
    let program = [vec![0, 0], vec![0]];
    let bug = [(0, 0), (1, 0), (0, 1)];
    let found = hits(TRIALS, || thread_bound_execution(&mut rng, &program, 3, 2), &bug);
    assert!(bound_is_plausible(thread_bound(3, 2, 2).unwrap().ln_p(), found, TRIALS, z999()));
    // Depth 3, a1 < b1 < a2 < b2: the bound 1/(4! * 4^2) = 1/384 holds, and
    // the true 2!/(4! * 4^2) = 1/192 shows the c! slack the docs mention.
    let program = [vec![0, 0], vec![0, 0]];
    let bug = [(0, 0), (1, 0), (0, 1), (1, 1)];
    let found = hits(TRIALS, || thread_bound_execution(&mut rng, &program, 4, 3), &bug);
    let bound = thread_bound(4, 3, 2).unwrap();
    assert!(bound_is_plausible(bound.ln_p(), found, TRIALS, z999()));
    let (low, high) = wilson_interval(found, TRIALS, z999());
    assert!(low > bound.p() && low <= 1.0 / 192.0 && 1.0 / 192.0 <= high, "{low} {high}");
}

#[test]
fn variable_bounds_hold_in_simulation() {
    // x = variable 0 (k_x = 3), y = variable 1 (k_y = 2); thread 2 only
    // touches y. Bug a1 < b1 < a2 on x: depth 2, one variable, two threads.
    let program = [vec![0, 0], vec![0], vec![1, 1]];
    let kq = [3, 2];
    let bug = [(0, 0), (1, 0), (0, 1)];
    let mut rng = SplitMix64(3);
    // PCTVB: 1/C(2,1) * 1/3 * 1/3 = 1/18 (true rate 1/2 * 1/2 * 1/3 = 1/12).
    let found = hits(TRIALS, || variable_execution(&mut rng, &program, &kq, 2, false), &bug);
    let bound = pctvb_bound(3, &kq, 1, 2).unwrap();
    assert!(close(bound.p(), 1.0 / 18.0, 1e-14));
    assert!(bound_is_plausible(bound.ln_p(), found, TRIALS, z999()));
    // Combined: 1/C(2,1) * 1/3 * 1/3! = 1/36, which is exact here.
    let found = hits(TRIALS, || variable_execution(&mut rng, &program, &kq, 2, true), &bug);
    let bound = combined_bound(&kq, 1, 2, 2).unwrap();
    assert!(close(bound.p(), 1.0 / 36.0, 1e-14));
    assert!(bound_is_plausible(bound.ln_p(), found, TRIALS, z999()));
    let (low, _) = wilson_interval(found, TRIALS, z999());
    assert!(low <= bound.p(), "the bound is exact here");
}

// -- Reporting ----------------------------------------------------------------

fn statement(strategy: BoundKind) -> GuaranteeStatement {
    GuaranteeStatement {
        strategy,
        depth: 2,
        variables: 1,
        threads: 2,
        confidence: 0.99,
        executions: 4_605,
        n: 3,
        shared_variables: 7,
        static_only_variables: 0,
        max_kq: 40,
        k: 120,
        profiling_runs: 10,
        exceeded_runs: 0,
    }
}

#[test]
fn statements_read_as_specified() {
    assert_eq!(
        statement(BoundKind::Combined).to_string(),
        "Combined: no bug of depth <= 2 (at most 1 priority change, which a failure report may \
         show as fewer preemptions) involving <= 1 of the Q=7 shared variables (preempted \
         only at their accesses) and <= 2 threads (counting a thread that spawns them or that they wait for) was missed, with probability >= \
         0.99 (4,605 executions; n=3, \
         k_q <= 40; counts measured over 10 profiling executions; 0 executions exceeded \
         them); by Lemma 4.1, every order of every 3 of the 4 thread fragments was drawn, with \
         probability >= 0.999999"
    );
    assert_eq!(
        statement(BoundKind::Pct).to_string(),
        "PCT: no bug of depth <= 2 (failing with 1 priority change at the right point under \
         at least 1 in n initial priority orders of the threads; ordering constraints may \
         count fewer when threads wait) was missed, with probability >= 0.99 (4,605 \
         executions; n=3, k=120; counts measured over 10 profiling executions; 0 executions \
         exceeded them)"
    );
    let mut one = statement(BoundKind::Pct);
    one.depth = 1;
    assert!(
        one.to_string().starts_with(
            "PCT: no bug of depth <= 1 (failing with no priority change under at least 1 in n \
             initial priority orders of the threads; ordering constraints may count fewer when \
             threads wait) was missed"
        ),
        "{one}"
    );
    assert_eq!(
        statement(BoundKind::Pctvb).to_string(),
        "PCTVB: no bug of depth <= 2 (failing with 1 priority change at the right point under \
         at least 1 in n initial priority orders of the threads; ordering constraints may \
         count fewer when threads wait) involving <= 1 of the Q=7 shared variables (preempted \
         only at their accesses) was missed, \
         with probability >= 0.99 (4,605 executions; n=3, k_q <= 40; counts measured over \
         10 profiling executions; 0 executions exceeded them)"
    );
    let mut thread = statement(BoundKind::ThreadBound);
    thread.threads = 1;
    thread.profiling_runs = 1;
    thread.exceeded_runs = 1;
    thread.executions = 1_234_567;
    assert_eq!(
        thread.to_string(),
        "ThreadBound: no bug of depth <= 2 (at most 1 priority change, which a failure report \
         may show as fewer preemptions) involving <= 1 thread was missed, with probability \
         >= 0.99 (1,234,567 executions; n=3, k=120; counts measured over 1 profiling \
         execution; 1 execution exceeded them); by Lemma 4.1, every order of every 2 of the 4 \
         thread fragments was drawn, with probability >= 0.999999"
    );
    assert!(statement(BoundKind::Random).to_string().starts_with("Random: no guarantee"));
}

#[test]
fn confidence_is_printed_rounded_down() {
    assert_eq!(format_confidence(0.99), "0.99");
    assert_eq!(format_confidence(0.990_012_9), "0.990012");
    assert_eq!(format_confidence(0.999_999_99), "0.999999");
    assert_eq!(format_confidence(1.0), "1");
    assert_eq!(format_confidence(0.5), "0.5");
    let reached = confidence_after(-(46f64).ln(), 210);
    let printed: f64 = format_confidence(reached).parse().unwrap();
    assert!(printed <= reached && printed >= 0.99);
}

#[test]
fn thousands_are_grouped() {
    assert_eq!(group_thousands(0), "0");
    assert_eq!(group_thousands(999), "999");
    assert_eq!(group_thousands(1_000), "1,000");
    assert_eq!(group_thousands(4_605), "4,605");
    assert_eq!(group_thousands(1_234_567), "1,234,567");
    assert_eq!(group_thousands(u128::from(u64::MAX)), "18,446,744,073,709,551,615");
}

#[test]
fn bound_display_lists_its_factors() {
    let text = pct_bound(2, 23, 2).unwrap().to_string();
    assert_eq!(
        text,
        "p >= 2.1739e-2 (1 in 46) = 1/n = 1/2 initial priority order * 1/(k = 23)^(d-1=1) change points"
    );
}

#[test]
fn lemma_4_1_coverage_inverts_the_execution_count() {
    for (fragments, m, eps) in [(5u64, 2u32, 0.1), (5, 3, 0.01), (12, 4, 0.001), (101, 3, 0.01)] {
        let p = lemma_4_1_executions(fragments, m, eps).unwrap();
        assert!(lemma_4_1_coverage(fragments, m, p) >= 1.0 - eps - 1e-12, "{fragments} {m}");
        assert!(lemma_4_1_coverage(fragments, m, p - 1) < 1.0 - eps, "{fragments} {m}");
    }
    assert_eq!(lemma_4_1_coverage(5, 3, 0), 0.0);
    assert_eq!(lemma_4_1_coverage(5, 6, 0), 1.0);
    assert_eq!(lemma_4_1_coverage(5, 1, 1), 1.0);
}

#[test]
fn thread_bounding_statements_say_what_lemma_4_1_covers() {
    let statement = |executions| GuaranteeStatement {
        strategy: BoundKind::Combined,
        depth: 2,
        variables: 1,
        threads: 2,
        confidence: 0.99,
        executions,
        n: 3,
        shared_variables: 2,
        static_only_variables: 0,
        max_kq: 4,
        k: 30,
        profiling_runs: 10,
        exceeded_runs: 0,
    };
    // n + c = 4 fragments, t + c = 3: 4 subsets x 6 orders.
    let needed = lemma_4_1_executions(4, 3, 0.01).unwrap();
    let short = statement(5).to_string();
    assert!(
        short.ends_with(&format!(
            "Lemma 4.1 needs {needed} executions to draw every order of every 3 of the 4 thread \
             fragments with probability 0.99"
        )),
        "{short}"
    );
    let long = statement(needed).to_string();
    assert!(
        long.contains(
            "by Lemma 4.1, every order of every 3 of the 4 thread fragments was drawn, \
                       with probability >= 0.99"
        ),
        "{long}"
    );
    let pct = GuaranteeStatement { strategy: BoundKind::Pct, ..statement(needed) }.to_string();
    assert!(!pct.contains("Lemma 4.1"), "{pct}");
}

/// Extreme parameters print, never overflow: `threads = 4294967295` with thread bounding
/// panicked ("attempt to add with overflow", `t + c` in u32) while a passing run's summary
/// was printed. Every statement and bound takes the extremes of its types.
#[test]
fn statements_and_bounds_take_the_extremes_of_their_types() {
    for strategy in [BoundKind::Pct, BoundKind::Pctvb, BoundKind::ThreadBound, BoundKind::Combined]
    {
        for (depth, threads, n) in [
            (2, u32::MAX, 4),
            (u32::MAX, u32::MAX, 4),
            (u32::MAX, 2, u64::MAX),
            (0, u32::MAX, u64::MAX),
        ] {
            let text = GuaranteeStatement {
                depth,
                threads,
                variables: u32::MAX,
                n,
                executions: u64::MAX,
                shared_variables: u64::MAX,
                max_kq: u64::MAX,
                k: u64::MAX,
                ..statement(strategy)
            }
            .to_string();
            assert!(text.contains(&format!("no bug of depth <= {depth}")), "{text}");
            if strategy.uses_threads() {
                assert!(text.contains(&format!("<= {threads} thread")), "{text}");
            }
        }
    }
    // The threads of the run's first report: t + c > n + c, so no subset to order.
    let text = GuaranteeStatement { threads: u32::MAX, ..statement(BoundKind::ThreadBound) };
    assert!(!text.to_string().contains("Lemma 4.1"), "{text}");
    // A count past u64 is said to be one, not printed as u64::MAX.
    let deep = GuaranteeStatement { depth: 100, executions: 5, ..statement(BoundKind::Combined) };
    assert!(
        deep.to_string().contains(
            "Lemma 4.1 needs more than 18,446,744,073,709,551,615 executions to draw every \
             order of every 101 of the 102 thread fragments"
        ),
        "{deep}"
    );
    let kq = [u64::MAX, u64::MAX];
    for (d, t) in [(u32::MAX, u32::MAX), (2, u32::MAX), (u32::MAX, 1)] {
        let bounds = [
            pct_bound(u64::MAX, u64::MAX, d),
            pctvb_bound(u64::MAX, &kq, 2, d),
            thread_bound(u64::MAX, d, t),
            combined_bound(&kq, 2, d, t),
        ];
        for bound in bounds {
            let ln_p = bound.expect("valid parameters").ln_p();
            assert!(ln_p < 0.0 && ln_p.is_finite(), "d={d}, t={t}: {ln_p}");
        }
    }
    assert_eq!(lemma_4_1_coverage(u64::MAX, u32::MAX, u64::MAX), 0.0);
    assert_eq!(lemma_4_1_executions(u64::MAX, u32::MAX, 0.01), Ok(u64::MAX));
}
