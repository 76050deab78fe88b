//! Sampling the value distributions of the configuration.

use crate::config::Dist;
use crate::rng::Rng;

/// Check a distribution's parameters; the message names the rule.
pub fn check(d: &Dist) -> Result<(), String> {
    let ok = |c: bool, m: &str| if c { Ok(()) } else { Err(m.to_string()) };
    match d {
        Dist::Const { value } => ok(*value >= 0.0, "value: must be >= 0"),
        Dist::Uniform { lo, hi } => ok(0.0 <= *lo && lo < hi, "uniform: need 0 <= lo < hi"),
        Dist::Exponential { mean } => ok(*mean > 0.0, "exponential: mean must be > 0"),
        Dist::Lognormal { sigma, .. } => ok(*sigma >= 0.0, "lognormal: sigma must be >= 0"),
        Dist::Pareto { scale, shape } => ok(
            *scale > 0.0 && *shape > 0.0,
            "pareto: scale and shape must be > 0",
        ),
        Dist::Empirical { bins } => {
            if bins.is_empty() {
                return Err("empirical: needs at least one bin".into());
            }
            for (lo, hi, w) in bins {
                if !(0.0 <= *lo && lo <= hi && *w > 0.0) {
                    return Err("empirical: each bin needs 0 <= lo <= hi and weight > 0".into());
                }
            }
            // An infinite total would put every draw in the last bin.
            let total: f64 = bins.iter().map(|b| b.2).sum();
            ok(
                total.is_finite(),
                "empirical: the weights must sum to a finite number",
            )
        }
    }
}

/// Draw one value (non-negative).
pub fn sample(d: &Dist, rng: &mut Rng) -> f64 {
    let v = match d {
        Dist::Const { value } => *value,
        Dist::Uniform { lo, hi } => lo + (hi - lo) * rng.uniform(),
        Dist::Exponential { mean } => rng.exponential(*mean),
        Dist::Lognormal { mu, sigma } => (mu + sigma * rng.normal()).exp(),
        Dist::Pareto { scale, shape } => scale / (1.0 - rng.uniform()).powf(1.0 / shape),
        Dist::Empirical { bins } => {
            let total: f64 = bins.iter().map(|b| b.2).sum();
            let mut x = rng.uniform() * total;
            let mut pick = bins[bins.len() - 1];
            for b in bins {
                if x < b.2 {
                    pick = *b;
                    break;
                }
                x -= b.2;
            }
            pick.0 + (pick.1 - pick.0) * rng.uniform()
        }
    };
    v.max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empirical_weights() {
        let d = Dist::Empirical {
            bins: vec![(0.0, 10.0, 3.0), (100.0, 110.0, 1.0)],
        };
        check(&d).unwrap();
        let mut r = Rng::stream(3, "d");
        let n = 40_000;
        let high = (0..n).filter(|_| sample(&d, &mut r) >= 100.0).count();
        let share = high as f64 / n as f64;
        assert!((share - 0.25).abs() < 0.01, "{share}");
    }

    #[test]
    fn bad_params() {
        assert!(check(&Dist::Exponential { mean: 0.0 }).is_err());
        assert!(check(&Dist::Uniform { lo: 5.0, hi: 1.0 }).is_err());
        assert!(check(&Dist::Empirical { bins: vec![] }).is_err());
    }
}
