"""``python -m tcplab`` is the ``tcplab`` command."""

import sys

from tcplab.cli import main

sys.exit(main())
