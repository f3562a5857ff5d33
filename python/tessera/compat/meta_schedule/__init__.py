"""``tvm.meta_schedule`` under ``tessera.compat``: only ``tvm.meta_schedule.testing.te_workload``,
the TE workloads TVM's schedule tests build their programs from. tessera has no meta-schedule
tuner (its tuner is :mod:`tessera.tune`); any other name of ``tvm.meta_schedule`` is an
ImportError.
"""

__all__ = ["testing"]
