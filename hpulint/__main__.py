import sys

from hpulint.cli import main

sys.exit(main())
