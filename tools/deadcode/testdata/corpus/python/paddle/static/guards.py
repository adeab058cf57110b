"""Every guard shape the front end knows, each selecting a new-IR and a legacy call."""
import paddle
from paddle import framework
from paddle.framework import (
    get_flags,
    in_dynamic_mode,
    in_dynamic_or_pir_mode,
    in_pir_mode,
    use_pir_api,
)

FLAGS_enable_pir_in_executor = False


def build_with_call():
    if in_pir_mode():
        return _new_build()
    else:
        return _old_build()


def build_with_dotted_call():
    if framework.in_pir_mode():
        return _new_build()
    else:
        return _old_build()


def build_with_elif():
    if in_dynamic_mode():
        return None
    elif use_pir_api():
        return _new_build()
    else:
        return _old_build()


def build_negated():
    if not in_pir_mode():
        return _old_build()
    else:
        return _new_build()


def build_with_flag_read():
    if get_flags("FLAGS_enable_pir_api")["FLAGS_enable_pir_api"]:
        return _new_build()
    else:
        return _old_build()


def build_with_paddle_flags():
    if paddle.get_flags(["FLAGS_enable_pir_api"])["FLAGS_enable_pir_api"]:
        return _new_build()
    return _old_build()


def build_with_executor_flag():
    if FLAGS_enable_pir_in_executor:
        return _new_build()
    else:
        return _old_build()


def build_dynamic_or_pir():
    if in_dynamic_or_pir_mode():
        return _new_build()
    else:
        return _old_build()


def build_with_variable():
    use_pir = in_pir_mode()
    if use_pir:
        return _new_build()
    else:
        return _old_build()


def build_ternary():
    return _new_build() if in_pir_mode() else _old_build()


def _new_build():
    return "pir"


def _old_build():
    return _emit_desc()


def _emit_desc():
    return "desc"


# Negative controls: none of these is a finding.


def only_raises_on_legacy():
    if in_pir_mode():
        return _new_build()
    else:
        raise NotImplementedError("legacy IR is not supported here")


def pir_without_else():
    if in_pir_mode():
        _new_build()
    return None


def compound_condition(flag):
    if in_pir_mode() and flag:
        return _new_build()
    else:
        return _shared_helper()


def _shared_helper():
    return 0
