"""Where a fresh Jupyter kernel's first Run All spends time before any lesson work (GPU machine)."""

import time

t0 = time.perf_counter()
marks = []


def mark(what):
    marks.append((what, time.perf_counter()))


import numpy  # noqa: E402,F401

mark("import numpy")
import cupy  # noqa: E402

mark("import cupy")
cupy.cuda.runtime.getDeviceCount()
mark("CUDA runtime init (getDeviceCount)")
cupy.zeros(1).sum().get()
mark("first allocation and kernel (context, CuPy's elementwise compile cache)")
import cuda.bindings.driver  # noqa: E402,F401

mark("import cuda.bindings.driver")
import matplotlib.figure  # noqa: E402,F401

mark("import matplotlib.figure")
import ipywidgets  # noqa: E402,F401

mark("import ipywidgets")
import pygments.lexers  # noqa: E402,F401

mark("import pygments")
import course.page  # noqa: E402,F401

mark("import course.page (rest)")
prev = t0
for what, t in marks:
    print(f"{t - prev:7.3f} s  {what}")
    prev = t
print(f"{prev - t0:7.3f} s  total")
