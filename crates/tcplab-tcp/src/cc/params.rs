//! Congestion-control parameters (`[[flows]] cc_params = {alpha = 2, ...}`).
//!
//! A flat list of named numbers. `check_params` knows, per controller, which
//! keys exist and the rule each must satisfy, and fails with one line naming
//! the key and the rule; the controllers read them with `get(key, default)`.

use super::bdp_tracking::MAX_ROUNDS;
use crate::config::CcKind;

/// Named numeric parameters of a congestion control.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcParams(pub Vec<(String, f64)>);

impl CcParams {
    pub fn get(&self, key: &str, default: f64) -> f64 {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map_or(default, |(_, v)| *v)
    }
}

type Rule = (&'static str, fn(f64) -> bool, &'static str);

fn rules(kind: CcKind) -> &'static [Rule] {
    match kind {
        CcKind::Reno
        | CcKind::NewReno
        | CcKind::Cubic
        | CcKind::Westwood
        | CcKind::QosTcp { .. } => &[],
        CcKind::Vegas => &[
            ("alpha", |v| v > 0.0, "must be > 0 packets"),
            ("beta", |v| v > 0.0, "must be > 0 packets and >= alpha"),
            ("gamma", |v| v > 0.0, "must be > 0 packets"),
        ],
        CcKind::Fast => &[
            ("alpha", |v| v > 0.0, "must be > 0 packets"),
            ("gamma", |v| v > 0.0 && v <= 1.0, "must be in (0, 1]"),
        ],
        CcKind::BdpTracking => &[
            ("k", |v| v > 0.0 && v < 1.0, "must be in (0, 1)"),
            (
                "p_init",
                |v| v >= 2.0 && v.fract() == 0.0,
                "must be an integer >= 2",
            ),
            (
                "mu",
                |v| v == 0.0 || v >= 1.0,
                "must be 0 (estimate) or >= 1",
            ),
            ("tol_frac", |v| (0.0..1.0).contains(&v), "must be in [0, 1)"),
            ("tol_pkts", |v| v >= 0.0, "must be >= 0"),
            ("eps", |v| (0.0..1.0).contains(&v), "must be in [0, 1)"),
            (
                "b_rounds",
                // 0 = the largest rate since the start (the default); at most the ring's size
                |v| (0.0..=MAX_ROUNDS as f64).contains(&v) && v.fract() == 0.0,
                "must be an integer in [0, 64] (0 = since the start)",
            ),
            (
                "acq_loss_cap",
                |v| v == 0.0 || v == 1.0,
                "must be 0 (refill toward a) or 1 (cap at the loss window)",
            ),
        ],
    }
}

/// Check `p` against the parameters `kind` accepts.
pub fn check_params(kind: CcKind, p: &CcParams) -> Result<(), String> {
    let rules = rules(kind);
    for (k, v) in &p.0 {
        let Some((_, ok, why)) = rules.iter().find(|r| r.0 == k) else {
            let known: Vec<&str> = rules.iter().map(|r| r.0).collect();
            return Err(if known.is_empty() {
                format!("cc_params.{k}: this congestion control takes no parameters")
            } else {
                format!(
                    "cc_params.{k}: unknown parameter (choose from {})",
                    known.join(", ")
                )
            });
        };
        if !v.is_finite() || !ok(*v) {
            return Err(format!("cc_params.{k}: {why} (got {v})"));
        }
    }
    if kind == CcKind::Vegas && p.get("beta", 4.0) < p.get("alpha", 2.0) {
        return Err(format!(
            "cc_params.beta: must be >= alpha (got {} < {})",
            p.get("beta", 4.0),
            p.get("alpha", 2.0)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[(&str, f64)]) -> CcParams {
        CcParams(v.iter().map(|(k, x)| (k.to_string(), *x)).collect())
    }

    #[test]
    fn errors_name_the_key_and_rule() {
        assert!(check_params(CcKind::Vegas, &p(&[("alpha", 1.0), ("beta", 3.0)])).is_ok());
        let e = check_params(CcKind::Vegas, &p(&[("alpha", 5.0)])).unwrap_err();
        assert!(e.starts_with("cc_params.beta: must be >= alpha"), "{e}");
        let e = check_params(CcKind::Fast, &p(&[("gamma", 2.0)])).unwrap_err();
        assert_eq!(e, "cc_params.gamma: must be in (0, 1] (got 2)");
        let e = check_params(CcKind::Fast, &p(&[("beta", 2.0)])).unwrap_err();
        assert_eq!(
            e,
            "cc_params.beta: unknown parameter (choose from alpha, gamma)"
        );
        let e = check_params(CcKind::NewReno, &p(&[("alpha", 2.0)])).unwrap_err();
        assert!(e.contains("takes no parameters"));
        assert!(check_params(CcKind::BdpTracking, &p(&[("k", 1.0)])).is_err());
    }

    #[test]
    fn b_rounds_rule_matches_the_ring_and_python() {
        // 0 is the default ("since the start"); above the ring's size would index past it.
        for ok in [0.0, 1.0, 64.0] {
            assert!(check_params(CcKind::BdpTracking, &p(&[("b_rounds", ok)])).is_ok());
        }
        for bad in [65.0, 1000.0, 2.5, -1.0] {
            let e = check_params(CcKind::BdpTracking, &p(&[("b_rounds", bad)])).unwrap_err();
            assert!(e.contains("must be an integer in [0, 64]"), "{e}");
        }
    }
}
