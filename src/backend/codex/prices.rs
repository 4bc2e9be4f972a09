//! What a Codex turn costs. Codex reports tokens, never dollars, so Baton prices
//! them: USD per million input, cached input and output tokens, per model
//! (`docs/backends.md`, "Codex").
//!
//! The built-in table holds OpenAI's published API prices for the models it
//! names; a project adds or overrides models in `.baton/prices.toml`:
//!
//! ```toml
//! [models."gpt-5.5"]
//! input = 1.25          # USD per 1M input tokens (uncached)
//! cached_input = 0.125  # USD per 1M cached input tokens
//! output = 10.0         # USD per 1M output tokens (reasoning included)
//! ```
//!
//! A model in neither costs 0, and the backend warns once per run. Names match
//! exactly, in any letter case: a dated or variant name (`gpt-5-pro`) may cost
//! something else entirely, so it is never priced as its prefix.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::backend::codex::thread_usage::TokenTotals;

/// The file, in the project's `.baton` directory.
pub(crate) const PRICES_FILE: &str = "prices.toml";

/// USD per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Price {
    pub(crate) input: f64,
    pub(crate) cached_input: f64,
    pub(crate) output: f64,
}

/// `(model, input, cached input, output)`: OpenAI's API prices in USD per 1M
/// tokens (openai.com/api/pricing), for the models Baton knows a price of. The
/// newer models of Codex 0.169's catalog (`gpt-5.5`, `gpt-6-…`) have no price
/// here: add theirs to `.baton/prices.toml`.
const BUILT_IN: [(&str, f64, f64, f64); 16] = [
    ("gpt-5", 1.25, 0.125, 10.0),
    ("gpt-5-codex", 1.25, 0.125, 10.0),
    ("gpt-5-mini", 0.25, 0.025, 2.0),
    ("gpt-5-nano", 0.05, 0.005, 0.4),
    ("gpt-5.1", 1.25, 0.125, 10.0),
    ("gpt-5.1-codex", 1.25, 0.125, 10.0),
    ("gpt-5.1-codex-max", 1.25, 0.125, 10.0),
    ("gpt-5.1-codex-mini", 0.25, 0.025, 2.0),
    ("gpt-5.2", 1.75, 0.175, 14.0),
    ("gpt-5.2-codex", 1.75, 0.175, 14.0),
    ("codex-mini-latest", 1.5, 0.375, 6.0),
    ("o3", 2.0, 0.5, 8.0),
    ("o4-mini", 1.1, 0.275, 4.4),
    ("gpt-4.1", 2.0, 0.5, 8.0),
    ("gpt-4.1-mini", 0.4, 0.1, 1.6),
    ("gpt-4o", 2.5, 1.25, 10.0),
];

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PriceTable {
    /// Lower-cased model name → price.
    models: BTreeMap<String, Price>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PricesFile {
    #[serde(default)]
    models: BTreeMap<String, Price>,
}

impl Default for PriceTable {
    fn default() -> PriceTable {
        PriceTable::built_in()
    }
}

impl PriceTable {
    pub(crate) fn built_in() -> PriceTable {
        let models = BUILT_IN
            .iter()
            .map(|(model, input, cached_input, output)| {
                (model.to_string(), Price { input: *input, cached_input: *cached_input, output: *output })
            })
            .collect();
        PriceTable { models }
    }

    /// The built-in table with `baton_dir/prices.toml` over it, when there is one.
    pub(crate) fn load(baton_dir: &Path) -> Result<PriceTable, String> {
        let path = baton_dir.join(PRICES_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(PriceTable::built_in()),
            Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
        };
        PriceTable::built_in().with_overrides(&text).map_err(|why| format!("{}: {why}", path.display()))
    }

    fn with_overrides(mut self, text: &str) -> Result<PriceTable, String> {
        let file: PricesFile = toml::from_str(text).map_err(|error| {
            format!(
                "{}; expected `[models.\"NAME\"]` tables with `input`, `cached_input` and `output` in USD per 1M tokens",
                error.message()
            )
        })?;
        for (model, price) in file.models {
            for (key, value) in [("input", price.input), ("cached_input", price.cached_input), ("output", price.output)]
            {
                if !value.is_finite() || value < 0.0 {
                    return Err(format!("`models.\"{model}\".{key}` must be a price of 0 or more, found {value}"));
                }
            }
            self.models.insert(model.trim().to_ascii_lowercase(), price);
        }
        Ok(self)
    }

    pub(crate) fn price(&self, model: &str) -> Option<Price> {
        self.models.get(&model.trim().to_ascii_lowercase()).copied()
    }

    /// What `tokens` cost on `model`; `None` when the model has no price.
    pub(crate) fn cost(&self, model: &str, tokens: TokenTotals) -> Option<f64> {
        let price = self.price(model)?;
        let cached = tokens.cached_input.min(tokens.input);
        let uncached = tokens.input - cached;
        Some(
            (uncached as f64 * price.input + cached as f64 * price.cached_input + tokens.output as f64 * price.output)
                / 1_000_000.0,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_input_is_priced_apart_from_the_rest() {
        let table = PriceTable::built_in();
        let tokens = TokenTotals { input: 1_000_000, cached_input: 400_000, output: 100_000 };
        // 600k × 1.25 + 400k × 0.125 + 100k × 10, per million.
        let cost = table.cost("GPT-5-Codex", tokens).expect("priced");
        assert!((cost - (0.75 + 0.05 + 1.0)).abs() < 1e-12, "{cost}");
        assert_eq!(table.cost("gpt-5-pro", tokens), None, "never priced as its prefix");
    }

    #[test]
    fn the_projects_file_adds_and_overrides_models() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(PRICES_FILE),
            "[models.\"gpt-6-sol\"]\ninput = 2.0\ncached_input = 0.2\noutput = 16.0\n\n\
             [models.\"gpt-5\"]\ninput = 1.0\ncached_input = 0.1\noutput = 8.0\n",
        )
        .unwrap();
        let table = PriceTable::load(dir.path()).expect("valid");
        assert_eq!(table.price("gpt-6-sol"), Some(Price { input: 2.0, cached_input: 0.2, output: 16.0 }));
        assert_eq!(table.price("gpt-5"), Some(Price { input: 1.0, cached_input: 0.1, output: 8.0 }));
        assert_eq!(table.price("gpt-5-mini"), PriceTable::built_in().price("gpt-5-mini"));
    }

    #[test]
    fn no_file_is_the_built_in_table() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(PriceTable::load(dir.path()), Ok(PriceTable::built_in()));
    }

    #[test]
    fn a_bad_prices_file_names_itself_and_the_expected_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(PRICES_FILE);
        std::fs::write(&path, "[models.\"gpt-5\"]\ninput = 1.0\noutput = 8.0\n").unwrap();
        let error = PriceTable::load(dir.path()).unwrap_err();
        assert_eq!(
            error,
            format!(
                "{}: missing field `cached_input`; expected `[models.\"NAME\"]` tables with `input`, `cached_input` \
                 and `output` in USD per 1M tokens",
                path.display()
            )
        );
        std::fs::write(&path, "[models.\"gpt-5\"]\ninput = -1.0\ncached_input = 0.0\noutput = 8.0\n").unwrap();
        assert_eq!(
            PriceTable::load(dir.path()).unwrap_err(),
            format!("{}: `models.\"gpt-5\".input` must be a price of 0 or more, found -1", path.display())
        );
    }
}
