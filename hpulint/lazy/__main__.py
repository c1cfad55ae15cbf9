"""``python -m hpulint.lazy SCRIPT [-- ARGS]``: the verifier without the main hpulint CLI."""
import sys

from .cli import main

sys.exit(main())
