#!/usr/bin/env bash
# Runs the CUDA backend's test binary and checks how its GPU tests (suites named Gpu*) ended:
# where no GPU is visible every one must report skipped with the reason and none passed; where one
# is visible every one must have passed. A skipped check is never counted as a passed one.
set -u
bin="$1"
out="$("$bin" --gtest_filter='Gpu*' 2>&1)"
rc=$?
total=$("$bin" --gtest_filter='Gpu*' --gtest_list_tests | grep -c '^  ')
skipped=$(grep -c '^\[  SKIPPED \] Gpu.* ms)$' <<<"$out")
passed=$(grep -c '^\[       OK \] Gpu' <<<"$out")
if [[ $rc -ne 0 ]]; then
  echo "$out"
  echo "FAIL: $bin exited $rc"
  exit 1
fi
if grep -q 'no GPU visible:' <<<"$out"; then
  if [[ $skipped -eq $total && $passed -eq 0 && $total -gt 0 ]]; then
    echo "ok: no GPU visible; all $total GPU tests reported skipped"
    exit 0
  fi
  echo "$out"
  echo "FAIL: no GPU visible but $passed of $total GPU tests passed and $skipped skipped"
  exit 1
fi
if [[ $passed -eq $total && $skipped -eq 0 ]]; then
  echo "ok: all $total GPU tests passed on a GPU"
  exit 0
fi
echo "$out"
echo "FAIL: $passed of $total GPU tests passed, $skipped skipped"
exit 1
