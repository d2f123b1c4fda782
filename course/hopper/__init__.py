"""PTX ISA and Hopper hardware facts as code: ``wgmma`` (descriptors, fragments, swizzles),
``tensormap`` (the TMA descriptor's encoding rules), ``smem_budget`` (shared memory per stage)."""
