//! `--shard auto`: each scheduler's array-job variables give a shard its slice,
//! and the documented recipes (docs/cluster/) merge into the unsharded run.

use crate::common::{resim, root, scenario};
use std::path::Path;

const FILE: &str = "scenarios/ay10-montecarlo.toml";

/// The unsharded sweep's `replications.csv` and `summary.csv` in `dir`.
fn whole(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    resim()
        .arg("sweep")
        .arg(scenario(FILE))
        .args(["-n", "6", "--quiet", "--no-report", "--out"])
        .arg(dir)
        .assert()
        .success();
    (
        std::fs::read(dir.join("replications.csv")).unwrap(),
        std::fs::read(dir.join("summary.csv")).unwrap(),
    )
}

/// Runs `count` shards with `--shard auto` in the working folder `work` (each
/// writing its default `out/ay10-montecarlo-sweep/shard-K-of-N`), each with the
/// variables `env(k)` (k from 0) and the extra arguments `args`; merges them and
/// returns the merged files.
fn shards(
    work: &Path,
    count: u64,
    env: impl Fn(u64) -> Vec<(&'static str, String)>,
    args: &[&str],
) -> (Vec<u8>, Vec<u8>) {
    for k in 0..count {
        let mut cmd = resim();
        cmd.current_dir(work)
            .arg("sweep")
            .arg(scenario(FILE))
            .args(["-n", "6", "--no-report", "--shard", "auto"])
            .args(args);
        for name in [
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_COUNT",
            "SLURM_ARRAY_TASK_MIN",
            "SLURM_ARRAY_TASK_STEP",
            "CI_NODE_INDEX",
            "CI_NODE_TOTAL",
            "JOB_COMPLETION_INDEX",
            "AWS_BATCH_JOB_ARRAY_INDEX",
            "PARALLEL_SEQ",
        ] {
            cmd.env_remove(name);
        }
        for (name, value) in env(k) {
            cmd.env(name, value);
        }
        cmd.assert().success();
    }
    let dir = work.join("out/ay10-montecarlo-sweep");
    let shard_dirs: Vec<_> = (1..=count)
        .map(|k| dir.join(format!("shard-{k}-of-{count}")))
        .collect();
    for d in &shard_dirs {
        assert!(d.join("manifest.toml").is_file(), "{} written", d.display());
    }
    let merged = work.join("merged");
    resim()
        .arg("merge")
        .args(&shard_dirs)
        .args(["--quiet", "--no-report", "--out"])
        .arg(&merged)
        .assert()
        .success();
    (
        std::fs::read(merged.join("replications.csv")).unwrap(),
        std::fs::read(merged.join("summary.csv")).unwrap(),
    )
}

#[test]
fn every_scheduler_gives_shards_that_merge_into_the_whole_run() {
    let base = tempfile::tempdir().unwrap();
    let expected = whole(&base.path().join("whole"));
    // Slurm (--array=0-2: the index counted from the array's first), GitLab CI
    // (`parallel: 3`, from 1), Kubernetes and AWS Batch (from 0, --shards N),
    // GNU parallel (PARALLEL_SEQ, from 1, --shards N)
    type Env = Box<dyn Fn(u64) -> Vec<(&'static str, String)>>;
    let cases: Vec<(&str, Env, &[&str])> = vec![
        (
            "slurm",
            Box::new(|k| {
                vec![
                    ("SLURM_ARRAY_TASK_ID", k.to_string()),
                    ("SLURM_ARRAY_TASK_COUNT", "3".into()),
                    ("SLURM_ARRAY_TASK_MIN", "0".into()),
                ]
            }),
            &[],
        ),
        (
            "gitlab",
            Box::new(|k| {
                vec![
                    ("CI_NODE_INDEX", (k + 1).to_string()),
                    ("CI_NODE_TOTAL", "3".into()),
                ]
            }),
            &[],
        ),
        (
            "kubernetes",
            Box::new(|k| vec![("JOB_COMPLETION_INDEX", k.to_string())]),
            &["--shards", "3"],
        ),
        (
            "aws",
            Box::new(|k| vec![("AWS_BATCH_JOB_ARRAY_INDEX", k.to_string())]),
            &["--shards", "3"],
        ),
        (
            "parallel",
            Box::new(|k| vec![("PARALLEL_SEQ", (k + 1).to_string())]),
            &["--shards", "3"],
        ),
    ];
    for (name, env, args) in cases {
        let work = base.path().join(name);
        std::fs::create_dir_all(&work).unwrap();
        let got = shards(&work, 3, env, args);
        assert!(
            got == expected,
            "{name}: the merged files differ from the whole run's"
        );
    }
}

#[test]
fn shard_auto_without_an_array_job_says_what_it_looked_for() {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = resim();
    for name in [
        "SLURM_ARRAY_TASK_ID",
        "CI_NODE_INDEX",
        "JOB_COMPLETION_INDEX",
        "AWS_BATCH_JOB_ARRAY_INDEX",
        "PARALLEL_SEQ",
    ] {
        cmd.env_remove(name);
    }
    let o = cmd
        .arg("sweep")
        .arg(scenario(FILE))
        .args(["-n", "2", "--shard", "auto", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("--shard auto: no array job found"),
        "{stderr}"
    );
    // a count is needed where the scheduler does not give one
    let o = resim()
        .env("JOB_COMPLETION_INDEX", "0")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("CI_NODE_INDEX")
        .arg("sweep")
        .arg(scenario(FILE))
        .args(["-n", "2", "--shard", "auto", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("add --shards N"));
}

/// The recipes in docs/cluster/ run the command lines the test above runs.
#[test]
fn the_documented_recipes_use_shard_auto_as_tested() {
    let read = |f: &str| std::fs::read_to_string(root().join("docs/cluster").join(f)).unwrap();
    let k8s = read("k8s-indexed-job.yaml");
    assert!(
        k8s.contains(r#""--shard", "auto", "--shards", "8"]"#),
        "{k8s}"
    );
    assert!(k8s.contains("completions: 8"));
    assert!(k8s.contains("workingDir: /results"));
    let gitlab = read("gitlab-ci.yml");
    assert!(gitlab.contains("parallel: 4"));
    assert!(gitlab.contains("--shard auto\n"), "{gitlab}");
    assert!(gitlab.contains("resim merge out/ay10-montecarlo-sweep/shard-*-of-4"));
}
