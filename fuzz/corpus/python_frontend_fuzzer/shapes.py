@register_pass("fuse")
def f(x, cb=lambda v: v):
    def inner():
        return super().g(x)
    if FLAGS_enable_pir_in_executor:
        pass
    elif not use_pir_api():
        raise NotImplementedError("old IR")
    else:
        [h(i) for i in x]
    return inner
