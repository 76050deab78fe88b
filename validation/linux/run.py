"""The Linux validation under its old name: ``python validation/linux/run.py ARGS`` is
``tcplab validate linux ARGS`` (the harness is ``python/tcplab/validate_linux/``)."""

from __future__ import annotations

import sys

from tcplab.validate_linux.run import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog="validation/linux/run.py"))
