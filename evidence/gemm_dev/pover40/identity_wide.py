"""cubin_identity.py's day87 check for the four builds it does not list (issue 40's larger promoting
tiles, 192 x 128 and 128 x 192, clusters 2 and 1), so that every existing build of gemm8_fp8.cu is
compared byte for byte (nvcc and NVRTC) when GEMM_PROMOTE_OVERLAP is added.

Usage (no GPU): PYTHONPATH=. python evidence/gemm_dev/pover40/identity_wide.py OLD_KERNEL_FILE
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cubin_identity  # noqa: E402  (evidence/gemm_dev/cubin_identity.py)

_P = {"GEMM_BN": 128, "GEMM_PROMOTE": 1}
cubin_identity.BUILDS["day87"] = [
    {**_P, "GEMM_BM": 192},
    {**_P, "GEMM_BM": 192, "GEMM_CLUSTER": 1},
    {"GEMM_BN": 192, "GEMM_PROMOTE": 1},
    {"GEMM_BN": 192, "GEMM_PROMOTE": 1, "GEMM_CLUSTER": 1},
]

if __name__ == "__main__":
    sys.argv = [sys.argv[0], sys.argv[1], "day87"]
    sys.exit(cubin_identity.main())
