"""Experiments for ubpe: real datasets (`experiments.datasets`), the runner (`runner`, driven
by TOML configs in `configs/`), intrinsic metrics (`metrics`), paired statistics (`stats`)
and the report with plots (`report`, `plots`). ``python -m experiments`` runs the default
experiment into ``results/default/``."""
