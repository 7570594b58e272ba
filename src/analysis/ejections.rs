//! Outlier ejection's own table (`ejections.csv`), which services' and
//! dependencies' replicas share: every ejection, by which view, when and for
//! how long; and whether any service or dependency ejects at all.

use super::Results;
use crate::table::{Cell, Table};

/// Whether any service has outlier detection.
pub(super) fn any_service(results: &Results) -> bool {
    results
        .runs
        .iter()
        .any(|r| r.servers.iter().any(|s| s.ejections.is_some()))
}

/// Whether any dependency has outlier detection.
pub(super) fn any_dependency(results: &Results) -> bool {
    results
        .runs
        .iter()
        .any(|r| r.dependencies.iter().any(|d| d.ejections.is_some()))
}

/// Every ejection of a replica by outlier detection: by which view, when,
/// for how long, and when it came back. With `dependencies` (some
/// dependency has outlier detection) a `dependency` column follows
/// `service`: a service's rows leave it empty, a dependency's leave
/// `service` empty.
pub(super) fn table(results: &mut Results, dependencies: bool) -> Table {
    let keys: &[&str] = if dependencies {
        &["service", "dependency", "view", "replica"]
    } else {
        &["service", "view", "replica"]
    };
    let mut t = results.table(
        "ejections",
        "Ejections: each replica outlier detection took out of its balancer's picks, and when it came back",
        keys,
        &["ejected_at_ms", "multiplier", "ejection_ms", "returned_at_ms"],
    );
    let row = |cells: &mut Vec<Cell>, e: &crate::sim::EjectionRow| {
        cells.extend([
            e.view.as_str().into(),
            Cell::from(u64::from(e.replica) + 1),
            e.at_ms.into(),
            Cell::from(u64::from(e.multiplier)),
            e.lasts_ms.into(),
            e.back_ms.into(),
        ]);
    };
    for i in 0..results.runs.len() {
        let axis = results.axis_cells(i);
        let model = &results.scenario.rows[i].model;
        for st in &results.runs[i].servers {
            let service = &model.services[st.service];
            for e in st.ejections.iter().flatten() {
                let mut cells = axis.clone();
                cells.push(service.name.as_str().into());
                if dependencies {
                    cells.push(Cell::Empty);
                }
                row(&mut cells, e);
                t.push(cells);
            }
        }
        for (d, st) in results.runs[i].dependencies.iter().enumerate() {
            for e in st.ejections.iter().flatten() {
                let mut cells = axis.clone();
                cells.extend([Cell::Empty, model.dependencies[d].name.as_str().into()]);
                row(&mut cells, e);
                t.push(cells);
            }
        }
    }
    t
}
