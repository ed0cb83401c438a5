"""The check that grpcio and protobuf are installed, run first by `import holdshelf`.

Without it a missing grpcio surfaces as a bare "No module named 'grpc'"
from deep inside the package, which names a module, not what to install.
"""

from __future__ import annotations

import importlib

# The modules the package imports, and the distributions that provide them.
REQUIRED = {"grpc": "grpcio", "google.protobuf": "protobuf"}


def check() -> None:
    """Raises ModuleNotFoundError naming the distributions to install, if any is missing."""
    missing: dict[str, str] = {}
    for module, distribution in REQUIRED.items():
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            # Only the module itself: a broken installation of it keeps its own error.
            if error.name is None or not module.startswith(error.name):
                raise
            missing[module] = distribution
    if missing:
        names = " ".join(missing.values())
        raise ModuleNotFoundError(
            f"holdshelf needs {' and '.join(missing.values())}, not installed: pip install {names} "
            "(on Debian: apt-get install python3-grpcio python3-protobuf, in a venv made with --system-site-packages)",
            name=next(iter(missing)),
        )
