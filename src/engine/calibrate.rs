//! Calibration: how actual effort relates to estimates, for the team, each person and each label.
//!
//! Everything is fitted in log space, r = ln(actual / estimate): the team's multiplier is exp(mean r);
//! a person's bias is their mean residual shrunk toward zero by `n / (n + K)` (so a newcomer starts at the
//! team's figure and earns their own); a label's bias is fitted the same way on what remains after the
//! person's. σ is the spread of what remains after both. With fewer than [`COLD_START_BELOW`] samples the
//! documented prior is used instead.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

/// Fewer samples than this in all: cold start, use the prior.
pub(crate) const COLD_START_BELOW: usize = 6;
/// Shrinkage strength: with this many samples a person's (or label's) own figure gets half the weight.
pub(crate) const SHRINK_K: f64 = 5.0;
/// A person needs this many samples for the simulation to resample their own history.
pub(crate) const RESAMPLE_FROM: usize = 12;
/// The prior's σ of ln(actual / estimate).
pub(crate) const PRIOR_SIGMA: f64 = 0.6;
/// σ is never taken below this: a handful of lucky samples must not promise precision.
pub(crate) const MIN_SIGMA: f64 = 0.2;
/// Samples whose actual/estimate ratio is outside [1/RATIO_LIMIT, RATIO_LIMIT] are treated as data errors.
pub(crate) const RATIO_LIMIT: f64 = 20.0;

/// One finished issue that had an estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The estimate, hours.
    pub estimate: f64,
    /// The actual effort, hours.
    pub actual: f64,
    /// Who did it.
    pub person: Option<String>,
    /// Its labels (other than estimates and priorities).
    pub labels: Vec<String>,
}

/// A bias of one person or label: multiply the team's figure by `bias`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bias {
    /// The person or label.
    pub key: String,
    /// How many samples it rests on.
    pub n: usize,
    /// The multiplier relative to the team (1.0: like the team).
    pub bias: f64,
}

/// The fitted model.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// Samples used.
    pub n: usize,
    /// Whether the prior stands in for lack of history.
    pub cold_start: bool,
    /// Team multiplier: actual / estimate at the median.
    pub global_multiplier: f64,
    /// σ of ln(actual / estimate) after the person's and labels' biases.
    pub sigma: f64,
    /// Per person, in name order.
    pub by_person: Vec<Bias>,
    /// Per label, in name order.
    pub by_label: Vec<Bias>,
    /// Per person with at least [`RESAMPLE_FROM`] samples: their residual ratios, for resampling.
    pub person_ratios: BTreeMap<String, Arc<[f64]>>,
}

impl Calibration {
    /// The documented prior: estimates are medians, σ = 0.6.
    pub(crate) fn prior() -> Self {
        Self {
            n: 0,
            cold_start: true,
            global_multiplier: 1.0,
            sigma: PRIOR_SIGMA,
            by_person: Vec::new(),
            by_label: Vec::new(),
            person_ratios: BTreeMap::new(),
        }
    }

    /// The multiplier for work by `person` carrying `labels`.
    pub(crate) fn multiplier(&self, person: Option<&str>, labels: &[String]) -> f64 {
        let pb = person
            .and_then(|p| self.by_person.iter().find(|b| b.key == p))
            .map_or(1.0, |b| b.bias);
        let lbs: Vec<f64> = labels
            .iter()
            .filter_map(|l| {
                self.by_label
                    .iter()
                    .find(|b| &b.key == l)
                    .map(|b| b.bias.ln())
            })
            .collect();
        let lb = if lbs.is_empty() {
            1.0
        } else {
            (lbs.iter().sum::<f64>() / lbs.len() as f64).exp()
        };
        self.global_multiplier * pb * lb
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

impl Sample {
    /// Whether it took more than [`RATIO_LIMIT`] times its estimate, or less than its share: a data
    /// error (time logged on the wrong issue, an estimate label left from another), which calibration
    /// leaves out.
    pub(crate) fn absurd(&self) -> bool {
        self.estimate > 0.0
            && self.actual > 0.0
            && (self.actual / self.estimate).ln().abs() > RATIO_LIMIT.ln()
    }
}

/// Fits the model to `samples` (those with a non-positive or absurd ratio are dropped).
pub(crate) fn fit<'s>(samples: impl IntoIterator<Item = &'s Sample>) -> Calibration {
    let usable: Vec<(&Sample, f64)> = samples
        .into_iter()
        .filter(|s| s.estimate > 0.0 && s.actual > 0.0 && !s.absurd())
        .map(|s| (s, (s.actual / s.estimate).ln()))
        .collect();
    let n = usable.len();
    if n < COLD_START_BELOW {
        return Calibration {
            n,
            ..Calibration::prior()
        };
    }
    let mu = mean(&usable.iter().map(|(_, r)| *r).collect::<Vec<_>>());

    let mut per_person: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (s, r) in &usable {
        if let Some(p) = &s.person {
            per_person.entry(p.as_str()).or_default().push(r - mu);
        }
    }
    let person_bias: BTreeMap<&str, (usize, f64)> = per_person
        .iter()
        .map(|(p, v)| {
            (
                *p,
                (
                    v.len(),
                    v.len() as f64 / (v.len() as f64 + SHRINK_K) * mean(v),
                ),
            )
        })
        .collect();
    let pb = |s: &Sample| {
        s.person
            .as_deref()
            .and_then(|p| person_bias.get(p))
            .map_or(0.0, |b| b.1)
    };

    let mut per_label: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (s, r) in &usable {
        for l in &s.labels {
            per_label
                .entry(l.as_str())
                .or_default()
                .push(r - mu - pb(s));
        }
    }
    let label_bias: BTreeMap<&str, (usize, f64)> = per_label
        .iter()
        .map(|(l, v)| {
            (
                *l,
                (
                    v.len(),
                    v.len() as f64 / (v.len() as f64 + SHRINK_K) * mean(v),
                ),
            )
        })
        .collect();
    let lb = |s: &Sample| {
        let v: Vec<f64> = s
            .labels
            .iter()
            .filter_map(|l| label_bias.get(l.as_str()).map(|b| b.1))
            .collect();
        mean(&v)
    };

    let residuals: Vec<f64> = usable.iter().map(|(s, r)| r - mu - pb(s) - lb(s)).collect();
    let var = residuals.iter().map(|e| e * e).sum::<f64>() / (n as f64 - 1.0).max(1.0);
    let sigma = var.sqrt().max(MIN_SIGMA);

    let mut person_ratios = BTreeMap::new();
    for (p, _) in person_bias.iter().filter(|(_, (k, _))| *k >= RESAMPLE_FROM) {
        let mut ratios: Vec<f64> = usable
            .iter()
            .filter(|(s, _)| s.person.as_deref() == Some(*p))
            .map(|(s, r)| (r - mu - pb(s) - lb(s)).exp())
            .collect();
        ratios.sort_by(f64::total_cmp);
        person_ratios.insert((*p).to_owned(), Arc::from(ratios));
    }

    let to_bias = |m: &BTreeMap<&str, (usize, f64)>| -> Vec<Bias> {
        m.iter()
            .map(|(k, (n, b))| Bias {
                key: (*k).to_owned(),
                n: *n,
                bias: b.exp(),
            })
            .collect()
    };
    Calibration {
        n,
        cold_start: false,
        global_multiplier: mu.exp(),
        sigma,
        by_person: to_bias(&person_bias),
        by_label: to_bias(&label_bias),
        person_ratios,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(est: f64, act: f64, person: &str, labels: &[&str]) -> Sample {
        Sample {
            estimate: est,
            actual: act,
            person: Some(person.into()),
            labels: labels.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn too_little_history_is_a_cold_start_with_the_prior() {
        let c = fit(&vec![sample(6.0, 12.0, "ann", &[]); 5]);
        assert!(c.cold_start);
        assert_eq!((c.n, c.global_multiplier, c.sigma), (5, 1.0, PRIOR_SIGMA));
    }

    #[test]
    fn team_multiplier_and_person_bias_with_shrinkage() {
        // Ann takes twice her estimates, Bo exactly his: ten samples each.
        let mut s = vec![sample(6.0, 12.0, "ann", &[]); 10];
        s.extend(vec![sample(6.0, 6.0, "bo", &[]); 10]);
        let c = fit(&s);
        assert!(!c.cold_start);
        // ln-mean of 2 and 1 is ln √2.
        assert!((c.global_multiplier - 2f64.sqrt()).abs() < 1e-9);
        let ann = c.by_person.iter().find(|b| b.key == "ann").unwrap();
        // Her own figure is √2 above the team's, shrunk by 10/15.
        let expected = (10.0 / 15.0 * 2f64.sqrt().ln()).exp();
        assert!((ann.bias - expected).abs() < 1e-9, "{}", ann.bias);
        assert_eq!(ann.n, 10);
        // A newcomer gets the team's figure.
        assert!((c.multiplier(Some("zoe"), &[]) - c.global_multiplier).abs() < 1e-12);
        assert!(c.multiplier(Some("ann"), &[]) > c.multiplier(Some("bo"), &[]));
        assert!(c.sigma >= MIN_SIGMA);
    }

    #[test]
    fn labels_explain_what_people_do_not() {
        let mut s = Vec::new();
        for i in 0..20 {
            let who = if i % 2 == 0 { "ann" } else { "bo" };
            s.push(sample(6.0, 6.0, who, &["docs"]));
            s.push(sample(6.0, 18.0, who, &["bug"]));
        }
        let c = fit(&s);
        let bug = c.by_label.iter().find(|b| b.key == "bug").unwrap().bias;
        let docs = c.by_label.iter().find(|b| b.key == "docs").unwrap().bias;
        assert!(bug > 1.5 && docs < 0.7, "bug {bug} docs {docs}");
        assert!(c.by_person.iter().all(|b| (b.bias - 1.0).abs() < 1e-9));
        // The true ratio is 3; with 20 samples each, shrinkage keeps 20/25 of each label's own figure.
        let ratio =
            c.multiplier(None, &["bug".to_string()]) / c.multiplier(None, &["docs".to_string()]);
        assert!((ratio - 3f64.powf(0.8)).abs() < 1e-9, "{ratio}");
    }

    #[test]
    fn absurd_ratios_are_dropped_and_people_with_history_are_resampled() {
        let mut s: Vec<Sample> = (0..14)
            .map(|i| sample(6.0, 4.0 + i as f64, "ann", &[]))
            .collect();
        s.push(sample(1.0, 500.0, "ann", &[]));
        let c = fit(&s);
        assert_eq!(c.n, 14);
        let ratios = c.person_ratios.get("ann").unwrap();
        assert_eq!(ratios.len(), 14);
        assert!(ratios.windows(2).all(|w| w[0] <= w[1]));
    }
}
