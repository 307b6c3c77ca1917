"""Shared test settings: hypothesis keeps no example database (tests never write into the
working tree) and prints no warnings about slow data generation on a busy 2-core machine."""

import os
import tempfile

# hypothesis writes failing-example patches under its storage directory: keep that out of the
# working tree (set before hypothesis first needs it).
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", tempfile.mkdtemp(prefix="ubpe-hypothesis-"))

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ubpe", database=None, suppress_health_check=[HealthCheck.too_slow], deadline=None
)
settings.load_profile("ubpe")
