//! The `calibration` view: how far the team's estimates are from what happened, and how sure that is.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Inputs, Selection};

/// The calibration fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CalibrationView {
    /// Closed issues with an estimate and a measured duration the fit learned from.
    pub n: usize,
    /// True when there are too few samples and the prior stands in.
    pub cold_start: bool,
    /// Actual ÷ estimate for the whole team (median).
    pub global_multiplier: f64,
    /// Spread of the log ratio (σ of the log-normal).
    pub sigma: f64,
    /// Per label: `{label, n, bias}`, bias relative to the team, shrunk toward 1 by `n/(n+5)`.
    pub by_label_bias: Vec<BiasView>,
    /// Per person: `{person, n, bias}`, the same way.
    pub by_person_bias: Vec<BiasView>,
}

/// One group's bias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BiasView {
    /// The label or the person.
    pub name: String,
    /// Samples.
    pub n: usize,
    /// Multiplier relative to the team.
    pub bias: f64,
}

/// The calibration view; `assignee` and `label` narrow the bias lists, `limit` cuts them.
pub fn calibration(inputs: Inputs<'_>, selection: &Selection) -> CalibrationView {
    let c = &inputs.report.calibration;
    let keep = |name: &str, want: Option<&str>| want.is_none_or(|w| name.eq_ignore_ascii_case(w));
    CalibrationView {
        n: c.n,
        cold_start: c.cold_start,
        global_multiplier: c.global_multiplier,
        sigma: c.sigma,
        by_label_bias: c
            .by_label_bias
            .iter()
            .filter(|b| keep(&b.label, selection.label.as_deref()))
            .take(selection.limit)
            .map(|b| BiasView {
                name: b.label.clone(),
                n: b.n,
                bias: b.bias,
            })
            .collect(),
        by_person_bias: c
            .by_person_bias
            .iter()
            .filter(|b| keep(&b.person, selection.assignee.as_deref()))
            .take(selection.limit)
            .map(|b| BiasView {
                name: b.person.clone(),
                n: b.n,
                bias: b.bias,
            })
            .collect(),
    }
}
