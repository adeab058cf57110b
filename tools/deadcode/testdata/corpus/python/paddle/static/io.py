"""Saving programs: a legacy-only helper that kept legacy code still calls (blocked), and legacy
code with no twin that blocks nothing (not a finding)."""
from paddle.framework import in_pir_mode


def save(program, path):
    if in_pir_mode():
        return _write_json(program, path)
    else:
        return _write_desc(_to_desc(program), path)


def _write_json(program, path):
    return path


def _write_desc(desc, path):
    return path


def _to_desc(program):
    return program


def save_legacy_checkpoint(program, path):
    return _write_desc(_to_desc(program), path)


def load_legacy_vars(path):
    return path
