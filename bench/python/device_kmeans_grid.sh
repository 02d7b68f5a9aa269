#!/bin/bash
# Used for bench/results/kmeans_compare.* (issue 21) on the 16-core device machine: .devcarry/ (ignored)
# carried dp_accounting, dm-tree and diffprivlib wheels, the MNIST files and the extracted
# google/differential-privacy learning/clustering; OUT is the folder the results go to.
# device run: build privlearn for the device's python, then the k-means comparison grid
set -u
ROOT=$(pwd)
T0=$(date +%s)
python3 -m pip install -q --no-deps --no-index --target "$ROOT/.devcarry/site" "$ROOT"/.devcarry/wheels/*.whl 2>&1 | tail -2
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(command -v python3) \
  -Dpybind11_DIR=$(python3 -m pybind11 --cmakedir) -DSKBUILD_PROJECT_VERSION=0.1.0 > /dev/null && \
  cmake --build build-dev -j16 > /dev/null && cp build-dev/_core*.so python/privlearn/ || { echo BUILD FAILED; exit 1; }
echo "built in $(( $(date +%s) - T0 )) s"
export PYTHONPATH=$ROOT/python:$ROOT/.devcarry/site PRIVLEARN_DATA=$ROOT/.devcarry/data \
  PRIVLEARN_GOOGLE_DP=$ROOT/.devcarry/gdp/learning/clustering OMP_NUM_THREADS=1 HOME=$ROOT/.devcarry/home
mkdir -p $HOME
python3 -c "import sklearn, numpy, scipy; print('sklearn', sklearn.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__)"
nproc
run() {  # name timeout args...
  local name=$1 to=$2; shift 2
  echo "== $name at $(( $(date +%s) - T0 )) s"
  timeout $to python3 bench/python/bench_kmeans.py --jobs ${JOBS:-15} --no-memory --threads 1 \
    --out $OUT/$name "$@" > $OUT/log_$name.txt 2>&1
  echo "rc $? ; $(grep -c '"loss"' $OUT/log_$name.txt) fits"; grep TARGET $OUT/log_$name.txt; tail -2 $OUT/log_$name.txt
}
run e1 300 --epsilons 1 --seeds 0,1,2,3,4
run e053 170 --epsilons 0.5,3 --seeds 0,1
echo "total $(( $(date +%s) - T0 )) s"
