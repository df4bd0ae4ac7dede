"""python -m mltoolbench manifest | build ID DEST [--runs N] | check ID [--runs N]"""

import os

# One thread: the same seed must give the same baseline bytes on any machine load.
for _v in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ[_v] = '1'

from .cli import main  # noqa: E402

main()
