#!/bin/sh
# check_gemm_driver_calls.sh — the blocked GEMM driver (src/backends/cpu/kernels/f32-gemm-driver.c)
# calls only the kit it is given and the C library: no step-level code (the GEMM step is
# f32-gemm-step.c, the parallel split f32-gemm-parallel.c, Strassen f32-gemm-strassen.c).
# Arguments: the object files of the generic kernel layer ($<TARGET_OBJECTS:...>); the driver's
# undefined symbols must not name any kiln function. Exit 0 ok, 1 a kiln call, 77 no nm.
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm (binutils) is not installed"; exit 77; }
driver=
for obj in "$@"; do
    case "$obj" in */f32-gemm-driver.c.o | */f32-gemm-driver.c.obj) driver=$obj ;; esac
done
[ -n "$driver" ] || { echo "FAIL: no f32-gemm-driver object among the arguments" >&2; exit 1; }
calls=$(nm -u "$driver" | awk '{print $NF}' | grep '^kiln_')
if [ -n "$calls" ]; then
    echo "FAIL: f32-gemm-driver.c calls into other kiln code:" $calls >&2
    exit 1
fi
echo "ok: f32-gemm-driver.c calls only the kit and the C library"
