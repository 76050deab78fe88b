//! Per-packet (or per-frame) loss processes shared by links and radio/WLAN
//! components: none, independent (Bernoulli) and bursty (Gilbert–Elliott).

use crate::config::LossConfig;
use crate::rng::Rng;

/// The state of one loss process.
#[derive(Debug, Clone)]
pub enum LossProcess {
    None,
    Bernoulli(f64),
    /// Two-state Markov chain (Gilbert–Elliott), stepped once per trial.
    Ge {
        p_gb: f64,
        p_bg: f64,
        loss_good: f64,
        loss_bad: f64,
        bad: bool,
    },
}

impl LossProcess {
    pub fn new(c: &LossConfig) -> LossProcess {
        match *c {
            LossConfig::None => LossProcess::None,
            LossConfig::Bernoulli { p } => LossProcess::Bernoulli(p),
            LossConfig::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
            } => LossProcess::Ge {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
                bad: false,
            },
        }
    }

    /// One trial: step the chain (Gilbert–Elliott: once per trial, then draw
    /// in the new state) and say whether the packet or frame is lost.
    #[inline]
    pub fn lost(&mut self, rng: &mut Rng) -> bool {
        match self {
            LossProcess::None => false,
            LossProcess::Bernoulli(p) => rng.bernoulli(*p),
            LossProcess::Ge {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
                bad,
            } => {
                let flip = if *bad { *p_bg } else { *p_gb };
                if rng.uniform() < flip {
                    *bad = !*bad;
                }
                let p = if *bad { *loss_bad } else { *loss_good };
                rng.bernoulli(p)
            }
        }
    }
}

/// `field: must be a probability in [0, 1] (got v)`.
pub fn check_prob(v: f64, field: &str) -> Result<(), String> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(format!(
            "{field}: must be a probability in [0, 1] (got {v})"
        ))
    }
}

/// Check a loss configuration; `bernoulli_field` names a Bernoulli `p`,
/// `ge_prefix` prefixes the Gilbert–Elliott parameter names.
pub fn check(c: &LossConfig, bernoulli_field: &str, ge_prefix: &str) -> Result<(), String> {
    match *c {
        LossConfig::None => Ok(()),
        LossConfig::Bernoulli { p } => check_prob(p, bernoulli_field),
        LossConfig::GilbertElliott {
            p_gb,
            p_bg,
            loss_good,
            loss_bad,
        } => {
            check_prob(p_gb, &format!("{ge_prefix}.p_gb"))?;
            check_prob(p_bg, &format!("{ge_prefix}.p_bg"))?;
            check_prob(loss_good, &format!("{ge_prefix}.loss_good"))?;
            check_prob(loss_bad, &format!("{ge_prefix}.loss_bad"))
        }
    }
}
