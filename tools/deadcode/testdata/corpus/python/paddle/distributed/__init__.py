"""Distributed training: the engine, planner and passes (legacy and new IR side by side)."""
