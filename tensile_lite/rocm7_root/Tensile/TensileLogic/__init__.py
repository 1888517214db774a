"""7.x's logic validation step (`Tensile/bin/TensileLogic`, `python -m Tensile.TensileLogic`):
tensile-lite's `check-logic`. known_bugs.yaml beside this file is the list --use-bundled-known-bugs reads."""
