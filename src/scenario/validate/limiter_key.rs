//! A limiter's `key`, which rate and concurrency limiters read alike.

use super::*;

/// The fields of a limiter's `key`, each once.
pub(super) fn key(path: &str, raw: &[String]) -> R<Vec<Field>> {
    let key = raw
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let fp = format!("{path}.key.{i}");
            one_of(
                &fp,
                Some(f),
                &[
                    ("client", Field::Client),
                    ("member", Field::Member),
                    ("route", Field::Route),
                    ("access", Field::Access),
                ],
            )
        })
        .collect::<R<Vec<_>>>()?;
    if let Some(i) = (1..key.len()).find(|&i| key[..i].contains(&key[i])) {
        return err(
            format!("{path}.key.{i}"),
            format!("`{}` is already in the key", key[i].name()),
        );
    }
    Ok(key)
}
