"""`python -m bootlab` runs the command line."""

import sys

from bootlab.cli import main

sys.exit(main())
