"""tensile-lite's stand-in for the `Tensile` package hipBLASLt 7.x runs (see `tensile-lite rocm7-root`).

Only the entry points 7.x's CMake invokes exist here; each hands its command line to tensile_lite.
"""

import _tensile_lite_path  # noqa: F401  (puts tensile_lite on sys.path first)
