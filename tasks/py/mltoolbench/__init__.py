"""MLToolBench-style fault-injected task suite: procedural micro-scale templates,
each a data source, a starter train.py and a grading partition (docs/mltoolbench.md)."""
