//! Tables with nothing in them: a table of figures per compare row whose
//! figures are empty in every row (budget shares of a scenario without fixed
//! deadline budgets) is left off the page, and one line under the page's
//! tables names it. Its CSV file is written all the same.

use super::Section;
use crate::table::{Cell, Scope, Table};

/// Whether `t` has rows and every cell of its figure columns (those after
/// its compare-axis and key columns) is empty. A table across compare rows,
/// whose columns do not say which are figures, is always shown.
pub(super) fn empty_in_every_row(t: &Table) -> bool {
    let Scope::PerCompareRow { axes, key } = t.scope else {
        return false;
    };
    let figures = axes + key..t.headers.len();
    !t.rows.is_empty()
        && !figures.is_empty()
        && t.rows
            .iter()
            .all(|r| r[figures.clone()].iter().all(|c| *c == Cell::Empty))
}

/// The sections to show, and the names of those left out
/// ("Budget shares (shares.csv)": the title up to its colon, and the file).
/// A section with a chart is always shown.
pub(super) fn left_out(sections: Vec<Section<'_>>) -> (Vec<Section<'_>>, Vec<String>) {
    let (out, shown): (Vec<Section>, Vec<Section>) = sections
        .into_iter()
        .partition(|s| s.charts.is_empty() && empty_in_every_row(&s.table));
    let names = out
        .iter()
        .map(|s| {
            let title = s.table.title.split(':').next().unwrap_or_default().trim();
            if title.is_empty() {
                s.file.clone()
            } else {
                format!("{title} ({})", s.file)
            }
        })
        .collect();
    (shown, names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn shares(cells: &[Cell]) -> Table {
        let headers = ["variant", "branch", "dependency", "share_ms"];
        let mut t = Table::per_compare_row(
            "shares",
            "Budget shares: the most each call may take",
            headers.map(String::from).to_vec(),
            1,
            2,
        );
        for c in cells {
            t.push(vec!["a".into(), "main".into(), "db".into(), c.clone()]);
        }
        t
    }

    #[test]
    fn a_table_empty_in_every_figure_is_left_out_and_named() {
        assert!(empty_in_every_row(&shares(&[Cell::Empty, Cell::Empty])));
        assert!(!empty_in_every_row(&shares(&[Cell::Empty, Cell::Int(5)])));
        assert!(!empty_in_every_row(&shares(&[])), "no rows: shown as is");
        let mut across = shares(&[Cell::Empty]);
        across.scope = Scope::AcrossRows;
        assert!(!empty_in_every_row(&across));
        let empty = shares(&[Cell::Empty]);
        let full = shares(&[Cell::Num(2.5)]);
        let section = |t: &Table| Section {
            table: Cow::Owned(t.clone()),
            file: format!("{}.csv", t.name),
            charts: Vec::new(),
            grid: false,
        };
        let (shown, names) = left_out(vec![section(&empty), section(&full)]);
        assert_eq!(shown.len(), 1);
        assert_eq!(names, ["Budget shares (shares.csv)"]);
    }
}
