from hpulint.cli import entry

entry()
