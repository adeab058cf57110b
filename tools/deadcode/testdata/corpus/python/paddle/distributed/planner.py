"""Planning: one twin per naming rule ({}_in_old_ir, {}_pir, {}_in_pir)."""


def plan_in_old_ir(program):
    return _legacy_cost(program)


def plan_in_pir(program):
    return program


def split(program):
    return [program]


def split_in_pir(program):
    return [program, program]


def lower(program):
    return program


def lower_pir(program):
    return program


def _legacy_cost(program):
    return _legacy_cost_table(program)


def _legacy_cost_table(program):
    return {}
