//! Congestion-control parameters (`[[flows]] cc_params = {alpha = 2, ...}`).
//!
//! A flat list of named numbers. Each controller declares the keys it takes
//! and the rule of each as data (`Param`, in its `CcEntry`); `check_params`
//! applies them and fails with one line naming the key and the rule. The
//! same data reaches Python through the bindings, so its checks are these.

use super::CcEntry;

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

/// One parameter a congestion control takes: its default and its rule, as
/// bounds (so Python can apply the same rule) and as the text an error shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    pub key: &'static str,
    pub default: f64,
    /// Lower bound; `min_open`: the bound itself is excluded.
    pub min: f64,
    pub min_open: bool,
    /// Upper bound; `max_open`: the bound itself is excluded.
    pub max: f64,
    pub max_open: bool,
    /// Only whole numbers.
    pub integer: bool,
    /// 0 is allowed besides the range (a "0 = automatic" value).
    pub zero_ok: bool,
    /// The rule as an error states it, e.g. "must be in (0, 1]".
    pub rule: &'static str,
}

impl Param {
    /// A parameter any finite number satisfies; narrow it with the methods below.
    pub const fn new(key: &'static str, default: f64, rule: &'static str) -> Param {
        Param {
            key,
            default,
            min: f64::NEG_INFINITY,
            min_open: false,
            max: f64::INFINITY,
            max_open: false,
            integer: false,
            zero_ok: false,
            rule,
        }
    }
    /// Values > `x`.
    pub const fn gt(self, x: f64) -> Param {
        Param {
            min: x,
            min_open: true,
            ..self
        }
    }
    /// Values ≥ `x`.
    pub const fn ge(self, x: f64) -> Param {
        Param {
            min: x,
            min_open: false,
            ..self
        }
    }
    /// Values < `x`.
    pub const fn lt(self, x: f64) -> Param {
        Param {
            max: x,
            max_open: true,
            ..self
        }
    }
    /// Values ≤ `x`.
    pub const fn le(self, x: f64) -> Param {
        Param {
            max: x,
            max_open: false,
            ..self
        }
    }
    pub const fn integer(self) -> Param {
        Param {
            integer: true,
            ..self
        }
    }
    pub const fn or_zero(self) -> Param {
        Param {
            zero_ok: true,
            ..self
        }
    }

    /// Does `v` satisfy the rule?
    pub fn accepts(&self, v: f64) -> bool {
        if !v.is_finite() {
            return false;
        }
        if self.zero_ok && v == 0.0 {
            return true;
        }
        let above = if self.min_open {
            v > self.min
        } else {
            v >= self.min
        };
        let below = if self.max_open {
            v < self.max
        } else {
            v <= self.max
        };
        above && below && (!self.integer || v.fract() == 0.0)
    }
}

/// A number as Python's `repr` writes a float (`2.0`, `0.5`, `1e+300`), so
/// both sides quote a value the same way.
pub fn show_f64(v: f64) -> String {
    if v.is_finite() && v == v.trunc() && v.abs() < 1e16 {
        format!("{v:.1}")
    } else if v.is_finite() && (v.abs() >= 1e16 || (v != 0.0 && v.abs() < 1e-4)) {
        let s = format!("{v:e}");
        // Rust writes 1e300 / 1e-5; Python 1e+300 / 1e-05.
        let (m, e) = s.split_once('e').expect("exponent");
        let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
        format!("{m}e{sign}{digits:0>2}")
    } else {
        format!("{v}")
    }
}

/// Check `p` against the parameters `cc` accepts (its `CcEntry::params` and
/// `CcEntry::at_least`).
pub fn check_params(cc: &CcEntry, p: &CcParams) -> Result<(), String> {
    for (k, v) in &p.0 {
        let Some(rule) = cc.params.iter().find(|r| r.key == k) else {
            let known: Vec<&str> = cc.params.iter().map(|r| r.key).collect();
            return Err(if known.is_empty() {
                format!(
                    "cc_params.{k}: congestion control \"{}\" takes no parameters",
                    cc.name
                )
            } else {
                format!(
                    "cc_params.{k}: unknown parameter (choose from {})",
                    known.join(", ")
                )
            });
        };
        if !rule.accepts(*v) {
            return Err(format!(
                "cc_params.{k}: {} (got {})",
                rule.rule,
                show_f64(*v)
            ));
        }
    }
    for (key, low) in cc.at_least {
        let value = |k: &str| {
            let default = cc
                .params
                .iter()
                .find(|r| r.key == k)
                .map_or(0.0, |r| r.default);
            p.get(k, default)
        };
        if value(key) < value(low) {
            return Err(format!(
                "cc_params.{key}: must be ≥ {low} (got {})",
                show_f64(value(key))
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::find;

    fn p(v: &[(&str, f64)]) -> CcParams {
        CcParams(v.iter().map(|(k, x)| (k.to_string(), *x)).collect())
    }

    #[test]
    fn errors_name_the_key_and_rule() {
        let vegas = find("vegas").unwrap();
        let fast = find("fast").unwrap();
        assert!(check_params(vegas, &p(&[("alpha", 1.0), ("beta", 3.0)])).is_ok());
        let e = check_params(vegas, &p(&[("alpha", 5.0)])).unwrap_err();
        assert_eq!(e, "cc_params.beta: must be ≥ alpha (got 4.0)");
        let e = check_params(fast, &p(&[("gamma", 2.0)])).unwrap_err();
        assert_eq!(e, "cc_params.gamma: must be in (0, 1] (got 2.0)");
        let e = check_params(fast, &p(&[("beta", 2.0)])).unwrap_err();
        assert_eq!(
            e,
            "cc_params.beta: unknown parameter (choose from alpha, gamma)"
        );
        let e = check_params(find("newreno").unwrap(), &p(&[("alpha", 2.0)])).unwrap_err();
        assert_eq!(
            e,
            "cc_params.alpha: congestion control \"newreno\" takes no parameters"
        );
        assert!(check_params(find("bdp-tracking").unwrap(), &p(&[("k", 1.0)])).is_err());
    }

    #[test]
    fn b_rounds_rule_matches_the_ring_and_python() {
        let bdp = find("bdp-tracking").unwrap();
        // 0 is the default ("since the start"); above the ring's size would index past it.
        for ok in [0.0, 1.0, super::super::bdp_tracking::MAX_ROUNDS as f64] {
            assert!(check_params(bdp, &p(&[("b_rounds", ok)])).is_ok());
        }
        for bad in [65.0, 1000.0, 2.5, -1.0, f64::NAN] {
            let e = check_params(bdp, &p(&[("b_rounds", bad)])).unwrap_err();
            assert!(e.contains("must be an integer in [0, 64]"), "{e}");
        }
    }

    #[test]
    fn numbers_are_shown_as_python_shows_floats() {
        assert_eq!(show_f64(2.0), "2.0");
        assert_eq!(show_f64(0.5), "0.5");
        assert_eq!(show_f64(-1.5), "-1.5");
        assert_eq!(show_f64(1e300), "1e+300");
        assert_eq!(show_f64(5e-324), "5e-324");
        assert_eq!(show_f64(1e-5), "1e-05");
        assert_eq!(show_f64(0.002), "0.002");
    }
}
