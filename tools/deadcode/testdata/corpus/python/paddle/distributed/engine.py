"""The engine: twin methods in one class, guarded by an attribute and by early returns."""
from paddle.framework import in_pir_mode, use_pir_api

from . import planner


class Engine:
    def __init__(self, model):
        self._model = model
        self._in_pir_mode = use_pir_api()

    def prepare(self):
        if self._in_pir_mode:
            return self._pir_parse_program()
        else:
            return self.parse_program()

    def parse_program(self):
        return planner.plan_in_old_ir(self._model)

    def _pir_parse_program(self):
        return planner.plan_in_pir(self._model)

    def _create_job_list(self):
        return [self._model]

    def _pir_create_job_list(self):
        return [self._model, self._model]

    def run(self):
        if in_pir_mode():
            jobs = self._pir_create_job_list()
            return planner.lower_pir(jobs)
        jobs = self._create_job_list()
        return planner.lower(jobs)

    def shard(self):
        if not in_pir_mode():
            parts = planner.split(self._model)
            return parts
        return planner.split_in_pir(self._model)
