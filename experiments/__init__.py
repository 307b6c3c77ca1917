"""Experiments for ubpe: real datasets (`experiments.datasets`), and later the runner, metrics,
statistics and report writer that compare encoders on them."""
