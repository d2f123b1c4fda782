"""The toolchain and the machine: compile a lesson's kernel, run and check it, say what this machine can do.

``gate`` (what this machine can run), ``compile`` (CuPy/NVRTC, the GPU-less
NVRTC check), ``host`` (run and check: one contract, one result type),
``ptxas`` (the register and shared memory report), ``variants`` (a kernel's
source with parts replaced), ``gpus``, ``evidence`` and ``provenance``
(what a real GPU recorded, and where from), ``lcg`` and ``nvtx``.

Everything here takes the ``Lesson`` it is handed and never looks one up by
id: the lesson registry (``course.lessons``) sits above this room.
"""
