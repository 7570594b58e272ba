//! CSV export. Every table of a scenario is rendered in memory first; files are then
//! written to temporary names and renamed, so a failure never leaves a truncated CSV.

use super::Table;
use crate::error::Error;
use std::path::Path;

fn io(context: String, user_path: bool) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io {
        context,
        source,
        user_path,
    }
}

/// Renders one table as CSV bytes.
pub fn to_csv(table: &Table) -> Result<Vec<u8>, Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| Error::Other(format!("{}.csv: {e}", table.name));
    w.write_record(&table.headers).map_err(fail)?;
    for row in &table.rows {
        w.write_record(row.iter().map(|c| c.render()))
            .map_err(fail)?;
    }
    w.into_inner()
        .map_err(|e| Error::Other(format!("{}.csv: {e}", table.name)))
}

/// Writes `tables` as `<dir>/<name>.csv`, each whole or not at all.
pub fn write_tables(dir: &Path, tables: &[Table]) -> Result<(), Error> {
    let rendered = tables
        .iter()
        .map(|t| Ok((t.name.clone(), to_csv(t)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    std::fs::create_dir_all(dir).map_err(io(
        format!("cannot create the output folder {}", dir.display()),
        true,
    ))?;
    for (name, bytes) in rendered {
        let target = dir.join(format!("{name}.csv"));
        let tmp = dir.join(format!(".{name}.csv.tmp"));
        let write = std::fs::write(&tmp, &bytes).and_then(|_| std::fs::rename(&tmp, &target));
        if let Err(e) = write {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(format!("cannot write {}", target.display()), true)(e));
        }
    }
    Ok(())
}
