from ..framework import in_pir_mode
import paddle


class Executor(object):
    def run(self, program):
        use_pir = in_pir_mode()
        if use_pir:
            return self._run_pir(program)
        else:
            return self._run_legacy(program)

    def close(self):
        if not paddle.framework.in_pir_mode():
            self._close_legacy()
            return None
        y = self.a if get_flags("FLAGS_enable_pir_api")["FLAGS_enable_pir_api"] else self.b
        return y
