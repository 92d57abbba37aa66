"""Imported by every benchmark script before numpy: numpy's bundled OpenBLAS starts a worker per
core that busy-waits for a while (seen as 6% of a 1-thread gatherkit run's samples, on the core a
2-thread run needs). The benchmarks never multiply matrices, so OpenBLAS gets one thread and
starts none. Must run before numpy is first imported; a value the caller set is kept."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
