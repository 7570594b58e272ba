//! Hostile inputs to runs, sweeps, boundary searches, merges and shards: each
//! keeps what was computed, refuses naming the variable, key or row, or is
//! bounded in time and memory; none loses or silently changes a result.

use crate::common::{resim, scenario};

const MONTECARLO: &str = "scenarios/ay10-montecarlo.toml";

/// The Slurm array variables `--shard auto` reads.
const SLURM: [&str; 5] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
];

/// `resim sweep --shard auto` under the Slurm variables `env`: its exit code and stderr.
fn shard_auto(env: &[(&str, &str)]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = resim();
    cmd.arg("sweep")
        .arg(scenario(MONTECARLO))
        .args(["-n", "2", "--quiet", "--no-report", "--shard", "auto", "--out"])
        .arg(dir.path().join("out"));
    for name in SLURM {
        cmd.env_remove(name);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn odd_slurm_array_variables_are_refused_naming_the_variable() {
    let base = [
        ("SLURM_ARRAY_TASK_ID", "0"),
        ("SLURM_ARRAY_TASK_COUNT", "4"),
        ("SLURM_ARRAY_TASK_MIN", "0"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut env: Vec<(&str, &str)> = base.to_vec();
        for (k, v) in extra {
            env.retain(|(n, _)| n != k);
            env.push((k, v));
        }
        shard_auto(&env)
    };
    // the plain array still works
    assert_eq!(with(&[]).0, 0);
    for (extra, names) in [
        (
            vec![("SLURM_ARRAY_TASK_STEP", "0")],
            vec!["SLURM_ARRAY_TASK_STEP", "`0`"],
        ),
        (
            vec![("SLURM_ARRAY_TASK_COUNT", "0")],
            vec!["SLURM_ARRAY_TASK_COUNT", "`0`"],
        ),
        // id 3 is not on the grid 0, 2, 4, 6: it would get id 2's slice
        (
            vec![("SLURM_ARRAY_TASK_ID", "3"), ("SLURM_ARRAY_TASK_STEP", "2")],
            vec!["SLURM_ARRAY_TASK_ID", "`3`", "SLURM_ARRAY_TASK_STEP 2"],
        ),
        // --array=1,3,10: min 1, max 10, 3 jobs, step 1 is no grid of 3 jobs
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "10"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "10"),
            ],
            vec!["SLURM_ARRAY_TASK_COUNT", "`3`", "SLURM_ARRAY_TASK_MAX 10"],
        ),
        (
            vec![("SLURM_ARRAY_TASK_ID", "5"), ("SLURM_ARRAY_TASK_MAX", "3")],
            vec!["SLURM_ARRAY_TASK_ID", "`5`", "SLURM_ARRAY_TASK_MAX 3"],
        ),
    ] {
        let (code, err) = with(&extra);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{extra:?}: one line: {err}");
        for n in names {
            assert!(err.contains(n), "{extra:?}: names {n}: {err}");
        }
    }
}
