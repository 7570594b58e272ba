//! Latency models from a CSV file (`empirical = { file, column }`) and the
//! parametric service-time models, through the real binary.

use crate::common::*;

const EXAMPLE: &str = "scenarios/examples/measured-latencies.toml";

#[test]
fn measured_latencies_drive_the_tariff_store() {
    // The share of measured tariff calls beyond the weighted split's 60 ms
    let text = std::fs::read_to_string(scenario("scenarios/examples/tariff-latencies.csv"))
        .expect("the bundled latencies");
    let values: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .nth(1)
                .expect("two columns")
                .parse()
                .expect("ms")
        })
        .collect();
    assert_eq!(values.len(), 400);
    let p = values.iter().filter(|v| **v > 60.0).count() as f64 / values.len() as f64;
    let outcomes = run_csv(EXAMPLE, "outcomes");
    let row = outcomes.row(&[("variant", "baseline")]);
    let n = num(row, "requests");
    assert_eq!(n, 480.0);
    // 480 independent draws from the file: failed_tariff ~ Binomial(480, p)
    let failed = num(row, "failed_tariff");
    let sd = (n * p * (1.0 - p)).sqrt();
    assert!(
        (failed - n * p).abs() < 4.0 * sd,
        "failed_tariff {failed}, expected {} +/- {}",
        n * p,
        4.0 * sd
    );
    // nothing in the file is below its minimum
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(num(row, "median_ms") >= min);
}

#[test]
fn a_sweep_manifest_hashes_the_latency_files() {
    let (dir, file) = file_with(
        &std::fs::read_to_string(scenario(EXAMPLE))
            .expect("example")
            .replace("tariff-latencies.csv", "mine.csv"),
    );
    std::fs::write(dir.path().join("mine.csv"), "ms\n6\n7\n").expect("csv");
    let sweep = |out: &str| {
        let out = dir.path().join(out);
        resim()
            .arg("sweep")
            .arg(&file)
            .args(["-n", "2", "--quiet", "--out"])
            .arg(&out)
            .assert()
            .success();
        std::fs::read_to_string(out.join("manifest.toml")).expect("manifest")
    };
    let first = sweep("a");
    assert!(
        first.contains("[[latency_files]]\nfile = \"mine.csv\"\nfnv1a64 = \""),
        "{first}"
    );
    std::fs::write(dir.path().join("mine.csv"), "ms\n6\n8\n").expect("csv");
    let second = sweep("b");
    let hash = |m: &str| {
        m.lines()
            .find(|l| l.starts_with("fnv1a64"))
            .map(String::from)
            .expect("a hash line")
    };
    assert_ne!(
        hash(&first),
        hash(&second),
        "a changed file changes the hash"
    );
    // and merge refuses to mix them
    resim()
        .arg("merge")
        .arg(dir.path().join("a"))
        .arg(dir.path().join("b"))
        .arg("--out")
        .arg(dir.path().join("m"))
        .assert()
        .code(2);
}
