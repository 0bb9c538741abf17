"""Every function of the selector environment, registered in `FUNCTIONS`: the base library first, then
the Kubernetes libraries kept in modules of their own (some extend functions of the base one)."""
from . import library
from . import lib_ip, lib_quantity, lib_semver, lib_time, lib_url  # noqa: F401  each registers its functions

FUNCTIONS = library.FUNCTIONS
