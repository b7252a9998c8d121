//! The rules an embedder's answers are held to, and how texts are grouped
//! for it: Mastra's batch size rule, one vector per text, one dimension,
//! finite numbers, and group labels that say which texts a failure was about.

/// Mastra's group size when `maxBatchSize` is missing or not a finite number >= 1.
pub const DEFAULT_MAX_BATCH: usize = 256;

/// Texts per call of a batch embedder: `maxBatchSize` floored when it is a
/// finite number >= 1, else `DEFAULT_MAX_BATCH`.
pub fn batch_size(max_batch_size: Option<f64>) -> usize {
    max_batch_size.filter(|v| v.is_finite() && *v >= 1.0).map_or(DEFAULT_MAX_BATCH, |v| v.floor() as usize)
}

/// How errors name group `i` (0-based) of `groups`, of `len` texts from
/// text `first` (1-based) on.
pub fn group_label(i: usize, groups: usize, first: usize, len: usize) -> String {
    format!("batch {} of {groups}, texts {first}-{}", i + 1, first + len - 1)
}

/// What was wrong with an embedder's answer; `label` names the group.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmbeddingError {
    #[error("Batch embedder returned no embedding for input text ({label}).")]
    NoEmbedding { label: String },
    #[error("Batch embedder returned {got} embeddings for {want} inputs ({label}).")]
    WrongCount { got: usize, want: usize, label: String },
    #[error("Embedder returned an empty vector ({label}).")]
    Empty { label: String },
    #[error("Embedder returned vectors of different dimensions ({label}): vector {at} has {got}, vector 1 has {dim}.")]
    MixedDimensions { at: usize, got: usize, dim: usize, label: String },
    #[error("Embedder returned a non-finite number ({label}): vector {at}, element {element} is {}.", js_number(*value as f64))]
    NonFinite { at: usize, element: usize, value: f32, label: String },
}

/// A number as JavaScript writes it in a message: `Infinity`, `1e+39`
/// (Rust writes `inf`, `1e39`).
pub fn js_number(x: f64) -> String {
    match x {
        f64::INFINITY => "Infinity".into(),
        f64::NEG_INFINITY => "-Infinity".into(),
        // JavaScript's exponent form, for the magnitudes it uses it for.
        x if x != 0.0 && (x.abs() >= 1e21 || x.abs() < 1e-6) => {
            let e = format!("{x:e}");
            if e.contains("e-") {
                e
            } else {
                e.replacen('e', "e+", 1)
            }
        }
        x => x.to_string(),
    }
}

/// A batch embedder's answer has one vector per text.
pub fn check_count(got: usize, want: usize, label: &str) -> Result<(), EmbeddingError> {
    match (got, want) {
        (g, w) if g == w => Ok(()),
        (0, 1) => Err(EmbeddingError::NoEmbedding { label: label.into() }),
        _ => Err(EmbeddingError::WrongCount { got, want, label: label.into() }),
    }
}

/// One dimension throughout, finite numbers only.
pub fn check_vectors(vectors: &[Vec<f32>], label: &str) -> Result<(), EmbeddingError> {
    let Some(dim) = vectors.first().map(Vec::len) else { return Ok(()) };
    if dim == 0 {
        return Err(EmbeddingError::Empty { label: label.into() });
    }
    for (i, v) in vectors.iter().enumerate() {
        if v.len() != dim {
            return Err(EmbeddingError::MixedDimensions { at: i + 1, got: v.len(), dim, label: label.into() });
        }
        if let Some(j) = v.iter().position(|x| !x.is_finite()) {
            return Err(EmbeddingError::NonFinite { at: i + 1, element: j, value: v[j], label: label.into() });
        }
    }
    Ok(())
}

/// How close the canary's vector must be to the saved one for the
/// embedder to count as the same (remote embedders are not bit-exact from
/// one call to the next; another model gives an unrelated vector).
pub const SAME_EMBEDDER_COSINE: f64 = 0.999;

/// Whether the embedder `now` is the one that made the `saved` vectors:
/// the same `embedderId` when one was given, else canary vectors of the
/// same dimension and a cosine of at least `SAME_EMBEDDER_COSINE`.
pub fn same_embedder(saved: &EmbedderIdentity, now: &EmbedderIdentity) -> bool {
    if saved.id.is_some() || now.id.is_some() {
        return saved.id == now.id;
    }
    let (a, b) = (&saved.canary, &now.canary);
    if a.is_empty() || a.len() != b.len() {
        return false;
    }
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let n = norm(a) * norm(b);
    n > 0.0 && dot / n >= SAME_EMBEDDER_COSINE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_javascript_writes_them() {
        let cases = [(f64::INFINITY, "Infinity"), (f64::NEG_INFINITY, "-Infinity"), (f64::NAN, "NaN"), (1e39, "1e+39")];
        for (x, js) in cases.into_iter().chain([(-3.5e38, "-3.5e+38"), (1.5e-7, "1.5e-7"), (0.25, "0.25"), (0.0, "0")])
        {
            assert_eq!(js_number(x), js);
        }
    }

    #[test]
    fn rules_and_messages() {
        assert_eq!(batch_size(None), 256);
        assert_eq!(batch_size(Some(0.5)), 256);
        assert_eq!(batch_size(Some(f64::INFINITY)), 256);
        assert_eq!(batch_size(Some(7.9)), 7);
        assert_eq!(group_label(0, 4, 1, 3), "batch 1 of 4, texts 1-3");
        assert_eq!(
            check_count(2, 3, "b").unwrap_err().to_string(),
            "Batch embedder returned 2 embeddings for 3 inputs (b)."
        );
        assert_eq!(
            check_count(0, 1, "b").unwrap_err().to_string(),
            "Batch embedder returned no embedding for input text (b)."
        );
        assert!(check_count(3, 3, "b").is_ok());
        let mixed = check_vectors(&[vec![1.0, 2.0], vec![1.0]], "x").unwrap_err().to_string();
        assert_eq!(mixed, "Embedder returned vectors of different dimensions (x): vector 2 has 1, vector 1 has 2.");
        let nan = check_vectors(&[vec![1.0, f32::NAN]], "x").unwrap_err().to_string();
        assert_eq!(nan, "Embedder returned a non-finite number (x): vector 1, element 1 is NaN.");
        assert!(check_vectors(&[vec![]], "x").is_err());
        assert!(check_vectors(&[], "x").is_ok());
    }
}

/// Which embedder made the vectors a snapshot refers to (see
/// `vectors::embedding::same_embedder`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EmbedderIdentity {
    /// The `embedderId` option, when given.
    pub id: Option<String>,
    /// The canary text's vector, when no id was given.
    pub canary: Vec<f32>,
}
