"""Workers: RQ jobs, season scheduling, sandboxes, the results store (to come)."""
