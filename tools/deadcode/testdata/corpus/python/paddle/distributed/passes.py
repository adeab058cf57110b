"""Pass classes: the stemless twin rules, and same-named methods in unrelated classes."""
from paddle.framework import in_pir_mode


class PipelinePass:
    def apply(self, program):
        if in_pir_mode():
            self._apply_pir_single_impl(program)
            return self._partial_pir_programs(program)
        self._apply_single_impl(program)
        return self._partial_programs(program)

    def _apply_single_impl(self, program):
        pass

    def _apply_pir_single_impl(self, program):
        pass

    def _partial_programs(self, program):
        return [program]

    def _partial_pir_programs(self, program):
        return [program]


class Scheduler:
    def init(self):
        self.jobs = []

    def init_pir(self):
        self.jobs = [None]


class Trainer:
    def step(self):
        return 1


class Runner:
    def _pir_step(self):
        return 2
