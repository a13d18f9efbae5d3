#!/bin/bash
# GPU pass: the carried site is installed into the image's own environment (the grading worker
# runs `python -I` in a sandbox that hides /tmp and PYTHONPATH), then
#   bash tools/gpu/carried-run.sh          the README's first command with 12 xdist workers (per
#                                          file) and both nbval editions, on CUDA;
#   bash tools/gpu/carried-run.sh scaling  Dask's scaling on the machine's CPU cores alone
#                                          (bench_scale.py --scaling: 1, 2, 4 and 8 workers,
#                                          every score checked; about 5 minutes on 16 cores).
# Run them in two calls, not side by side: the tests would take the cores being measured.
S=$(date +%s); OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/bw
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
PY=$(command -v python3); BIN=$(dirname "$(readlink -f "$PY")"); BIN=$(dirname "$PY")
SP=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
PREFIX=$(python3 -c 'import sys; print(sys.prefix)')
tar -xJf .gpu/site.tar.xz -C "$SP"
for f in "$SP"/bin/*; do sed -i "1s|^#!.*python.*|#!$PY|" "$f"; chmod +x "$f"; mv -n "$f" "$BIN/"; done
[ -d "$SP/share" ] && cp -r --update=none "$SP/share" "$PREFIX/"
printf '#!%s\nimport sys\nfrom gather_course.cli import main\nsys.exit(main())\n' "$PY" > "$BIN/gather-course"; chmod +x "$BIN/gather-course"
export GATHER_COURSE_REQUIRE_CUDA=1 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
unset GATHER_COURSE_DEVICE PYTHONPATH
for d in .gpu/bubblewrap_*.deb; do [ -f "$d" ] && dpkg -x "$d" /tmp/bw; done
[ -x /tmp/bw/usr/bin/bwrap ] && cp /tmp/bw/usr/bin/bwrap /usr/local/bin/ && bwrap --ro-bind / / --dev /dev --proc /proc true && echo "bwrap ok" >> "$OUT/gpu.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >> "$OUT/gpu.txt" 2>&1
python3 -c "import torch,gather_course; print('torch', torch.__version__, torch.version.cuda, torch.cuda.get_device_name(), gather_course.default_device(), gather_course.__file__)" >> "$OUT/gpu.txt" 2>&1
if [ "${1:-}" = scaling ]; then
  unset GATHER_COURSE_REQUIRE_CUDA
  timeout "${LIMIT:-540}" python3 benchmarks/bench_scale.py --scaling --students "${STUDENTS:-500}" > "$OUT/scaling.txt" 2>&1
  echo "rc=$? $(( $(date +%s)-S ))s" >> "$OUT/scaling.txt"; nproc >> "$OUT/gpu.txt"; cat "$OUT/scaling.txt" "$OUT/gpu.txt"
  exit 0
fi
L=${LIMIT:-220}
( timeout $L python3 -m pytest tests -n 12 --dist loadfile -v -rfE --tb=short --timeout 60 > "$OUT/tests.log" 2>&1; echo "rc=$? $(( $(date +%s)-S ))s" >> "$OUT/tests.log" ) &
( timeout $L python3 -m pytest notebooks solutions > "$OUT/nb_en.log" 2>&1; echo "rc=$? $(( $(date +%s)-S ))s" >> "$OUT/nb_en.log" ) &
( timeout $L python3 -m pytest zh/notebooks zh/solutions > "$OUT/nb_zh.log" 2>&1; echo "rc=$? $(( $(date +%s)-S ))s" >> "$OUT/nb_zh.log" ) &
wait
echo "total $(( $(date +%s)-S ))s" >> "$OUT/gpu.txt"
tail -n 2 "$OUT/nb_en.log" "$OUT/nb_zh.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -40; tail -n 2 "$OUT/tests.log"; cat "$OUT/gpu.txt"
