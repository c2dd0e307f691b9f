"""Put on PYTHONPATH by the kill test only: arms `kill_points` in an unmodified
`python -m metis_memory` when METIS_KILL_AT names a point (METIS_KILL_IN: the .metis
directory)."""

import os
import sys

if os.environ.get("METIS_KILL_AT"):
    # tests/ (three levels up), so that `support` imports as in the tests themselves.
    here = os.path.abspath(__file__)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(here))))
    from support.kill_points import arm

    arm(os.environ["METIS_KILL_AT"], os.environ["METIS_KILL_IN"])
