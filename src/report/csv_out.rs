//! CSV export: a table rendered as CSV bytes, in memory. The files are put in
//! place, whole or not at all, by [`super::folder`].

use super::Table;
use crate::error::Error;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Cell;

    #[test]
    fn a_table_renders_as_quoted_csv() {
        let mut t = Table::new("one", "t", vec!["a".into(), "b".into()]);
        t.push(vec![Cell::Int(1), Cell::Text("x,y".into())]);
        assert_eq!(to_csv(&t).unwrap(), b"a,b\n1,\"x,y\"\n");
    }
}
