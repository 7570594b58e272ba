//! The report: the tables (`crate::table`) as CSV files, the digest, the HTML
//! page and the JSON document, and the folder they are written to.

mod csv_out;
pub mod digest;
pub mod folder;
pub mod html;
pub mod json;
pub mod target;

pub use crate::format::format_number;
pub use crate::table::{Cell, Scope, TEXT_DECIMALS, Table, WIDTH, wrap};
pub use csv_out::to_csv;
pub use folder::{Content, Folder};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_figures_are_scientific_and_overflows_are_named() {
        let mut t = Table::new("t", "T", vec!["a".into(), "b".into()]);
        t.push(vec![Cell::Num(1e308), Cell::Num(f64::INFINITY)]);
        t.push(vec![Cell::Num(1.5), Cell::Num(2.0)]);
        let text = t.render_text();
        assert!(text.contains("1e308"), "{text}");
        assert!(text.contains("not a finite number"), "{text}");
        assert!(text.trim_end().ends_with(": b"), "{text}");
        assert_eq!(
            String::from_utf8(to_csv(&t).unwrap()).unwrap(),
            "a,b\n1e308,\n1.50,2\n"
        );
    }
}
