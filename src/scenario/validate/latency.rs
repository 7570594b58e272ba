//! Latency models: fixed values, cycles, measured values (inline or from a file)
//! and distributions, by parameters or by percentiles.

use super::*;

/// The 0.99 quantile of the standard normal distribution.
const Z99: f64 = 2.326_347_874_040_840_8;

/// The keys a latency model may be given by, for "exactly one of" errors.
const LATENCY_KEYS: [&str; 11] = [
    "constant",
    "cycle",
    "empirical",
    "exponential",
    "uniform",
    "lognormal",
    "mixture",
    "gamma",
    "erlang",
    "weibull",
    "pareto",
];

/// ln(ln 100 / ln 2): Weibull's shape from p99 / p50.
fn weibull_shape(p: &str, p50: f64, p99: f64) -> R<f64> {
    if p99 <= p50 {
        return err_vs(
            format!("{p}.p99_ms"),
            format!("{p}.p50_ms"),
            format!("must be > p50_ms (got {} <= {})", num(p99), num(p50)),
        );
    }
    Ok((100f64.ln() / 2f64.ln()).ln() / (p99 / p50).ln())
}

fn values_ms(path: &str, v: &[f64]) -> R<Vec<Ticks>> {
    if v.is_empty() {
        return err(path, "needs at least one value");
    }
    v.iter()
        .enumerate()
        .map(|(i, x)| ticks(&format!("{path}.{i}"), *x))
        .collect()
}

pub(crate) fn latency(path: &str, l: &RawLatency, files: &mut Files) -> R<Latency> {
    let set: Vec<&str> = [
        l.constant.is_some(),
        l.cycle.is_some(),
        l.empirical.is_some(),
        l.exponential.is_some(),
        l.uniform.is_some(),
        l.lognormal.is_some(),
        l.mixture.is_some(),
        l.gamma.is_some(),
        l.erlang.is_some(),
        l.weibull.is_some(),
        l.pareto.is_some(),
    ]
    .iter()
    .zip(LATENCY_KEYS)
    .filter(|(on, _)| **on)
    .map(|(_, k)| k)
    .collect();
    if set.len() != 1 {
        return err(
            path,
            format!(
                "a latency model takes exactly one of {} (got {})",
                list(LATENCY_KEYS),
                if set.is_empty() {
                    "none".to_string()
                } else {
                    list(set)
                }
            ),
        );
    }
    if l.start.is_some() && l.cycle.is_none() {
        return err(format!("{path}.start"), "`start` applies only to a `cycle`");
    }
    if let Some(c) = l.constant {
        return Ok(Latency::Constant(ticks(&format!("{path}.constant"), c)?));
    }
    if let Some(c) = &l.cycle {
        let start = choice(
            &format!("{path}.start"),
            l.start.as_deref().unwrap_or("first"),
            &["first", "random"],
        )?;
        return Ok(Latency::Cycle {
            values: values_ms(&format!("{path}.cycle"), c)?,
            random_start: start == "random",
        });
    }
    if let Some(e) = &l.empirical {
        return empirical(path, e, files);
    }
    if let Some(g) = &l.gamma {
        return gamma(path, g);
    }
    if let Some(e) = &l.erlang {
        let p = format!("{path}.erlang");
        let k = count(&format!("{p}.k"), e.k, 1)? as f64;
        let mean = positive(&format!("{p}.mean_ms"), e.mean_ms)?;
        return Ok(Latency::Gamma {
            shape: k,
            scale_ms: mean / k,
        });
    }
    if let Some(w) = &l.weibull {
        return weibull(path, w);
    }
    if let Some(pa) = &l.pareto {
        return pareto(path, pa);
    }
    if let Some(e) = &l.exponential {
        return Ok(Latency::Exponential {
            mean_ms: positive(&format!("{path}.exponential.mean_ms"), e.mean_ms)?,
        });
    }
    if let Some(u) = &l.uniform {
        let min_ms = non_negative(&format!("{path}.uniform.min_ms"), u.min_ms)?;
        let max_ms = non_negative(&format!("{path}.uniform.max_ms"), u.max_ms)?;
        if max_ms < min_ms {
            return err_vs(
                format!("{path}.uniform.max_ms"),
                format!("{path}.uniform.min_ms"),
                format!("must be >= min_ms (got {} < {})", num(max_ms), num(min_ms)),
            );
        }
        return Ok(Latency::Uniform { min_ms, max_ms });
    }
    if let Some(ln) = &l.lognormal {
        return lognormal(path, ln);
    }
    mixture(path, l.mixture.as_deref().unwrap_or_default(), files)
}

/// `empirical`: values, or a file's column (its tail fitted above a quantile
/// with `fit_tail_above`).
fn empirical(path: &str, e: &RawEmpirical, files: &mut Files) -> R<Latency> {
    let p = format!("{path}.empirical");
    match e {
        RawEmpirical::Values(v) => Ok(Latency::Empirical(values_ms(&p, v)?)),
        RawEmpirical::File(f) => {
            let (resolved, v) =
                super::super::latency_file::read(&p, files.dir, &f.file, f.column.as_deref())?;
            let values = v
                .iter()
                .map(|x| ticks(&format!("{p}.file"), *x))
                .collect::<R<Vec<_>>>()?;
            let file = LatencyFile {
                written: f.file.clone(),
                path: resolved,
            };
            if !files.read.contains(&file) {
                files.read.push(file);
            }
            let Some(q) = f.fit_tail_above else {
                // a p99 of the run resting on fewer than 10 of them
                if crate::scenario::tail::above(v.len(), 0.99) < ThinTail::ENOUGH {
                    files.thin.push(ThinTail {
                        key: path.to_string(),
                        file: f.file.clone(),
                        values: v.len(),
                    });
                }
                return Ok(Latency::Empirical(values));
            };
            let q_path = format!("{p}.fit_tail_above");
            let q = finite(&q_path, q)?;
            if !(q > 0.0 && q < 1.0) {
                return err(
                    q_path,
                    format!("a quantile, above 0 and below 1 (got {})", num(q)),
                );
            }
            let fit =
                crate::scenario::tail::fit(&v, q).map_err(|m| ScenarioError::new(&q_path, m))?;
            let mut sorted = values;
            sorted.sort_unstable();
            Ok(Latency::Tail(Box::new(FittedTail {
                values: sorted,
                keep: fit.keep,
                threshold_ms: fit.threshold_ms,
                shape: fit.shape,
                scale_ms: fit.scale_ms,
            })))
        }
    }
}

/// `gamma`: its shape, and its mean or its scale.
fn gamma(path: &str, g: &RawGamma) -> R<Latency> {
    let p = format!("{path}.gamma");
    let shape = positive(&format!("{p}.shape"), g.shape)?;
    let scale_ms = match (g.mean_ms, g.scale_ms) {
        (Some(m), None) => positive(&format!("{p}.mean_ms"), m)? / shape,
        (None, Some(s)) => positive(&format!("{p}.scale_ms"), s)?,
        _ => return err(p, "give exactly one of `mean_ms` and `scale_ms`"),
    };
    Ok(Latency::Gamma { shape, scale_ms })
}

/// `weibull`: its shape and scale, or its p50 and p99.
fn weibull(path: &str, w: &RawWeibull) -> R<Latency> {
    let p = format!("{path}.weibull");
    let (shape, scale_ms) = match (w.shape, w.scale_ms, w.p50_ms, w.p99_ms) {
        (Some(k), Some(s), None, None) => (
            positive(&format!("{p}.shape"), k)?,
            positive(&format!("{p}.scale_ms"), s)?,
        ),
        (None, None, Some(p50), Some(p99)) => {
            let p50 = positive(&format!("{p}.p50_ms"), p50)?;
            let p99 = positive(&format!("{p}.p99_ms"), p99)?;
            let k = weibull_shape(&p, p50, p99)?;
            (k, p50 / 2f64.ln().powf(1.0 / k))
        }
        _ => {
            return err(
                p,
                "give either `shape` and `scale_ms`, or `p50_ms` and `p99_ms`",
            );
        }
    };
    Ok(Latency::Weibull { shape, scale_ms })
}

/// `pareto`: its shape and minimum, or its p50 and p99 (a finite mean).
fn pareto(path: &str, pa: &RawPareto) -> R<Latency> {
    let p = format!("{path}.pareto");
    let (shape, min_ms) = match (pa.shape, pa.min_ms, pa.p50_ms, pa.p99_ms) {
        (Some(a), Some(m), None, None) => (
            positive(&format!("{p}.shape"), a)?,
            positive(&format!("{p}.min_ms"), m)?,
        ),
        (None, None, Some(p50), Some(p99)) => {
            let p50 = positive(&format!("{p}.p50_ms"), p50)?;
            let p99 = positive(&format!("{p}.p99_ms"), p99)?;
            if p99 <= p50 {
                return err_vs(
                    format!("{p}.p99_ms"),
                    format!("{p}.p50_ms"),
                    format!("must be > p50_ms (got {} <= {})", num(p99), num(p50)),
                );
            }
            // p = x_m (1 - q)^(-1/alpha): p99 / p50 = 50^(1/alpha)
            let a = 50f64.ln() / (p99 / p50).ln();
            (a, p50 / 2f64.powf(1.0 / a))
        }
        _ => {
            return err(
                p,
                "give either `shape` and `min_ms`, or `p50_ms` and `p99_ms`",
            );
        }
    };
    if shape <= 1.0 {
        return err(
            format!("{p}.shape"),
            format!(
                "must be > 1 for a finite mean (got {}); the mean is what waits are measured in",
                crate::format::format_number(shape)
            ),
        );
    }
    Ok(Latency::Pareto { shape, min_ms })
}

/// `lognormal`: its p50, and its p99 or its sigma.
fn lognormal(path: &str, ln: &RawLogNormal) -> R<Latency> {
    let p = format!("{path}.lognormal");
    let p50 = positive(&format!("{p}.p50_ms"), ln.p50_ms)?;
    let sigma = match (ln.p99_ms, ln.sigma) {
        (Some(p99), None) => {
            let p99 = positive(&format!("{p}.p99_ms"), p99)?;
            if p99 < p50 {
                return err_vs(
                    format!("{p}.p99_ms"),
                    format!("{p}.p50_ms"),
                    format!("must be >= p50_ms (got {} < {})", num(p99), num(p50)),
                );
            }
            let sigma = (p99 / p50).ln() / Z99;
            if !sigma.is_finite() {
                return err(
                    format!("{p}.p99_ms"),
                    format!(
                        "p99_ms / p50_ms = {p99:e} / {p50:e} overflows (the spread would be infinite): give a smaller ratio or `sigma`"
                    ),
                );
            }
            sigma
        }
        (None, Some(s)) => non_negative(&format!("{p}.sigma"), s)?,
        _ => return err(p, "give exactly one of `p99_ms` and `sigma`"),
    };
    Ok(Latency::LogNormal {
        mu: p50.ln(),
        sigma,
    })
}

/// `mixture`: models each drawn with its weight's share.
fn mixture(path: &str, parts: &[RawMixturePart], files: &mut Files) -> R<Latency> {
    let p = format!("{path}.mixture");
    if parts.is_empty() {
        return err(p, "needs at least one part");
    }
    let mut total = 0.0;
    let mut models = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        total += non_negative(&format!("{p}.{i}.weight"), part.weight)?;
        if !total.is_finite() {
            return err(
                format!("{p}.{i}.weight"),
                "the weights add up to more than a number can hold: scale them down (only their ratios matter)",
            );
        }
        models.push((
            total,
            latency(&format!("{p}.{i}.model"), &part.model, files)?,
        ));
    }
    if total <= 0.0 {
        return err(p, "the weights must add up to a positive number");
    }
    for m in &mut models {
        m.0 /= total;
    }
    Ok(Latency::Mixture(models))
}
