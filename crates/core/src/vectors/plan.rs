//! What to write to a vector store, decided here and carried out by the
//! binding: store writes grouped into units that keep files whole.

/// Groups the documents of files into store writes of at most `max`
/// documents, keeping each file's documents in one write where it fits (a
/// file with more than `max` documents spans several). `files` gives each
/// file's document count; the result lists `(file, document index)`.
pub fn write_units(files: &[(usize, usize)], max: usize) -> Vec<Vec<(usize, usize)>> {
    let max = max.max(1);
    let mut units = Vec::new();
    let mut unit: Vec<(usize, usize)> = Vec::new();
    for &(file, count) in files {
        if !unit.is_empty() && unit.len() + count > max {
            units.push(std::mem::take(&mut unit));
        }
        for j in 0..count {
            if unit.len() == max {
                units.push(std::mem::take(&mut unit));
            }
            unit.push((file, j));
        }
    }
    if !unit.is_empty() {
        units.push(unit);
    }
    units
}

#[cfg(test)]
mod tests {
    #[test]
    fn write_units_keep_files_whole_where_they_fit() {
        let units = super::write_units(&[(0, 2), (1, 2), (2, 3), (3, 7), (4, 1)], 4);
        let shape: Vec<Vec<(usize, usize)>> = units;
        assert_eq!(shape[0], [(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(shape[1], [(2, 0), (2, 1), (2, 2)]);
        assert_eq!(shape[2], [(3, 0), (3, 1), (3, 2), (3, 3)]);
        assert_eq!(shape[3], [(3, 4), (3, 5), (3, 6), (4, 0)]);
        assert!(super::write_units(&[], 100).is_empty());
    }
}
