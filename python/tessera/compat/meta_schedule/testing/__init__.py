"""``tvm.meta_schedule.testing`` under ``tessera.compat``: the TE workloads (``te_workload``)."""

__all__ = ["te_workload"]
