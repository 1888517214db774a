"""tensile-lite's stand-in for the `tensilelite` package newer hipBLASLt CMake runs
(`python -m tensilelite create-library|logic`, see __main__.py and `tensile-lite rocm7-root`)."""

import _tensile_lite_path  # noqa: F401  (puts tensile_lite on sys.path first)
