"""netnoise: reproducible experiments on network interference between HPC jobs."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("netnoise")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.1.0"
