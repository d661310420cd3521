"""TypeScript/JavaScript rules, one module per check; importing this package registers them all."""

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
    importlib.import_module(f"{__name__}.{_info.name}")
