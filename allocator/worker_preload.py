"""Imported by the allocation workers' fork server before it forks any worker (WorkerPool): it runs
the gallery's examples once, so what the engine builds on first use (compiled CEL, tables, lazy
imports) is there in every worker forked after, and a new worker's first run of a lesson costs what
its later runs do (about 1-6 ms of CPU instead of 30-270 ms). No Django."""
from allocator.worker import warm_engine

warm_engine()
