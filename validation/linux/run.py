"""The Linux validation under its old name: ``python validation/linux/run.py ARGS`` is
``tcplab validate linux ARGS`` (the harness is ``python/tcplab/real/validate/``)."""

from __future__ import annotations

import sys

from tcplab.real.validate.run import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog="validation/linux/run.py"))
