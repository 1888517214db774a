"""`python -m Tensile.TensileLogic LOGIC --architecture 'a;b' --use-bundled-known-bugs --check-all`."""

import sys

from tensile_lite.commands.check_logic import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog="TensileLogic"))
