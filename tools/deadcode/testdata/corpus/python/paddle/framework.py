"""The guard predicates (stand-ins for paddle.framework's)."""
import os


def in_pir_mode():
    return os.environ.get("FLAGS_enable_pir_api") == "1"


def use_pir_api():
    return in_pir_mode()


def in_dynamic_or_pir_mode():
    return False


def in_dynamic_mode():
    return False


def get_flags(names):
    return {"FLAGS_enable_pir_api": in_pir_mode()}
