//! The links between a plan's branches: `after` (a branch waits for branches
//! listed before it: calls after a parallel group wait for the whole group)
//! and a call's `if_ok` (made only when a branch succeeded so far: its own,
//! or one it waits for).

use super::*;

/// Resolves `after` and `if_ok` of `raw`'s branches into `out` (the same
/// branches, validated), at `path` (`services.NAME.handler`).
pub(super) fn resolve(path: &str, raw: &[RawBranch], out: &mut [Branch]) -> R<()> {
    let names: Vec<&str> = raw.iter().map(|b| b.name.as_str()).collect();
    for (b, br) in raw.iter().enumerate() {
        for (k, name) in br.after.iter().flatten().enumerate() {
            let p = format!("{path}.branches.{b}.after.{k}");
            let Some(i) = names[..b].iter().position(|n| n == name) else {
                let hint = if names[b..].contains(&name.as_str()) {
                    " (a branch waits only for branches listed before it)".to_string()
                } else {
                    did_you_mean(name, names[..b].iter().copied())
                };
                return err(
                    p,
                    format!(
                        "no branch `{name}` before this one (before it: {}){hint}",
                        if b == 0 {
                            "none".to_string()
                        } else {
                            list(names[..b].iter().copied())
                        }
                    ),
                );
            };
            if out[b].after.contains(&i) {
                return err(p, format!("`{name}` is named twice"));
            }
            out[b].after.push(i);
            out[i].then.push(b);
        }
    }
    for (b, br) in raw.iter().enumerate() {
        // the branches it waits for, through theirs too
        let mut above = vec![false; raw.len()];
        above[b] = true;
        for i in (0..b).rev() {
            above[i] = out[i].then.iter().any(|&t| above[t]);
        }
        for (c, call) in br.calls.iter().enumerate() {
            let RawCall::Table(RawCallTable {
                if_ok: Some(name), ..
            }) = call
            else {
                continue;
            };
            let p = format!("{path}.branches.{b}.calls.{c}.if_ok");
            match names.iter().position(|n| n == name) {
                Some(i) if above[i] => out[b].calls[c].if_ok = Some(i),
                Some(_) => {
                    return err(
                        p,
                        format!(
                            "`{name}` is neither this call's branch nor one it waits for (`after`): whether it succeeded is not known when this call is made"
                        ),
                    );
                }
                None => {
                    return err(
                        p,
                        format!(
                            "no branch `{name}` in this plan (its branches: {}){}",
                            list(names.iter().copied()),
                            did_you_mean(name, names.iter().copied())
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}
